package store

import (
	"context"
	"hash/fnv"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/memtray/memtray/backend/memory"
)

// testDim is the embedding dimension the tests use.
const testDim = 32

// wordEmbedder is a small deterministic bag-of-words embedder for tests:
// every lowercased word adds a hashed ±1 to two buckets; the sum is
// normalised. Texts that share words are close.
type wordEmbedder struct {
	model string
	dim   int
}

func (e wordEmbedder) Model() string { return e.model }
func (e wordEmbedder) Dim() int      { return e.dim }

func (e wordEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = e.vec(t)
	}
	return out, nil
}

func (e wordEmbedder) vec(text string) []float32 {
	v := make([]float32, e.dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		for j := 0; j < 2; j++ {
			idx := int(x % uint64(e.dim))
			x /= uint64(e.dim)
			sign := float32(1)
			if x&1 == 1 {
				sign = -1
			}
			x >>= 1
			v[idx] += sign
		}
	}
	var sq float64
	for _, f := range v {
		sq += float64(f) * float64(f)
	}
	if sq == 0 {
		v[0] = 1
		return v
	}
	inv := float32(1 / math.Sqrt(sq))
	for i := range v {
		v[i] *= inv
	}
	return v
}

var testEmb = wordEmbedder{model: "test-words-v1", dim: testDim}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// openTest opens a store in dir with the test embedder's model and a fixed clock.
func openTest(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: t0}})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// mem builds a memory with its test embedding.
func mem(text string) memory.Memory {
	return memory.Memory{Text: text, Embedding: testEmb.vec(text)}
}

func mustPut(t testing.TB, s *Store, m memory.Memory) memory.Memory {
	t.Helper()
	out, err := s.Put(context.Background(), m)
	if err != nil {
		t.Fatalf("Put(%q): %v", m.Text, err)
	}
	return out
}

func ids(sc []Scored) []string {
	out := make([]string, len(sc))
	for i, x := range sc {
		out[i] = x.ID
	}
	return out
}

// crashIters is how many kills a crash test makes: full, or short with
// -short, unless MEMTRAY_CRASH_ITERS says otherwise.
func crashIters(full, short int) int {
	if v, err := strconv.Atoi(os.Getenv("MEMTRAY_CRASH_ITERS")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return short
	}
	return full
}
