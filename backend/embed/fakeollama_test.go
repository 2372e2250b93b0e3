package embed

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

	"github.com/ollama/ollama/api"
)

// fakeOllama is a loopback HTTP server speaking Ollama v0.13.0's protocol
// for /api/embed, /api/tags, /api/pull and /api/version, with the status
// codes and bodies of its server/routes.go. Knobs make it misbehave.
type fakeOllama struct {
	t   testing.TB
	srv *httptest.Server

	mu         sync.Mutex
	tags       []api.ListModelResponse // installed models
	dim        int                     // dimension of the vectors it returns
	fail       int                     // fail the next fail embed requests with failStatus
	failStatus int
	hangEmbed  bool   // embed requests wait until the client gives up
	hangTags   bool   // tags requests wait until the client gives up
	mode       string // "", "malformed", "wrongcount", "nan", "huge", "zero", "verbatim", "notfound-v2"
	dropPull   bool   // cut the pull stream after a few lines
	embedCalls int
	tagCalls   int
	batchSizes []int
	inputs     []string // every text embedded, in order
}

// newFakeOllama starts a fake Ollama with the models of testdata/tags.json.
func newFakeOllama(t testing.TB) *fakeOllama {
	t.Helper()
	f := &fakeOllama{t: t, dim: 16, failStatus: http.StatusInternalServerError}
	var lr api.ListResponse
	if err := json.Unmarshal(readTestdata(t, "tags.json"), &lr); err != nil {
		t.Fatalf("testdata/tags.json: %v", err)
	}
	f.tags = lr.Models
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", f.embed)
	mux.HandleFunc("GET /api/tags", f.list)
	mux.HandleFunc("HEAD /api/tags", f.list)
	mux.HandleFunc("POST /api/pull", f.pull)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", readTestdata(t, "version.json"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeRaw(w, http.StatusNotFound, "text/plain", []byte("404 page not found"))
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// url is the fake's base URL.
func (f *fakeOllama) url() string { return f.srv.URL }

// set changes knobs under the lock.
func (f *fakeOllama) set(fn func(f *fakeOllama)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// calls returns the number of embed requests served and their batch sizes.
func (f *fakeOllama) calls() (int, []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.embedCalls, append([]int(nil), f.batchSizes...)
}

// installed reports whether the fake has the model (Ollama matches names
// case-insensitively and adds ":latest").
func (f *fakeOllama) installed(name string) bool {
	want := strings.ToLower(name)
	if !strings.Contains(want, ":") {
		want += ":latest"
	}
	for _, m := range f.tags {
		if strings.ToLower(m.Name) == want {
			return true
		}
	}
	return false
}

func (f *fakeOllama) embed(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.embedCalls++
	mode, dim, hang := f.mode, f.dim, f.hangEmbed
	failing := f.fail > 0
	if failing {
		f.fail--
	}
	status := f.failStatus
	f.mu.Unlock()

	if hang {
		hangUntilGone(r)
		return
	}
	var req api.EmbedRequest
	err := json.NewDecoder(r.Body).Decode(&req)
	switch {
	case errors.Is(err, io.EOF):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "missing request body"})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	var input []string
	switch in := req.Input.(type) {
	case string:
		if len(in) > 0 {
			input = append(input, in)
		}
	case []any:
		for _, v := range in {
			s, ok := v.(string)
			if !ok {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid input type"})
				return
			}
			input = append(input, s)
		}
	default:
		if req.Input != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid input type"})
			return
		}
	}
	f.mu.Lock()
	f.batchSizes = append(f.batchSizes, len(input))
	f.inputs = append(f.inputs, input...)
	has := f.installed(req.Model)
	f.mu.Unlock()
	if !has {
		if mode == "verbatim" {
			writeRaw(w, http.StatusNotFound, "application/json; charset=utf-8", readTestdata(f.t, "embed_not_found.json"))
			return
		}
		if mode == "notfound-v2" { // the other 404 text of routes.go (Manifests failure path)
			writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model '%s' not found", req.Model)})
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		return
	}
	if failing {
		writeJSON(w, status, map[string]any{"error": "llama runner process has terminated: exit status 2"})
		return
	}
	if len(input) == 0 {
		writeJSON(w, http.StatusOK, api.EmbedResponse{Model: req.Model, Embeddings: [][]float32{}})
		return
	}
	embs := make([][]float32, len(input))
	for i, s := range input {
		embs[i] = fakeVec(s, dim)
	}
	resp := api.EmbedResponse{Model: req.Model, Embeddings: embs,
		TotalDuration: 41 * time.Millisecond, LoadDuration: 2 * time.Millisecond, PromptEvalCount: 7 * len(input)}
	switch mode {
	case "verbatim":
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", readTestdata(f.t, "embed_response.json"))
		return
	case "malformed":
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", []byte(`{"model":"nomic-embed-text","embeddings":[[0.1,0.2`))
		return
	case "nan":
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", []byte(`{"model":"nomic-embed-text","embeddings":[[NaN,0.5]]}`))
		return
	case "huge":
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", []byte(`{"model":"nomic-embed-text","embeddings":[[1e39,0.5]]}`))
		return
	case "wrongcount":
		resp.Embeddings = resp.Embeddings[:len(resp.Embeddings)-1]
	case "zero":
		resp.Embeddings[0] = make([]float32, dim)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (f *fakeOllama) list(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.tagCalls++
	hang := f.hangTags
	models := append([]api.ListModelResponse{}, f.tags...)
	f.mu.Unlock()
	if hang {
		hangUntilGone(r)
		return
	}
	writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
}

// pull streams testdata/pull_success.ndjson for nomic-embed-text (then
// installs it) and testdata/pull_unknown.ndjson for any other name, line by
// line with a flush, as Ollama's streamResponse does.
func (f *fakeOllama) pull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	err := json.NewDecoder(r.Body).Decode(&req)
	switch {
	case errors.Is(err, io.EOF):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "missing request body"})
		return
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return
	}
	name := cmp.Or(req.Model, req.Name)
	if name == "" || strings.ContainsAny(name, " \t") || strings.HasPrefix(name, ":") {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid model name"})
		return
	}
	file := "pull_unknown.ndjson"
	known := strings.TrimSuffix(strings.ToLower(name), ":latest") == "nomic-embed-text"
	if known {
		file = "pull_success.ndjson"
	}
	f.mu.Lock()
	drop := f.dropPull
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	sc := bufio.NewScanner(bytes.NewReader(readTestdata(f.t, file)))
	n := 0
	for sc.Scan() {
		if drop && n == 3 {
			return
		}
		w.Write(append(sc.Bytes(), '\n'))
		w.(http.Flusher).Flush()
		n++
	}
	if known {
		f.mu.Lock()
		f.tags = append(f.tags, api.ListModelResponse{Name: "nomic-embed-text:latest", Model: "nomic-embed-text:latest",
			ModifiedAt: time.Now(), Size: 274302450, Digest: "0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f"})
		f.mu.Unlock()
	}
}

// uninstall removes a model from the fake's list.
func (f *fakeOllama) uninstall(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removeLocked(name)
}

// removeLocked is uninstall with f.mu held (inside set).
func (f *fakeOllama) removeLocked(name string) {
	var keep []api.ListModelResponse
	for _, m := range f.tags {
		if strings.TrimSuffix(m.Name, ":latest") != name {
			keep = append(keep, m)
		}
	}
	f.tags = keep
}

// hangUntilGone waits until the client goes away (or 10 s pass, so a
// broken client cannot wedge the test server). The body must be read first:
// only then does net/http watch the connection and cancel r.Context().
func hangUntilGone(r *http.Request) {
	io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// fakeVec is the fake's deterministic, L2-normalised vector for a text.
func fakeVec(s string, dim int) []float32 {
	v := make([]float32, dim)
	var sum float64
	h := sha256.Sum256([]byte(s))
	for i := range v {
		if i%8 == 0 && i > 0 {
			h = sha256.Sum256(h[:])
		}
		x := float64(int32(binary.LittleEndian.Uint32(h[(i%8)*4:]))) / math.MaxInt32
		v[i] = float32(x)
		sum += x * x
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(sum))
	}
	return v
}

// writeJSON answers like gin's c.JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // test helper: only marshals our own values
	}
	writeRaw(w, status, "application/json; charset=utf-8", b)
}

func writeRaw(w http.ResponseWriter, status int, ctype string, b []byte) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	w.Write(b)
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read testdata: %v", err)
	}
	return b
}

// closedURL returns the URL of a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}
