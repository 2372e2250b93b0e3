package capture

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
)

// seen is one request as the fake upstream received it.
type seen struct {
	Method, Path, RawPath, RawQuery string
	Header                          http.Header
	Body                            []byte
}

// upstream is a fake provider on loopback that replays a recorded body,
// one SSE event per write, flushed, with an optional pause between events.
type upstream struct {
	srv *httptest.Server

	mu     sync.Mutex
	seen   []seen
	status int
	header http.Header
	body   []byte
	// gap pauses between events; release, when set, gates each event after
	// the first: the upstream waits for a value before writing it.
	gap     time.Duration
	release chan struct{}
	// aborted reports handlers that saw the client go away.
	aborted chan struct{}
}

func newUpstream(t testing.TB) *upstream {
	u := &upstream{status: 200, header: http.Header{}, aborted: make(chan struct{}, 100)}
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// reply sets what the upstream answers.
func (u *upstream) reply(status int, header http.Header, body []byte) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.status, u.header, u.body = status, header, body
}

func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.seen...)
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.seen = append(u.seen, seen{r.Method, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.Header.Clone(), body})
	status, header, resp, gap, release := u.status, u.header, u.body, u.gap, u.release
	u.mu.Unlock()
	for k, v := range header {
		w.Header()[k] = v
	}
	w.WriteHeader(status)
	fl := w.(http.Flusher)
	for i, ev := range splitEvents(resp) {
		if i > 0 {
			if release != nil {
				select {
				case <-release:
				case <-r.Context().Done():
					u.aborted <- struct{}{}
					return
				}
			} else if gap > 0 {
				time.Sleep(gap)
			}
		}
		if _, err := w.Write(ev); err != nil {
			u.aborted <- struct{}{}
			return
		}
		fl.Flush()
	}
}

// splitEvents cuts an SSE body after each blank line (LF or CRLF), keeping
// every byte; a body without blank lines is one piece.
func splitEvents(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\n\n"))
		j := bytes.Index(b, []byte("\r\n\r\n"))
		end := -1
		switch {
		case i >= 0 && (j < 0 || i < j):
			end = i + 2
		case j >= 0:
			end = j + 4
		}
		if end < 0 {
			end = len(b)
		}
		out = append(out, b[:end])
		b = b[end:]
	}
	return out
}

// sink collects the exchanges the proxy hands to its Handler.
type sink struct{ ch chan memory.Exchange }

func newSink() *sink { return &sink{ch: make(chan memory.Exchange, 1000)} }

func (s *sink) handle(_ context.Context, ex memory.Exchange) error {
	s.ch <- ex
	return nil
}

// next waits for one exchange (a failure guard, not a timing assertion).
func (s *sink) next(t testing.TB) memory.Exchange {
	t.Helper()
	select {
	case ex := <-s.ch:
		return ex
	case <-time.After(10 * time.Second):
		t.Fatal("no exchange captured")
		return memory.Exchange{}
	}
}

// none checks that nothing was captured once the proxy has settled.
func (s *sink) none(t testing.TB, p *Proxy) {
	t.Helper()
	settled(t, p)
	select {
	case ex := <-s.ch:
		t.Fatalf("captured %+v, want nothing", ex)
	default:
	}
}

// settled waits until no capturable request is being proxied and the
// workers are done with every exchange the proxy captured (Stats.InFlight
// 0, Finished equal to Captured), whatever the Handler did with it; the
// limit only ends a test that would otherwise hang.
func settled(t testing.TB, p *Proxy) {
	t.Helper()
	polltest.Eventually(t, "capture settles", func() error {
		if st := p.Stats(); st.InFlight != 0 || st.Finished != st.Captured {
			return fmt.Errorf("stats %+v", st)
		}
		return nil
	})
}

// testConfig is a capture config pointing both upstreams at url.
func testConfig(url string) config.Capture {
	return config.Capture{Enabled: true, AnthropicUpstream: url, OpenAIUpstream: url, QueueSize: 64, MaxCaptureBytes: 1 << 20}
}

// harness is a proxy served by a real http.Server on loopback, with a
// client, a fake upstream and (unless noRun) workers feeding a sink.
type harness struct {
	up     *upstream
	p      *Proxy
	url    string
	client *http.Client
	sink   *sink
	tr     *http.Transport // the proxy's transport
	cancel context.CancelFunc
	done   chan struct{}
}

type harnessOpt struct {
	cfg     func(*config.Capture)
	handler Handler
	noRun   bool
	workers int
}

func newHarness(t testing.TB, o harnessOpt) *harness {
	t.Helper()
	h := &harness{up: newUpstream(t), sink: newSink(), done: make(chan struct{})}
	cfg := testConfig(h.up.srv.URL)
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	h.tr = defaultTransport()
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := New(Options{Config: cfg, Transport: h.tr, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	h.url = "http://" + ln.Addr().String()
	h.client = &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 128}}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	handler := o.handler
	if handler == nil {
		handler = h.sink.handle
	}
	if o.noRun {
		close(h.done)
	} else {
		go func() {
			defer close(h.done)
			workers := o.workers
			if workers == 0 {
				workers = 2
			}
			p.Run(ctx, workers, handler)
		}()
	}
	t.Cleanup(func() {
		cancel()
		<-h.done
		h.client.CloseIdleConnections()
		_ = srv.Close()
		h.tr.CloseIdleConnections()
	})
	return h
}

// post sends a request through the proxy and reads the whole answer.
func (h *harness) post(t testing.TB, path string, header http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, h.url+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, got
}

func readFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testWriter sends log lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// sseHeader is what the Anthropic API answers a stream with.
func sseHeader() http.Header {
	return http.Header{
		"Content-Type":              {"text/event-stream; charset=utf-8"},
		"Cache-Control":             {"no-cache"},
		"Request-Id":                {"req_011CMemtrayTest"},
		"X-Request-Id":              {"req_011CMemtrayTest"},
		"Anthropic-Organization-Id": {"00000000-0000-0000-0000-000000000000"},
	}
}

// claudeHeader is what Claude Code sends.
func claudeHeader() http.Header {
	return http.Header{
		"Content-Type":      {"application/json"},
		"Anthropic-Version": {"2023-06-01"},
		"Anthropic-Beta":    {"claude-code-20250219,interleaved-thinking-2025-05-14"},
		"X-Api-Key":         {"sk-ant-test-not-a-key"},
		"Authorization":     {"Bearer not-a-token"},
		"User-Agent":        {"claude-cli/2.0.0 (external, cli)"},
		"Accept":            {"application/json"},
		"X-Stainless-Lang":  {"js"},
	}
}
