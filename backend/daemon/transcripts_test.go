package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
	"github.com/memtray/memtray/backend/transcript"
)

// transcriptRig is a served daemon whose Claude Code session folder is a
// temp dir, with the fixture session (testdata/claude_session.jsonl).
type transcriptRig struct {
	t      testing.TB
	d      *Daemon
	cl     *httpapi.Client
	cfg    config.Config
	root   string
	path   string
	lines  [][]byte
	writes int
}

func newTranscriptRig(t testing.TB, cfg config.Config) *transcriptRig {
	t.Helper()
	r := &transcriptRig{t: t, cfg: cfg}
	if len(cfg.Capture.Transcripts.ClaudeCodeDirs) == 0 {
		r.root = t.TempDir()
		r.cfg.Capture.Transcripts.ClaudeCodeDirs = []string{r.root}
	} else {
		r.root = cfg.Capture.Transcripts.ClaudeCodeDirs[0]
	}
	data, err := os.ReadFile("testdata/claude_session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r.lines = bytes.SplitAfter(data[:len(data)-1], []byte("\n"))
	r.lines[len(r.lines)-1] = append(r.lines[len(r.lines)-1], '\n')
	dir := filepath.Join(r.root, "-home-dev-src-ledgerd")
	os.MkdirAll(dir, 0o700)
	r.path = filepath.Join(dir, "7d1f6c2e-0b5a-4c39-9a7e-tail00000001.jsonl")
	r.serve(Options{Config: r.cfg, Version: "test"})
	return r
}

func (r *transcriptRig) serve(opts Options) {
	r.d, _ = serveWith(r.t, opts)
	r.cl = httpapi.NewClient(r.d.listen, r.d.Token())
}

// write appends the fixture's lines up to n (exclusive).
func (r *transcriptRig) write(n int) {
	r.t.Helper()
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	for ; r.writes < n; r.writes++ {
		if _, err := f.Write(r.lines[r.writes]); err != nil {
			r.t.Fatal(err)
		}
	}
}

// hook sends what `memtray hook EVENT` sends and waits until the daemon
// has read the file.
func (r *transcriptRig) hook(event string) {
	r.t.Helper()
	before := r.d.tail.Stats().Processed
	got, err := r.cl.CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: r.path, Event: event,
		SessionID: "7d1f6c2e-0b5a-4c39-9a7e-tail00000001", CWD: "/home/dev/src/ledgerd"})
	if err != nil || !got.Queued {
		r.t.Fatalf("capture transcript: %+v %v", got, err)
	}
	r.waitProcessed(before + 1)
}

// waitProcessed waits (a deadline, not an assertion on time) until the
// tailer has done n reads and has none waiting.
func (r *transcriptRig) waitProcessed(n int) {
	r.t.Helper()
	polltest.Wait(r.t, fmt.Sprintf("the daemon to read the transcript (%d reads, none queued)", n), func() bool {
		st := r.d.tail.Stats()
		return st.Processed >= n && st.Queued == 0
	}, func() string { return fmt.Sprintf("%+v", r.d.tail.Stats()) })
}

// storedTexts returns the texts of the store's memories, sorted: every
// version with superseded, else only those not superseded (trashed ones
// are never listed).
func storedTexts(t testing.TB, superseded bool, st *store.Store) []string {
	t.Helper()
	var out []string
	err := st.Iterate(context.Background(), store.Filter{IncludeSnoozed: true, IncludeSuperseded: superseded}, func(m memory.Memory) error {
		if superseded || !m.Superseded() {
			out = append(out, m.Text)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// A session captured live, line by line with the hooks firing, stores
// what `memtray ingest` of its transcript stores.
func TestTranscriptHookCaptureMatchesIngest(t *testing.T) {
	t.Parallel()
	r := newTranscriptRig(t, testConfig(t))
	for n := 1; n <= len(r.lines); n++ {
		r.write(n)
		r.hook(tail.EventPreCompact)
	}
	if st := r.d.tail.Stats(); st.Turns != 3 {
		t.Fatalf("before Stop: %+v, want the 3 turns a later prompt ended", st)
	}
	r.hook(tail.EventStop)
	st := r.d.tail.Stats()
	if st.Turns != 4 || st.Exchanges != 9 || st.Duplicates != 0 || st.Files != 1 || st.Pending != 0 {
		t.Errorf("stats %+v", st)
	}
	live := storedTexts(t, true, r.d.Store())
	if len(live) == 0 {
		t.Fatal("nothing stored from the session")
	}
	// The same session through `memtray ingest`'s entry point, on another store.
	cfg2 := testConfig(t)
	cfg2.Capture.Transcripts.Enabled = false
	d2, err := Open(context.Background(), Options{Config: cfg2})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	f, _ := os.Open("testdata/claude_session.jsonl")
	exs, _, err := transcript.Parse(f, transcript.Options{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d2.Feed().Ingest(context.Background(), httpapi.IngestRequest{Exchanges: exs}); err != nil {
		t.Fatal(err)
	}
	if batch := storedTexts(t, true, d2.Store()); !slices.Equal(live, batch) {
		t.Errorf("live capture stored\n%q\nmemtray ingest stored\n%q", live, batch)
	}
	// memtray stats shows it.
	s, err := r.cl.Stats(context.Background())
	if err != nil || s.Transcripts == nil || !s.Transcripts.Enabled || s.Transcripts.Turns != 4 || s.Transcripts.Files != 1 {
		t.Errorf("stats: %+v %v", s.Transcripts, err)
	}
}

// settableClock is a clock a test moves.
type settableClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *settableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *settableClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// A session whose hooks never fire (the daemon was down when they did,
// or they are not installed) is found by the watcher, and its last turn
// ends when the file has been idle for capture.transcripts.idle.
func TestTranscriptWatcherAndIdle(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Capture.Transcripts.Poll = config.Duration(time.Second)
	cfg.Capture.Transcripts.Idle = config.Duration(time.Minute)
	root := t.TempDir()
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{root}
	clock := &settableClock{now: time.Now()}
	r := &transcriptRig{t: t, cfg: cfg, root: root}
	data, _ := os.ReadFile("testdata/claude_session.jsonl")
	r.lines = bytes.SplitAfter(data[:len(data)-1], []byte("\n"))
	r.lines[len(r.lines)-1] = append(r.lines[len(r.lines)-1], '\n')
	os.MkdirAll(filepath.Join(root, "p"), 0o700)
	r.path = filepath.Join(root, "p", "s.jsonl")
	r.serve(Options{Config: cfg, Version: "test", Clock: clock})
	r.write(9) // turn 1 and the prompt of turn 2
	polltest.Wait(t, "the watcher to find the file (1 turn)", func() bool { return r.d.tail.Stats().Turns >= 1 }, func() string { return fmt.Sprintf("%+v", r.d.tail.Stats()) })
	r.write(10) // turn 2's answer: nothing but idle time ends it
	polltest.Wait(t, "the watcher to read the new line (1 pending, 3 exchanges)", func() bool { return r.d.tail.Stats().Pending >= 1 && r.d.tail.Stats().Exchanges >= 3 }, func() string { return fmt.Sprintf("%+v", r.d.tail.Stats()) })
	if st := r.d.tail.Stats(); st.Turns != 1 {
		t.Fatalf("turn 2 captured before the file went idle: %+v", st)
	}
	clock.add(2 * time.Minute)
	polltest.Wait(t, "the idle turn to be captured (2 turns)", func() bool { return r.d.tail.Stats().Turns >= 2 }, func() string { return fmt.Sprintf("%+v", r.d.tail.Stats()) })
}

// A restart mid-file goes on from the saved cursor: nothing twice.
func TestTranscriptRestartMidFile(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{root}
	d.Close()
	r := newTranscriptRig(t, cfg)
	r.write(12) // two turns and a half
	r.hook(tail.EventPreCompact)
	first := r.d.tail.Stats().Exchanges
	if st := r.d.tail.Stats(); st.Turns != 2 {
		t.Fatalf("before the restart: %+v", st)
	}
	// Stop this daemon, start another on the data dir.
	r.d.Close()
	r.serveAgain()
	r.write(len(r.lines))
	r.hook(tail.EventStop)
	st := r.d.tail.Stats()
	if st.Turns != 2 || st.Duplicates != 0 {
		t.Errorf("after the restart: %+v, want the 2 other turns and no duplicate", st)
	}
	if first+st.Exchanges != 9 {
		t.Errorf("%d + %d exchanges stored, want the file's 9", first, st.Exchanges)
	}
}

// serveAgain starts a second daemon on the rig's data dir (the first was
// closed; its Serve ends with the test).
func (r *transcriptRig) serveAgain() {
	r.t.Helper()
	r.d, _ = serveWith(r.t, Options{Config: r.cfg, Version: "test"})
	r.cl = httpapi.NewClient(r.d.listen, r.d.Token())
}

// A turn the proxy captured first is skipped when it comes from the
// session file: one decision for it, the duplicate counted.
func TestProxyThenTranscriptStoresOnce(t *testing.T) {
	t.Parallel()
	data, _ := os.ReadFile("testdata/claude_session.jsonl")
	f := bytes.NewReader(data)
	exs, _, err := transcript.Parse(f, transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	turn2 := exs[3] // one response, no tool
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, sseAnswer("msg_04", turn2.Assistant, "", "", ""))
	}))
	defer upstream.Close()
	cfg := testConfig(t)
	cfg.Capture.AnthropicUpstream = upstream.URL
	r := newTranscriptRig(t, cfg)
	body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": true,
		"metadata": map[string]string{"user_id": "user_abc_account_def_session_" + turn2.SessionID},
		"system":   "Working directory: /home/dev/src/ledgerd",
		"messages": []map[string]any{{"role": "user", "content": "<system-reminder>today is Monday</system-reminder>\n" + turn2.User}}})
	resp, err := http.Post("http://"+r.d.listen+"/v1/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	polltest.Wait(t, "the proxy's exchange to be decided", func() bool { return len(r.d.decisions.Newest(100)) == 1 },
		func() string { return fmt.Sprintf("%d decisions", len(r.d.decisions.Newest(100))) })
	r.write(len(r.lines))
	r.hook(tail.EventStop)
	st := r.d.tail.Stats()
	if st.Duplicates != 1 || st.Turns != 3 {
		t.Errorf("stats %+v, want turn 2 skipped as the proxy's", st)
	}
	n := 0
	for _, e := range r.d.decisions.Newest(100) {
		if strings.Contains(e.User, "with a config flag.") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("turn 2 decided %d times, want once", n)
	}
}

// Bad requests to POST /api/capture/transcript: 400 (404 for a missing
// file), 401 without the token, 405 for another method; none queues.
func TestTranscriptAPIBadInput(t *testing.T) {
	t.Parallel()
	r := newTranscriptRig(t, testConfig(t))
	r.write(2)
	outside := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(outside, r.lines[1], 0o600)
	url := "http://" + r.d.listen + httpapi.TranscriptPath
	for _, tc := range []struct {
		name, method, ct, body string
		token                  bool
		status                 int
	}{
		{"ok", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop"}`, r.path), true, 202},
		{"not json", "POST", "application/json", `{"path":`, true, 400},
		{"unknown field", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop","x":1}`, r.path), true, 400},
		{"no path", "POST", "application/json", `{"event":"stop"}`, true, 400},
		{"no event", "POST", "application/json", fmt.Sprintf(`{"path":%q}`, r.path), true, 400},
		{"bad event", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"explode"}`, r.path), true, 400},
		{"bad agent", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop","agent":"emacs"}`, r.path), true, 400},
		{"relative path", "POST", "application/json", `{"path":"a/b.jsonl","event":"stop"}`, true, 400},
		{"outside the session folders", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop"}`, outside), true, 400},
		{"etc passwd", "POST", "application/json", `{"path":"/etc/passwd","event":"stop"}`, true, 400},
		{"missing file", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop"}`, r.path+".gone.jsonl"), true, 404},
		{"trailing data", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop"}{}`, r.path), true, 400},
		{"wrong content type", "POST", "text/plain", fmt.Sprintf(`{"path":%q,"event":"stop"}`, r.path), true, 400},
		{"invalid UTF-8", "POST", "application/json", "{\"path\":\"/a/\xff.jsonl\",\"event\":\"stop\"}", true, 400},
		{"too large", "POST", "application/json", `{"path":"` + strings.Repeat("a", 70<<10) + `","event":"stop"}`, true, 413},
		{"no token", "POST", "application/json", fmt.Sprintf(`{"path":%q,"event":"stop"}`, r.path), false, 401},
		{"GET", "GET", "", "", true, 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, url, strings.NewReader(tc.body))
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			if tc.token {
				req.Header.Set("Authorization", "Bearer "+r.d.Token())
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Errorf("status %d (%s), want %d", resp.StatusCode, b, tc.status)
			}
		})
	}
	if st := r.d.tail.Stats(); st.Refused < 5 {
		t.Errorf("stats %+v, want the bad paths refused and counted", st)
	}
	// Off: the route says so (503) and nothing is watched.
	cfg := testConfig(t)
	cfg.Capture.Transcripts.Enabled = false
	d, addr := serve(t, cfg)
	_, err := httpapi.NewClient(addr, d.Token()).CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: r.path, Event: "stop"})
	if !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("with capture.transcripts off: %v", err)
	}
}

// BenchmarkTranscriptHook measures, on a real daemon, the time from a
// Stop hook's request to its turn stored (p50, p99) and the turns
// captured per second, one turn (prompt, answer) appended per hook.
func BenchmarkTranscriptHook(b *testing.B) {
	cfg := config.Default()
	cfg.DataDir = b.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	r := newTranscriptRig(b, cfg)
	r.write(len(r.lines))
	r.hook(tail.EventStop)
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		turns := r.d.tail.Stats().Turns
		fmt.Fprintf(f, `{"type":"user","sessionId":"bench","cwd":"/home/dev/src/ledgerd","uuid":"bu%[1]d","timestamp":"2026-03-03T10:00:00Z","message":{"role":"user","content":"Which port does service %[1]d listen on in staging?"}}`+"\n"+
			`{"type":"assistant","sessionId":"bench","uuid":"ba%[1]d","timestamp":"2026-03-03T10:00:01Z","message":{"id":"msg_b%[1]d","role":"assistant","model":"m","content":[{"type":"text","text":"Service %[1]d listens on 127.0.0.1:%[2]d in staging (deploy/staging.env, SERVICE_%[1]d_ADDR); it is loopback only, reach it through the bastion."}]}}`+"\n", i, 10000+i)
		t0 := time.Now()
		if _, err := r.cl.CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: r.path, Event: tail.EventStop}); err != nil {
			b.Fatal(err)
		}
		for r.d.tail.Stats().Turns == turns {
			time.Sleep(50 * time.Microsecond)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
}

// TestProxyTurnSurvivesKill: a kill while the proxy takes a turn's first
// exchange loses the turn from neither path. The daemon is closed between
// the handler's steps and opened again on the same data dir (the kill);
// then the session file comes. Killed after the check (before the
// exchange is decided), the transcript's copy is stored; before the fix
// the check recorded the turn as the proxy's and the transcript skipped it.
// Once the handler ran whole, the transcript's copy is skipped.
func TestProxyTurnSurvivesKill(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/claude_session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	exs, _, err := transcript.Parse(bytes.NewReader(data), transcript.Options{})
	if err != nil {
		t.Fatal(err)
	}
	turn2 := exs[3] // one response, no tool
	turn2.Source = memory.SourceCapture
	tests := []struct {
		name      string
		whole     bool // the handler ran to its end before the kill
		wantDups  int  // turns the transcript skips as the proxy's
		wantTurn2 int  // decisions of turn 2 after the restart
	}{
		{"killed after the check", false, 0, 1},
		{"handler ran whole", true, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := testConfig(t)
			cfg.Capture.Transcripts.Enabled = true
			d := openAt(t, cfg, &jumpClock{})
			if tc.whole {
				if err := d.takeProxyExchange(ctx, turn2); err != nil {
					t.Fatal(err)
				}
			} else if d.skipProxyExchange(turn2) {
				t.Fatal("a new turn was skipped")
			}
			d.Close() // the kill

			d2 := openAt(t, cfg, &jumpClock{})
			dir := filepath.Join(cfg.Capture.Transcripts.ClaudeCodeDirs[0], "-home-dev-src-ledgerd")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, turn2.SessionID+".jsonl")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if ok, err := d2.tail.Submit(tail.Request{Path: path, SessionID: turn2.SessionID, CWD: "/home/dev/src/ledgerd", Event: tail.EventStop}); err != nil || !ok {
				t.Fatalf("submit: %v %v", ok, err)
			}
			if err := d2.tail.Drain(ctx); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range d2.decisions.Newest(100) {
				if e.Source != memory.SourceCapture && strings.Contains(e.User, "with a config flag.") {
					n++
				}
			}
			if st := d2.tail.Stats(); st.Duplicates != tc.wantDups || n != tc.wantTurn2 {
				t.Errorf("turn 2 decided %d times from the transcript, %d turns skipped as the proxy's; want %d and %d (stats %+v)", n, st.Duplicates, tc.wantTurn2, tc.wantDups, st)
			}
		})
	}
}

// TestProxyRepeatedTurn: a session with two turns that begin alike (the
// user's "yes", answered "Running the WAL tests first." and the same tool
// both times; testdata/repeated_prompt.jsonl), through the real proxy and
// a fake upstream, with and without its session file. The proxy counts
// the second turn's occurrence in the request's history, so each turn is
// stored exactly once: with the proxy alone both are stored (before, the
// second was skipped as the first stored already, and lost); with the
// session file read after, its copies of the turns the proxy took are
// skipped and the rest stored (before, the file's first turn was skipped
// for the proxy's second, and its second stored twice).
func TestProxyRepeatedTurn(t *testing.T) {
	t.Parallel()
	const session = "7d1f6c2e-0b5a-4c39-9a7e-tail00000003"
	const begin = "Running the WAL tests first."
	turn1, turn2 := "tmpfs rejects fsync with EINVAL", "The startup warning is in wal/open.go"
	type msg = map[string]any
	toolUse := func(id string) []msg {
		return []msg{{"type": "text", "text": begin}, {"type": "tool_use", "id": id, "name": "Bash", "input": msg{"command": "go test ./wal/..."}}}
	}
	result := func(id, out string) []msg { return []msg{{"type": "tool_result", "tool_use_id": id, "content": out}} }
	history := []msg{
		{"role": "user", "content": "yes"},
		{"role": "assistant", "content": toolUse("toolu_0")},
		{"role": "user", "content": result("toolu_0", "FAIL wal: fsync on tmpfs returns EINVAL")},
		{"role": "assistant", "content": "The WAL test fails because tmpfs rejects fsync with EINVAL; ledgerd now skips O_DIRECT there. Shall I also add a startup warning?"},
		{"role": "user", "content": "yes"},
		{"role": "assistant", "content": toolUse("toolu_1")},
		{"role": "user", "content": result("toolu_1", "ok ledgerd/wal 0.8s")},
		{"role": "assistant", "content": "The startup warning is in wal/open.go and logs once when the WAL directory is on tmpfs."},
	}
	tests := []struct {
		name     string
		requests []int // the requests the proxy sees, by their message count
		file     bool  // the session file is read after
		fileKept int   // turns stored from it
	}{
		{name: "proxy only", requests: []int{1, 3, 5, 7}},
		{name: "proxy then file", requests: []int{1, 3, 5, 7}, file: true, fileKept: 0},
		{name: "proxy took the second turn, file the first", requests: []int{5, 7}, file: true, fileKept: 1},
		{name: "proxy took the first turn, file the second", requests: []int{1, 3}, file: true, fileKept: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var in struct {
					Messages []json.RawMessage `json:"messages"`
				}
				json.NewDecoder(r.Body).Decode(&in)
				w.Header().Set("Content-Type", "text/event-stream")
				switch len(in.Messages) {
				case 1, 5:
					id := fmt.Sprintf("toolu_%d", len(in.Messages)/5)
					io.WriteString(w, sseAnswer("msg_a", begin, id, "Bash", `{"command":"go test ./wal/..."}`))
				default:
					io.WriteString(w, sseAnswer("msg_b", history[len(in.Messages)]["content"].(string), "", "", ""))
				}
			}))
			defer upstream.Close()
			cfg := testConfig(t)
			cfg.Capture.AnthropicUpstream = upstream.URL
			r := newTranscriptRig(t, cfg)
			for i, n := range tc.requests {
				body, _ := json.Marshal(msg{"model": "claude-sonnet-4-5", "max_tokens": 1000, "stream": true,
					"metadata": msg{"user_id": "user_abc_account_def_session_" + session},
					"system":   "Working directory: /home/dev/src/ledgerd", "messages": history[:n]})
				resp, err := http.Post("http://"+r.d.listen+"/v1/messages", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				polltest.Wait(t, fmt.Sprintf("the proxy to handle request %d", i+1), func() bool { return r.d.proxy.Stats().Handled >= int64(i+1) },
					func() string { return fmt.Sprintf("%+v", r.d.proxy.Stats()) })
			}
			if tc.file {
				data, err := os.ReadFile("testdata/repeated_prompt.jsonl")
				if err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(r.root, "-home-dev-src-ledgerd", session+".jsonl")
				if err := os.WriteFile(path, data, 0o600); err != nil {
					t.Fatal(err)
				}
				before := r.d.tail.Stats().Processed
				if _, err := r.cl.CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: path, Event: tail.EventSessionEnd,
					SessionID: session, CWD: "/home/dev/src/ledgerd"}); err != nil {
					t.Fatal(err)
				}
				r.waitProcessed(before + 1)
				if st := r.d.tail.Stats(); st.Turns != tc.fileKept || st.Duplicates != 2-tc.fileKept {
					t.Errorf("the session file: %d turns stored, %d skipped; want %d and %d", st.Turns, st.Duplicates, tc.fileKept, 2-tc.fileKept)
				}
			}
			if st := r.d.tail.Stats(); st.ProxyDuplicates != 0 {
				t.Errorf("the proxy skipped %d exchanges as stored already, want none", st.ProxyDuplicates)
			}
			got := map[string]int{}
			for _, e := range r.d.decisions.Newest(100) {
				for _, s := range []string{turn1, turn2} {
					if strings.Contains(e.Assistant, s) {
						got[s]++
					}
				}
			}
			if got[turn1] != 1 || got[turn2] != 1 {
				t.Errorf("turns decided %v, want each once", got)
			}
		})
	}
}

// An exchange of a session file's turn that fails validation is left out,
// logged and counted; the rest of the turn is stored (before, the whole
// turn was dropped). A turn with nothing valid is refused as invalid.
func TestIngestTurnSkipsInvalidExchange(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Capture.Transcripts.Enabled = false
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, _ := os.Open("testdata/claude_session.jsonl")
	exs, _, err := transcript.Parse(f, transcript.Options{})
	f.Close()
	if err != nil || len(exs) < 3 {
		t.Fatal(err, len(exs))
	}
	i := slices.IndexFunc(exs, func(ex memory.Exchange) bool { return ex.ToolLoop })
	if i < 0 {
		t.Fatal("no tool-loop exchange in the fixture")
	}
	exs[i].Answers = []memory.Answer{{Answer: "yes"}} // no question: invalid
	if err := d.ingestTurn(context.Background(), exs); err != nil {
		t.Fatalf("a turn with one invalid exchange: %v", err)
	}
	if n := d.invalidExchanges.Load(); n != 1 {
		t.Errorf("%d invalid exchanges counted, want 1", n)
	}
	if len(storedTexts(t, true, d.Store())) == 0 {
		t.Error("nothing of the rest of the session was stored")
	}
	err = d.ingestTurn(context.Background(), exs[i:i+1])
	if !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "has no question") {
		t.Errorf("a turn with nothing valid: %v", err)
	}
}
