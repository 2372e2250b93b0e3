package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// tap is a transparent recording proxy in front of memtray: the address
// written into the clients' configs (memtray's "listen") is the tap's, and
// it forwards everything (model requests, the hooks' and MCP's API calls,
// WebSocket upgrades) to `memtray serve`. For each model request it keeps
// the body the client sent and the answer bytes it got back, so the checks
// compare what the client sent with what the fake upstream received
// (byte-identical) and see when the first answer bytes reached the client
// (streaming).
type tap struct {
	srv *http.Server
	url string

	mu   sync.Mutex
	seen []*tapped
}

// tapped is one model request seen by the tap.
type tapped struct {
	Path        string
	Body        []byte // as the client sent it
	Status      int
	Answer      []byte    // as the client received it
	FirstByteAt time.Time // when the first answer bytes passed
}

// newTap starts a tap forwarding to target (memtray's real address).
func newTap(target string) (*tap, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("tap target: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tap: %w", err)
	}
	t := &tap{url: "http://" + l.Addr().String()}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u) // Host too: memtray answers its own address only
		},
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			if tp, ok := resp.Request.Context().Value(tapKey{}).(*tapped); ok {
				tp.Status = resp.StatusCode
				resp.Body = &tapBody{rc: resp.Body, t: t, tp: tp}
			}
			return nil
		},
	}
	t.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isModelPath(r.URL.Path) || isWebSocket(r) {
			rp.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tp := &tapped{Path: r.URL.Path, Body: body}
		t.mu.Lock()
		t.seen = append(t.seen, tp)
		t.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		rp.ServeHTTP(w, r.WithContext(contextWith(r, tp)))
	})}
	go t.srv.Serve(l) //nolint:errcheck // ends with Close
	return t, nil
}

type tapKey struct{}

// isModelPath says whether a path is a model request the proxy forwards.
func isModelPath(p string) bool {
	return strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/openai/v1/")
}

// Close stops the tap.
func (t *tap) Close() { t.srv.Close() }

// requests returns the model requests seen so far.
func (t *tap) requests() []*tapped {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]*tapped(nil), t.seen...)
}

// reset forgets them.
func (t *tap) reset() {
	t.mu.Lock()
	t.seen = nil
	t.mu.Unlock()
}

// tapBody copies the answer as the client reads it.
type tapBody struct {
	rc io.ReadCloser
	t  *tap
	tp *tapped
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.t.mu.Lock()
		if b.tp.FirstByteAt.IsZero() {
			b.tp.FirstByteAt = time.Now()
		}
		b.tp.Answer = append(b.tp.Answer, p[:n]...)
		b.t.mu.Unlock()
	}
	return n, err
}

func (b *tapBody) Close() error { return b.rc.Close() }

func contextWith(r *http.Request, tp *tapped) context.Context {
	return context.WithValue(r.Context(), tapKey{}, tp)
}
