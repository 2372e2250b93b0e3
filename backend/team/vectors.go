package team

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
)

// maxDim bounds a cached vector's dimension (the schema's check too).
const maxDim = 65536

// Vector is an embedding of a memory's text under one model.
type Vector struct {
	MemoryID string `json:"memory_id"`
	// ContentHash is the hash of the text embedded: the cached vector
	// counts only while it is the memory's.
	ContentHash string    `json:"content_hash"`
	Values      []float32 `json:"values"`
}

// EncodeVector is v as the cache stores it: little-endian float32s.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector reads EncodeVector's form, which must hold dim finite
// values. The bytes come from the database, where any member may have
// written them.
func DecodeVector(b []byte, dim int) ([]float32, error) {
	if dim <= 0 || dim > maxDim {
		return nil, fmt.Errorf("cached vector: dimension %d is not in 1..%d", dim, maxDim)
	}
	if len(b) != 4*dim {
		return nil, fmt.Errorf("cached vector: %d bytes for dimension %d (want %d)", len(b), dim, 4*dim)
	}
	v := make([]float32, dim)
	for i := range v {
		f := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("cached vector: value %d is not finite", i)
		}
		v[i] = f
	}
	return v, nil
}

// PutVectors caches embeddings under model, replacing a vector cached for
// an older text of the memory. Any member may write the cache: it is a
// cache of what every daemon could compute, and a daemon that distrusts it
// embeds locally.
func (s *Store) PutVectors(ctx context.Context, model string, vs []Vector) error {
	if model == "" || len(model) > 256 {
		return fmt.Errorf("team database: put vectors: model name %q is not 1-256 bytes", clip(model))
	}
	if len(vs) > maxPush {
		return fmt.Errorf("team database: put vectors: %d vectors, at most %d at once", len(vs), maxPush)
	}
	var ids, hashes []string
	var dims []int32
	var blobs [][]byte
	for _, v := range vs {
		if !idPattern.MatchString(v.MemoryID) {
			return fmt.Errorf("team database: put vectors: memory id %q is not an id", clip(v.MemoryID))
		}
		if _, err := DecodeVector(EncodeVector(v.Values), len(v.Values)); err != nil {
			return fmt.Errorf("team database: put vectors: memory %s: %w", v.MemoryID, err)
		}
		ids = append(ids, v.MemoryID)
		hashes = append(hashes, v.ContentHash)
		dims = append(dims, int32(len(v.Values)))
		blobs = append(blobs, EncodeVector(v.Values))
	}
	if len(ids) == 0 {
		return nil
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO memtray.vectors (model, memory_id, content_hash, dim, vector)
		SELECT $1, * FROM unnest($2::text[], $3::text[], $4::int4[], $5::bytea[])
		ON CONFLICT (model, memory_id) DO UPDATE SET content_hash = excluded.content_hash,
			dim = excluded.dim, vector = excluded.vector, at = now()
		WHERE vectors.content_hash <> excluded.content_hash`, model, ids, hashes, dims, blobs)
	if err != nil {
		return fmt.Errorf("team database: put vectors: %w", err)
	}
	return nil
}

// Vectors returns the cached embeddings under model of the given live
// memories whose text has not changed since they were cached, by memory
// id. A vector that fails DecodeVector is left out.
func (s *Store) Vectors(ctx context.Context, model string, ids []string) (map[string][]float32, error) {
	rows, err := s.pool.Query(ctx, `SELECT v.memory_id, v.dim, v.vector FROM memtray.vectors v
		JOIN memtray.memories m ON m.id = v.memory_id AND m.content_hash = v.content_hash
		WHERE v.model = $1 AND v.memory_id = ANY($2)`, model, ids)
	if err != nil {
		return nil, fmt.Errorf("team database: vectors: %w", err)
	}
	defer rows.Close()
	out := map[string][]float32{}
	for rows.Next() {
		var id string
		var dim int32
		var b []byte
		if err := rows.Scan(&id, &dim, &b); err != nil {
			return nil, fmt.Errorf("team database: vectors: %w", err)
		}
		if v, err := DecodeVector(b, int(dim)); err == nil {
			out[id] = v
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("team database: vectors: %w", err)
	}
	return out, nil
}
