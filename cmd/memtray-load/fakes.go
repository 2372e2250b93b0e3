package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"time"
)

// Pace is how the fake provider streams an answer: the wait before its
// first event (the model thinking) and between two text deltas, and how
// many deltas an answer has.
type Pace struct {
	FirstEvent time.Duration
	Gap        time.Duration
	Deltas     int
}

// provider is a fake Anthropic Messages API on loopback: each POST
// /v1/messages gets a stream shaped like Anthropic's (message_start,
// content_block_start, ping, text deltas, content_block_stop,
// message_delta, message_stop), written event by event with the pace's
// delays. The answer is a function of the request's X-Load-Id header, so a
// client knows byte for byte what it must receive.
type provider struct {
	pace Pace
	srv  *http.Server
	url  string
}

func startProvider(p Pace) (*provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	pr := &provider{pace: p, url: "http://" + ln.Addr().String()}
	pr.srv = &http.Server{Handler: pr, ReadHeaderTimeout: 10 * time.Second}
	go pr.srv.Serve(ln)
	return pr, nil
}

func (p *provider) close() { p.srv.Close() }

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		http.Error(w, `{"type":"error","error":{"type":"not_found_error","message":"fake provider: only POST /v1/messages"}}`, http.StatusNotFound)
		return
	}
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return
	}
	events := answerEvents(r.Header.Get("X-Load-Id"), p.pace.Deltas)
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Request-Id", "req_load_"+r.Header.Get("X-Load-Id"))
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	timer := time.NewTimer(p.pace.FirstEvent)
	defer timer.Stop()
	for i, ev := range events {
		wait := p.pace.Gap
		if i == 0 {
			wait = p.pace.FirstEvent
		}
		if wait > 0 && (i == 0 || strings.Contains(ev, "text_delta")) {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return
			}
		}
		if _, err := io.WriteString(w, ev); err != nil {
			return
		}
		fl.Flush()
	}
}

// answerText is the assistant's reply to request id: specific enough for
// the write pipeline to keep (a path, a setting, a reason).
func answerText(id string) string {
	h := sha256.Sum256([]byte(id))
	n := binary.LittleEndian.Uint32(h[:4])
	return fmt.Sprintf("In svc%d the retry budget for %s is set in config/retry-%d.yaml: RETRY_MAX=%d, because the payment gateway drops idle connections after %d seconds and the client must reconnect first.",
		n%97, id, n%1000, n%9+2, n%50+10)
}

// answerEvents is the whole answer stream to request id, event by event.
func answerEvents(id string, deltas int) []string {
	var out []string
	ev := func(name string, v any) {
		data, _ := json.Marshal(v)
		out = append(out, "event: "+name+"\ndata: "+string(data)+"\n\n")
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_load_" + id, "type": "message", "role": "assistant", "model": "claude-load-test", "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 1200, "output_tokens": 1}}})
	ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	ev("ping", map[string]any{"type": "ping"})
	text := answerText(id)
	if deltas < 1 {
		deltas = 1
	}
	words := strings.SplitAfter(text, " ")
	per := (len(words) + deltas - 1) / deltas
	for i := 0; i < len(words); i += per {
		part := strings.Join(words[i:min(i+per, len(words))], "")
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": part}})
	}
	ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": 60}})
	ev("message_stop", map[string]any{"type": "message_stop"})
	return out
}

// answerBytes is what a client must receive for request id.
func answerBytes(id string, deltas int) []byte {
	return []byte(strings.Join(answerEvents(id, deltas), ""))
}

// ollama is a fake Ollama on loopback speaking the API memtray uses (GET
// /api/tags, GET /api/version, POST /api/embed), whose embeddings take
// delay each: a slow embedder makes the write pipeline fall behind.
type ollama struct {
	delay time.Duration
	dim   int
	srv   *http.Server
	url   string
}

const ollamaModel = "nomic-embed-text:latest"

func startOllama(delay time.Duration) (*ollama, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	o := &ollama{delay: delay, dim: 64, url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{"version": "0.13.0"})
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"models": []map[string]any{{"name": ollamaModel, "model": ollamaModel, "size": 274302450,
			"modified_at": "2025-11-19T09:41:07Z", "digest": strings.Repeat("0a", 32),
			"details": map[string]any{"format": "gguf", "family": "nomic-bert", "families": []string{"nomic-bert"}, "parameter_size": "137M"}}}})
	})
	mux.HandleFunc("POST /api/embed", o.embed)
	o.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go o.srv.Serve(ln)
	return o, nil
}

func (o *ollama) close() { o.srv.Close() }

func (o *ollama) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"invalid input type"}`)
		return
	}
	select {
	case <-time.After(o.delay):
	case <-r.Context().Done():
		return
	}
	out := make([][]float32, len(req.Input))
	for i, in := range req.Input {
		v := make([]float32, o.dim)
		h := sha256.Sum256([]byte(in))
		for j := range v {
			if j%8 == 0 && j > 0 {
				h = sha256.Sum256(h[:])
			}
			v[j] = float32(int32(binary.LittleEndian.Uint32(h[(j%8)*4:]))) / math.MaxInt32
		}
		out[i] = v
	}
	writeJSON(w, map[string]any{"model": req.Model, "embeddings": out, "total_duration": int64(o.delay)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}
