// Package openaifake is a fake OpenAI-compatible embeddings server for
// tests: a loopback HTTP server speaking the protocol as llama-server,
// LM Studio, vLLM, LocalAI and OpenAI do (POST {base}/embeddings, GET
// {base}/models), with their error objects and status codes. The recorded
// bodies of testdata/ are served verbatim where a knob asks for them.
// Knobs make it fail, rate-limit, hang or misbehave. Only tests import it.
package openaifake

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed testdata/*.json testdata/*.html
var testdata embed.FS

// Testdata returns a recorded body of testdata/ (see its README).
func Testdata(name string) []byte {
	b, err := testdata.ReadFile("testdata/" + name)
	if err != nil {
		panic(fmt.Sprintf("openaifake: no testdata %s", name))
	}
	return b
}

// Options configure New.
type Options struct {
	// Base is the routes' prefix; empty means "/v1".
	Base string
	// Models are the served models; nil serves "voyage-4-nano".
	Models []string
	// Dim is the length of the vectors (16 when 0).
	Dim int
	// Shortenable: the models honour "dimensions" (cut and normalised, as
	// text-embedding-3-* do); without it the field is ignored, as
	// llama-server does.
	Shortenable bool
	// Key, when set, must come as "Authorization: Bearer <Key>".
	Key string
	// Vector makes a text's vector; nil is HashVector.
	Vector func(model, text string, dim int) []float32
}

// Knobs are the fake's state that tests change (Server.Set).
type Knobs struct {
	// Models, Dim as in Options.
	Models []string
	Dim    int
	// Mode makes /embeddings misbehave: "verbatim" (the recorded
	// embeddings_response.json), "llamacpp" (the recorded llama-server
	// answer, out of index order), "reversed" (data in reverse order),
	// "garbage" (an HTML page, status 200), "truncated" (a cut body),
	// "empty" (no data), "wrongcount" (a vector too few), "dupindex",
	// "badindex", "noindex" (no index fields), "huge" (beyond float32),
	// "zero" (an all-zero vector), "error200" (an error object, status 200).
	Mode string
	// Fail fails the next Fail requests (embeddings and models) with
	// FailStatus (500 when 0): 429 answers error_rate_limit.json, 503
	// error_loading.json, 400 error_dimensions.json; RetryAfter, when set,
	// is sent as the Retry-After header.
	Fail, FailStatus int
	RetryAfter       string
	// NoModelsRoute answers 404 on /models, as some servers do.
	NoModelsRoute bool
	// Hang makes /embeddings wait until the client gives up.
	Hang bool
}

// Request is one request the fake received.
type Request struct {
	Method, Path string
	// Auth is the Authorization header.
	Auth string
	// Body is the raw body.
	Body []byte
}

// Server is a running fake.
type Server struct {
	t      testing.TB
	srv    *httptest.Server
	base   string
	key    string
	short  bool
	vector func(model, text string, dim int) []float32

	mu   sync.Mutex
	k    Knobs
	reqs []Request
}

// New starts a fake on loopback; it stops when the test ends.
func New(t testing.TB, o Options) *Server {
	t.Helper()
	s := &Server{t: t, base: strings.TrimRight(cmp.Or(o.Base, "/v1"), "/"), key: o.Key, short: o.Shortenable, vector: o.Vector,
		k: Knobs{Models: o.Models, Dim: cmp.Or(o.Dim, 16), FailStatus: http.StatusInternalServerError}}
	if s.k.Models == nil {
		s.k.Models = []string{"voyage-4-nano"}
	}
	if s.vector == nil {
		s.vector = func(_, text string, dim int) []float32 { return HashVector(text, dim) }
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+s.base+"/embeddings", s.embeddings)
	mux.HandleFunc("GET "+s.base+"/models", s.models)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.record(r, nil)
		writeRaw(w, http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found"))
	})
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the fake's base URL, with its prefix: what embedder.openai_url takes.
func (s *Server) URL() string { return s.srv.URL + s.base }

// Close stops the fake.
func (s *Server) Close() { s.srv.Close() }

// Set changes the knobs.
func (s *Server) Set(fn func(k *Knobs)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.k)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Batches returns the number of texts of every /embeddings request that
// was answered with vectors.
func (s *Server) Batches() []int {
	var out []int
	for _, r := range s.Requests() {
		if !strings.HasSuffix(r.Path, "/embeddings") {
			continue
		}
		var req struct {
			Input []string `json:"input"`
		}
		if json.Unmarshal(r.Body, &req) == nil {
			out = append(out, len(req.Input))
		}
	}
	return out
}

func (s *Server) record(r *http.Request, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, Request{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Body: body})
}

// embedRequest is the body of POST /embeddings. Input may be one string or
// a list of strings (token lists are not served).
type embedRequest struct {
	Model          string          `json:"model"`
	Input          json.RawMessage `json:"input"`
	Dimensions     *int            `json:"dimensions"`
	EncodingFormat string          `json:"encoding_format"`
}

// EmbeddingData is one item of an answer's data.
type EmbeddingData struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// EmbeddingResponse is an answer of POST /embeddings.
type EmbeddingResponse struct {
	Object string          `json:"object"`
	Data   []EmbeddingData `json:"data"`
	Model  string          `json:"model"`
	Usage  struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
}

// apiError answers OpenAI's error object.
func apiError(w http.ResponseWriter, status int, typ, code, format string, args ...any) {
	body := map[string]any{"error": map[string]any{"message": fmt.Sprintf(format, args...), "type": typ, "param": nil, "code": code}}
	writeJSON(w, status, body)
}

// failing takes one of the Fail failures, answering it, and reports whether it did.
func (s *Server) failing(w http.ResponseWriter) bool {
	s.mu.Lock()
	k := s.k
	if s.k.Fail > 0 {
		s.k.Fail--
	}
	s.mu.Unlock()
	if k.Fail <= 0 {
		return false
	}
	if k.RetryAfter != "" {
		w.Header().Set("Retry-After", k.RetryAfter)
	}
	switch k.FailStatus {
	case http.StatusTooManyRequests:
		writeRaw(w, k.FailStatus, "application/json", Testdata("error_rate_limit.json"))
	case http.StatusServiceUnavailable:
		writeRaw(w, k.FailStatus, "application/json; charset=utf-8", Testdata("error_loading.json"))
	case http.StatusBadRequest:
		writeRaw(w, k.FailStatus, "application/json", Testdata("error_dimensions.json"))
	default:
		apiError(w, k.FailStatus, "server_error", "", "The server had an error while processing your request. Sorry about that!")
	}
	return true
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.key == "" || r.Header.Get("Authorization") == "Bearer "+s.key {
		return true
	}
	if r.Header.Get("Authorization") == "" {
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "", "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
		return false
	}
	writeRaw(w, http.StatusUnauthorized, "application/json", Testdata("error_unauthorized.json"))
	return false
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	if !s.authorized(w, r) || s.failing(w) {
		return
	}
	s.mu.Lock()
	k := s.k
	s.mu.Unlock()
	if k.NoModelsRoute {
		writeRaw(w, http.StatusNotFound, "text/plain; charset=utf-8", []byte("404 page not found"))
		return
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, m := range k.Models {
		out.Data = append(out.Data, model{ID: m, Object: "model", Created: 1764150000, OwnedBy: "memtray-test"})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	s.record(r, body)
	if err != nil {
		return
	}
	if !s.authorized(w, r) {
		return
	}
	s.mu.Lock()
	k := s.k
	s.mu.Unlock()
	if k.Hang {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	}
	if s.failing(w) {
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		apiError(w, http.StatusUnsupportedMediaType, "invalid_request_error", "", "Content-Type must be application/json")
		return
	}
	var req embedRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request. (%v)", err)
		return
	}
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			apiError(w, http.StatusBadRequest, "invalid_request_error", "", "'input' must be a string or a list of strings")
			return
		}
		inputs = []string{one}
	}
	switch {
	case req.Model == "":
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "you must provide a model parameter")
		return
	case !slices.Contains(k.Models, req.Model):
		apiError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", "The model `%s` does not exist or you do not have access to it.", req.Model)
		return
	case len(inputs) == 0 || len(inputs) > 2048:
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "'input' must have 1..2048 items")
		return
	case req.EncodingFormat != "" && req.EncodingFormat != "float":
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "encoding_format %q is not served", req.EncodingFormat)
		return
	}
	for i, in := range inputs {
		if in == "" {
			apiError(w, http.StatusBadRequest, "invalid_request_error", "", "'input[%d]' must not be empty", i)
			return
		}
	}
	dim := k.Dim
	if req.Dimensions != nil && s.short {
		if *req.Dimensions < 1 || *req.Dimensions > k.Dim {
			apiError(w, http.StatusBadRequest, "invalid_request_error", "", "dimensions must be within 1..%d", k.Dim)
			return
		}
		dim = *req.Dimensions
	}
	switch k.Mode {
	case "verbatim":
		writeRaw(w, http.StatusOK, "application/json", Testdata("embeddings_response.json"))
		return
	case "llamacpp":
		writeRaw(w, http.StatusOK, "application/json; charset=utf-8", Testdata("embeddings_response_llamacpp.json"))
		return
	case "garbage":
		writeRaw(w, http.StatusOK, "text/html", Testdata("garbage.html"))
		return
	case "error200":
		writeRaw(w, http.StatusOK, "application/json", Testdata("error_loading.json"))
		return
	}
	resp := EmbeddingResponse{Object: "list", Model: req.Model, Data: []EmbeddingData{}}
	for i, in := range inputs {
		v := s.vector(req.Model, in, k.Dim)
		if dim < len(v) {
			v = normalise(v[:dim])
		}
		resp.Data = append(resp.Data, EmbeddingData{Object: "embedding", Index: i, Embedding: v})
		resp.Usage.PromptTokens += len(strings.Fields(in))
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens
	switch k.Mode {
	case "reversed":
		slices.Reverse(resp.Data)
	case "empty":
		resp.Data = resp.Data[:0]
	case "wrongcount":
		resp.Data = resp.Data[:len(resp.Data)-1]
	case "dupindex":
		resp.Data[len(resp.Data)-1].Index = 0
	case "badindex":
		resp.Data[0].Index = len(resp.Data)
	case "zero":
		resp.Data[0].Embedding = make([]float32, dim)
	case "noindex", "huge", "truncated":
		b, _ := json.Marshal(resp)
		switch k.Mode {
		case "noindex":
			b = bytes.ReplaceAll(b, []byte(`"index":`), []byte(`"_index":`))
		case "huge":
			b = firstValue.ReplaceAll(b, []byte(`"embedding":[1e39`))
		case "truncated":
			b = b[:len(b)/2]
		}
		writeRaw(w, http.StatusOK, "application/json", b)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// firstValue is every vector's first value in an encoded answer.
var firstValue = regexp.MustCompile(`"embedding":\[[-0-9.e+]+`)

// HashVector is a deterministic, L2-normalised vector for a text: equal
// texts get equal vectors, any two others nearly orthogonal ones.
func HashVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	h := sha256.Sum256([]byte(text))
	for i := range v {
		if i%8 == 0 && i > 0 {
			h = sha256.Sum256(h[:])
		}
		v[i] = float32(float64(int32(binary.LittleEndian.Uint32(h[(i%8)*4:]))) / math.MaxInt32)
	}
	return normalise(v)
}

func normalise(v []float32) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / math.Sqrt(sum))
	}
	return out
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only marshals the fake's own values
	}
	writeRaw(w, status, "application/json", b)
}

func writeRaw(w http.ResponseWriter, status int, ctype string, b []byte) {
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	w.Write(b)
}

// ClosedURL returns an /v1 URL of a loopback port nothing listens on.
func ClosedURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}
