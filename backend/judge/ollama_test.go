package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/refuse"
)

// readTestdata returns a file of testdata/.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testExchange is an exchange worth remembering.
var testExchange = memory.Exchange{
	SessionID: "s1",
	Turn:      3,
	Project:   "memtray",
	User:      "Why bbolt and not SQLite for the store of record?",
	Assistant: "We chose bbolt because it is pure Go: SQLite would need cgo and break the static build.",
	ToolCalls: []memory.ToolCall{{Name: "Read", Input: `{"file_path":"go.mod"}`}},
}

// fakeOllama is a loopback server speaking Ollama v0.13.0's /api/chat: the
// status codes and bodies of server/routes.go ChatHandler and streamResponse.
type fakeOllama struct {
	t    testing.TB
	srv  *httptest.Server
	mode string // see chat
	// answer is the content returned in the "answer" mode.
	answer string

	mu       sync.Mutex
	requests []map[string]any // raw request bodies
	decoded  []api.ChatRequest
}

// set changes the mode and answer between requests.
func (f *fakeOllama) set(mode, answer string) {
	f.mu.Lock()
	f.mode, f.answer = mode, answer
	f.mu.Unlock()
}

func newFakeOllama(t testing.TB, mode string) *fakeOllama {
	t.Helper()
	f := &fakeOllama{t: t, mode: mode}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", f.chat)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// chatResponse marshals a response as the server does.
func chatResponse(content string, done bool) []byte {
	r := api.ChatResponse{
		Model:     "llama3.2",
		CreatedAt: time.Date(2025, 11, 20, 9, 0, 0, 123456000, time.UTC),
		Message:   api.Message{Role: "assistant", Content: content},
		Done:      done,
	}
	if done {
		r.DoneReason = "stop"
		r.TotalDuration, r.LoadDuration = 900*time.Millisecond, 20*time.Millisecond
		r.PromptEvalCount, r.PromptEvalDuration = 700, 500*time.Millisecond
		r.EvalCount, r.EvalDuration = 12, 300*time.Millisecond
	}
	b, _ := json.Marshal(r)
	return b
}

func (f *fakeOllama) chat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var raw map[string]any
	var dec api.ChatRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":%q}`, err.Error())
		return
	}
	_ = json.Unmarshal(body, &dec)
	f.mu.Lock()
	f.requests = append(f.requests, raw)
	f.decoded = append(f.decoded, dec)
	mode, answer := f.mode, f.answer
	f.mu.Unlock()

	jsonBody := func(status int, b []byte) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write(b)
	}
	ndjson := func(lines ...[]byte) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		for _, l := range lines {
			w.Write(l)
			if len(l) == 0 || l[len(l)-1] != '\n' {
				w.Write([]byte("\n"))
			}
			w.(http.Flusher).Flush()
		}
	}
	switch mode {
	case "json": // honours stream:false with the recorded object
		jsonBody(http.StatusOK, readTestdata(f.t, "ollama_chat.json"))
	case "stream": // streams whatever the request says, as a stream:true request gets
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Write(readTestdata(f.t, "ollama_chat_stream.ndjson"))
	case "answer":
		if dec.Stream != nil && !*dec.Stream {
			jsonBody(http.StatusOK, chatResponse(answer, true))
		} else {
			ndjson(chatResponse(answer, false), chatResponse("", true))
		}
	case "notfound":
		jsonBody(http.StatusNotFound, readTestdata(f.t, "ollama_chat_not_found.json"))
	case "busy":
		jsonBody(http.StatusServiceUnavailable, readTestdata(f.t, "ollama_chat_busy.json"))
	case "500":
		jsonBody(http.StatusInternalServerError, []byte(`{"error":"llama runner process has terminated: signal: killed"}`))
	case "500-empty":
		w.WriteHeader(http.StatusInternalServerError)
	case "502-html":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html><body>Bad Gateway</body></html>\n"))
	case "401":
		jsonBody(http.StatusUnauthorized, []byte(`{"error":"unauthorized","signin_url":"https://ollama.com/connect"}`))
	case "malformed":
		jsonBody(http.StatusOK, []byte(`{"model":"llama3.2","message":{"role":"assistant","content":"SKIP"`+"\n"))
	case "empty200":
		jsonBody(http.StatusOK, nil)
	case "nodone":
		ndjson(chatResponse("SKIP", false))
	case "stream-error":
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Write(readTestdata(f.t, "ollama_chat_stream_error.ndjson"))
	case "huge": // many lines, each small, together over the bound
		w.Header().Set("Content-Type", "application/x-ndjson")
		line := chatResponse(strings.Repeat("a", 1000), false)
		for i := 0; i < 400; i++ {
			w.Write(line)
			w.Write([]byte("\n"))
		}
		w.Write(chatResponse("", true))
	case "hugeline": // one object over the bound (and over the client's line buffer)
		jsonBody(http.StatusOK, chatResponse("FACT: "+strings.Repeat("b", 700<<10), true))
	case "hang":
		<-r.Context().Done()
	default:
		f.t.Errorf("fake ollama: unknown mode %q", mode)
	}
}

func newTestOllama(t *testing.T, host string, timeout time.Duration) *Ollama {
	t.Helper()
	o, err := NewOllama(OllamaOptions{Host: host, Model: "llama3.2", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOllamaJudge(t *testing.T) {
	tests := []struct {
		name   string
		mode   string
		answer string
		want   memory.JudgeVerdict
	}{
		{"stream false object", "json", "", memory.JudgeVerdict{Kind: memory.KindDecision,
			Memory: "The store of record is bbolt, chosen over SQLite to keep the build free of cgo.", InputTokens: 812, OutputTokens: 24}},
		{"ndjson stream", "stream", "", memory.JudgeVerdict{Kind: memory.KindConvention,
			Memory: "Errors are wrapped with context and never logged inside a package.", InputTokens: 790, OutputTokens: 16}},
		{"skip", "answer", "SKIP", memory.JudgeVerdict{Skip: true, InputTokens: 700, OutputTokens: 12}},
		{"think block", "answer", "<think>\nThe user asks why; the answer is durable.\n</think>\n\n**CONFIG:** The daemon listens on 127.0.0.1:7432.",
			memory.JudgeVerdict{Kind: memory.KindConfig, Memory: "The daemon listens on 127.0.0.1:7432.", InputTokens: 700, OutputTokens: 12}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOllama(t, tc.mode)
			f.set(tc.mode, tc.answer)
			o := newTestOllama(t, f.srv.URL, 5*time.Second)
			got, err := o.Judge(context.Background(), testExchange)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			checkOllamaRequest(t, f)
		})
	}
}

// checkOllamaRequest checks the one request the client sent.
func checkOllamaRequest(t *testing.T, f *fakeOllama) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) != 1 {
		t.Fatalf("%d requests, want 1", len(f.requests))
	}
	raw, dec := f.requests[0], f.decoded[0]
	if raw["model"] != "llama3.2" {
		t.Errorf("model %v", raw["model"])
	}
	if raw["stream"] != false {
		t.Errorf("stream %v, want false", raw["stream"])
	}
	if raw["think"] != false {
		t.Errorf("think %v, want false", raw["think"])
	}
	opts, _ := raw["options"].(map[string]any)
	if opts["temperature"] != 0.0 || opts["num_predict"] != float64(DefaultMaxTokens) {
		t.Errorf("options %v", opts)
	}
	if len(dec.Messages) != 2 || dec.Messages[0].Role != "system" || dec.Messages[0].Content != SystemPrompt ||
		dec.Messages[1].Role != "user" || dec.Messages[1].Content != Prompt(testExchange) {
		t.Errorf("messages %+v", dec.Messages)
	}
	if !strings.Contains(dec.Messages[1].Content, "<tools_used>Read</tools_used>") {
		t.Errorf("tool names missing from %q", dec.Messages[1].Content)
	}
}

func TestOllamaErrors(t *testing.T) {
	tests := []struct {
		mode       string
		want       []error
		status     int
		withTokens bool
	}{
		{mode: "notfound", want: []error{ErrModelNotFound}, status: 404},
		{mode: "busy", want: []error{ErrOverloaded, memory.ErrUnavailable}, status: 503},
		{mode: "500", want: []error{ErrServer, memory.ErrUnavailable}, status: 500},
		{mode: "500-empty", want: []error{ErrServer, memory.ErrUnavailable}, status: 500},
		{mode: "502-html", want: []error{ErrServer, memory.ErrUnavailable}, status: 502},
		{mode: "401", want: []error{ErrAuth}, status: 401},
		{mode: "malformed", want: []error{ErrBadAnswer}},
		{mode: "empty200", want: []error{ErrBadAnswer}},
		{mode: "nodone", want: []error{ErrBadAnswer}},
		{mode: "stream-error", want: []error{ErrServer, memory.ErrUnavailable}},
		{mode: "huge", want: []error{ErrTooLarge}},
		{mode: "hugeline", want: []error{ErrTooLarge}},
		{mode: "hang", want: []error{context.DeadlineExceeded, memory.ErrUnavailable}},
		{mode: "unparseable", want: []error{ErrBadAnswer}, withTokens: true},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			mode := tc.mode
			f := newFakeOllama(t, mode)
			if mode == "unparseable" {
				f.set("answer", "I think this exchange is quite interesting.")
			}
			// Only "hang" needs the timeout; the others get room to
			// finish under -race on a loaded 2-core machine.
			timeout := 10 * time.Second
			if mode == "hang" {
				timeout = 300 * time.Millisecond
			}
			o := newTestOllama(t, f.srv.URL, timeout)
			start := time.Now()
			v, err := o.Judge(context.Background(), testExchange)
			if err == nil {
				t.Fatalf("no error, verdict %+v", v)
			}
			if mode == "hang" && time.Since(start) > 3*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q does not match %v", err, w)
				}
			}
			if !strings.Contains(err.Error(), "ollama:llama3.2") {
				t.Errorf("error %q does not name the judge", err)
			}
			var ae *APIError
			if tc.status != 0 {
				if !errors.As(err, &ae) || ae.StatusCode != tc.status || ae.Provider != "ollama" {
					t.Errorf("error %q: want an APIError with status %d", err, tc.status)
				}
			} else if errors.As(err, &ae) {
				t.Errorf("error %q is an APIError", err)
			}
			if tc.withTokens && (v.InputTokens != 700 || v.OutputTokens != 12) {
				t.Errorf("tokens of an unparseable answer lost: %+v", v)
			}
			t.Logf("%s: %v", tc.mode, err)
			if v.Skip || v.Memory != "" {
				t.Errorf("verdict %+v with an error", v)
			}
		})
	}
}

func TestOllamaNotRunning(t *testing.T) {
	addr := refuse.New(t).HostPort
	o := newTestOllama(t, addr, time.Second)
	_, err := o.Judge(context.Background(), testExchange)
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("error %v, want ErrUnavailable", err)
	}
}

func TestOllamaEmptyExchangeIsNotSent(t *testing.T) {
	f := newFakeOllama(t, "json")
	o := newTestOllama(t, f.srv.URL, time.Second)
	v, err := o.Judge(context.Background(), memory.Exchange{User: " ", Assistant: "\n"})
	if err != nil || !v.Skip {
		t.Fatalf("got %+v, %v; want a skip", v, err)
	}
	if len(f.requests) != 0 {
		t.Fatalf("%d requests sent", len(f.requests))
	}
}

func TestOllamaCallerCancel(t *testing.T) {
	f := newFakeOllama(t, "hang")
	o := newTestOllama(t, f.srv.URL, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := o.Judge(ctx, testExchange)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestNewOllamaOptions(t *testing.T) {
	tests := []struct {
		host, model string
		wantHost    string
		bad         bool
	}{
		{"", "llama3.2", DefaultOllamaHost, false},
		{"127.0.0.1:11500", "llama3.2", "http://127.0.0.1:11500", false},
		{"ollama.local", "qwen3:4b", "http://ollama.local:11434", false},
		{"https://ollama.example", "llama3.2", "https://ollama.example:443", false},
		{"http://[::1]:11434/prefix", "llama3.2", "http://[::1]:11434/prefix", false},
		{"0.0.0.0", "llama3.2", "http://127.0.0.1:11434", false},
		{"ftp://x", "llama3.2", "", true},
		{"host:99999", "llama3.2", "", true},
		{"bad host", "llama3.2", "", true},
		{"http://h/p?q", "llama3.2", "", true},
		{"", "", "", true},
		{"", "has space", "", true},
	}
	t.Setenv("OLLAMA_HOST", "")
	for _, tc := range tests {
		o, err := NewOllama(OllamaOptions{Host: tc.host, Model: tc.model})
		if tc.bad {
			if err == nil || !errors.Is(err, memory.ErrInvalid) {
				t.Errorf("NewOllama(%q, %q) = %v, want ErrInvalid", tc.host, tc.model, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewOllama(%q, %q): %v", tc.host, tc.model, err)
			continue
		}
		if o.Host() != tc.wantHost {
			t.Errorf("host %q -> %q, want %q", tc.host, o.Host(), tc.wantHost)
		}
		if o.Name() != "ollama:"+tc.model {
			t.Errorf("name %q", o.Name())
		}
	}
	t.Setenv("OLLAMA_HOST", "127.0.0.1:12345")
	if o, err := NewOllama(OllamaOptions{Model: "m"}); err != nil || o.Host() != "http://127.0.0.1:12345" {
		t.Errorf("$OLLAMA_HOST not used: %v", err)
	}
}
