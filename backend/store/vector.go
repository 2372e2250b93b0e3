package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/philippgille/chromem-go"
)

// Metadata keys of a vector-index document, used by chromem's `where`.
const (
	metaProject = "p"
	metaKind    = "k"
)

// vectorIndex is the in-memory chromem-go collection of every record's
// embedding, normalised once at insertion so queries skip it. It is rebuilt
// from bbolt at every Open and never persisted.
type vectorIndex struct {
	dim  int
	coll *chromem.Collection
}

// errNoEmbed is what chromem gets if it ever tries to embed text itself:
// the store always passes vectors.
var errNoEmbed = errors.New("store: the vector index never embeds text")

func refuseEmbed(context.Context, string) ([]float32, error) { return nil, errNoEmbed }

func newVectorIndex(dim int) (*vectorIndex, error) {
	db := chromem.NewDB()
	coll, err := db.CreateCollection("memories", nil, refuseEmbed)
	if err != nil {
		return nil, fmt.Errorf("create vector index: %w", err)
	}
	return &vectorIndex{dim: dim, coll: coll}, nil
}

func vecMeta(e *entry) map[string]string {
	m := make(map[string]string, 2)
	if e.project != "" {
		m[metaProject] = e.project
	}
	m[metaKind] = string(e.kind)
	return m
}

// add indexes vec (any length-dim vector; a normalised copy is kept). A
// zero vector is similar to nothing: it is left out (and a previous vector
// of id removed).
func (v *vectorIndex) add(id string, vec []float32, e *entry) {
	if isZero(vec) {
		v.remove(id)
		return
	}
	_ = v.coll.AddDocument(context.Background(), chromem.Document{ID: id, Metadata: vecMeta(e), Embedding: normalized(vec)})
}

// addPacked indexes a packed little-endian float32 vector.
func (v *vectorIndex) addPacked(id string, packed []byte, e *entry) {
	vec := make([]float32, len(packed)/4)
	var sq float64
	for i := range vec {
		f := math.Float32frombits(binary.LittleEndian.Uint32(packed[4*i:]))
		vec[i] = f
		sq += float64(f) * float64(f)
	}
	if sq == 0 {
		v.remove(id)
		return
	}
	if math.Abs(sq-1) > 1e-7 {
		inv := 1 / math.Sqrt(sq)
		for i := range vec {
			vec[i] = float32(float64(vec[i]) * inv)
		}
	}
	_ = v.coll.AddDocument(context.Background(), chromem.Document{ID: id, Metadata: vecMeta(e), Embedding: vec})
}

func (v *vectorIndex) remove(ids ...string) {
	if len(ids) == 0 {
		return
	}
	_ = v.coll.Delete(context.Background(), nil, nil, ids...)
}

func (v *vectorIndex) count() int { return v.coll.Count() }

// query returns up to k nearest documents matching where (exact metadata).
func (v *vectorIndex) query(ctx context.Context, q []float32, k int, where map[string]string) ([]chromem.Result, error) {
	n := v.coll.Count()
	if n == 0 || k <= 0 {
		return nil, nil
	}
	if k > n {
		k = n
	}
	res, err := v.coll.QueryEmbedding(ctx, q, k, where, nil)
	if err != nil {
		return nil, fmt.Errorf("vector query: %w", err)
	}
	return res, nil
}
