package daemon

// Fault tests (issue "Reliability and security", item 4). Each runs a real
// daemon on loopback against a fake provider (and a fake Ollama) it can
// break, and checks, for one fault: the agent's traffic through the proxy
// is unaffected (or, for the provider's own faults, passed on faithfully),
// the problem shows as a warning in GET /api/overview and GET /api/stats
// (which `memtray stats` prints), and everything recovers by itself when
// the fault ends. Every test is named TestFault…: `make faults` runs them
// and counts them for the soak summary.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/status"
	"github.com/memtray/memtray/backend/store"
)

// jumpClock is the wall clock moved by an offset the test changes.
type jumpClock struct{ off atomic.Int64 }

func (c *jumpClock) Now() time.Time       { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *jumpClock) jump(d time.Duration) { c.off.Add(int64(d)) }

// switchable is a loopback HTTP server that stops (connections refused)
// and starts again on the same address.
type switchable struct {
	t    testing.TB
	addr string
	h    http.Handler
	mu   sync.Mutex
	srv  *http.Server
}

func newSwitchable(t testing.TB, h http.Handler) *switchable {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &switchable{t: t, addr: ln.Addr().String(), h: h}
	s.serve(ln)
	t.Cleanup(s.stop)
	return s
}

func (s *switchable) url() string { return "http://" + s.addr }

func (s *switchable) serve(ln net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.srv = &http.Server{Handler: s.h, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
}

// stop closes the listener and every connection.
func (s *switchable) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

// start listens on the same address again.
func (s *switchable) start() {
	s.t.Helper()
	var ln net.Listener
	var err error
	for range 50 {
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("listen again on %s: %v", s.addr, err)
	}
	s.serve(ln)
}

// provider is a fake Anthropic API: each answer is a short stream of a
// specific reply worth remembering, with a mode the test switches.
type provider struct {
	mode atomic.Value // "ok", "slow" or "reset"
	n    atomic.Int64
}

func newProvider() *provider {
	p := &provider{}
	p.mode.Store("ok")
	return p
}

// faultReply is the assistant text of answer i: specific enough for the
// write pipeline to keep.
func faultReply(i int64) string {
	return fmt.Sprintf("Service %d reads its retry settings from config/svc-%d.yaml: we set RETRY_LIMIT_%d=%d because the payment gateway at pay-%d.internal times out after %d seconds.",
		i, i, i, i%7+2, i, i%50+10)
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	i := p.n.Add(1)
	answer := sseAnswer(fmt.Sprintf("msg_%d", i), faultReply(i), "", "", "")
	w.Header().Set("Content-Type", "text/event-stream")
	switch p.mode.Load() {
	case "slow":
		time.Sleep(time.Second) // before the headers
		w.WriteHeader(200)
		for _, ev := range strings.SplitAfter(answer, "\n\n") {
			w.Write([]byte(ev))
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	case "reset":
		w.WriteHeader(200)
		w.Write([]byte(answer[:len(answer)/2]))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // the connection drops mid-answer
	default:
		io.WriteString(w, answer)
	}
}

// faultRig is a served daemon, its client, its clock and its provider.
type faultRig struct {
	t     *testing.T
	d     *Daemon
	addr  string
	c     *httpapi.Client
	clock *jumpClock
	up    *switchable
	prov  *provider
	log   *syncBuf
	asked atomic.Int64
}

// syncBuf collects log output safely.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newFaultRig(t *testing.T, cfg config.Config) *faultRig {
	t.Helper()
	r := &faultRig{t: t, clock: &jumpClock{}, prov: newProvider(), log: &syncBuf{}}
	r.up = newSwitchable(t, r.prov)
	cfg.Capture.AnthropicUpstream = r.up.url()
	logger := slog.New(slog.NewTextHandler(r.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r.d, r.addr = serveWith(t, Options{Config: cfg, Version: "test", Clock: r.clock, Logger: logger})
	r.c = httpapi.NewClient(r.addr, r.d.Token())
	return r
}

// ask sends one prompt through the proxy as Claude Code would and reads
// the whole answer: status, body, and the error reading it.
func (r *faultRig) ask() (int, []byte, error) {
	i := r.asked.Add(1)
	body := fmt.Sprintf(`{"model":"claude-x","max_tokens":100,"stream":true,"system":"Working directory: /home/dev/src/shop","messages":[{"role":"user","content":"question %d: how are the retries of service %d configured in this repo, and why?"}]}`, i, i)
	req, _ := http.NewRequest(http.MethodPost, "http://"+r.addr+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", "sk-ant-test-not-a-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// askOK asks and requires a complete answer.
func (r *faultRig) askOK() {
	r.t.Helper()
	status, body, err := r.ask()
	if err != nil || status != 200 || !bytes.HasSuffix(body, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) {
		r.t.Fatalf("the agent's request failed: %d %v %.200s", status, err, body)
	}
}

// codes returns the warning codes of GET /api/overview, checking GET
// /api/stats (what `memtray stats` prints) says the same.
func (r *faultRig) codes() []string {
	r.t.Helper()
	ctx := context.Background()
	o, err := r.c.Overview(ctx)
	if err != nil {
		r.t.Fatalf("overview: %v", err)
	}
	st, err := r.c.Stats(ctx)
	if err != nil {
		r.t.Fatalf("stats: %v", err)
	}
	var oc, sc []string
	for _, w := range o.Warnings {
		oc = append(oc, w.Code)
	}
	for _, w := range st.Warnings {
		sc = append(sc, w.Code)
	}
	if !slices.Equal(oc, sc) {
		// Between the two calls the state may have moved: ask again.
		o, _ = r.c.Overview(ctx)
		oc = oc[:0]
		for _, w := range o.Warnings {
			oc = append(oc, w.Code)
		}
		if !slices.Equal(oc, sc) {
			r.t.Errorf("overview warnings %v, stats warnings %v", oc, sc)
		}
	}
	return oc
}

// message returns the overview's warning of code ("" if none).
func (r *faultRig) message(code string) string {
	o, err := r.c.Overview(context.Background())
	if err != nil {
		r.t.Fatalf("overview: %v", err)
	}
	for _, w := range o.Warnings {
		if w.Code == code {
			return w.Message
		}
	}
	return ""
}

// await polls until cond holds (a failure guard, not a timing assertion).
func (r *faultRig) await(what string, cond func() bool) {
	r.t.Helper()
	polltest.Wait(r.t, what, cond, func() string { return fmt.Sprintf("warnings %v", r.codes()) })
}

// warned waits until the warning code is shown (on) or gone (!on).
func (r *faultRig) warned(code string, on bool) {
	r.t.Helper()
	what := code + " is shown"
	if !on {
		what = code + " is gone"
	}
	r.await(what, func() bool { return slices.Contains(r.codes(), code) == on })
}

// captureStats reads the proxy's counters.
func (r *faultRig) captureStats() (handled, handlerErrors, dropped int64) {
	st := r.d.proxy.Stats()
	return st.Handled, st.HandlerErrors, st.Dropped
}

// settled waits until every exchange the proxy queued was processed.
func (r *faultRig) settled() {
	r.t.Helper()
	r.await("the capture queue is drained", func() bool {
		st := r.d.proxy.Stats()
		return st.InFlight == 0 && st.Finished == st.Captured
	})
}

// TestFaultUpstreamDown: the provider stops answering. The agent gets a
// 502 with an Anthropic-style error saying why; the API goes on; the
// overview and stats say the provider cannot be reached; when it is back
// the next request passes and is stored, and the warning is gone.
func TestFaultUpstreamDown(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, testConfig(t))
	r.askOK()
	r.settled()
	before := r.d.Store().Count()
	r.up.stop()
	for range 3 {
		status, body, err := r.ask()
		if err != nil || status != http.StatusBadGateway || !bytes.Contains(body, []byte(`"type":"error"`)) || !bytes.Contains(body, []byte("memtray proxy: upstream "+r.up.addr)) {
			t.Fatalf("with the provider down the agent got %d %v %s", status, err, body)
		}
	}
	r.warned("upstream_unreachable", true)
	t.Logf("warning: %s", r.message("upstream_unreachable"))
	if _, err := r.c.Search(context.Background(), httpapi.SearchRequest{Query: "retry settings"}); err != nil {
		t.Errorf("search with the provider down: %v", err)
	}
	r.up.start()
	r.askOK()
	r.warned("upstream_unreachable", false)
	r.settled()
	if n := r.d.Store().Count(); n != before+1 {
		t.Errorf("after recovery the store holds %d, want %d", n, before+1)
	}
}

// TestFaultUpstreamSlow: a provider slow to answer (a second before its
// headers, pauses between events) is passed on at its own pace, with no
// timeout in between, captured, and nothing is reported as wrong.
func TestFaultUpstreamSlow(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, testConfig(t))
	r.prov.mode.Store("slow")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			start := time.Now()
			status, body, err := r.ask()
			if err != nil || status != 200 || !bytes.Contains(body, []byte("message_stop")) {
				t.Errorf("slow answer: %d %v", status, err)
			}
			if took := time.Since(start); took < time.Second {
				t.Errorf("a slow answer came in %v: not the provider's", took)
			}
		})
	}
	wg.Wait()
	r.settled()
	if handled, _, _ := r.captureStats(); handled != 4 {
		t.Errorf("handled %d slow exchanges, want 4", handled)
	}
	if codes := r.codes(); len(codes) != 0 {
		t.Errorf("a slow provider is not a fault, yet: %v", codes)
	}
}

// TestFaultUpstreamReset: the provider breaks an answer off mid-stream.
// The agent gets the bytes that came and then the same break (never a
// clean end); nothing broken is captured; the overview says so; the next
// whole answer clears it and is stored.
func TestFaultUpstreamReset(t *testing.T) {
	t.Parallel()
	r := newFaultRig(t, testConfig(t))
	r.prov.mode.Store("reset")
	for range 2 {
		status, body, err := r.ask()
		if status != 200 || err == nil || bytes.Contains(body, []byte("message_stop")) {
			t.Fatalf("a broken answer reached the agent as %d, %d bytes, read error %v", status, len(body), err)
		}
	}
	r.warned("upstream_reset", true)
	t.Logf("warning: %s", r.message("upstream_reset"))
	r.settled()
	if n := r.d.Store().Count(); n != 0 {
		t.Fatalf("broken answers were stored: %d memories", n)
	}
	r.prov.mode.Store("ok")
	r.askOK()
	r.warned("upstream_reset", false)
	r.settled()
	if n := r.d.Store().Count(); n != 1 {
		t.Errorf("after recovery the store holds %d, want 1", n)
	}
}

// ollamaRig is a fault rig whose embedder is a fake Ollama behind a
// switchable listener.
func ollamaRig(t *testing.T, queue int) (*faultRig, *ollamafake.Server, *switchable) {
	t.Helper()
	fo := newFakeOllama(t, 64, "nomic-embed-text:latest")
	sw := newSwitchable(t, fo.Handler())
	cfg := testConfig(t)
	cfg.Embedder.Provider = "ollama"
	cfg.Embedder.OllamaHost = sw.url()
	cfg.Embedder.Timeout = config.Duration(time.Second)
	cfg.Capture.QueueSize = queue
	return newFaultRig(t, cfg), fo, sw
}

// TestFaultEmbedderDown: Ollama stops while memtray runs. The agent's
// traffic passes; the exchanges cannot be stored and the overview says the
// embedder fails; when Ollama is back the next exchange is processed and
// the warning is gone, with no restart.
func TestFaultEmbedderDown(t *testing.T) {
	t.Parallel()
	r, _, ollama := ollamaRig(t, 64)
	r.askOK()
	r.settled()
	ollama.stop()
	for range 3 {
		r.askOK()
	}
	r.warned("embedder_degraded", true)
	msg := r.message("embedder_degraded")
	t.Logf("warning: %s", msg)
	if !strings.Contains(msg, "ollama:nomic-embed-text") || !strings.Contains(msg, "is Ollama running") {
		t.Errorf("the warning does not say which embedder or why: %s", msg)
	}
	if o, _ := r.c.Overview(context.Background()); !o.Embedder.Degraded {
		t.Error("the overview's embedder status is not degraded")
	}
	r.settled()
	_, errs, _ := r.captureStats()
	if errs == 0 {
		t.Error("no exchange failed with the embedder down")
	}
	ollama.start()
	r.askOK()
	r.warned("embedder_degraded", false)
	r.settled()
}

// TestFaultEmbedderHang: Ollama accepts requests and never answers. The
// agent's requests take no longer than usual; the pipeline stalls, so the
// queue drops (and counts) what does not fit; each stalled embedding
// times out and the overview says so; when Ollama answers again the
// pipeline goes on by itself. The dropped warning stays ten minutes.
func TestFaultEmbedderHang(t *testing.T) {
	t.Parallel()
	r, fo, _ := ollamaRig(t, 2)
	r.askOK()
	r.settled()
	fo.Set(func(k *ollamafake.Knobs) { k.EmbedDelay = time.Hour })
	var slowest time.Duration
	for range 12 {
		start := time.Now()
		r.askOK()
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("slowest agent request while the embedder hangs: %v", slowest)
	if slowest > 2*time.Second {
		t.Errorf("an agent request took %v while the embedder hung", slowest)
	}
	if _, _, dropped := r.captureStats(); dropped == 0 {
		t.Error("a stalled pipeline with a queue of 2 dropped nothing")
	}
	r.warned("capture_dropped", true)
	r.warned("embedder_degraded", true)
	t.Logf("warnings: %s / %s", r.message("embedder_degraded"), r.message("capture_dropped"))
	fo.Set(func(k *ollamafake.Knobs) { k.EmbedDelay = 0 })
	r.settled()
	r.askOK()
	r.warned("embedder_degraded", false)
	r.settled()
	r.clock.jump(status.DropWarn + time.Minute)
	r.warned("capture_dropped", false)
}

// fill writes a file until the filesystem is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			break
		}
	}
	// The last partial block too.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				break
			}
		}
	}
	return path
}

// TestFaultDiskFull: the data dir's filesystem fills up. Writes fail with
// a clear error and the overview says the disk is full; the agent's
// traffic passes; nothing already stored is lost; when space is freed the
// next exchange is stored and the warning is gone; after a restart every
// memory is there and found.
func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	mnt := tmpfs(t, "16m")
	cfg := testConfig(t)
	cfg.DataDir = filepath.Join(mnt, "data")
	r := newFaultRig(t, cfg)
	for range 3 {
		r.askOK()
	}
	r.settled()
	stored := map[string]memory.Memory{}
	r.d.Store().Iterate(context.Background(), store.Filter{}, func(m memory.Memory) error { stored[m.ID] = m; return nil })
	if len(stored) != 3 {
		t.Fatalf("stored %d before the disk filled, want 3", len(stored))
	}
	filler := fill(t, mnt)
	for range 3 {
		r.askOK()
	}
	r.warned("disk_full", true)
	msg := r.message("disk_full")
	t.Logf("warning: %s", msg)
	if !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, cfg.DataDir) {
		t.Errorf("the warning does not say the disk is full: %s", msg)
	}
	// bbolt may fit an add or two in the free pages of its file (more of
	// them since turn marks come and go): those are acknowledged and kept;
	// once the pages run out an add says the disk is full.
	added := 0
	for i := 0; ; i++ {
		_, err := r.c.Add(context.Background(), httpapi.AddRequest{Text: fmt.Sprintf("The staging database %d is db-staging-%d.internal on port 5433, reached through the bastion.", i, i)})
		if err == nil && i < 20 {
			added++
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "no space left on device") {
			t.Errorf("adding memories on a full disk: %d added, then %v", added, err)
		}
		break
	}
	for id, m := range stored {
		got, err := r.c.Get(context.Background(), id)
		if err != nil || got.Text != m.Text {
			t.Errorf("memory %s after the disk filled: %v", id, err)
		}
	}
	if hits, err := r.c.Search(context.Background(), httpapi.SearchRequest{Query: "payment gateway retry settings", Mode: "bm25"}); err != nil || len(hits) == 0 {
		t.Errorf("search on a full disk: %d hits, %v", len(hits), err)
	}
	r.settled()
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	r.askOK()
	r.warned("disk_full", false)
	r.settled()
	// bbolt may still fit a write or two in the free pages of its file:
	// every exchange handled without error is stored, the others not.
	handled, failed, _ := r.captureStats()
	want := int(handled) + added
	if n := r.d.Store().Count(); n != want || failed == 0 || handled < 4 {
		t.Errorf("after freeing space the store holds %d, want %d (%d exchanges failed)", n, want, failed)
	}
	// After a restart everything is there, and the text index agrees.
	if err := r.d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if n := d2.Store().Count(); n != want {
		t.Errorf("after a restart the store holds %d, want %d", n, want)
	}
	for id := range stored {
		if _, err := d2.Memories().Get(context.Background(), id); err != nil {
			t.Errorf("memory %s lost: %v", id, err)
		}
	}
	if hits, _ := d2.Memories().Search(context.Background(), httpapi.SearchRequest{Query: "payment gateway retry settings", Mode: "bm25", K: 20}); len(hits) != want-added {
		t.Errorf("the text index finds %d of the %d captured after the restart", len(hits), want-added)
	}
}

// TestFaultHelperDaemon is not a test: TestFaultStoreLocked runs the test
// binary with MEMTRAY_FAULT_HELPER set to make it a second process that
// serves a daemon on a data dir until its stdin closes.
func TestFaultHelperDaemon(t *testing.T) {
	dir := os.Getenv("MEMTRAY_FAULT_HELPER")
	if dir == "" {
		t.Skip("helper process only")
	}
	cfg := config.Default()
	cfg.DataDir, cfg.Listen, cfg.Embedder.Provider = dir, "127.0.0.1:0", "builtin"
	cfg.Capture.AnthropicUpstream = os.Getenv("MEMTRAY_FAULT_UPSTREAM")
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	d.Serve(ctx, func(addr string) { fmt.Println("ready", addr) })
	d.Close()
	os.Exit(0)
}

// TestFaultStoreLocked: a second daemon (or a command opening the store)
// on a data dir another process owns fails within seconds with an error
// naming the owner's pid; the owner's proxy goes on forwarding; once the
// owner is gone (even by SIGKILL) the store opens.
func TestFaultStoreLocked(t *testing.T) {
	prov := newProvider()
	up := newSwitchable(t, prov)
	cfg := testConfig(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestFaultHelperDaemon$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MEMTRAY_FAULT_HELPER="+cfg.DataDir, "MEMTRAY_FAULT_UPSTREAM="+up.url())
	stdin, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ready ")
	if err != nil || !ok {
		t.Fatalf("helper daemon: %q %v", line, err)
	}
	start := time.Now()
	_, err = Open(context.Background(), Options{Config: cfg})
	took := time.Since(start)
	t.Logf("second daemon on the data dir, after %v: %v", took.Round(time.Millisecond), err)
	if !errors.Is(err, memory.ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("second Open: %v; want ErrLocked naming pid %d", err, cmd.Process.Pid)
	}
	if took > 5*time.Second {
		t.Errorf("the second Open took %v to fail", took)
	}
	// The owner's proxy is unaffected.
	resp, err := http.Post("http://"+addr+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte("message_stop")) {
		t.Errorf("the owner's proxy: %d %.100s", resp.StatusCode, body)
	}
	cmd.Process.Kill()
	cmd.Wait()
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatalf("Open after the owner was killed: %v", err)
	}
	d.Close()
}

// TestFaultCorruptIndex: the text index is damaged on disk while memtray
// is stopped. At start it is rebuilt from the records; the log and the
// overview say so; every memory is found again and capture works.
func TestFaultCorruptIndex(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	ctx := context.Background()
	d, err := Open(ctx, Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: faultReply(int64(1000 + i))}); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	root := filepath.Join(cfg.DataDir, StoreDir, "text.bleve", "store", "root.bolt")
	b, err := os.ReadFile(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := 4096; i < len(b); i += 7 {
		b[i] ^= 0x5a
	}
	os.WriteFile(root, b, 0o600)
	r := newFaultRig(t, cfg)
	if !strings.Contains(r.log.String(), "store repaired at open") {
		t.Errorf("the log does not say the index was rebuilt:\n%s", r.log.String())
	}
	r.warned("store_repaired", true)
	msg := r.message("store_repaired")
	t.Logf("warning: %s", msg)
	if !strings.Contains(msg, "rebuilt from the records") {
		t.Errorf("warning %q", msg)
	}
	hits, err := r.c.Search(ctx, httpapi.SearchRequest{Query: "payment gateway retry settings", Mode: "bm25", K: 50})
	if err != nil || len(hits) != 20 {
		t.Errorf("the rebuilt index finds %d of 20 (%v)", len(hits), err)
	}
	r.askOK()
	r.settled()
	if n := r.d.Store().Count(); n != 21 {
		t.Errorf("capture after the rebuild: %d memories, want 21", n)
	}
}

// TestFaultClockJump: the clock jumps a year forward, then back. The
// steward's scheduled sweep notices, applies nothing and empties no trash
// until the clock has run steadily (the overview says so); then what it
// applies is bounded (each memory decayed once, nothing deleted, snoozes
// at most snooze_days from the clock); after the jump back nothing
// decays, recall works, and a capture pause cannot outlast its length.
func TestFaultClockJump(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	r := newFaultRig(t, cfg)
	d := r.d
	for i := range 30 {
		if _, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: faultReply(int64(2000 + i))}); err != nil {
			t.Fatal(err)
		}
	}
	// A third of them retrieved often and never confirmed (sticky), and
	// one in the trash.
	var all []memory.Memory
	d.Store().Iterate(ctx, store.Filter{}, func(m memory.Memory) error { all = append(all, m); return nil })
	var puts []memory.Memory
	for i, m := range all {
		if i%3 == 0 {
			m.AccessCount, m.LastAccessed = 40, r.clock.Now().UTC()
			puts = append(puts, m)
		}
	}
	if err := d.Store().Apply(ctx, store.Batch{Put: puts, Trash: []store.TrashRequest{{ID: all[1].ID, Reason: "test"}}}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string]memory.Memory {
		m := map[string]memory.Memory{}
		d.Store().Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(x memory.Memory) error { m[x.ID] = x; return nil })
		return m
	}
	trashLen := func() int { tr, _ := d.Steward().Trash(ctx); return len(tr) }
	if err := d.sweep(ctx); err != nil { // the sweep of a steady clock
		t.Fatal(err)
	}
	base := snapshot()
	if len(base) != 29 || trashLen() != 1 {
		t.Fatalf("before the jump: %d memories, %d in the trash", len(base), trashLen())
	}
	// The hold after a jump ends when the test says (a day otherwise).
	release := func() {
		d.clockCheck.mu.Lock()
		d.clockCheck.holdUntil = time.Now()
		d.clockCheck.mu.Unlock()
	}

	// A year forward: the sweep holds back.
	r.clock.jump(365 * 24 * time.Hour)
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(); !sameRecords(got, base) || trashLen() != 1 {
		t.Fatal("the sweep right after a jump changed memories or emptied the trash")
	}
	r.warned("clock_jump", true)
	t.Logf("warning: %s", r.message("clock_jump"))
	// A sweep while held applies nothing either.
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := snapshot(); !sameRecords(got, base) || trashLen() != 1 {
		t.Fatal("a sweep during the hold changed memories or emptied the trash")
	}
	// Once the clock ran steadily: bounded changes.
	release()
	r.warned("clock_jump", false)
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	after := snapshot()
	if len(after) != len(base) {
		t.Fatalf("the sweep after a year's jump removed memories: %d of %d left", len(after), len(base))
	}
	now := r.clock.Now()
	decayed := 0
	for id, m := range after {
		b := base[id]
		if m.Text != b.Text || m.AccessCount != b.AccessCount || !m.CreatedAt.Equal(b.CreatedAt) {
			t.Errorf("memory %s changed beyond its importance and snooze", id)
		}
		if m.Importance < b.Importance*0.8*0.9-1e-9 || m.Importance < 0.01 {
			t.Errorf("memory %s decayed from %.3f to %.3f: more than one step each", id, b.Importance, m.Importance)
		}
		if m.Importance < b.Importance {
			decayed++
		}
		if m.CooldownUntil.After(now.Add(time.Duration(cfg.Steward.SnoozeDays)*24*time.Hour + time.Minute)) {
			t.Errorf("memory %s snoozed until %v, beyond snooze_days", id, m.CooldownUntil)
		}
	}
	t.Logf("a year forward, then a sweep: %d of %d memories decayed one step, trash %d (expired entries purged)", decayed, len(after), trashLen())
	// A second sweep the same day compounds nothing.
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if again := snapshot(); !sameRecords(again, after) {
		t.Error("a second sweep after the jump changed memories again")
	}

	// The clock is set right again: a year back.
	r.clock.jump(-365 * 24 * time.Hour)
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	r.warned("clock_jump", true)
	if !strings.Contains(r.message("clock_jump"), "jumped back") {
		t.Errorf("warning %q", r.message("clock_jump"))
	}
	release()
	r.warned("clock_jump", false)
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if back := snapshot(); !sameRecords(back, after) {
		t.Error("a sweep after the clock went back changed memories")
	}
	rec, err := d.Services().Recaller.Recall(ctx, search.RecallRequest{SessionID: "after-jumps", Project: "shop", Prompt: "how are the retries of the payment gateway configured in config/svc yaml?"})
	if err != nil || len(rec.Hits) == 0 {
		t.Errorf("recall after the jumps: %+v %v", rec, err)
	}
	// A pause of two seconds, then the clock goes back a year: the pause
	// still ends after two seconds.
	two := config.Duration(2 * time.Second)
	if _, err := r.c.SetCapture(ctx, httpapi.CaptureUpdate{PauseFor: &two}); err != nil {
		t.Fatal(err)
	}
	r.clock.jump(-365 * 24 * time.Hour)
	r.await("the pause ends after its length", func() bool { st, _ := r.c.Capture(ctx); return st.Enabled })
	r.askOK()
}

// sameRecords reports whether two snapshots hold the same memories with
// the same importance, snooze and update time.
func sameRecords(a, b map[string]memory.Memory) bool {
	if len(a) != len(b) {
		return false
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok || x.Importance != y.Importance || !x.CooldownUntil.Equal(y.CooldownUntil) || !x.UpdatedAt.Equal(y.UpdatedAt) {
			return false
		}
	}
	return true
}

// TestFaultRecordsFileDamagedWhileServing: the records file loses its
// pages under a running daemon (cut to its two meta pages by another
// program). Reading a record then faults in bbolt's memory map, which
// used to kill the daemon; now each request that reaches the file fails
// with an error naming it as damaged, and the daemon goes on answering.
func TestFaultRecordsFileDamagedWhileServing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	d, addr := serve(t, cfg)
	c := httpapi.NewClient(addr, d.Token())
	var ids []string
	for i := range 20 {
		m, err := c.Add(ctx, httpapi.AddRequest{Text: fmt.Sprintf("Worker %d reads its queue settings from conf/worker-%d.toml at start.", i, i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	path := filepath.Join(cfg.DataDir, StoreDir, "memtray.db")
	if err := os.Truncate(path, int64(2*os.Getpagesize())); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, ids[3]); err == nil || !strings.Contains(err.Error(), path+" is damaged") {
		t.Errorf("Get of a record past the cut: %v, want the records file named as damaged", err)
	}
	if _, err := c.Add(ctx, httpapi.AddRequest{Text: "Written after the cut: the scheduler runs every five minutes."}); err == nil || !strings.Contains(err.Error(), "is damaged") {
		t.Errorf("Add after the cut: %v, want the damaged error", err)
	}
	if h, ok := httpapi.Probe(ctx, addr, d.Token(), 5*time.Second); !ok || h.Service != "memtray" {
		t.Fatalf("the daemon does not answer after the cut: %+v", h)
	}
	if n := d.Store().Count(); n != 20 {
		t.Errorf("the store counts %d records after the cut, want the 20 it loaded", n)
	}
}
