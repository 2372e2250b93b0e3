// Package ollamafake is a fake Ollama for tests: a loopback HTTP server
// speaking Ollama v0.13.0's API as memtray uses it (GET /api/version,
// GET|HEAD /api/tags, POST /api/embed, POST /api/pull streaming NDJSON),
// with the status codes and bodies of its server/routes.go, encoded with
// the real api types. The recorded bodies of testdata/ are served verbatim.
// Knobs make it slow, hang, fail or misbehave. Only tests import it.
package ollamafake

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

//go:embed testdata/*.json testdata/*.ndjson
var testdata embed.FS

// Testdata returns a recorded body of testdata/ (see its README).
func Testdata(name string) []byte {
	b, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		panic(fmt.Sprintf("ollamafake: no testdata %s", name))
	}
	return b
}

// Options configure New.
type Options struct {
	// Models are the installed models, names with their tag
	// ("nomic-embed-text:latest"); nil installs those of the recorded
	// testdata/tags.json (nomic-embed-text:latest, llama3.2:latest).
	Models []string
	// Dim is the length of the vectors /api/embed returns (16 when 0);
	// Dims overrides it per model (names with their tag).
	Dim  int
	Dims map[string]int
	// Vector makes a text's vector for a model (name as requested); nil
	// is HashVector.
	Vector func(model, text string, dim int) []float32
}

// Knobs are the fake's state that tests change (Server.Set).
type Knobs struct {
	// Models are the installed models, as /api/tags lists them.
	Models []api.ListModelResponse
	// Dim and Dims as in Options.
	Dim  int
	Dims map[string]int
	// Mode makes /api/embed misbehave: "malformed" (a cut JSON body),
	// "wrongcount" (a vector too few), "nan", "huge" (a float32
	// overflow), "zero" (an all-zero vector), "verbatim" (the recorded
	// bodies), "notfound-v2" (routes.go's other 404 wording).
	Mode string
	// Fail fails the next Fail embed requests with FailStatus (500 when 0).
	Fail, FailStatus int
	// HangEmbed, HangTags and HangPull (after the first line) make
	// requests wait until the client gives up; DropPull cuts the pull
	// stream after three lines.
	HangEmbed, HangTags, HangPull, DropPull bool
	// EmbedDelay delays each embed answer, PullDelay each pull line.
	EmbedDelay, PullDelay time.Duration
}

// Uninstall removes a model (with or without its tag).
func (k *Knobs) Uninstall(name string) {
	k.Models = slices.DeleteFunc(k.Models, func(m api.ListModelResponse) bool { return sameModel(m.Name, name) })
}

// Has reports whether a model is installed, matched as Ollama matches
// names: case-insensitively, ":latest" when no tag is given.
func (k *Knobs) Has(name string) bool {
	return slices.ContainsFunc(k.Models, func(m api.ListModelResponse) bool { return sameModel(m.Name, name) })
}

func (k *Knobs) dim(model string) int {
	for name, d := range k.Dims {
		if sameModel(name, model) {
			return d
		}
	}
	return k.Dim
}

// Server is a running fake Ollama.
type Server struct {
	t      testing.TB
	srv    *httptest.Server
	vector func(model, text string, dim int) []float32

	mu         sync.Mutex
	k          Knobs
	embedCalls int
	tagCalls   int
	batchSizes []int
	inputs     []string
}

// New starts a fake Ollama on loopback; it stops when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{t: t, vector: o.Vector, k: Knobs{Dim: cmp.Or(o.Dim, 16), Dims: o.Dims, FailStatus: http.StatusInternalServerError}}
	if s.vector == nil {
		s.vector = func(_, text string, dim int) []float32 { return HashVector(text, dim) }
	}
	if o.Models == nil {
		var lr api.ListResponse
		if err := json.Unmarshal(Testdata("tags.json"), &lr); err != nil {
			t.Fatalf("ollamafake: testdata/tags.json: %v", err)
		}
		s.k.Models = lr.Models
	}
	for _, name := range o.Models {
		s.k.Models = append(s.k.Models, model(name))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", s.embed)
	mux.HandleFunc("GET /api/tags", s.list)
	mux.HandleFunc("HEAD /api/tags", s.list)
	mux.HandleFunc("POST /api/pull", s.pull)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", Testdata("version.json"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeRaw(w, http.StatusNotFound, "text/plain", []byte("404 page not found"))
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// model is an installed model's /api/tags entry: an embedding model's
// details for names with "embed" or "minilm", a chat model's otherwise.
func model(name string) api.ListModelResponse {
	d := api.ModelDetails{Format: "gguf", Family: "llama", Families: []string{"llama"}, ParameterSize: "3.2B", QuantizationLevel: "Q4_K_M"}
	if strings.Contains(name, "embed") || strings.Contains(name, "minilm") {
		d = api.ModelDetails{Format: "gguf", Family: "nomic-bert", Families: []string{"nomic-bert"}, ParameterSize: "137M", QuantizationLevel: "F16"}
	}
	h := sha256.Sum256([]byte(name))
	return api.ListModelResponse{Name: name, Model: name, ModifiedAt: time.Date(2025, 11, 19, 9, 41, 7, 0, time.UTC),
		Size: 274302450, Digest: hex.EncodeToString(h[:]), Details: d}
}

func sameModel(installed, name string) bool {
	a, b := strings.ToLower(installed), strings.ToLower(name)
	if !strings.Contains(a, ":") {
		a += ":latest"
	}
	if !strings.Contains(b, ":") {
		b += ":latest"
	}
	return a == b
}

// URL is the fake's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the fake, as when Ollama quits: connections are closed and
// its port refuses new ones.
func (s *Server) Close() { s.srv.Close() }

// Handler is the fake's HTTP handler, to serve it behind a listener of the
// test's own (one it can stop and start, say).
func (s *Server) Handler() http.Handler { return s.srv.Config.Handler }

// Set changes the knobs under the fake's lock.
func (s *Server) Set(fn func(k *Knobs)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.k)
}

// Uninstall removes a model.
func (s *Server) Uninstall(name string) { s.Set(func(k *Knobs) { k.Uninstall(name) }) }

// Has reports whether a model is installed.
func (s *Server) Has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.k.Has(name)
}

// Calls returns the number of embed requests served and their batch sizes.
func (s *Server) Calls() (int, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedCalls, slices.Clone(s.batchSizes)
}

// Inputs returns every text embedded, in order.
func (s *Server) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inputs)
}

// TagCalls returns the number of /api/tags requests served.
func (s *Server) TagCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tagCalls
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.embedCalls++
	k := s.k
	if s.k.Fail > 0 {
		s.k.Fail--
	}
	s.mu.Unlock()

	if k.HangEmbed {
		hangUntilGone(r)
		return
	}
	var req api.EmbedRequest
	if !decode(w, r, &req) {
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
			str, ok := v.(string)
			if !ok {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid input type"})
				return
			}
			input = append(input, str)
		}
	default:
		if req.Input != nil {
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid input type"})
			return
		}
	}
	s.mu.Lock()
	s.batchSizes = append(s.batchSizes, len(input))
	s.inputs = append(s.inputs, input...)
	has := s.k.Has(req.Model)
	s.mu.Unlock()
	if !has {
		switch k.Mode {
		case "verbatim":
			writeRaw(w, http.StatusNotFound, "application/json; charset=utf-8", Testdata("embed_not_found.json"))
		case "notfound-v2": // the other 404 text of routes.go (Manifests failure path)
			writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model '%s' not found", req.Model)})
		default:
			writeJSON(w, http.StatusNotFound, map[string]any{"error": fmt.Sprintf("model %q not found, try pulling it first", req.Model)})
		}
		return
	}
	if k.Fail > 0 {
		writeJSON(w, k.FailStatus, map[string]any{"error": "llama runner process has terminated: exit status 2"})
		return
	}
	if k.EmbedDelay > 0 {
		select {
		case <-time.After(k.EmbedDelay):
		case <-r.Context().Done():
			return
		}
	}
	if len(input) == 0 {
		writeJSON(w, http.StatusOK, api.EmbedResponse{Model: req.Model, Embeddings: [][]float32{}})
		return
	}
	dim := k.dim(req.Model)
	embs := make([][]float32, len(input))
	for i, in := range input {
		embs[i] = s.vector(req.Model, in, dim)
	}
	resp := api.EmbedResponse{Model: req.Model, Embeddings: embs,
		TotalDuration: 41 * time.Millisecond, LoadDuration: 2 * time.Millisecond, PromptEvalCount: 7 * len(input)}
	switch k.Mode {
	case "verbatim":
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", Testdata("embed_response.json"))
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

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.tagCalls++
	hang := s.k.HangTags
	models := slices.Clone(s.k.Models)
	s.mu.Unlock()
	if hang {
		hangUntilGone(r)
		return
	}
	if models == nil {
		models = []api.ListModelResponse{}
	}
	writeJSON(w, http.StatusOK, api.ListResponse{Models: models})
}

// pull streams testdata/pull_success.ndjson for nomic-embed-text (then
// installs it) and testdata/pull_unknown.ndjson for any other name, line by
// line with a flush, as Ollama's streamResponse does.
func (s *Server) pull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	if !decode(w, r, &req) {
		return
	}
	name := cmp.Or(req.Model, req.Name)
	if name == "" || strings.ContainsAny(name, " \t") || strings.HasPrefix(name, ":") {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid model name"})
		return
	}
	file := "pull_unknown.ndjson"
	known := sameModel(name, "nomic-embed-text")
	if known {
		file = "pull_success.ndjson"
	}
	s.mu.Lock()
	k := s.k
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	sc := bufio.NewScanner(bytes.NewReader(Testdata(file)))
	for n := 0; sc.Scan(); n++ {
		switch {
		case k.DropPull && n == 3:
			return
		case k.HangPull && n > 0:
			<-r.Context().Done()
			return
		case k.PullDelay > 0 && n > 0:
			select {
			case <-time.After(k.PullDelay):
			case <-r.Context().Done():
				return
			}
		}
		w.Write(append(sc.Bytes(), '\n'))
		w.(http.Flusher).Flush()
	}
	if known {
		s.mu.Lock()
		if !s.k.Has(name) {
			m := model("nomic-embed-text:latest")
			m.Digest = "0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f"
			s.k.Models = append(s.k.Models, m)
		}
		s.mu.Unlock()
	}
}

// decode reads a request body into v, answering 400 as Ollama's handlers
// do when it is missing or not JSON.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	err := json.NewDecoder(r.Body).Decode(v)
	switch {
	case errors.Is(err, io.EOF):
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "missing request body"})
		return false
	case err != nil:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": err.Error()})
		return false
	}
	return true
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

// HashVector is a deterministic, L2-normalised vector for a text: equal
// texts get equal vectors, any two others nearly orthogonal ones.
func HashVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	var sum float64
	h := sha256.Sum256([]byte(text))
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
		panic(err) // only marshals the fake's own values
	}
	writeRaw(w, status, "application/json; charset=utf-8", b)
}

func writeRaw(w http.ResponseWriter, status int, ctype string, b []byte) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	w.Write(b)
}

// ClosedURL returns the URL of a loopback port nothing listens on.
func ClosedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}
