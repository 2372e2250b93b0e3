package daemon

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
)

// TestCaptureSwitch pauses and resumes capture and excludes a project
// through the API, checks the proxy forwards either way, and that the
// choice survives a restart.
func TestCaptureSwitch(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseAnswer("msg_1", "The answer is 42 because config.yaml sets answer: 42.", "", "", ""))
	}))
	defer upstream.Close()
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream = upstream.URL
	d, addr := serve(t, cfg)
	client := httpapi.NewClient(addr, d.Token())
	ctx := context.Background()
	send := func() {
		t.Helper()
		body := `{"model":"m","max_tokens":10,"stream":true,"system":"Working directory: /home/dev/secretproj","messages":[{"role":"user","content":"hi"}]}`
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(data), "message_stop") {
			t.Fatalf("proxy: %d %s", resp.StatusCode, data)
		}
	}
	// stats waits until the workers have taken every queued exchange.
	stats := func() map[string]any {
		t.Helper()
		var m map[string]any
		polltest.Wait(t, "the capture workers to take every queued exchange", func() bool {
			st, err := client.Capture(ctx)
			if err != nil {
				t.Fatal(err)
			}
			m = nil
			json.Unmarshal(st.Stats, &m)
			n := func(k string) float64 { v, _ := m[k].(float64); return v }
			return n("captured") == n("handled")+n("excluded")+n("handler_errors")+n("unparsed")
		}, func() string { return fmt.Sprint(m) })
		return m
	}
	off := false
	st, err := client.SetCapture(ctx, httpapi.CaptureUpdate{Enabled: &off})
	if err != nil || st.Enabled {
		t.Fatalf("pause: %+v %v", st, err)
	}
	send()
	if s := stats(); s["paused_skipped"] != 1.0 || s["captured"] != 0.0 {
		t.Errorf("paused: %v", s)
	}
	on := true
	if _, err := client.SetCapture(ctx, httpapi.CaptureUpdate{Enabled: &on, Exclude: []string{"secretproj"}}); err != nil {
		t.Fatal(err)
	}
	send()
	if s := stats(); s["excluded"] != 1.0 || s["handled"] != 0.0 {
		t.Errorf("excluded: %v", s)
	}
	if _, err := client.SetCapture(ctx, httpapi.CaptureUpdate{Exclude: []string{" "}}); !errors.Is(err, memory.ErrInvalid) && (err == nil || !strings.Contains(err.Error(), "excluded project")) {
		t.Errorf("blank exclusion: %v", err)
	}
	// A new daemon on the data dir keeps the choice.
	d.Close()
	d2, err := Open(ctx, Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	st2, _ := d2.Services().Settings.Capture(ctx)
	if !st2.Enabled || len(st2.ExcludeProjects) != 1 || st2.ExcludeProjects[0] != "secretproj" {
		t.Errorf("after restart: %+v", st2)
	}
}

// switchEmbedder is the built-in embedder until told to fail or to hang.
type switchEmbedder struct {
	memory.Embedder
	mode  atomic.Int32 // 0 works, 1 fails, 2 hangs until released
	hung  chan struct{}
	calls atomic.Int64
}

func (e *switchEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	switch e.mode.Load() {
	case 1:
		return nil, fmt.Errorf("%w: injected fault", memory.ErrUnavailable)
	case 2:
		select {
		case <-e.hung:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return e.Embedder.Embed(ctx, texts)
}

// TestProxyUnaffectedByPipelineFaults: with the embedder failing or hanging
// (so the pipeline fails or stalls), the agent's traffic still passes
// byte for byte; captures beyond the queue are dropped and counted.
func TestProxyUnaffectedByPipelineFaults(t *testing.T) {
	t.Parallel()
	answer := sseAnswer("msg_f", "The deploy script reads DEPLOY_ENV and refuses to run against production without --confirm.", "", "", "")
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	}))
	defer upstream.Close()
	emb := &switchEmbedder{Embedder: embed.NewBuiltin(), hung: make(chan struct{})}
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream = upstream.URL
	cfg.Capture.QueueSize = 2
	d, err := Open(context.Background(), Options{Config: cfg, Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(a string) { addrc <- a }) }()
	addr := <-addrc
	defer func() {
		close(emb.hung)
		cancel()
		<-done
		d.Close()
	}()
	send := func(i int) {
		t.Helper()
		body := fmt.Sprintf(`{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"question %d about the deploy script and its environment variables"}]}`, i)
		resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(data) != answer {
			t.Fatalf("request %d: %d, body differs: %t", i, resp.StatusCode, string(data) != answer)
		}
	}
	emb.mode.Store(1) // failing embedder
	for i := 0; i < 5; i++ {
		send(i)
	}
	emb.mode.Store(2) // hanging embedder: the worker stalls, the queue fills
	for i := 5; i < 30; i++ {
		send(i)
	}
	st, _ := d.Services().Settings.Capture(context.Background())
	var s struct{ Captured, Dropped, HandlerErrors int64 }
	json.Unmarshal(st.Stats, &s)
	t.Logf("capture stats: %s", st.Stats)
	if s.Dropped == 0 {
		t.Errorf("a stalled pipeline with a queue of 2 dropped nothing: %s", st.Stats)
	}
	if s.Captured+s.Dropped != 30 {
		t.Errorf("captured %d + dropped %d != 30 requests", s.Captured, s.Dropped)
	}
}

// TestListenerGuards: on the one listener, /mcp needs the token, the proxy
// does not but refuses foreign Host and Origin headers like the API.
func TestListenerGuards(t *testing.T) {
	t.Parallel()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[]}`)
	}))
	defer upstream.Close()
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream, cfg.Capture.OpenAIUpstream = upstream.URL, upstream.URL
	d, addr := serve(t, cfg)
	for _, tc := range []struct {
		name, method, path, host, origin string
		token                            bool
		want                             int
	}{
		{"proxy without token", "GET", "/v1/models", "", "", false, 200},
		{"proxy, foreign host", "GET", "/v1/models", "evil.example:80", "", false, http.StatusMisdirectedRequest},
		{"proxy, foreign origin", "POST", "/v1/messages", "", "https://evil.example", false, http.StatusForbidden},
		{"mcp without token", "POST", "/mcp", "", "", false, http.StatusUnauthorized},
		{"mcp, foreign origin", "POST", "/mcp", "", "https://evil.example", true, http.StatusForbidden},
		{"openai proxy without token", "GET", "/openai/v1/models", "", "", false, 200},
	} {
		req, _ := http.NewRequest(tc.method, "http://"+addr+tc.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.token {
			req.Header.Set("Authorization", "Bearer "+d.Token())
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
	}
}

// A timed pause turns capture off, says until when, ends by itself while
// the daemon runs, and ends at the next start when it ran out meanwhile;
// a pause still running at a restart goes on.
func TestCapturePause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	short := config.Duration(1500 * time.Millisecond)
	st, err := c.SetCapture(ctx, httpapi.CaptureUpdate{PauseFor: &short})
	if err != nil || st.Enabled || st.PausedUntil == nil || time.Until(*st.PausedUntil) > 3*time.Second {
		t.Fatalf("pause = %+v, %v", st, err)
	}
	polltest.Wait(t, "the pause to end by itself", func() bool {
		st, err = c.Capture(ctx)
		return err == nil && st.Enabled && st.PausedUntil == nil
	}, func() string { return fmt.Sprintf("%+v, %v", st, err) })

	bad := []httpapi.CaptureUpdate{
		{PauseFor: ptr(config.Duration(0))},
		{PauseFor: ptr(config.Duration(8 * 24 * time.Hour))},
		{PauseFor: &short, Enabled: ptr(true)},
	}
	for _, u := range bad {
		var fe *httpapi.FieldErrors
		if _, err := c.SetCapture(ctx, u); !errors.As(err, &fe) || fe.Fields["pause_for"] == "" {
			t.Errorf("SetCapture(%+v) = %v, want a pause_for field error", u, err)
		}
	}

	// A pause across restarts: still running → still paused; run out → on.
	hour := config.Duration(time.Hour)
	if _, err := c.SetCapture(ctx, httpapi.CaptureUpdate{PauseFor: &hour}); err != nil {
		t.Fatal(err)
	}
	// Switching on by hand ends the pause.
	if st, err := c.SetCapture(ctx, httpapi.CaptureUpdate{Enabled: ptr(true)}); err != nil || !st.Enabled || st.PausedUntil != nil {
		t.Fatalf("on by hand = %+v, %v", st, err)
	}
	if _, err := c.SetCapture(ctx, httpapi.CaptureUpdate{PauseFor: &hour}); err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, tt := range []struct {
		until  time.Time
		paused bool
	}{{time.Now().Add(time.Hour), true}, {time.Now().Add(-time.Minute), false}} {
		data, _ := json.Marshal(captureState{Enabled: false, ExcludeProjects: []string{}, PausedUntil: tt.until})
		if err := os.WriteFile(filepath.Join(cfg.DataDir, CaptureStateFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		d2, err := Open(ctx, Options{Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		st, _ := d2.Services().Settings.Capture(ctx)
		d2.Close()
		if st.Enabled == tt.paused || (st.PausedUntil != nil) != tt.paused {
			t.Errorf("reopened with a pause until %v: %+v", tt.until, st)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// captureState is the capture state file's JSON (package settings'), as a
// test writes it.
type captureState struct {
	Enabled         bool      `json:"enabled"`
	ExcludeProjects []string  `json:"exclude_projects"`
	PausedUntil     time.Time `json:"paused_until,omitzero"`
}
