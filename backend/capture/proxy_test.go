package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/refuse"
)

// checkForwarded asserts the upstream received the request unchanged.
func checkForwarded(t *testing.T, got seen, path, query string, header http.Header, body []byte) {
	t.Helper()
	if got.Path != path || got.RawQuery != query {
		t.Errorf("upstream got %s?%s, want %s?%s", got.Path, got.RawQuery, path, query)
	}
	if !bytes.Equal(got.Body, body) {
		t.Errorf("upstream body differs: %d bytes, want %d", len(got.Body), len(body))
	}
	for k, v := range header {
		if !reflect.DeepEqual(got.Header[k], v) {
			t.Errorf("upstream header %s = %q, want %q", k, got.Header[k], v)
		}
	}
	for _, k := range []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "Accept-Encoding"} {
		if v, ok := got.Header[k]; ok && header.Get(k) == "" {
			t.Errorf("proxy added %s: %q", k, v)
		}
	}
}

// checkAnswered asserts the client got the upstream's answer unchanged.
func checkAnswered(t *testing.T, resp *http.Response, got []byte, status int, header http.Header, body []byte) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status %d, want %d", resp.StatusCode, status)
	}
	for k, v := range header {
		if !reflect.DeepEqual(resp.Header[k], v) {
			t.Errorf("client header %s = %q, want %q", k, resp.Header[k], v)
		}
	}
	if !bytes.Equal(got, body) {
		t.Errorf("client body differs:\n got %q\nwant %q", trunc(got), trunc(body))
	}
}

func trunc(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func TestAnthropicStreamByteIdenticalAndCaptured(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	body := readFile(t, "claude_code_prompt.json")
	sse := readFile(t, "anthropic_tools.sse")
	h.up.reply(200, sseHeader(), sse)
	h.up.gap = time.Millisecond

	resp, got := h.post(t, "/v1/messages?beta=true", claudeHeader(), body)
	checkAnswered(t, resp, got, 200, sseHeader(), sse)
	reqs := h.up.requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests", len(reqs))
	}
	checkForwarded(t, reqs[0], "/v1/messages", "beta=true", claudeHeader(), body)

	ex := h.sink.next(t)
	want := memory.Exchange{
		SessionID: "9b2f4c1e-7a3d-4e8b-9c0d-1f2e3a4b5c6d", Turn: 2, UserTurns: 2,
		Project: "memtray", Source: "capture",
		User:      "and why did we pick bbolt?",
		Assistant: "The daemon listens on port 7432 — I'll read the config to confirm.",
		ToolCalls: []memory.ToolCall{{ID: "toolu_memtray_01", Name: "Read", Input: `{"file_path": "/home/dev/src/memtray/config.json"}`}},
		Model:     "claude-sonnet-4-5-20250929",
		Usage:     &memory.Usage{InputTokens: 1203, OutputTokens: 87, CacheCreationInputTokens: 410, CacheReadInputTokens: 9100},
	}
	if ex.StartedAt.IsZero() || ex.EndedAt.Before(ex.StartedAt) {
		t.Errorf("times %v .. %v", ex.StartedAt, ex.EndedAt)
	}
	ex.StartedAt, ex.EndedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(ex, want) {
		t.Errorf("exchange\n got %+v\nwant %+v", ex, want)
	}
	st := h.p.Stats()
	if st.Requests != 1 || st.Captured != 1 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestAnthropicToolLoopHeadless(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	h.up.reply(200, sseHeader(), readFile(t, "anthropic_text.sse"))
	h.post(t, "/v1/messages?beta=true", claudeHeader(), readFile(t, "claude_code_toolloop.json"))
	ex := h.sink.next(t)
	if !ex.ToolLoop || ex.User != "" || !ex.Headless || ex.Project != "secret-client" || ex.Turn != 2 || ex.UserTurns != 1 {
		t.Errorf("exchange %+v", ex)
	}
	want := []memory.ToolResult{{ToolUseID: "toolu_memtray_01", Name: "Read", Content: `{"listen": "127.0.0.1:7432"}`}}
	if !reflect.DeepEqual(ex.ToolResults, want) {
		t.Errorf("tool results %+v", ex.ToolResults)
	}
	if ex.Assistant != "We chose bbolt as the store of record because it survives kill -9." || ex.Model != "claude-haiku-4-5-20251001" {
		t.Errorf("assistant %q model %q", ex.Assistant, ex.Model)
	}
}

func TestAnthropicErrorEventCapturedAsError(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := readFile(t, "anthropic_error.sse")
	h.up.reply(200, sseHeader(), sse)
	resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, sseHeader(), sse)
	ex := h.sink.next(t)
	if !ex.Error || ex.Assistant != "Let me" {
		t.Errorf("exchange %+v", ex)
	}
}

func TestRefusalIsError(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := strings.Replace(string(readFile(t, "anthropic_text.sse")), `"stop_reason":"end_turn"`, `"stop_reason":"refusal"`, 1)
	h.up.reply(200, sseHeader(), []byte(sse))
	h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	if ex := h.sink.next(t); !ex.Error {
		t.Errorf("refusal not an error: %+v", ex)
	}
}

// TestChunkTiming: the client has read event N before the upstream sends
// event N+1 (the upstream waits for the test's go-ahead after each event).
func TestChunkTiming(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := readFile(t, "anthropic_tools.sse")
	events := splitEvents(sse)
	h.up.reply(200, sseHeader(), sse)
	h.up.release = make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a hang guard only
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/v1/messages", bytes.NewReader(readFile(t, "claude_code_prompt.json")))
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var all []byte
	for i, ev := range events {
		buf := make([]byte, len(ev))
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			aborted := len(h.up.aborted)
			t.Fatalf("event %d not delivered before event %d was sent: %v (upstream aborted %d, stats %+v)", i, i+1, err, aborted, h.p.Stats())
		}
		if !bytes.Equal(buf, ev) {
			t.Fatalf("event %d = %q, want %q", i, buf, ev)
		}
		all = append(all, buf...)
		if i < len(events)-1 {
			h.up.release <- struct{}{} // only now may the upstream send event i+1
		}
	}
	if rest, _ := io.ReadAll(resp.Body); len(rest) != 0 {
		t.Errorf("extra bytes %q", rest)
	}
	if !bytes.Equal(all, sse) {
		t.Error("stream differs")
	}
	h.sink.next(t)
}

func TestErrorStatusesPassThroughNotCaptured(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	for _, status := range []int{400, 401, 429, 500, 529} {
		body := []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_x"}`)
		hdr := http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_x"}, "Retry-After": {"7"}, "X-Should-Retry": {"true"}}
		h.up.reply(status, hdr, body)
		resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
		checkAnswered(t, resp, got, status, hdr, body)
	}
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.NotCapturedStatus != 5 || st.Captured != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestUpstreamDown502(t *testing.T) {
	down := refuse.New(t).HostPort
	dead := "http://" + down
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.AnthropicUpstream = dead }})
	resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	if resp.StatusCode != http.StatusBadGateway || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(got, &e); err != nil || e.Type != "error" || e.Error.Type != "api_error" || !strings.HasPrefix(e.Error.Message, "memtray proxy: upstream "+down+": ") {
		t.Errorf("body %s (%v)", got, err)
	}
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.UpstreamErrors != 1 || st.Captured != 0 || st.LastError == "" {
		t.Errorf("stats %+v", st)
	}
}

func TestClientCancelNotCapturedNoLeak(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := readFile(t, "anthropic_tools.sse")
	h.up.reply(200, sseHeader(), sse)
	h.up.release = make(chan struct{})
	// Warm the connections up, then measure.
	h.up.release = nil
	h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	h.sink.next(t)
	h.client.CloseIdleConnections()
	h.tr.CloseIdleConnections()
	time.Sleep(50 * time.Millisecond)
	base := runtime.NumGoroutine()

	h.up.mu.Lock()
	h.up.release = make(chan struct{}) // never released: the stream stalls after event 0
	h.up.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, h.url+"/v1/messages", bytes.NewReader(readFile(t, "claude_code_prompt.json")))
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := splitEvents(sse)[0]
	if _, err := io.ReadFull(resp.Body, make([]byte, len(first))); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-h.up.aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("upstream never saw the cancel")
	}
	h.sink.none(t, h.p)
	h.client.CloseIdleConnections()
	h.tr.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	n := runtime.NumGoroutine()
	for n > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		h.client.CloseIdleConnections()
		h.tr.CloseIdleConnections()
		n = runtime.NumGoroutine()
	}
	if n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines %d, before %d:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
	if st := h.p.Stats(); st.Captured != 1 || st.UpstreamErrors != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestOtherPathsPassThroughNotCaptured(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	body := []byte(`{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hello there"}]}`)
	answer := []byte(`{"input_tokens":11}`)
	hdr := http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_ct"}}
	h.up.reply(200, hdr, answer)
	resp, got := h.post(t, "/v1/messages/count_tokens?beta=true", claudeHeader(), body)
	checkAnswered(t, resp, got, 200, hdr, answer)
	checkForwarded(t, h.up.requests()[0], "/v1/messages/count_tokens", "beta=true", claudeHeader(), body)

	models := []byte(`{"data":[{"id":"claude-sonnet-4-5","type":"model"}],"has_more":false}`)
	h.up.reply(200, hdr, models)
	req, _ := http.NewRequest(http.MethodGet, h.url+"/v1/models?limit=5", nil)
	req.Header.Set("X-Api-Key", "k")
	resp2, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got2, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	checkAnswered(t, resp2, got2, 200, hdr, models)
	if r := h.up.requests()[1]; r.Method != "GET" || r.Path != "/v1/models" || r.RawQuery != "limit=5" {
		t.Errorf("upstream got %+v", r)
	}
	// A GET on the messages path and a batch are not captured either.
	h.up.reply(200, sseHeader(), readFile(t, "anthropic_text.sse"))
	h.post(t, "/v1/messages/batches", claudeHeader(), readFile(t, "claude_code_prompt.json"))

	resp3, got3 := h.post(t, "/api/status", nil, nil)
	if resp3.StatusCode != 404 || !strings.Contains(string(got3), `"type":"error"`) || len(h.up.requests()) != 3 {
		t.Errorf("unknown path: %d %s", resp3.StatusCode, got3)
	}
	h.sink.none(t, h.p)
}

func TestOpenAIChatStream(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := readFile(t, "openai_chat.sse")
	hdr := http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, "X-Request-Id": {"req_oai"}, "Openai-Processing-Ms": {"120"}}
	h.up.reply(200, hdr, sse)
	body := readFile(t, "openai_chat_request.json")
	oh := http.Header{"Authorization": {"Bearer sk-not-real"}, "Content-Type": {"application/json"}, "Openai-Organization": {"org-x"}}
	resp, got := h.post(t, "/openai/v1/chat/completions?api-version=1", oh, body)
	checkAnswered(t, resp, got, 200, hdr, sse)
	checkForwarded(t, h.up.requests()[0], "/v1/chat/completions", "api-version=1", oh, body)
	ex := h.sink.next(t)
	want := memory.Exchange{SessionID: hashID("how do I run the tests?"), Turn: 2, UserTurns: 1, Project: "app", Source: "capture",
		Assistant: "Use `make test`.", ToolLoop: true,
		ToolCalls:   []memory.ToolCall{{ID: "call_memtray_1", Name: "run", Input: `{"cmd":"make test"}`}},
		ToolResults: []memory.ToolResult{{ToolUseID: "call_memtray_0", Name: "ls", Content: "Makefile\nmain.go"}},
		Model:       "gpt-4.1-mini-2025-04-14", Usage: &memory.Usage{InputTokens: 91, OutputTokens: 24, CacheReadInputTokens: 64}}
	ex.StartedAt, ex.EndedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(ex, want) {
		t.Errorf("exchange\n got %+v\nwant %+v", ex, want)
	}
}

func TestOpenAIResponsesStream(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := readFile(t, "openai_responses.sse")
	hdr := http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}, "X-Request-Id": {"req_resp"}}
	h.up.reply(200, hdr, sse)
	body := readFile(t, "openai_responses_request.json")
	resp, got := h.post(t, "/openai/v1/responses", http.Header{"Authorization": {"Bearer x"}}, body)
	checkAnswered(t, resp, got, 200, hdr, sse)
	checkForwarded(t, h.up.requests()[0], "/v1/responses", "", http.Header{"Authorization": {"Bearer x"}}, body)
	ex := h.sink.next(t)
	want := memory.Exchange{SessionID: "0199a8d2-1c3b-7f00-8e8e-3d2c1b0a9f8e", Turn: 1, UserTurns: 1, Project: "codexed", Source: "capture",
		User: "where do tests live?", Assistant: "Tests live next to the code they test.",
		ToolCalls: []memory.ToolCall{{ID: "call_memtray_r1", Name: "shell", Input: `{"command":["ls"]}`}},
		Model:     "gpt-5-codex", Usage: &memory.Usage{InputTokens: 320, OutputTokens: 41, CacheReadInputTokens: 128}}
	ex.StartedAt, ex.EndedAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(ex, want) {
		t.Errorf("exchange\n got %+v\nwant %+v", ex, want)
	}
}

func TestNonStreamingJSONPlainAndGzip(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	msg := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-1","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"Run make test."},{"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"make test"}}],"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`)
	hdr := http.Header{"Content-Type": {"application/json"}, "Request-Id": {"req_j"}}
	h.up.reply(200, hdr, msg)
	resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, hdr, msg)
	ex := h.sink.next(t)
	if ex.Assistant != "Run make test." || len(ex.ToolCalls) != 1 || ex.ToolCalls[0].Input != `{"command":"make test"}` || ex.Model != "claude-opus-4-1" {
		t.Errorf("plain: %+v", ex)
	}

	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write(msg)
	zw.Close()
	gz := zb.Bytes()
	hdrz := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}
	h.up.reply(200, hdrz, gz)
	ch := claudeHeader()
	ch.Set("Accept-Encoding", "gzip, deflate, br")
	resp, got = h.post(t, "/v1/messages", ch, readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, hdrz, gz) // still compressed: passed through untouched
	if h.up.requests()[1].Header.Get("Accept-Encoding") != "gzip, deflate, br" {
		t.Error("Accept-Encoding not forwarded as sent")
	}
	if ex := h.sink.next(t); ex.Assistant != "Run make test." {
		t.Errorf("gzip: %+v", ex)
	}
	// An encoding we cannot read passes through and is not captured.
	hdrb := http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"br"}}
	h.up.reply(200, hdrb, []byte("\x1b\x00garbage"))
	resp, got = h.post(t, "/v1/messages", ch, readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, hdrb, []byte("\x1b\x00garbage"))
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.Unparsed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestTooLargeForwardedNotCaptured(t *testing.T) {
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.MaxCaptureBytes = 4 << 10 }})
	sse := readFile(t, "anthropic_text.sse")
	h.up.reply(200, sseHeader(), sse)
	// A request over the bound (sent chunked, so its size is unknown up front).
	big := bytes.Replace(readFile(t, "claude_code_prompt.json"), []byte("which port"), bytes.Repeat([]byte("x"), 10<<10), 1)
	req, _ := http.NewRequest(http.MethodPost, h.url+"/v1/messages", io.MultiReader(bytes.NewReader(big)))
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkAnswered(t, resp, got, 200, sseHeader(), sse)
	if !bytes.Equal(h.up.requests()[0].Body, big) {
		t.Error("large request body changed")
	}
	// An answer over the bound.
	var long bytes.Buffer
	long.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n")
	for range 100 {
		long.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("y", 100) + "\"}}\n\n")
	}
	long.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	h.up.reply(200, sseHeader(), long.Bytes())
	resp, got = h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, sseHeader(), long.Bytes())
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.TooLarge != 2 || st.Captured != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStreamWithoutEndNotCaptured(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	sse := readFile(t, "anthropic_text.sse")
	cut := sse[:bytes.Index(sse, []byte("event: message_stop"))]
	h.up.reply(200, sseHeader(), cut)
	resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, sseHeader(), cut)
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.Unparsed != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestNewValidatesUpstreams(t *testing.T) {
	for _, u := range []string{"", "ftp://x", "http://", "https://api.anthropic.com?x=1", "::"} {
		cfg := testConfig("https://api.anthropic.com")
		cfg.OpenAIUpstream = u
		if _, err := New(Options{Config: cfg}); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	cfg := testConfig("https://api.anthropic.com/base")
	if _, err := New(Options{Config: cfg}); err != nil {
		t.Error(err)
	}
}

// TestUpstreamBasePath: an upstream with a path prefix keeps it.
func TestUpstreamBasePath(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	p, err := New(Options{Config: testConfig(h.up.srv.URL + "/gateway/anthropic")})
	if err != nil {
		t.Fatal(err)
	}
	h.up.reply(200, http.Header{"Content-Type": {"application/json"}}, []byte(`{}`))
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/v1/models?x=%2F", nil)
	p.ServeHTTP(rec, req)
	if r := h.up.requests()[0]; r.Path != "/gateway/anthropic/v1/models" || r.RawQuery != "x=%2F" {
		t.Errorf("upstream got %+v", r)
	}
}

// recorder is a minimal ResponseWriter with Flush.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) Flush()                      {}

// readEvents reads SSE events off a stream; used by benchmarks too.
func readEvent(br *bufio.Reader) ([]byte, error) {
	var ev []byte
	for {
		line, err := br.ReadBytes('\n')
		ev = append(ev, line...)
		if err != nil {
			return ev, err
		}
		if len(line) == 1 {
			return ev, nil
		}
	}
}
