// Package capture is memtray's local LLM proxy: the agent talks to it
// instead of the provider, it forwards every request upstream unchanged and
// streams the answer back, and on the side it turns each model exchange into
// a memory.Exchange for the write pipeline.
//
// # Data flow
//
//	agent ──POST /v1/messages──▶ Proxy.ServeHTTP ──httputil.ReverseProxy──▶ upstream
//	agent ◀──SSE, flushed per event── response tee ◀──────────────────────── upstream
//	                                   │ (copy of the bytes)
//	                                   ▼
//	                     incremental SSE parser → answer (text, tool calls, usage)
//	                                   │ at EOF: non-blocking send
//	                                   ▼
//	                     bounded queue ──▶ Run's workers: parse the request,
//	                                       build the Exchange, call the Handler
//
// Routes: /v1/* goes to Config.AnthropicUpstream, /openai/v1/* to
// Config.OpenAIUpstream as /v1/*; anything else is answered 404 with a JSON
// error. The path suffix, the raw query string (?beta=true), every request
// header (x-api-key, authorization, anthropic-version, anthropic-beta...) and
// the body are forwarded unchanged; the answer's Access-Control-* headers
// are dropped (no web page may read it); no X-Forwarded-For is added, Go
// adds no Accept-Encoding and decompresses nothing, and every chunk of the
// response is flushed to the agent as it arrives. When the upstream cannot be reached
// the agent gets a 502 with an Anthropic-style JSON error.
//
// The agent's traffic never waits for capture: the request body is copied
// (up to MaxCaptureBytes) as the transport reads it, the response bytes
// reach the agent in the same Read that hands a copy to the parser, and the
// finished exchange is handed over with a non-blocking send on a channel of
// QueueSize (full: dropped and counted). The expensive work (decoding the
// request JSON, decompressing a gzip body, building the Exchange,
// exclusion) happens in Run's workers; a Handler that blocks, fails or
// panics slows nothing but the queue. Memory per stream is bounded: the SSE
// parser works event by event and keeps only the assembled answer (text and
// tool call inputs), at most MaxCaptureBytes of it.
//
// A WebSocket (Codex opens one on GET /v1/responses) passes through: the
// upgrade reaches the upstream, its 101 answer the agent, and then the
// frames flow unchanged both ways until either side closes (see
// websocket.go); the Responses API's turns over it are captured, also
// when permessage-deflate compresses its frames: the tee inflates its own
// copy, the forwarded bytes stay as sent (websocket_deflate.go).
//
// # What is captured
//
// Only POST /v1/messages, /openai/v1/chat/completions and
// /openai/v1/responses (and the response.create turns of a WebSocket on
// /openai/v1/responses, plain or permessage-deflate), answered 2xx, read by the agent to the end, with a
// request body and an answer within MaxCaptureBytes, while capture is
// enabled, and not from an excluded project. A streaming response must also
// reach its final event (message_stop, an error event, data: [DONE],
// response.completed). Everything else — count_tokens, models, batches,
// files, any other path or method, 4xx/5xx answers, upstream failures,
// streams the agent cancelled, bodies in an encoding other than identity,
// gzip or deflate — is forwarded and never captured. Headers (API keys,
// tokens) are never captured.
//
// # Building an Exchange (Anthropic Messages)
//
//   - SessionID: the session uuid of metadata.user_id when Claude Code sends
//     one ("user_<hash>_account_<uuid>_session_<uuid>", or a JSON object with
//     session_id), else "h-" and a short SHA-256 of the whole user_id, else
//     of the text of the conversation's first user prompt.
//   - UserTurns: the real user prompts in messages (user text left after
//     removing <system-reminder>, <memtray-context> and the other injected
//     blocks, not "[Request interrupted by user...]"); Turn: the assistant
//     messages + 1.
//   - ToolLoop: the last message is a user message holding tool_result
//     blocks and no typed text; then User is "" and ToolResults holds the
//     results (Name from the tool_use of the same id, content cut to 8 KiB).
//     Otherwise User is the last user message's text, injected blocks
//     removed (text blocks only; images skipped).
//   - Assistant: the text deltas only (not thinking, not tool input);
//     ToolCalls from tool_use blocks with Input assembled from
//     input_json_delta; Model from message_start (else the request's);
//     Usage from message_start and message_delta; Error for a stop_reason of
//     "refusal" or an SSE error event.
//   - Project: the project (project.Name: its git repository, else its
//     last element) of the working directory Claude Code states in its environment block: a line "Working directory: /abs/path"
//     or " - Primary working directory: /abs/path" (any case, after list
//     markers) in the system prompt (string or blocks, <env>), in a
//     messages[] entry with role "system" (2.1.x; read for the directory
//     only, never as user text), or in a <system-reminder> of a user
//     message; the same rule as transcript.ProjectName. The directory
//     itself is matched against the exclusions.
//   - Headless: set when the system prompt is the Agent SDK's (print mode,
//     claude -p, and SDK agents say "running within the Claude Agent SDK" or
//     "built on Anthropic's Claude Agent SDK" where the interactive CLI says
//     only "Anthropic's official CLI for Claude"); an interactive session is
//     never marked, a headless one of another agent is not detected.
//   - StartedAt: when the request arrived; EndedAt: when the response
//     ended; Source: "capture".
//
// OpenAI chat completions: ToolLoop when the last message has role "tool"
// (the trailing tool messages are the ToolResults); Assistant from
// choices[0] delta (or message) content; ToolCalls from tool_calls.
// Responses API: input (a string or items) and instructions; ToolLoop when
// the last input item is a function_call_output; Assistant from
// response.output_text.delta events (else the final response object).
// Sessions: metadata.session_id when present; for the Responses API
// prompt_cache_key (Codex sends its conversation id there); else a hash of
// the first user message. A previous_response_id chain cannot be followed
// without keeping state, so a conversation continued that way hashes its
// new first input item, and Turn counts only the assistant items resent.
package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/project"
)

// Options configures New.
type Options struct {
	// Config holds the upstreams, queue size, capture bound, whether capture
	// starts enabled and the excluded projects.
	Config config.Capture
	// Logger receives the proxy's logs; nil discards them.
	Logger *slog.Logger
	// Clock stamps exchanges; nil is memory.SystemClock{}.
	Clock memory.Clock
	// Transport reaches the upstreams; nil is a clone of
	// http.DefaultTransport that adds no compression (bytes pass unchanged).
	Transport http.RoundTripper
}

// Handler is the write pipeline: it receives each captured exchange, from
// one of Run's worker goroutines.
type Handler func(ctx context.Context, ex memory.Exchange) error

// Stats counts what the proxy did since New.
type Stats struct {
	Requests          int64 `json:"requests"`            // requests served (every path)
	Captured          int64 `json:"captured"`            // exchanges queued for the pipeline
	Dropped           int64 `json:"dropped"`             // exchanges dropped: queue full or over its byte budget
	NotCapturedStatus int64 `json:"not_captured_status"` // capturable requests answered non-2xx
	UpstreamErrors    int64 `json:"upstream_errors"`     // upstream unreachable (answered 502)
	TooLarge          int64 `json:"too_large"`           // request or answer over MaxCaptureBytes
	PausedSkipped     int64 `json:"paused_skipped"`      // capturable requests while capture was off
	Excluded          int64 `json:"excluded"`            // exchanges of excluded projects
	Unparsed          int64 `json:"unparsed"`            // bodies not understood: bad JSON, unknown encoding, stream without its end
	HandlerErrors     int64 `json:"handler_errors"`      // Handler returned an error
	HandlerPanics     int64 `json:"handler_panics"`      // Handler panicked (recovered)
	Handled           int64 `json:"handled"`             // exchanges the Handler accepted
	Finished          int64 `json:"finished"`            // captured exchanges the workers are done with, whatever became of them
	InFlight          int64 `json:"in_flight"`           // capturable requests being proxied now (their exchange neither queued nor dropped yet)
	UpstreamResets    int64 `json:"upstream_resets"`     // answers the upstream broke off mid-way (the agent saw the same break)
	WebSockets        int64 `json:"websockets"`          // WebSocket connections passed through (turns captured on the Responses API only)
	QueueLen          int   `json:"queue_len"`
	QueueCap          int   `json:"queue_cap"`
	QueueBytes        int64 `json:"queue_bytes"` // bytes the queued exchanges hold
	Enabled           bool  `json:"enabled"`
	// LastError is the last capture or pipeline error, for the UI;
	// LastErrorAt when it happened and LastErrorKind where: "upstream"
	// (unreachable or broken off), "capture" (a body not understood, a
	// panic) or "handler" (the Handler returned it).
	LastError     string    `json:"last_error,omitempty"`
	LastErrorAt   time.Time `json:"last_error_at,omitzero"`
	LastErrorKind string    `json:"last_error_kind,omitempty"`
	LastCapture   time.Time `json:"last_capture,omitzero"`
	// LastHandled is when the Handler last accepted an exchange;
	// LastDropped when an exchange was last dropped.
	LastHandled time.Time `json:"last_handled,omitzero"`
	LastDropped time.Time `json:"last_dropped,omitzero"`
	// Upstream, when set, is a problem with an upstream now: it could not
	// be reached, or it broke off its last answer. It clears by itself
	// when the upstream answers (unreachable) or ends an answer properly
	// (broken off).
	Upstream *UpstreamProblem `json:"upstream,omitempty"`
}

// UpstreamProblem is an upstream failing now.
type UpstreamProblem struct {
	// Kind is "unreachable" (no answer: the agent got a 502) or "reset"
	// (an answer broken off mid-way: the agent saw the same break).
	Kind  string    `json:"kind"`
	Host  string    `json:"host"`
	Error string    `json:"error"`
	Since time.Time `json:"since"`
	Count int64     `json:"count"` // failures since Since
}

// Upstream problem kinds.
const (
	UpstreamUnreachable = "unreachable"
	UpstreamReset       = "reset"
)

// Error kinds of Stats.LastErrorKind.
const (
	ErrKindUpstream = "upstream"
	ErrKindCapture  = "capture"
	ErrKindHandler  = "handler"
)

// api names what a capturable request speaks.
type api int

const (
	apiNone api = iota
	apiAnthropic
	apiChat
	apiResponses
)

// Proxy is the capture proxy; it is an http.Handler. Safe for concurrent use.
type Proxy struct {
	anthropic, openai *url.URL
	max               int
	log               *slog.Logger
	clock             memory.Clock
	rp                *httputil.ReverseProxy
	queue             chan *pending
	maxQueued         int64        // MaxQueueBytes
	queuedBytes       atomic.Int64 // bytes the queued exchanges hold

	enabled     atomic.Bool
	mu          sync.Mutex
	exclude     []string
	lastErr     string
	lastErrAt   time.Time
	lastErrKind string
	lastCap     time.Time
	lastHandled time.Time
	lastDropped time.Time
	upstream    *UpstreamProblem // under mu

	requests, captured, dropped, notCaptured, upstreamErrors, tooLarge,
	pausedSkipped, excludedN, unparsed, handlerErrors, handlerPanics, handled, finished, inFlight, resets, websockets atomic.Int64
}

// New returns a Proxy for opts; it fails if an upstream is not an absolute
// http(s) URL without query or fragment.
func New(opts Options) (*Proxy, error) {
	c := opts.Config
	anth, err := upstreamURL(c.AnthropicUpstream)
	if err != nil {
		return nil, fmt.Errorf("capture: anthropic upstream: %w", err)
	}
	oai, err := upstreamURL(c.OpenAIUpstream)
	if err != nil {
		return nil, fmt.Errorf("capture: openai upstream: %w", err)
	}
	if c.QueueSize < 1 {
		c.QueueSize = 1
	}
	if c.MaxCaptureBytes < 1 {
		c.MaxCaptureBytes = 32 << 20
	}
	if c.MaxQueueBytes < 1 {
		c.MaxQueueBytes = 256 << 20
	}
	p := &Proxy{
		anthropic: anth, openai: oai, max: c.MaxCaptureBytes,
		log: opts.Logger, clock: opts.Clock,
		queue: make(chan *pending, c.QueueSize), maxQueued: int64(c.MaxQueueBytes),
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.clock == nil {
		p.clock = memory.SystemClock{}
	}
	p.enabled.Store(c.Enabled)
	p.SetExcludedProjects(c.ExcludeProjects)
	tr := opts.Transport
	if tr == nil {
		tr = defaultTransport()
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      tr,
		FlushInterval:  -1,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       log.New(slogWriter{p.log}, "", 0),
		BufferPool:     bufferPool{},
	}
	return p, nil
}

// upstreamURL parses and checks an upstream base URL.
func upstreamURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http or https URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%q must not carry a query, fragment or user info", raw)
	}
	return u, nil
}

// defaultTransport is http.DefaultTransport tuned for many long streams to
// few hosts, without transparent compression.
func defaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DisableCompression = true
	t.ForceAttemptHTTP2 = true
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	t.IdleConnTimeout = 90 * time.Second
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return t
}

// copyBuffers recycles the 32 KiB buffers the ReverseProxy copies response
// bodies with (it would allocate and clear one per request).
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// bufferPool is an httputil.BufferPool over copyBuffers.
type bufferPool struct{}

func (bufferPool) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (bufferPool) Put(b []byte) { copyBuffers.Put(&b) }

// slogWriter sends the ReverseProxy's own log lines to slog at debug.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(b []byte) (int, error) {
	w.l.Debug("capture: reverse proxy", "msg", strings.TrimSpace(string(b)))
	return len(b), nil
}

// SetEnabled pauses (false) or resumes (true) capture. Paused, the proxy
// forwards everything and captures nothing.
func (p *Proxy) SetEnabled(on bool) { p.enabled.Store(on) }

// Enabled reports whether capture is on.
func (p *Proxy) Enabled() bool { return p.enabled.Load() }

// SetExcludedProjects replaces the excluded projects: project names, or
// absolute directories (a project in or below one is excluded). Their
// traffic is forwarded but never captured.
func (p *Proxy) SetExcludedProjects(names []string) {
	ex := make([]string, 0, len(names))
	for _, n := range names {
		if n = strings.TrimSpace(n); n != "" {
			ex = append(ex, n)
		}
	}
	p.mu.Lock()
	p.exclude = ex
	p.mu.Unlock()
}

// Stats returns the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	lastErr, lastErrAt, lastErrKind, lastCap, lastHandled, lastDropped := p.lastErr, p.lastErrAt, p.lastErrKind, p.lastCap, p.lastHandled, p.lastDropped
	var up *UpstreamProblem
	if p.upstream != nil {
		c := *p.upstream
		up = &c
	}
	p.mu.Unlock()
	// Read in this order, one Stats with InFlight 0 and Finished equal to
	// Captured says capture has settled: every request proxied before it
	// had its exchange queued (or dropped, or refused) first, and every
	// exchange queued was finished.
	inFlight := p.inFlight.Load()
	captured := p.captured.Load()
	finished := p.finished.Load()
	return Stats{
		Requests: p.requests.Load(), Captured: captured, Dropped: p.dropped.Load(),
		NotCapturedStatus: p.notCaptured.Load(), UpstreamErrors: p.upstreamErrors.Load(),
		TooLarge: p.tooLarge.Load(), PausedSkipped: p.pausedSkipped.Load(), Excluded: p.excludedN.Load(),
		Unparsed: p.unparsed.Load(), HandlerErrors: p.handlerErrors.Load(), HandlerPanics: p.handlerPanics.Load(),
		Handled: p.handled.Load(), Finished: finished, InFlight: inFlight, QueueLen: len(p.queue), QueueCap: cap(p.queue), QueueBytes: p.queuedBytes.Load(), Enabled: p.Enabled(),
		UpstreamResets: p.resets.Load(), WebSockets: p.websockets.Load(),
		LastError: lastErr, LastErrorAt: lastErrAt, LastErrorKind: lastErrKind, LastCapture: lastCap, LastHandled: lastHandled, LastDropped: lastDropped,
		Upstream: up,
	}
}

// setErr records the last error, of kind (ErrKind...), for Stats.
func (p *Proxy) setErr(kind string, err error) {
	now := p.clock.Now()
	p.mu.Lock()
	p.lastErr, p.lastErrAt, p.lastErrKind = err.Error(), now, kind
	p.mu.Unlock()
}

// upstreamFailed records an upstream problem of kind for Stats.Upstream.
func (p *Proxy) upstreamFailed(kind, host string, err error) {
	p.setErr(ErrKindUpstream, fmt.Errorf("capture: upstream %s: %w", host, err))
	now := p.clock.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.upstream == nil || p.upstream.Kind != kind || p.upstream.Host != host {
		p.upstream = &UpstreamProblem{Kind: kind, Host: host, Since: now}
	}
	p.upstream.Error = err.Error()
	p.upstream.Count++
}

// upstreamOK clears an upstream problem of one of kinds: the upstream
// answered (unreachable) or ended an answer properly (both).
func (p *Proxy) upstreamOK(kinds ...string) {
	p.mu.Lock()
	if p.upstream != nil && slices.Contains(kinds, p.upstream.Kind) {
		p.upstream = nil
	}
	p.mu.Unlock()
}

// ctxKey keys the capture state of a request in its context.
type ctxKey struct{}

// flight is the capture state of one capturable request.
type flight struct {
	api     api
	started time.Time
	req     *reqTee
}

// route maps a request path to its upstream and the path to send there.
func (p *Proxy) route(path string) (*url.URL, string, bool) {
	switch {
	case strings.HasPrefix(path, "/v1/"):
		return p.anthropic, path, true
	case strings.HasPrefix(path, "/openai/v1/"):
		return p.openai, strings.TrimPrefix(path, "/openai"), true
	}
	return nil, "", false
}

// capturable says which API a request speaks if it is one we capture.
func capturable(r *http.Request) api {
	if r.Method != http.MethodPost {
		return apiNone
	}
	switch r.URL.Path {
	case "/v1/messages":
		return apiAnthropic
	case "/openai/v1/chat/completions":
		return apiChat
	case "/openai/v1/responses":
		return apiResponses
	}
	return apiNone
}

// ServeHTTP forwards /v1/* to the Anthropic upstream and /openai/v1/* to
// the OpenAI-compatible one, capturing the exchanges of the model
// endpoints; other paths get a 404 JSON error.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	if _, _, ok := p.route(r.URL.Path); !ok {
		writeError(w, http.StatusNotFound, "not_found_error", "memtray proxy: no route for "+r.URL.Path+" (use /v1/* or /openai/v1/*)")
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &eofLatch{rc: r.Body}
	}
	if a := capturable(r); a != apiNone {
		switch {
		case !p.Enabled():
			p.pausedSkipped.Add(1)
		case r.ContentLength > int64(p.max):
			p.tooLarge.Add(1)
		default:
			// Until the proxy is done with it: its exchange is queued by
			// then (respTee.finish), or given up.
			p.inFlight.Add(1)
			defer p.inFlight.Add(-1)
			f := &flight{api: a, started: p.clock.Now()}
			if r.Body != nil && r.Body != http.NoBody {
				f.req = newReqTee(r.Body, r.ContentLength, p.max)
				r.Body = f.req
			}
			r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, f))
		}
	} else if responsesWebSocket(r) {
		r = r.WithContext(context.WithValue(r.Context(), wsKey{}, true))
	}
	p.rp.ServeHTTP(w, r)
}

// rewrite points the outgoing request at its upstream, keeping the path
// suffix, the raw query and every header.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	target, path, _ := p.route(pr.In.URL.Path)
	if target == nil {
		target = p.anthropic // unreachable: ServeHTTP routes first
	}
	pr.Out.URL.Path = path
	if pr.In.URL.RawPath != "" {
		pr.Out.URL.RawPath = strings.TrimPrefix(pr.In.URL.RawPath, "/openai")
	}
	pr.SetURL(target)
	pr.Out.URL.RawQuery = pr.In.URL.RawQuery
}

// modifyResponse installs the response tee on a capturable request's 2xx
// answer.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	stripCORS(resp.Header)
	p.upstreamOK(UpstreamUnreachable) // it answered
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// The ReverseProxy switches protocols only with the upstream's
		// connection itself as the body (an io.ReadWriteCloser): keep it
		// so, or wrap it in a wsConn that is one too.
		p.switched(resp)
		return nil
	}
	watch := func() {
		if resp.Body != nil && resp.Body != http.NoBody {
			resp.Body = &bodyWatch{rc: resp.Body, p: p, req: resp.Request}
		}
	}
	f, _ := resp.Request.Context().Value(ctxKey{}).(*flight)
	if f == nil {
		watch()
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		p.notCaptured.Add(1)
		watch()
		return nil
	}
	if f.req == nil || resp.Body == nil || resp.Body == http.NoBody {
		p.unparsed.Add(1)
		watch()
		return nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	t := &respTee{rc: resp.Body, p: p, f: f, req: resp.Request, sse: mt == "text/event-stream"}
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		t.parser = newParser(f.api, p.max)
		if t.sse {
			t.events = newSSEParser(p.max, t.parser.event)
		}
	case "gzip", "x-gzip", "deflate":
		t.encoding = enc // kept raw, decoded by a worker
	default:
		p.unparsed.Add(1)
		p.setErr(ErrKindCapture, fmt.Errorf("capture: response encoding %q not supported", enc))
		watch()
		return nil
	}
	resp.Body = t
	return nil
}

// stripCORS removes the upstream's CORS headers: memtray answers no
// cross-origin request, so no web page may read what the proxy returns.
func stripCORS(h http.Header) {
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			delete(h, k)
		}
	}
}

// newParser returns the response parser for an API.
func newParser(a api, max int) responseParser {
	switch a {
	case apiChat:
		return newChatParser(max)
	case apiResponses:
		return newResponsesParser(max)
	}
	return newAnthParser(max)
}

// errorHandler answers a request whose upstream could not be reached.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		// The agent went away; nobody reads this answer.
		w.WriteHeader(http.StatusBadGateway)
		return
	}
	p.upstreamErrors.Add(1)
	p.upstreamFailed(UpstreamUnreachable, r.URL.Host, err)
	p.log.Warn("capture: upstream unreachable", "host", r.URL.Host, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusBadGateway, "api_error", fmt.Sprintf("memtray proxy: upstream %s: %v", r.URL.Host, err))
}

// writeError writes an Anthropic-style JSON error.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bodyEnded notes how an upstream's answer body ended: at io.EOF it ended
// properly, which clears a reset problem; another error while the agent
// is still there is the upstream breaking the answer off (the agent sees
// the same break: the ReverseProxy aborts its response).
func (p *Proxy) bodyEnded(req *http.Request, err error) {
	if err == io.EOF {
		p.upstreamOK(UpstreamReset)
		return
	}
	if req.Context().Err() != nil {
		return // the agent went away: not the upstream's doing
	}
	p.resets.Add(1)
	p.upstreamFailed(UpstreamReset, req.URL.Host, err)
	p.log.Warn("capture: upstream broke off its answer", "host", req.URL.Host, "path", req.URL.Path, "err", err)
}

// bodyWatch passes an answer body through unchanged and notes how it
// ended (bodyEnded); for answers that are not captured.
type bodyWatch struct {
	rc    io.ReadCloser
	p     *Proxy
	req   *http.Request
	ended bool
}

func (b *bodyWatch) Read(buf []byte) (int, error) {
	n, err := b.rc.Read(buf)
	if err != nil && !b.ended {
		b.ended = true
		b.p.bodyEnded(b.req, err)
	}
	return n, err
}

func (b *bodyWatch) Close() error { return b.rc.Close() }

// eofLatch answers io.EOF once its body has, without reading it again.
// The transport reads a request body once more after Content-Length bytes
// (to detect an overlong body); by then the server may have closed that
// body (it does so once the handler writes the response headers), and the
// read would fail with ErrBodyReadAfterClose, which makes the transport
// drop the upstream connection in the middle of the streaming answer.
// Only the transport's goroutine reads it.
type eofLatch struct {
	rc  io.ReadCloser
	eof bool
}

func (l *eofLatch) Read(b []byte) (int, error) {
	if l.eof {
		return 0, io.EOF
	}
	n, err := l.rc.Read(b)
	if err == io.EOF {
		l.eof = true
	}
	return n, err
}

func (l *eofLatch) Close() error { return l.rc.Close() }

// reqTee copies a request body, up to max bytes, as the transport reads
// it. It is read by the transport's goroutine and inspected at the end of
// the response, hence the lock.
type reqTee struct {
	rc   io.ReadCloser
	mu   sync.Mutex
	buf  []byte
	max  int
	over bool
	eof  bool
}

func newReqTee(rc io.ReadCloser, length int64, max int) *reqTee {
	t := &reqTee{rc: rc, max: max}
	if length > 0 && length <= int64(max) {
		t.buf = make([]byte, 0, length)
	}
	return t
}

// Read passes the body on and keeps a copy. After EOF it answers EOF
// without reading the server's body again (see eofLatch).
func (t *reqTee) Read(b []byte) (int, error) {
	t.mu.Lock()
	eof := t.eof
	t.mu.Unlock()
	if eof {
		return 0, io.EOF
	}
	n, err := t.rc.Read(b)
	t.mu.Lock()
	if n > 0 && !t.over {
		if len(t.buf)+n > t.max {
			t.over, t.buf = true, nil
		} else {
			t.buf = append(t.buf, b[:n]...)
		}
	}
	if err == io.EOF {
		t.eof = true
	}
	t.mu.Unlock()
	return n, err
}

// Close closes the body.
func (t *reqTee) Close() error { return t.rc.Close() }

// body returns the copy, whether it is the whole body and whether it
// exceeded max.
func (t *reqTee) body() (b []byte, complete, over bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf, t.eof && !t.over, t.over
}

// respTee passes a response body to the agent and a copy to the parser;
// at EOF it hands the exchange to the queue.
type respTee struct {
	rc       io.ReadCloser
	p        *Proxy
	f        *flight
	req      *http.Request // the upstream request
	sse      bool
	parser   responseParser // identity bodies, parsed as they pass
	events   *sseParser     // for SSE bodies
	encoding string         // compressed bodies: raw kept, decoded later
	raw      []byte
	rawOver  bool
	eof      bool // the upstream body ended; report it on the next Read
	finished bool
	ended    bool // bodyEnded was told
	gaveUp   bool // the answer went over MaxCaptureBytes: counted, no longer parsed
}

// Read returns the upstream's bytes unchanged.
func (t *respTee) Read(b []byte) (int, error) {
	if t.eof {
		t.finish()
		return 0, io.EOF
	}
	n, err := t.rc.Read(b)
	if n > 0 {
		t.feed(b[:n])
	}
	if err != nil && !t.ended {
		t.ended = true
		t.p.bodyEnded(t.req, err)
	}
	if err == io.EOF {
		if n > 0 {
			// Let the agent have these bytes before the exchange is handed over.
			t.eof = true
			return n, nil
		}
		t.finish()
	}
	return n, err
}

// feed gives a copy of the bytes to the parser.
func (t *respTee) feed(b []byte) {
	if t.gaveUp {
		return
	}
	switch {
	case t.events != nil:
		t.events.Write(b)
		if t.parser.result().tooLarge {
			t.giveUp()
		}
	case len(t.raw)+len(b) > t.p.max:
		t.rawOver, t.raw = true, nil
		t.giveUp()
	default:
		t.raw = append(t.raw, b...)
	}
}

// giveUp stops capturing an answer over MaxCaptureBytes and counts it at
// once, so a stream that never ends is counted too; the bytes still pass.
func (t *respTee) giveUp() {
	t.gaveUp = true
	t.p.tooLarge.Add(1)
	t.p.log.Debug("capture: answer over max_capture_bytes, not captured", "max", t.p.max)
}

// Close closes the upstream body; a body closed before its end (the agent
// cancelled) is not captured.
func (t *respTee) Close() error {
	t.finished = true
	return t.rc.Close()
}

// finish hands a completely read response to the queue.
func (t *respTee) finish() {
	if t.finished {
		return
	}
	t.finished = true
	p := t.p
	if t.gaveUp {
		return // counted when it went over
	}
	reqBody, complete, over := t.f.req.body()
	if over {
		p.tooLarge.Add(1)
		return
	}
	if !complete {
		p.unparsed.Add(1)
		p.setErr(ErrKindCapture, errors.New("capture: request body not read to its end"))
		return
	}
	pd := &pending{api: t.f.api, req: reqBody, started: t.f.started, ended: p.clock.Now(),
		sse: t.sse, raw: t.raw, encoding: t.encoding}
	if t.parser != nil {
		pd.parser = t.parser
		if t.events == nil {
			pd.raw = t.raw // an identity JSON body: parsed by the worker
		}
	}
	p.enqueue(pd)
}

// enqueue hands a finished exchange to Run's workers without waiting:
// with the queue full or over its byte budget it is dropped and counted.
func (p *Proxy) enqueue(pd *pending) {
	pd.size = int64(len(pd.req) + len(pd.raw))
	if p.queuedBytes.Add(pd.size) > p.maxQueued {
		p.queuedBytes.Add(-pd.size)
		p.drop()
		p.log.Debug("capture: queue over its byte budget, exchange dropped", "budget", p.maxQueued)
		return
	}
	// Counted before it is queued: a worker may finish it at once, and
	// Finished must never pass Captured (one dropped is taken back).
	p.captured.Add(1)
	select {
	case p.queue <- pd:
	default:
		p.captured.Add(-1)
		p.queuedBytes.Add(-pd.size)
		p.drop()
		p.log.Debug("capture: queue full, exchange dropped", "queue", cap(p.queue))
	}
}

// drop counts an exchange dropped for want of room in the queue.
func (p *Proxy) drop() {
	p.dropped.Add(1)
	now := p.clock.Now()
	p.mu.Lock()
	p.lastDropped = now
	p.mu.Unlock()
}

// pending is a finished exchange waiting for a worker.
type pending struct {
	api            api
	req            []byte
	started, ended time.Time
	sse            bool
	parser         responseParser // nil for compressed bodies
	raw            []byte         // a body not parsed yet (JSON, or compressed)
	encoding       string
	size           int64 // bytes held, counted against MaxQueueBytes
}

// Run drains the queue with workers goroutines (at least 1), calling h for
// each exchange, until ctx ends; it returns when every worker has returned
// (a Handler should honour ctx). Handler errors are counted and logged at
// debug; panics are recovered and counted.
func (p *Proxy) Run(ctx context.Context, workers int, h Handler) {
	if workers < 1 {
		workers = 1
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case pd := <-p.queue:
					p.queuedBytes.Add(-pd.size)
					p.handle(ctx, pd, h)
					p.finished.Add(1)
				}
			}
		})
	}
	wg.Wait()
}

// handle builds one exchange and gives it to h.
func (p *Proxy) handle(ctx context.Context, pd *pending, h Handler) {
	defer func() {
		if v := recover(); v != nil {
			p.handlerPanics.Add(1)
			p.setErr(ErrKindCapture, fmt.Errorf("capture: handler panic: %v", v))
			p.log.Error("capture: handler panicked", "panic", v)
		}
	}()
	ex, dir, err := p.build(pd)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			p.tooLarge.Add(1)
		} else {
			p.unparsed.Add(1)
		}
		p.setErr(ErrKindCapture, err)
		p.log.Debug("capture: exchange not built", "err", err)
		return
	}
	p.mu.Lock()
	ex2 := excluded(p.exclude, ex.Project, dir)
	p.mu.Unlock()
	if ex2 {
		p.excludedN.Add(1)
		return
	}
	p.mu.Lock()
	p.lastCap = p.clock.Now()
	p.mu.Unlock()
	if err := h(ctx, ex); err != nil {
		p.handlerErrors.Add(1)
		p.setErr(ErrKindHandler, fmt.Errorf("capture: handler: %w", err))
		p.log.Debug("capture: handler failed", "session", ex.SessionID, "turn", ex.Turn, "err", err)
		return
	}
	p.handled.Add(1)
	now := p.clock.Now()
	p.mu.Lock()
	p.lastHandled = now
	p.mu.Unlock()
}

// errTooLarge reports a decoded body over MaxCaptureBytes.
var errTooLarge = errors.New("capture: body over max_capture_bytes")

// build turns a pending exchange into an Exchange and the working
// directory its request named.
func (p *Proxy) build(pd *pending) (memory.Exchange, string, error) {
	var (
		r   request
		err error
	)
	switch pd.api {
	case apiChat:
		r, err = parseChatRequest(pd.req)
	case apiResponses:
		r, err = parseResponsesRequest(pd.req)
	default:
		r, err = parseAnthropicRequest(pd.req)
	}
	if err != nil {
		return memory.Exchange{}, "", fmt.Errorf("capture: %w", err)
	}
	parser := pd.parser
	if pd.raw != nil || parser == nil {
		if parser == nil {
			parser = newParser(pd.api, p.max)
		}
		body := pd.raw
		if pd.encoding != "" {
			if body, err = decode(pd.encoding, body, p.max); err != nil {
				return memory.Exchange{}, "", err
			}
		}
		if pd.sse {
			ev := newSSEParser(p.max, parser.event)
			ev.Write(body)
		} else {
			parser.whole(body)
		}
	}
	a := parser.result()
	if a.tooLarge {
		return memory.Exchange{}, "", errTooLarge
	}
	if !a.done {
		return memory.Exchange{}, "", errors.New("capture: response ended without its final event")
	}
	model := a.model
	if model == "" {
		model = clean(memory.CutRunes(r.model, 256))
	}
	ex := memory.Exchange{
		SessionID: r.sessionID, Turn: r.turn, UserTurns: r.userTurns, Headless: r.headless,
		Project: clean(project.Name(r.dir)), Source: memory.SourceCapture,
		User: r.user, Assistant: clean(a.text.String()),
		ToolCalls: a.toolCalls(), ToolResults: r.toolResults, Answers: r.answers, ToolLoop: r.toolLoop,
		Error: a.isErr, Model: model, Usage: a.usage,
		StartedAt: pd.started, EndedAt: pd.ended,
	}
	memory.BoundExchange(&ex) // a text over 1 MiB, tool calls over 4 MiB: cut, not lost
	if n := r.occurrence(ex.Assistant, ex.ToolCalls); !ex.ToolLoop && n > 1 {
		ex.Occurrence = n // left 0 for the first: counted as 1
	}
	return ex, r.dir, nil
}

// decode decompresses a gzip or deflate body, at most max bytes of it.
func decode(enc string, body []byte, max int) ([]byte, error) {
	zr, err := newDecompressor(enc, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("capture: %s body: %w", enc, err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("capture: %s body: %w", enc, err)
	}
	if len(out) > max {
		return nil, errTooLarge
	}
	return out, nil
}
