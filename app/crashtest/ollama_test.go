package crashtest

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// Embedding models the fake Ollama serves: the harness switches the store
// between them. Their dimensions differ so that a vector of one can never
// pass for the other's.
var fakeModels = map[string]int{"crash-a": 48, "crash-b": 64}

// fakeOllama is a loopback HTTP server speaking the part of Ollama's API
// the daemon uses for embeddings (GET /api/version, GET /api/tags, POST
// /api/embed). It lives in the test process, so it outlives every daemon
// the harness kills. Its vectors are bags of hashed words (see fakeVec):
// equal word sets give equal vectors, unrelated texts nearly orthogonal.
type fakeOllama struct {
	srv *httptest.Server

	mu     sync.Mutex
	delay  time.Duration // wait before each embed answer
	embeds int           // embed requests served
}

func newFakeOllama(t testing.TB) *fakeOllama {
	t.Helper()
	f := &fakeOllama{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": "0.13.0"})
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		type details struct {
			Format        string   `json:"format"`
			Family        string   `json:"family"`
			Families      []string `json:"families"`
			ParameterSize string   `json:"parameter_size"`
		}
		type model struct {
			Name       string    `json:"name"`
			Model      string    `json:"model"`
			ModifiedAt time.Time `json:"modified_at"`
			Size       int64     `json:"size"`
			Digest     string    `json:"digest"`
			Details    details   `json:"details"`
		}
		var ms []model
		for name := range fakeModels {
			ms = append(ms, model{Name: name + ":latest", Model: name + ":latest", ModifiedAt: time.Date(2025, 11, 19, 9, 41, 7, 0, time.UTC),
				Size: 274302450, Digest: strings.Repeat("ab", 32),
				Details: details{Format: "gguf", Family: "nomic-bert", Families: []string{"nomic-bert"}, ParameterSize: "137M"}})
		}
		writeJSON(w, http.StatusOK, map[string]any{"models": ms})
	})
	mux.HandleFunc("POST /api/embed", f.embed)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOllama) url() string { return f.srv.URL }

// setDelay makes every embed answer wait d.
func (f *fakeOllama) setDelay(d time.Duration) {
	f.mu.Lock()
	f.delay = d
	f.mu.Unlock()
}

func (f *fakeOllama) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
		return
	}
	name := strings.TrimSuffix(req.Model, ":latest")
	if _, ok := fakeModels[name]; !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "model \"" + req.Model + "\" not found, try pulling it first"})
		return
	}
	f.mu.Lock()
	f.embeds++
	delay := f.delay
	f.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	out := make([][]float32, len(req.Input))
	for i, in := range req.Input {
		out[i] = fakeVec(name, in)
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": req.Model, "embeddings": out, "total_duration": 41000000})
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

// cosine of two vectors of one length (0 when the lengths differ).
func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}
