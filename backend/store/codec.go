package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// A record value in the recs bucket is
//
//	[1]recVersion | uvarint seq | uvarint tseq | uvarint ord | uvarint jsonLen | json | embedding
//
// where json is the memory.Memory without its embedding and embedding is the
// vector as packed little-endian float32 (4 bytes per dimension). seq is the
// store sequence number of the record's last write, tseq that of the last
// write that changed what the text index holds (text, project, kind, source,
// created_at), ord the sequence number of its first insertion (iteration order).
const recVersion = 1

// recHeader is the bookkeeping stored in front of a record.
type recHeader struct {
	seq, tseq, ord uint64
}

// encodeRecord packs m (whose Embedding is written as packed floats) under h.
func encodeRecord(h recHeader, m *memory.Memory) ([]byte, error) {
	emb := m.Embedding
	m.Embedding = nil
	js, err := json.Marshal(m)
	m.Embedding = emb
	if err != nil {
		return nil, fmt.Errorf("encode record %s: %w", m.ID, err)
	}
	buf := make([]byte, 0, 1+4*binary.MaxVarintLen64+len(js)+4*len(emb))
	buf = append(buf, recVersion)
	buf = binary.AppendUvarint(buf, h.seq)
	buf = binary.AppendUvarint(buf, h.tseq)
	buf = binary.AppendUvarint(buf, h.ord)
	buf = binary.AppendUvarint(buf, uint64(len(js)))
	buf = append(buf, js...)
	for _, f := range emb {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(f))
	}
	return buf, nil
}

var errCorrupt = errors.New("corrupt record")

// splitRecord returns the header, the JSON part and the packed embedding of
// a stored value. The returned slices alias b.
func splitRecord(b []byte) (recHeader, []byte, []byte, error) {
	var h recHeader
	if len(b) < 1 || b[0] != recVersion {
		return h, nil, nil, fmt.Errorf("%w: unknown record version", errCorrupt)
	}
	p := b[1:]
	vals := [4]uint64{}
	for i := range vals {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return h, nil, nil, fmt.Errorf("%w: bad header", errCorrupt)
		}
		vals[i] = v
		p = p[n:]
	}
	h.seq, h.tseq, h.ord = vals[0], vals[1], vals[2]
	if vals[3] > uint64(len(p)) {
		return h, nil, nil, fmt.Errorf("%w: truncated", errCorrupt)
	}
	js, emb := p[:vals[3]], p[vals[3]:]
	if len(emb)%4 != 0 {
		return h, nil, nil, fmt.Errorf("%w: embedding length %d is not a multiple of 4", errCorrupt, len(emb))
	}
	return h, js, emb, nil
}

// decodeRecord decodes a stored value fully; the embedding is copied out of b.
func decodeRecord(b []byte) (recHeader, memory.Memory, error) {
	var m memory.Memory
	h, js, emb, err := splitRecord(b)
	if err != nil {
		return h, m, err
	}
	if err := json.Unmarshal(js, &m); err != nil {
		return h, m, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	m.Embedding = unpackVector(emb)
	return h, m, nil
}

// unpackVector copies packed little-endian float32s into a new slice.
func unpackVector(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// indexFields is the part of a record the in-memory index keeps, decoded
// at Open without the rest of the JSON.
type indexFields struct {
	ID            string      `json:"id"`
	Kind          memory.Kind `json:"kind"`
	Project       string      `json:"project"`
	Source        string      `json:"source"`
	CreatedAt     time.Time   `json:"created_at"`
	CooldownUntil time.Time   `json:"cooldown_until"`
	SupersededBy  string      `json:"superseded_by"`
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func getU64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// newID returns a random 128-bit id in lowercase hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// MaxIDLen bounds the length of a caller-supplied memory id.
const MaxIDLen = 64

// ValidID reports whether id may name a memory: 1 to 64 characters of
// ASCII letters, digits and "-_.:". Ids the store generates are 32
// lowercase hex characters.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':':
		default:
			return false
		}
	}
	return true
}

// checkVector validates an embedding against the store's dimension. The
// zero vector is allowed (an embedder's answer for a text without a usable
// token): such a record is stored and found by text, never by vector.
func checkVector(v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("embedding has %d dimensions, the store uses %d: %w", len(v), dim, memory.ErrModelMismatch)
	}
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return &memory.ValidationError{Problems: []string{"embedding contains NaN or Inf"}}
		}
	}
	return nil
}

// isZero reports whether every component of v is zero.
func isZero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}

// normalized returns a unit-length copy of v (the vector index's form); the
// zero vector stays zero.
func normalized(v []float32) []float32 {
	var sq float64
	for _, f := range v {
		sq += float64(f) * float64(f)
	}
	out := make([]float32, len(v))
	if sq == 0 {
		return out
	}
	inv := 1 / math.Sqrt(sq)
	for i, f := range v {
		out[i] = float32(float64(f) * inv)
	}
	return out
}
