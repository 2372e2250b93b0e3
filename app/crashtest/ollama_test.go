package crashtest

import (
	"hash/fnv"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/memtray/memtray/backend/embed/ollamafake"
)

// Embedding models the fake Ollama serves: the harness switches the store
// between them. Their dimensions differ so that a vector of one can never
// pass for the other's.
var fakeModels = map[string]int{"crash-a": 48, "crash-b": 64}

// newFakeOllama starts a fake Ollama (package ollamafake) that has the
// models of fakeModels. It lives in the test process, so it outlives every
// daemon the harness kills. Its vectors are bags of hashed words (see
// fakeVec): equal word sets give equal vectors, unrelated texts nearly
// orthogonal.
func newFakeOllama(t testing.TB) *ollamafake.Server {
	t.Helper()
	o := ollamafake.Options{Dims: map[string]int{}, Models: []string{},
		Vector: func(model, text string, _ int) []float32 { return fakeVec(strings.TrimSuffix(model, ":latest"), text) }}
	for name, dim := range fakeModels {
		o.Models = append(o.Models, name+":latest")
		o.Dims[name+":latest"] = dim
	}
	slices.Sort(o.Models)
	return ollamafake.New(t, o)
}

// fakeVec is model's vector of text: every lowercased word adds a hashed
// ±1 to two of the model's dimensions (the hash depends on the model);
// normalised.
func fakeVec(model, text string) []float32 {
	dim := fakeModels[model]
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := fnv.New64a()
		h.Write([]byte(model))
		h.Write([]byte{0})
		h.Write([]byte(w))
		x := h.Sum64()
		for j := 0; j < 2; j++ {
			idx := int(x % uint64(dim))
			x /= uint64(dim)
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
