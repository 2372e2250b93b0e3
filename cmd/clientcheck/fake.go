package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// exchange is one request a fake upstream received and what it answered.
type exchange struct {
	At       time.Time   // when the request arrived
	Method   string      // GET, POST
	Path     string      // URL path
	RawQuery string      // ?beta=true
	Header   http.Header // request headers as received
	Body     []byte      // request body (HTTP); nil for a WebSocket
	// Frames are the client's text frames of a WebSocket (Codex's
	// response.create); nil for plain HTTP.
	Frames [][]byte
	// Answer is every byte the fake wrote as the answer (the SSE stream,
	// or the events sent as frames, one per line); LastEventAt when it
	// wrote its last event.
	Answer      []byte
	LastEventAt time.Time
}

// fake is a fake model provider on 127.0.0.1: the Anthropic Messages API
// (POST /v1/messages, streamed as SSE exactly as api.anthropic.com does)
// or the OpenAI Responses API (POST /v1/responses as SSE, and the same
// events as WebSocket text frames on GET /v1/responses, as Codex uses
// first). It answers every model request with a short text, except a
// prompt that asks to read README.md (Claude Code only), which gets a
// tool_use of Read first so the next request carries a tool result. Every
// request is kept for the checks and the fixtures.
type fake struct {
	kind string // "anthropic" or "openai"
	// readme is the file the Read tool_use names.
	readme string
	// gap is the pause between two streamed events, so that a proxy that
	// buffered the stream would show.
	gap time.Duration

	srv *http.Server
	url string

	mu   sync.Mutex
	seen []*exchange
}

// newFake starts a fake provider of kind ("anthropic" or "openai").
func newFake(kind, readme string) (*fake, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fake %s: %w", kind, err)
	}
	f := &fake{kind: kind, readme: readme, gap: 15 * time.Millisecond, url: "http://" + l.Addr().String()}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(l) //nolint:errcheck // ends with Close
	return f, nil
}

// Close stops the fake.
func (f *fake) Close() { f.srv.Close() }

// requests returns what the fake received so far.
func (f *fake) requests() []*exchange {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*exchange(nil), f.seen...)
}

// reset forgets what the fake received.
func (f *fake) reset() {
	f.mu.Lock()
	f.seen = nil
	f.mu.Unlock()
}

func (f *fake) keep(ex *exchange) {
	f.mu.Lock()
	f.seen = append(f.seen, ex)
	f.mu.Unlock()
}

// ServeHTTP routes a request to the protocol of the fake's kind.
func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ex := &exchange{At: time.Now(), Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone()}
	defer f.keep(ex)
	if isWebSocket(r) {
		if f.kind == "openai" && r.URL.Path == "/v1/responses" {
			f.responsesWS(w, r, ex)
			return
		}
		http.Error(w, "no websocket here", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ex.Body = body
	switch {
	case f.kind == "anthropic" && r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		f.messages(w, body, ex)
	case f.kind == "anthropic" && r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		writeJSON(w, map[string]any{"input_tokens": 42})
	case f.kind == "openai" && r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		f.responses(w, body, ex)
	case f.kind == "openai" && r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		writeJSON(w, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"not_found_error","message":"fake %s: no route %s %s"}}`, f.kind, r.Method, r.URL.Path)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client sees a short body
}

// anthRequest is the part of a Messages request the fake looks at.
type anthRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Tools  []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// lastUser returns the text and whether it holds a tool_result, of the
// last user message.
func (r anthRequest) lastUser() (text string, toolResult bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s, false
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		json.Unmarshal(m.Content, &blocks) //nolint:errcheck // no blocks: no text
		var b strings.Builder
		for _, bl := range blocks {
			switch bl.Type {
			case "text":
				b.WriteString(bl.Text)
				b.WriteByte('\n')
			case "tool_result":
				toolResult = true
			}
		}
		return b.String(), toolResult
	}
	return "", false
}

func (r anthRequest) hasTool(name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// answerText is what the fakes answer a prompt with: long enough and
// specific enough for memtray's write pipeline to keep.
const answerText = "Understood. The orders service stays on PostgreSQL 16 because it needs logical replication into the analytics cluster; " +
	"I will not suggest MySQL for it again, and schema changes go through the migrations in db/migrations."

// messages answers POST /v1/messages.
func (f *fake) messages(w http.ResponseWriter, body []byte, ex *exchange) {
	var req anthRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	text, toolResult := req.lastUser()
	id := fmt.Sprintf("msg_fake_%d", time.Now().UnixNano())
	var blocks []map[string]any
	switch {
	case toolResult:
		blocks = []map[string]any{{"type": "text", "text": "README.md says the service is called demo-app and its tests run with make test."}}
	case req.hasTool("Read") && strings.Contains(text, "README.md"):
		blocks = []map[string]any{
			{"type": "text", "text": "I'll read the README first."},
			{"type": "tool_use", "id": "toolu_fake_read_1", "name": "Read", "input": map[string]any{"file_path": f.readme}},
		}
	case len(req.Tools) == 0 && !strings.Contains(text, "orders"):
		// Claude Code's side requests (titles, topics) get a short answer.
		blocks = []map[string]any{{"type": "text", "text": `{"isNewTopic": false, "title": "demo"}`}}
	default:
		blocks = []map[string]any{{"type": "text", "text": answerText}}
	}
	stop := "end_turn"
	if blocks[len(blocks)-1]["type"] == "tool_use" {
		stop = "tool_use"
	}
	if !req.Stream {
		msg := map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": blocks,
			"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 100, "output_tokens": 20}}
		b, _ := json.Marshal(msg)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b) //nolint:errcheck // the client sees a short body
		ex.Answer, ex.LastEventAt = b, time.Now()
		return
	}
	s := newSSE(w, f.gap, ex)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": id, "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 1}}})
	s.event("ping", map[string]any{"type": "ping"})
	for i, b := range blocks {
		if b["type"] == "tool_use" {
			input, _ := json.Marshal(b["input"])
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		} else {
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, part := range chunks(b["text"].(string), 3) {
				s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "text_delta", "text": part}})
			}
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": 20}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// chunks cuts s into about n pieces at spaces.
func chunks(s string, n int) []string {
	words := strings.SplitAfter(s, " ")
	per := (len(words) + n - 1) / n
	var out []string
	for len(words) > 0 {
		k := min(per, len(words))
		out = append(out, strings.Join(words[:k], ""))
		words = words[k:]
	}
	return out
}

// sseWriter writes server-sent events, flushed one by one with a gap.
type sseWriter struct {
	w     http.ResponseWriter
	gap   time.Duration
	ex    *exchange
	first bool
}

func newSSE(w http.ResponseWriter, gap time.Duration, ex *exchange) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, gap: gap, ex: ex, first: true}
}

func (s *sseWriter) event(name string, data any) {
	if !s.first {
		time.Sleep(s.gap)
	}
	s.first = false
	b, _ := json.Marshal(data)
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "event: %s\ndata: %s\n\n", name, b)
	s.w.Write(buf.Bytes()) //nolint:errcheck // a client gone is seen by the checks
	if fl, ok := s.w.(http.Flusher); ok {
		fl.Flush()
	}
	s.ex.Answer = append(s.ex.Answer, buf.Bytes()...)
	s.ex.LastEventAt = time.Now()
}

// responsesEvents are the Responses API events answering one request, as
// api.openai.com streams them (response.created ... response.completed).
func responsesEvents(model, text string) []map[string]any {
	now := time.Now().Unix()
	rid := fmt.Sprintf("resp_fake_%d", time.Now().UnixNano())
	mid := "msg_" + rid[5:]
	resp := func(status string, output []any, usage any) map[string]any {
		return map[string]any{"id": rid, "object": "response", "created_at": now, "status": status, "model": model, "output": output, "usage": usage}
	}
	item := func(status, t string) map[string]any {
		content := []any{}
		if status == "completed" {
			content = []any{map[string]any{"type": "output_text", "annotations": []any{}, "text": t}}
		}
		return map[string]any{"id": mid, "type": "message", "status": status, "content": content, "role": "assistant"}
	}
	ev := []map[string]any{
		{"type": "response.created", "response": resp("in_progress", []any{}, nil)},
		{"type": "response.in_progress", "response": resp("in_progress", []any{}, nil)},
		{"type": "response.output_item.added", "output_index": 0, "item": item("in_progress", "")},
		{"type": "response.content_part.added", "item_id": mid, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "annotations": []any{}, "text": ""}},
	}
	for _, part := range chunks(text, 3) {
		ev = append(ev, map[string]any{"type": "response.output_text.delta", "item_id": mid, "output_index": 0, "content_index": 0, "delta": part})
	}
	ev = append(ev,
		map[string]any{"type": "response.output_text.done", "item_id": mid, "output_index": 0, "content_index": 0, "text": text},
		map[string]any{"type": "response.content_part.done", "item_id": mid, "output_index": 0, "content_index": 0,
			"part": map[string]any{"type": "output_text", "annotations": []any{}, "text": text}},
		map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item("completed", text)},
		map[string]any{"type": "response.completed", "response": resp("completed", []any{item("completed", text)},
			map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 20, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 120})},
	)
	for i, e := range ev {
		e["sequence_number"] = i
	}
	return ev
}

// responsesReply picks the answer text of a Responses request: the
// memorable answer for a prompt about the orders service, else a short one.
func responsesReply(body []byte) (model, text string) {
	var req struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &req) //nolint:errcheck // no model: empty
	if bytes.Contains(body, []byte("orders")) {
		return req.Model, answerText
	}
	return req.Model, "Done: nothing to change."
}

// responses answers POST /v1/responses (streamed).
func (f *fake) responses(w http.ResponseWriter, body []byte, ex *exchange) {
	model, text := responsesReply(body)
	s := newSSE(w, f.gap, ex)
	for _, e := range responsesEvents(model, text) {
		s.event(e["type"].(string), e)
	}
}

// responsesWS answers Codex's WebSocket on GET /v1/responses: each
// response.create frame gets the same events as the SSE stream, one JSON
// text frame each.
func (f *fake) responsesWS(w http.ResponseWriter, r *http.Request, ex *exchange) {
	c, err := acceptWebSocket(w, r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	defer c.Close()
	for {
		msg, err := c.ReadText()
		if err != nil {
			return
		}
		f.mu.Lock()
		ex.Frames = append(ex.Frames, msg)
		f.mu.Unlock()
		model, text := responsesReply(msg)
		events := responsesEvents(model, text)
		if bytes.Contains(msg, []byte(`"generate":false`)) {
			// Codex's prewarm: the response is created and completed
			// with no output, as the real API answers it.
			done := events[len(events)-1]
			done["response"].(map[string]any)["output"] = []any{}
			events = []map[string]any{events[0], done}
		}
		for i, e := range events {
			if i > 0 {
				time.Sleep(f.gap)
			}
			b, _ := json.Marshal(e)
			if err := c.WriteText(b); err != nil {
				return
			}
			f.mu.Lock()
			ex.Answer = append(append(ex.Answer, b...), '\n')
			ex.LastEventAt = time.Now()
			f.mu.Unlock()
		}
	}
}
