package daemon

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ollamaTestdata holds the response bodies of Ollama v0.13.0 recorded for
// package embed's tests (see its README); the daemon's fake serves them too.
const ollamaTestdata = "../embed/testdata"

// fakeOllama is a loopback HTTP server speaking Ollama's API as the daemon
// uses it: GET /api/tags, GET /api/version, POST /api/embed and POST
// /api/pull streaming NDJSON progress (the recorded stream of a
// nomic-embed-text pull, line by line). Knobs slow it down or stop it.
type fakeOllama struct {
	t   testing.TB
	srv *httptest.Server

	mu         sync.Mutex
	installed  []string      // model names, with their tag
	dim        int           // vector length of /api/embed
	embedDelay time.Duration // wait before each embed answer
	pullDelay  time.Duration // wait before each pull line
	hangPull   bool          // after the first pull line, wait until the client goes away
	embeds     int           // embed requests served
}

// newFakeOllama starts a fake Ollama that has the models named (tag
// included, e.g. "nomic-embed-text:latest") and embeds with dim dimensions.
func newFakeOllama(t testing.TB, dim int, installed ...string) *fakeOllama {
	t.Helper()
	f := &fakeOllama{t: t, dim: dim, installed: installed}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", f.tags)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeOllama(w, http.StatusOK, readOllamaTestdata(t, "version.json"))
	})
	mux.HandleFunc("POST /api/embed", f.embed)
	mux.HandleFunc("POST /api/pull", f.pull)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeOllama) url() string { return f.srv.URL }

// set changes knobs under the lock.
func (f *fakeOllama) set(fn func(f *fakeOllama)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// has reports whether a model is installed, as Ollama matches names.
func (f *fakeOllama) has(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hasLocked(name)
}

func (f *fakeOllama) hasLocked(name string) bool {
	want := strings.ToLower(name)
	if !strings.Contains(want, ":") {
		want += ":latest"
	}
	for _, m := range f.installed {
		if strings.ToLower(m) == want {
			return true
		}
	}
	return false
}

func (f *fakeOllama) tags(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
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
	for _, n := range f.installed {
		d := details{Format: "gguf", Family: "llama", Families: []string{"llama"}, ParameterSize: "3.2B"}
		if strings.Contains(n, "embed") {
			d = details{Format: "gguf", Family: "nomic-bert", Families: []string{"nomic-bert"}, ParameterSize: "137M"}
		}
		h := sha256.Sum256([]byte(n))
		ms = append(ms, model{Name: n, Model: n, ModifiedAt: time.Date(2025, 11, 19, 9, 41, 7, 0, time.UTC), Size: 274302450,
			Digest: hex.EncodeToString(h[:]), Details: d})
	}
	f.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"models": ms})
	writeOllama(w, http.StatusOK, b)
}

func (f *fakeOllama) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeOllama(w, http.StatusBadRequest, []byte(`{"error":"invalid input type"}`))
		return
	}
	f.mu.Lock()
	f.embeds++
	delay, dim, has := f.embedDelay, f.dim, f.hasLocked(req.Model)
	f.mu.Unlock()
	if !has {
		writeOllama(w, http.StatusNotFound, []byte(`{"error":"model \"`+req.Model+`\" not found, try pulling it first"}`))
		return
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	out := make([][]float32, len(req.Input))
	for i, in := range req.Input {
		out[i] = ollamaVec(in, dim)
	}
	b, _ := json.Marshal(map[string]any{"model": req.Model, "embeddings": out, "total_duration": 41000000})
	writeOllama(w, http.StatusOK, b)
}

// pull streams the recorded pull of nomic-embed-text for that model (and
// then has it), and the recorded "file does not exist" stream for others.
func (f *fakeOllama) pull(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
		writeOllama(w, http.StatusBadRequest, []byte(`{"error":"invalid model name"}`))
		return
	}
	known := strings.TrimSuffix(strings.ToLower(req.Model), ":latest") == "nomic-embed-text"
	file := "pull_unknown.ndjson"
	if known {
		file = "pull_success.ndjson"
	}
	f.mu.Lock()
	delay, hang := f.pullDelay, f.hangPull
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	sc := bufio.NewScanner(bytes.NewReader(readOllamaTestdata(f.t, file)))
	for n := 0; sc.Scan(); n++ {
		if n > 0 && hang {
			<-r.Context().Done()
			return
		}
		if n > 0 && delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Write(append(sc.Bytes(), '\n'))
		w.(http.Flusher).Flush()
	}
	if known {
		f.mu.Lock()
		if !f.hasLocked(req.Model) {
			f.installed = append(f.installed, "nomic-embed-text:latest")
		}
		f.mu.Unlock()
	}
}

// ollamaVec is the fake's vector for an input (Ollama's embedder sends
// nomic-embed-text's "search_document: " prefix in it): deterministic,
// not normalised (the client normalises).
func ollamaVec(s string, dim int) []float32 {
	v := make([]float32, dim)
	h := sha256.Sum256([]byte(s))
	for i := range v {
		if i%8 == 0 && i > 0 {
			h = sha256.Sum256(h[:])
		}
		v[i] = float32(int32(binary.LittleEndian.Uint32(h[(i%8)*4:]))) / math.MaxInt32
	}
	return v
}

func writeOllama(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

func readOllamaTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ollamaTestdata, name))
	if err != nil {
		t.Fatalf("read Ollama testdata: %v", err)
	}
	return b
}

// closedOllama returns the URL of a loopback port nothing listens on.
func closedOllama(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}
