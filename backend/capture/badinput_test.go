package capture

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/refuse"
)

// heapWatch samples the heap in use every few milliseconds until stopped
// and returns the peak growth over the heap at the start.
type heapWatch struct {
	before uint64
	peak   atomic.Uint64
	stop   chan struct{}
	done   chan struct{}
}

func watchHeap() *heapWatch {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	w := &heapWatch{before: m.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapInuse > w.peak.Load() {
				w.peak.Store(m.HeapInuse)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return w
}

// growth stops the sampling and returns the peak growth in bytes.
func (w *heapWatch) growth() int64 {
	close(w.stop)
	<-w.done
	return int64(w.peak.Load()) - int64(w.before)
}

// TestUpstreamResetMidStream: an upstream that breaks its answer off
// (aborted chunked stream, or a TCP reset) gives the agent exactly the
// bytes it sent and then the same break (no clean end that would look like
// a complete answer); nothing is captured, the break is counted and shown
// as an upstream problem, which clears when an answer ends properly again.
func TestUpstreamResetMidStream(t *testing.T) {
	for _, how := range []string{"abort", "reset"} {
		t.Run(how, func(t *testing.T) {
			h := newHarness(t, harnessOpt{})
			sse := readFile(t, "anthropic_tools.sse")
			half := sse[:len(sse)/2]
			var broken atomic.Bool
			broken.Store(true)
			h.up.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				for k, v := range sseHeader() {
					w.Header()[k] = v
				}
				if !broken.Load() {
					w.Write(sse)
					return
				}
				w.WriteHeader(200)
				w.Write(half)
				w.(http.Flusher).Flush()
				if how == "abort" {
					panic(http.ErrAbortHandler) // the server drops the connection without the last chunk
				}
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				conn.(*net.TCPConn).SetLinger(0) // close with RST
				conn.Close()
			})
			req, _ := http.NewRequest(http.MethodPost, h.url+"/v1/messages", bytes.NewReader(readFile(t, "claude_code_prompt.json")))
			resp, err := h.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil {
				t.Errorf("the agent read a clean end of a broken answer (%d bytes)", len(got))
			}
			if !bytes.Equal(got, half) {
				t.Errorf("the agent got %d bytes, want the %d the upstream sent", len(got), len(half))
			}
			h.sink.none(t, h.p)
			st := h.p.Stats()
			if st.UpstreamResets != 1 || st.Captured != 0 || st.Upstream == nil || st.Upstream.Kind != UpstreamReset ||
				st.LastErrorKind != ErrKindUpstream || st.UpstreamErrors != 0 {
				t.Fatalf("stats after the break: %+v, upstream %+v", st, st.Upstream)
			}
			t.Logf("agent saw: %v; upstream problem: %+v", err, *st.Upstream)

			broken.Store(false) // the fault ends
			resp, body := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
			checkAnswered(t, resp, body, 200, sseHeader(), sse)
			h.sink.next(t)
			if st := h.p.Stats(); st.Upstream != nil || st.UpstreamResets != 1 {
				t.Errorf("after recovery: %+v, upstream %+v", st, st.Upstream)
			}
		})
	}
}

// TestUpstreamDownThenBack: an unreachable upstream is an upstream problem
// (the agent gets a 502 saying why) until it answers again, with no
// restart.
func TestUpstreamDownThenBack(t *testing.T) {
	down := refuse.New(t)
	addr := down.HostPort
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.AnthropicUpstream = "http://" + addr }})
	for range 3 {
		resp, _ := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	st := h.p.Stats()
	if st.Upstream == nil || st.Upstream.Kind != UpstreamUnreachable || st.Upstream.Count != 3 || st.Upstream.Host != addr {
		t.Fatalf("upstream problem %+v", st.Upstream)
	}
	// The provider comes back on the same address.
	down.Release()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("address taken meanwhile: %v", err)
	}
	sse := readFile(t, "anthropic_text.sse")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	resp, body := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	if resp.StatusCode != 200 || !bytes.Equal(body, sse) {
		t.Fatalf("after recovery: %d", resp.StatusCode)
	}
	h.sink.next(t)
	if st := h.p.Stats(); st.Upstream != nil || st.UpstreamErrors != 3 {
		t.Errorf("after recovery: upstream %+v, errors %d", st.Upstream, st.UpstreamErrors)
	}
}

// TestTenThousandTinyEvents: a stream of 10,000 one-character deltas (each
// flushed on its own) passes byte for byte and is captured whole.
func TestTenThousandTinyEvents(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	var sse, want bytes.Buffer
	sse.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-tiny\"}}\n\n")
	sse.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range 10000 {
		c := string(rune('a' + i%26))
		want.WriteString(c)
		fmt.Fprintf(&sse, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", c)
	}
	sse.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	sse.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	h.up.reply(200, sseHeader(), sse.Bytes())
	start := time.Now()
	resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, sseHeader(), sse.Bytes())
	ex := h.sink.next(t)
	t.Logf("10,000 events (%d KB) through the proxy and captured in %v", sse.Len()>>10, time.Since(start).Round(time.Millisecond))
	if ex.Assistant != want.String() || ex.Model != "claude-tiny" {
		t.Errorf("captured %d characters (model %q), want %d", len(ex.Assistant), ex.Model, want.Len())
	}
}

// TestEndlessStream: an answer that never ends keeps flowing to the agent;
// capture gives up at max_capture_bytes and counts it while the stream is
// still running, and the heap stays bounded however long it runs.
func TestEndlessStream(t *testing.T) {
	const max = 1 << 20
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.MaxCaptureBytes = max }})
	ev := []byte(fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n",
		strings.Repeat("never ending ", 300)))
	h.up.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n")
		for i := 0; ; i++ {
			if _, err := w.Write(ev); err != nil {
				return
			}
			if i%64 == 0 {
				w.(http.Flusher).Flush()
			}
		}
	})
	read := int64(64 << 20)
	if raceEnabled {
		read = 16 << 20
	}
	hw := watchHeap()
	req, _ := http.NewRequest(http.MethodPost, h.url+"/v1/messages", bytes.NewReader(readFile(t, "claude_code_prompt.json")))
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyN(io.Discard, resp.Body, read)
	if err != nil {
		t.Fatalf("stream stopped after %d bytes: %v", n, err)
	}
	st := h.p.Stats() // still streaming
	resp.Body.Close()
	growth := hw.growth()
	t.Logf("%d MB of a never-ending stream passed; peak heap growth %.1f MB; too large %d", n>>20, float64(growth)/(1<<20), st.TooLarge)
	if st.TooLarge != 1 || st.Captured != 0 {
		t.Errorf("while streaming: %+v", st)
	}
	if growth > 16<<20 {
		t.Errorf("heap grew %d MB while a stream passed", growth>>20)
	}
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.TooLarge != 1 || st.UpstreamResets != 0 {
		t.Errorf("after the agent hung up: %+v", st)
	}
}

// TestOversizedRequestPassesThrough: a request body over 32 MB reaches the
// upstream byte for byte (the proxy forwards what the agent sends; the
// provider decides), with and without a Content-Length, and is counted as
// too large to capture; the proxy's heap does not grow with the body.
func TestOversizedRequestPassesThrough(t *testing.T) {
	const max = 4 << 20
	size := 40 << 20
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.MaxCaptureBytes = max }})
	type got struct {
		n   int64
		sum [32]byte
	}
	gotc := make(chan got, 2)
	sse := readFile(t, "anthropic_text.sse")
	h.up.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs := sha256.New()
		n, _ := io.Copy(hs, r.Body)
		var g got
		g.n = n
		copy(g.sum[:], hs.Sum(nil))
		gotc <- g
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	})
	// A valid request whose user text makes it large; generated as it is sent.
	head := []byte(`{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"`)
	tail := []byte(`"}]}`)
	body := func() io.Reader {
		return io.MultiReader(bytes.NewReader(head), io.LimitReader(repeatReader('y'), int64(size-len(head)-len(tail))), bytes.NewReader(tail))
	}
	wantSum := sha256.New()
	io.Copy(wantSum, body())
	for _, known := range []bool{true, false} {
		hw := watchHeap()
		req, _ := http.NewRequest(http.MethodPost, h.url+"/v1/messages", body())
		if known {
			req.ContentLength = int64(size)
		} else {
			req.ContentLength = -1 // chunked
		}
		resp, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		ans, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		growth := hw.growth()
		g := <-gotc
		t.Logf("%d MB request (content-length known: %t): upstream got %d bytes; peak heap growth %.1f MB", size>>20, known, g.n, float64(growth)/(1<<20))
		if resp.StatusCode != 200 || !bytes.Equal(ans, sse) {
			t.Errorf("answer %d", resp.StatusCode)
		}
		if g.n != int64(size) || !bytes.Equal(g.sum[:], wantSum.Sum(nil)) {
			t.Errorf("upstream got %d bytes, want %d, same hash %t", g.n, size, bytes.Equal(g.sum[:], wantSum.Sum(nil)))
		}
		// A proxy that buffered the body would grow by the body's 40 MB;
		// the capture copy is bounded by max. Half the body leaves room for
		// the collector's timing (16.2 MB once under load, with a 16 MB
		// bound) and still fails a proxy that holds the body.
		if growth > int64(size)/2 {
			t.Errorf("heap grew %d MB for a %d MB body (capture bound %d MB)", growth>>20, size>>20, max>>20)
		}
	}
	h.sink.none(t, h.p)
	if st := h.p.Stats(); st.TooLarge != 2 || st.Captured != 0 {
		t.Errorf("stats %+v", st)
	}
}

// repeatReader is an endless reader of one byte.
type repeatReader byte

func (r repeatReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(r)
	}
	return len(b), nil
}

// TestInvalidUTF8: invalid UTF-8 in a prompt and in an answer passes to
// both sides unchanged; what is captured is valid UTF-8.
func TestInvalidUTF8(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	reqBody := []byte("{\"model\":\"m\",\"max_tokens\":5,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"why does the parser choke on \xff\xfe and \xc3\x28?\"}]}")
	sse := []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\xff\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"bytes \xed\xa0\x80 and \xff are not UTF-8\"}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	h.up.reply(200, sseHeader(), sse)
	resp, got := h.post(t, "/v1/messages", claudeHeader(), reqBody)
	checkAnswered(t, resp, got, 200, sseHeader(), sse)
	if up := h.up.requests(); len(up) != 1 || !bytes.Equal(up[0].Body, reqBody) {
		t.Error("the request changed on its way")
	}
	ex := h.sink.next(t)
	for _, s := range []string{ex.User, ex.Assistant, ex.Model, ex.SessionID} {
		if !utf8.ValidString(s) || !memory.ValidUTF8(s) {
			t.Errorf("captured invalid text %q", s)
		}
	}
	if !strings.Contains(ex.Assistant, "are not UTF-8") || !strings.Contains(ex.User, "why does the parser choke") {
		t.Errorf("captured %q / %q", ex.User, ex.Assistant)
	}
}

// nested returns n nested JSON arrays.
func nested(n int) []byte {
	return append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
}

// TestDeeplyNestedJSON: 100,000 nested arrays in a request, in an SSE
// event and in a whole JSON answer pass to both sides unchanged; the
// parsers refuse them with a clear error (no stack overflow) and the rest
// of a stream is still captured.
func TestDeeplyNestedJSON(t *testing.T) {
	h := newHarness(t, harnessOpt{})
	deep := nested(100000)
	// In the request: forwarded, not understood, counted.
	reqBody := append(append([]byte(`{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":`), deep...), []byte(`}]}`)...)
	sse := readFile(t, "anthropic_text.sse")
	h.up.reply(200, sseHeader(), sse)
	resp, got := h.post(t, "/v1/messages", claudeHeader(), reqBody)
	checkAnswered(t, resp, got, 200, sseHeader(), sse)
	if up := h.up.requests(); !bytes.Equal(up[len(up)-1].Body, reqBody) {
		t.Error("the request changed on its way")
	}
	h.sink.none(t, h.p)
	st := h.p.Stats()
	if st.Unparsed != 1 || !strings.Contains(st.LastError, "depth") {
		t.Errorf("nested request: %+v", st)
	}
	// In one SSE event of an otherwise good stream: that event is skipped.
	text := readFile(t, "anthropic_text.sse")
	i := bytes.Index(text, []byte("event: content_block_stop"))
	bad := append(append(append([]byte{}, text[:i]...), append(append([]byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"), deep...), []byte("}\n\n")...)...), text[i:]...)
	h.up.reply(200, sseHeader(), bad)
	resp, got = h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, sseHeader(), bad)
	if ex := h.sink.next(t); !strings.Contains(ex.Assistant, "survives kill -9") {
		t.Errorf("captured %q", ex.Assistant)
	}
	// A whole JSON answer that deep: forwarded, not captured.
	jsonAnswer := append(append([]byte(`{"type":"message","content":`), deep...), '}')
	h.up.reply(200, http.Header{"Content-Type": {"application/json"}}, jsonAnswer)
	nonStream := bytes.Replace(readFile(t, "claude_code_prompt.json"), []byte(`"stream":true`), []byte(`"stream":false`), 1)
	resp, got = h.post(t, "/v1/messages", claudeHeader(), nonStream)
	checkAnswered(t, resp, got, 200, nil, jsonAnswer)
	h.sink.none(t, h.p)
}

// TestAnswerOverOneMiBIsCut: an answer of 2 MB (under max_capture_bytes,
// over what the write pipeline takes whole) is captured cut to 1 MiB, its
// start and end kept around a marker, and passes ingest.Validate: before,
// the exchange failed validation and the turn was lost.
func TestAnswerOverOneMiBIsCut(t *testing.T) {
	h := newHarness(t, harnessOpt{cfg: func(c *config.Capture) { c.MaxCaptureBytes = 8 << 20 }})
	text := "The cause is the TTL. " + strings.Repeat("word ", 2<<20/5) + "The fix is in cache.go."
	var sse bytes.Buffer
	sse.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-tiny\"}}\n\n")
	sse.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	fmt.Fprintf(&sse, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":%q}}\n\n", text)
	sse.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	sse.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	h.up.reply(200, sseHeader(), sse.Bytes())
	resp, got := h.post(t, "/v1/messages", claudeHeader(), readFile(t, "claude_code_prompt.json"))
	checkAnswered(t, resp, got, 200, sseHeader(), sse.Bytes())
	ex := h.sink.next(t)
	if err := ingest.Validate(ex); err != nil {
		t.Fatalf("captured exchange: %v", err)
	}
	if a := ex.Assistant; len(a) > memory.MaxExchangeTextBytes || !strings.HasPrefix(a, "The cause is the TTL.") ||
		!strings.HasSuffix(a, "The fix is in cache.go.") || !strings.Contains(a, "bytes cut by memtray") {
		t.Errorf("answer %d bytes: %.40q", len(a), a)
	}
}
