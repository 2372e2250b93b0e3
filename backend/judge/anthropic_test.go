package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

const testKey = "sk-ant-api03-TESTKEY-do-not-leak-0123456789"

// fakeAnthropic is a loopback server speaking the Messages API
// (anthropic-version 2023-06-01, non-streaming): it checks each request's
// headers and body as the real API would and answers with the fixtures'
// bodies and the real API's headers.
type fakeAnthropic struct {
	t      testing.TB
	srv    *httptest.Server
	mode   string
	answer string // the text of the "answer" mode

	mu       sync.Mutex
	requests []map[string]any
	problems []string // what the server found wrong with a request
}

func newFakeAnthropic(t testing.TB, mode string) *fakeAnthropic {
	t.Helper()
	f := &fakeAnthropic{t: t, mode: mode}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", f.messages)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// message builds a message object as the API returns it.
func message(content []map[string]any, stop string) []byte {
	b, _ := json.Marshal(map[string]any{
		"model": "claude-haiku-4-5-20251001", "id": "msg_01Y2pP9S6vDaf1uBuyjpT8Qw", "type": "message", "role": "assistant",
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 900, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 100,
			"output_tokens": 15, "service_tier": "standard"},
	})
	return b
}

func (f *fakeAnthropic) problem(format string, args ...any) {
	f.problems = append(f.problems, fmt.Sprintf(format, args...))
}

func (f *fakeAnthropic) messages(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if got := r.Header.Get("x-api-key"); got != testKey && got != "sk-from-env" {
		f.problem("x-api-key %q", got)
	}
	if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
		f.problem("anthropic-version %q", got)
	}
	if got := r.Header.Get("content-type"); got != "application/json" {
		f.problem("content-type %q", got)
	}
	if r.Header.Get("authorization") != "" {
		f.problem("authorization header sent")
	}
	body, _ := io.ReadAll(r.Body)
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		f.problem("body: %v", err)
	}
	var req struct {
		Model       string  `json:"model"`
		MaxTokens   int     `json:"max_tokens"`
		System      string  `json:"system"`
		Temperature float64 `json:"temperature"`
		Messages    []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		f.problem("body fields: %v", err)
	}
	if req.Model == "" || req.MaxTokens < 1 || req.System == "" || len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.Messages[0].Content == "" {
		f.problem("request %+v", req)
	}
	if _, ok := raw["stream"]; ok {
		f.problem("stream field sent")
	}
	f.requests = append(f.requests, raw)
	mode, answer := f.mode, f.answer
	f.mu.Unlock()

	w.Header().Set("request-id", "req_011CUdgeEZVNjY7M6qwNV9k6")
	w.Header().Set("anthropic-organization-id", "1577a8a6-174a-4705-916c-6b22ae7a49e6")
	send := func(status int, b []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(b)
	}
	switch mode {
	case "message":
		send(http.StatusOK, readTestdata(f.t, "anthropic_message.json"))
	case "answer":
		send(http.StatusOK, message([]map[string]any{{"type": "text", "text": answer}}, "end_turn"))
	case "two-blocks":
		send(http.StatusOK, message([]map[string]any{{"type": "text", "text": "PATTERN: Stages are plain"}, {"type": "text", "text": " functions called in order."}}, "end_turn"))
	case "401":
		send(http.StatusUnauthorized, readTestdata(f.t, "anthropic_error_401.json"))
	case "404":
		send(http.StatusNotFound, readTestdata(f.t, "anthropic_error_404.json"))
	case "429":
		w.Header().Set("retry-after", "17")
		send(http.StatusTooManyRequests, readTestdata(f.t, "anthropic_error_429.json"))
	case "529":
		send(529, readTestdata(f.t, "anthropic_error_529.json"))
	case "500":
		send(http.StatusInternalServerError, readTestdata(f.t, "anthropic_error_500.json"))
	case "502-html":
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte("<html><body><h1>502 Bad Gateway</h1></body></html>"))
	case "error-200":
		send(http.StatusOK, readTestdata(f.t, "anthropic_error_529.json"))
	case "echo-key": // a misbehaving proxy that echoes the key in its error
		send(http.StatusBadRequest, []byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad key `+testKey+`"}}`))
	case "malformed":
		send(http.StatusOK, []byte(`{"id":"msg_01","type":"message","content":[{"type":"text","text":"SKIP"}`))
	case "not-message":
		send(http.StatusOK, []byte(`{"type":"completion","completion":"SKIP"}`))
	case "empty-content":
		send(http.StatusOK, message([]map[string]any{}, "end_turn"))
	case "tool-only":
		send(http.StatusOK, message([]map[string]any{{"type": "tool_use", "id": "toolu_01", "name": "x", "input": map[string]any{}}}, "tool_use"))
	case "refusal":
		send(http.StatusOK, message([]map[string]any{}, "refusal"))
	case "oversized":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"type":"message","content":[{"type":"text","text":"`))
		w.Write(bytes.Repeat([]byte("a"), maxResponseBytes+10))
		w.Write([]byte(`"}]}`))
	case "hang":
		<-r.Context().Done()
	default:
		f.t.Errorf("fake anthropic: unknown mode %q", mode)
	}
}

// checkRequests reports what the server found wrong.
func (f *fakeAnthropic) checkRequests(t *testing.T, want int) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.problems {
		t.Errorf("request: %s", p)
	}
	if len(f.requests) != want {
		t.Errorf("%d requests, want %d", len(f.requests), want)
	}
}

func newTestAnthropic(t *testing.T, base string, timeout time.Duration) *Anthropic {
	t.Helper()
	a, err := NewAnthropic(AnthropicOptions{BaseURL: base, Key: testKey, Model: "claude-haiku-4-5", Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAnthropicJudge(t *testing.T) {
	tests := []struct {
		name, mode, answer string
		want               memory.JudgeVerdict
	}{
		{"recorded message", "message", "", memory.JudgeVerdict{Kind: memory.KindInvariant,
			Memory: "The capture proxy never blocks the agent: a full ingest queue drops the exchange and counts it.", InputTokens: 1024, OutputTokens: 27}},
		{"skip", "answer", "SKIP", memory.JudgeVerdict{Skip: true, InputTokens: 1000, OutputTokens: 15}},
		{"text blocks joined", "two-blocks", "", memory.JudgeVerdict{Kind: memory.KindPattern,
			Memory: "Stages are plain functions called in order.", InputTokens: 1000, OutputTokens: 15}},
		{"lowercase bold", "answer", "**preference:** The user wants terse commit messages.", memory.JudgeVerdict{Kind: memory.KindPreference,
			Memory: "The user wants terse commit messages.", InputTokens: 1000, OutputTokens: 15}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeAnthropic(t, tc.mode)
			f.answer = tc.answer
			a := newTestAnthropic(t, f.srv.URL, 5*time.Second)
			got, err := a.Judge(context.Background(), testExchange)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			f.checkRequests(t, 1)
			req := f.requests[0]
			if req["model"] != "claude-haiku-4-5" || req["max_tokens"] != float64(DefaultMaxTokens) || req["system"] != SystemPrompt || req["temperature"] != 0.0 {
				t.Errorf("request %v", req)
			}
			msgs := req["messages"].([]any)
			if m := msgs[0].(map[string]any); m["content"] != Prompt(testExchange) {
				t.Errorf("user message %q", m["content"])
			}
		})
	}
}

func TestAnthropicErrors(t *testing.T) {
	tests := []struct {
		mode       string
		want       []error
		status     int
		errType    string
		retry      time.Duration
		withTokens bool
	}{
		{mode: "401", want: []error{ErrAuth}, status: 401, errType: "authentication_error"},
		{mode: "404", want: []error{ErrModelNotFound}, status: 404, errType: "not_found_error"},
		{mode: "429", want: []error{ErrRateLimited, memory.ErrUnavailable}, status: 429, errType: "rate_limit_error", retry: 17 * time.Second},
		{mode: "529", want: []error{ErrOverloaded, memory.ErrUnavailable}, status: 529, errType: "overloaded_error"},
		{mode: "500", want: []error{ErrServer, memory.ErrUnavailable}, status: 500, errType: "api_error"},
		{mode: "502-html", want: []error{ErrServer, memory.ErrUnavailable}, status: 502},
		{mode: "error-200", want: []error{ErrOverloaded, memory.ErrUnavailable}, status: 529, errType: "overloaded_error"},
		{mode: "echo-key", status: 400, errType: "invalid_request_error"},
		{mode: "malformed", want: []error{ErrBadAnswer}},
		{mode: "not-message", want: []error{ErrBadAnswer}},
		{mode: "empty-content", want: []error{ErrBadAnswer}, withTokens: true},
		{mode: "tool-only", want: []error{ErrBadAnswer}, withTokens: true},
		{mode: "refusal", want: []error{ErrBadAnswer}, withTokens: true},
		{mode: "unparseable", want: []error{ErrBadAnswer}, withTokens: true},
		{mode: "oversized", want: []error{ErrTooLarge}},
		{mode: "hang", want: []error{context.DeadlineExceeded, memory.ErrUnavailable}},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			f := newFakeAnthropic(t, tc.mode)
			if tc.mode == "unparseable" {
				f.mode, f.answer = "answer", "This exchange covers the choice of database."
			}
			a := newTestAnthropic(t, f.srv.URL, 300*time.Millisecond)
			start := time.Now()
			v, err := a.Judge(context.Background(), testExchange)
			if err == nil {
				t.Fatalf("no error, verdict %+v", v)
			}
			t.Logf("%s: %v", tc.mode, err)
			if time.Since(start) > 3*time.Second {
				t.Errorf("took %s", time.Since(start))
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v", err), testKey) {
				t.Fatalf("the key leaked into the error: %v", err)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("error %q does not match %v", err, w)
				}
			}
			if !strings.Contains(err.Error(), "anthropic:claude-haiku-4-5") {
				t.Errorf("error %q does not name the judge", err)
			}
			var ae *APIError
			if tc.status != 0 {
				if !errors.As(err, &ae) {
					t.Fatalf("error %q is not an APIError", err)
				}
				if ae.StatusCode != tc.status || ae.Type != tc.errType || ae.RetryAfter != tc.retry || ae.RequestID == "" {
					t.Errorf("APIError %+v, want status %d type %q retry %s", ae, tc.status, tc.errType, tc.retry)
				}
			} else if errors.As(err, &ae) {
				t.Errorf("error %q is an APIError", err)
			}
			if tc.withTokens && (v.InputTokens != 1000 || v.OutputTokens != 15) {
				t.Errorf("tokens lost: %+v", v)
			}
			if v.Skip || v.Memory != "" {
				t.Errorf("verdict %+v with an error", v)
			}
			f.checkRequests(t, 1)
		})
	}
}

func TestAnthropicNoRedirect(t *testing.T) {
	var leaked sync.Map
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store("key", r.Header.Get("x-api-key"))
	}))
	defer thief.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, thief.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	a := newTestAnthropic(t, redirector.URL, time.Second)
	_, err := a.Judge(context.Background(), testExchange)
	if err == nil {
		t.Fatal("a redirect was accepted")
	}
	if k, ok := leaked.Load("key"); ok {
		t.Fatalf("the redirect carried the key %q to another server", k)
	}
}

func TestNewAnthropic(t *testing.T) {
	t.Setenv(AnthropicKeyEnv, "")
	if _, err := NewAnthropic(AnthropicOptions{Model: "m"}); !errors.Is(err, ErrNoKey) {
		t.Errorf("no key: %v, want ErrNoKey", err)
	}
	for _, tc := range []struct {
		base, key, model string
		endpoint         string
		bad              bool
	}{
		{"", testKey, "claude-haiku-4-5", "https://api.anthropic.com/v1/messages", false},
		{"https://gateway.example/anthropic/", testKey, "m", "https://gateway.example/anthropic/v1/messages", false},
		{"http://127.0.0.1:8080", testKey, "m", "http://127.0.0.1:8080/v1/messages", false},
		{"http://localhost:8080", testKey, "m", "http://localhost:8080/v1/messages", false},
		{"http://[::1]:8080", testKey, "m", "http://[::1]:8080/v1/messages", false},
		{"http://api.anthropic.com", testKey, "m", "", true}, // the key in clear over a network
		{"ftp://x", testKey, "m", "", true},
		{"https://user:pw@x", testKey, "m", "", true},
		{"https://x/?q=1", testKey, "m", "", true},
		{"not a url", testKey, "m", "", true},
		{"", "key with space", "m", "", true},
		{"", testKey, "", "", true},
	} {
		a, err := NewAnthropic(AnthropicOptions{BaseURL: tc.base, Key: tc.key, Model: tc.model})
		if tc.bad {
			if err == nil {
				t.Errorf("NewAnthropic(%q, %q) accepted", tc.base, tc.model)
			} else if strings.Contains(err.Error(), testKey) {
				t.Errorf("key in error %q", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("NewAnthropic(%q): %v", tc.base, err)
			continue
		}
		if a.Endpoint() != tc.endpoint || a.Name() != "anthropic:"+tc.model {
			t.Errorf("endpoint %q name %q, want %q", a.Endpoint(), a.Name(), tc.endpoint)
		}
	}
	// The key comes from the environment when the options have none.
	t.Setenv(AnthropicKeyEnv, " sk-from-env\n")
	f := newFakeAnthropic(t, "answer")
	f.answer = "SKIP"
	a, err := NewAnthropic(AnthropicOptions{BaseURL: f.srv.URL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Judge(context.Background(), testExchange); err != nil {
		t.Fatal(err)
	}
	f.checkRequests(t, 1)
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0},
		{"17", 17 * time.Second},
		{"0.5", 500 * time.Millisecond},
		{"-3", 0},
		{"999999", 0},
		{"Thu, 20 Nov 2025 10:01:00 GMT", time.Minute},
		{"Thu, 20 Nov 2025 09:00:00 GMT", 0},
		{"soon", 0},
	} {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("retryAfter(%q) = %s, want %s", tc.h, got, tc.want)
		}
	}
}
