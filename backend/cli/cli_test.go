package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// run runs one command with a private config and returns exit code and output.
func run(t *testing.T, ctx context.Context, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Ctx: ctx}
	code := Run(env, args)
	return code, out.String(), errb.String()
}

func isolate(t *testing.T) string {
	t.Helper()
	t.Setenv("MEMTRAY_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("MEMTRAY_DATA_DIR", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())        // a command without --data-dir never touches the user's store
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1") // nothing answers: auto picks the built-in embedder
	return t.TempDir()
}

func TestLocalCommands(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	code, out, errs := run(t, ctx, "", "add", dd, "--kind", "config", "--project", "web", "--json",
		"The dev server listens on port 5173 and proxies /api to 127.0.0.1:8080.")
	if code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	var m memory.Memory
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.ID == "" || m.Kind != memory.KindConfig {
		t.Fatalf("add --json printed %q (%v)", out, err)
	}
	if code, _, errs := run(t, ctx, "Deploys go through the staging cluster first; production needs two approvals.\n", "add", dd, "-"); code != 0 {
		t.Fatalf("add from stdin: %d %s", code, errs)
	}
	code, out, _ = run(t, ctx, "", "search", dd, "--json", "which port does the dev server use")
	var hits []memory.Hit
	if code != 0 || json.Unmarshal([]byte(out), &hits) != nil || len(hits) == 0 || hits[0].Memory.ID != m.ID {
		t.Fatalf("search: %d %q", code, out)
	}
	if code, out, _ = run(t, ctx, "", "search", dd, "--why", "dev server port"); code != 0 || !strings.Contains(out, "relevance") {
		t.Fatalf("search --why: %d %q", code, out)
	}
	if code, out, _ = run(t, ctx, "", "get", dd, m.ID); code != 0 || !strings.Contains(out, "5173") {
		t.Fatalf("get: %d %q", code, out)
	}
	if code, out, _ = run(t, ctx, "", "stats", dd); code != 0 || !strings.Contains(out, "memories:   2") {
		t.Fatalf("stats: %d %q", code, out)
	}
	if code, out, _ = run(t, ctx, "", "list", dd); code != 0 || !strings.Contains(out, "2 of 2") {
		t.Fatalf("list: %d %q", code, out)
	}

	// Export, import into an empty store, export again: identical records.
	exp1 := filepath.Join(t.TempDir(), "a.jsonl")
	if code, _, errs := run(t, ctx, "", "export", dd, exp1); code != 0 {
		t.Fatalf("export: %s", errs)
	}
	dir2 := "--data-dir=" + t.TempDir()
	code, out, errs = run(t, ctx, "", "import", dir2, "--json", exp1)
	if code != 0 || !strings.Contains(out, `"imported": 2`) {
		t.Fatalf("import: %d %q %s", code, out, errs)
	}
	exp2 := filepath.Join(t.TempDir(), "b.jsonl")
	if code, _, errs := run(t, ctx, "", "export", dir2, exp2); code != 0 {
		t.Fatalf("export 2: %s", errs)
	}
	a, b := records(t, exp1), records(t, exp2)
	if a != b {
		t.Fatalf("records differ after export → import → export:\n%s\n---\n%s", a, b)
	}

	if code, _, _ = run(t, ctx, "", "delete", dd, m.ID); code != 0 {
		t.Fatal("delete failed")
	}
	if code, _, errs = run(t, ctx, "", "get", dd, m.ID); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("get deleted: %d %s", code, errs)
	}
}

// records returns an export's lines without the header (which carries the time).
func records(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(string(data), "\n", 2)
	if len(lines) != 2 || !strings.Contains(lines[0], `"format":"memtray-export"`) {
		t.Fatalf("%s has no export header: %.200s", path, data)
	}
	return lines[1]
}

func TestUsageErrors(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"frobnicate"}, 2, "unknown command"},
		{[]string{"add", "--data-dir", dir}, 2, "no text"},
		{[]string{"search", "--data-dir", dir}, 2, "no query"},
		{[]string{"get", "--data-dir", dir, "a", "b"}, 2, "exactly one"},
		{[]string{"add", "--data-dir", dir, "--kind", "gossip", "some text here"}, 1, "unknown kind"},
		{[]string{"search", "--data-dir", dir, "--mode", "psychic", "x"}, 1, "mode"},
		{[]string{"import", "--data-dir", dir, "/does/not/exist"}, 1, "no such file"},
		{[]string{"token", "--data-dir", dir, "sideways"}, 2, "unknown argument"},
	}
	for _, tc := range cases {
		code, _, errs := run(t, ctx, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d %q; want %d containing %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	if code, out, _ := run(t, ctx, "", "version"); code != 0 || !strings.HasPrefix(out, "memtray ") {
		t.Errorf("version: %d %q", code, out)
	}
}

// TestCommandHelpShowsSynopsis: `memtray COMMAND -h` names the
// positional arguments (a memory's ID and the days to snooze it, the agent
// to set up), not only the flags, and says what the command does.
func TestCommandHelpShowsSynopsis(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"snooze", "-h"}, []string{"usage: memtray snooze ID DAYS", "keep a memory out of recall", "-data-dir"}},
		{[]string{"setup", "--help"}, []string{"usage: memtray setup claude-code|cursor|codex|windsurf", "-undo"}},
		{[]string{"export", "-h"}, []string{"usage: memtray export [FILE]"}},
		{[]string{"reinforce", "-h"}, []string{"usage: memtray reinforce ID"}},
		{[]string{"serve", "-h"}, []string{"usage: memtray serve [--listen ADDR]", "-listen"}},
		{[]string{"eval", "sessions", "-h"}, []string{"usage: memtray eval sessions [flags]", "-live"}},
		// What the default scope means (exp-ui3): at 1368516 only "ID team|personal".
		{[]string{"scope", "-h"}, []string{"usage: memtray scope ID team|personal", "or, until one is set, default: team when team memory is on, team.projects lists"}},
	}
	for _, tc := range cases {
		code, out, errs := run(t, ctx, "", tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d", tc.args, code)
		}
		for _, w := range tc.want {
			if !strings.Contains(out+errs, w) {
				t.Errorf("%v: help lacks %q:\n%s%s", tc.args, w, out, errs)
			}
		}
	}
}

// TestRecallNothingSaysProject: when recall gives nothing, `memtray
// recall` says which project it asked as (by default the current
// directory's), so that an answer stored under another project does not
// read as a store that holds nothing.
func TestRecallNothingSaysProject(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	if code, _, errs := run(t, ctx, "", "add", dd, "--project", "ledger", "Integration tests of the ledger service run against Postgres 16 started by testcontainers."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	cwd := filepath.Join(t.TempDir(), "scratchpad")
	if err := os.Mkdir(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(cwd)
	prompt := "which database do the integration tests use?"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"recall", dd, prompt}, `asked as project "scratchpad" (from the current directory)`},
		{[]string{"recall", dd, "--project", "web", prompt}, `asked as project "web" (from --project)`},
	} {
		code, out, errs := run(t, ctx, "", tc.args...)
		if code != 0 || !strings.HasPrefix(out, "nothing to recall: ") || !strings.Contains(out, tc.want) || !strings.Contains(out, "`--project P`") {
			t.Errorf("%v: exit %d, out %q (err %q); want nothing recalled and %q", tc.args, code, out, errs, tc.want)
		}
	}
	if code, out, _ := run(t, ctx, "", "recall", dd, "--project", "ledger", prompt); code != 0 || !strings.Contains(out, "testcontainers") {
		t.Errorf("recall in the memory's own project: %d %q", code, out)
	}
}

// TestLockedStoreSaysWhatToDo: a command that finds its data dir's store
// held by another process says that another memtray has it open and what
// to do, not only the holder's pid.
func TestLockedStoreSaysWhatToDo(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	if code, _, errs := run(t, ctx, "", "add", "--data-dir", dir, "The staging database is reset every Sunday at 03:00 UTC."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	held, err := store.Open(ctx, store.Options{Dir: filepath.Join(dir, "store")})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	code, _, errs := run(t, ctx, "", "list", "--data-dir", dir)
	for _, want := range []string{"store is locked by another process", "another memtray has this data dir open", "--data-dir"} {
		if code != 1 || !strings.Contains(errs, want) {
			t.Errorf("list of a held store: exit %d, err %q; want 1 and %q", code, errs, want)
		}
	}
}

func TestBadConfig(t *testing.T) {
	isolate(t)
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, []byte(`{"listen": "0.0.0.0:7432", "embedder": {"provider": "magic"}}`), 0o600)
	code, _, errs := run(t, context.Background(), "", "stats", "--config", path)
	if code != 1 || !strings.Contains(errs, "listen") || !strings.Contains(errs, "embedder.provider") {
		t.Fatalf("bad config: %d %q", code, errs)
	}
}

// syncBuffer is a bytes.Buffer safe to read while serve writes to it. A
// test waits for what it should say with waitText, woken by each write
// rather than polling.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // closed by the next write; nil until a waiter asks
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote != nil {
		close(s.wrote)
		s.wrote = nil
	}
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// next returns the text written so far and a channel closed by the next
// write.
func (s *syncBuffer) next() (string, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wrote == nil {
		s.wrote = make(chan struct{})
	}
	return s.b.String(), s.wrote
}

// serveRun is a `memtray serve` run in the background, in this process.
type serveRun struct {
	out, errb *syncBuffer
	cancel    context.CancelFunc
	exited    chan struct{} // closed when serve has returned
	code      int           // its exit code, once exited is closed
}

// startServe runs `memtray serve` with args in the background, its stdout
// to out and stderr to errb, until stop or the test's end.
func startServe(t *testing.T, out, errb *syncBuffer, args ...string) *serveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &serveRun{out: out, errb: errb, cancel: cancel, exited: make(chan struct{})}
	go func() {
		defer close(r.exited)
		r.code = Run(&Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: errb, Ctx: ctx}, append([]string{"serve"}, args...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.exited:
		case <-time.After(testWait):
			t.Errorf("serve did not stop within %s of its cancel", testWait)
		}
	})
	return r
}

// waitServing waits until serve says it serves, failing the test with its
// exit code and stderr if it ends first.
func (r *serveRun) waitServing(t testing.TB) {
	t.Helper()
	waitText(t, `serve to print "serving on"`, r.out, func(s string) bool { return strings.Contains(s, "serving on") }, r.exited, r.ended)
}

// ended says how serve ended, for a failure message.
func (r *serveRun) ended() string {
	return fmt.Sprintf("serve exited %d; stderr:\n%s", r.code, r.errb.String())
}

// stop cancels serve and returns its exit code once it has returned.
func (r *serveRun) stop(t testing.TB) int {
	t.Helper()
	r.cancel()
	waitClosed(t, "serve to stop on cancel", r.exited)
	return r.code
}

// serveUntilEnd runs `memtray serve` on dir in the background until the
// test ends (then stops it) and returns once it serves: its stdout and
// stderr. A serve that ends before it serves fails the test at once.
func serveUntilEnd(t *testing.T, dir string) (out, errb *syncBuffer) {
	t.Helper()
	r := startServe(t, &syncBuffer{}, &syncBuffer{}, "--data-dir", dir, "--listen", "127.0.0.1:0")
	r.waitServing(t)
	return r.out, r.errb
}

func TestServeAndRemoteCommands(t *testing.T) {
	dir := isolate(t)
	var out, errb syncBuffer
	srv := startServe(t, &out, &errb, "--data-dir", dir, "--listen", "127.0.0.1:0")
	srv.waitServing(t)
	// The daemon owns the store: these succeed only by going through its API.
	bg := context.Background()
	if code, _, errs := run(t, bg, "", "add", "--data-dir", dir, "Release builds strip symbols with -ldflags '-s -w' to keep the binary small."); code != 0 {
		t.Fatalf("add through the daemon: %s", errs)
	}
	code, sout, errs := run(t, bg, "", "stats", "--data-dir", dir)
	if code != 0 || !strings.Contains(sout, "running, pid") || !strings.Contains(sout, "memories:   1") {
		t.Fatalf("stats through the daemon: %d %q %s", code, sout, errs)
	}
	// The write pipeline's feedback loop through the daemon: ingest, see
	// the decisions, keep a rejected exchange, mark a memory as noise.
	exs := filepath.Join(t.TempDir(), "ex.jsonl")
	os.WriteFile(exs, []byte(`{"user":"what is a mutex","assistant":"A mutex lets one thread at a time into a critical section; the others wait until it is unlocked again, which keeps shared state consistent."}`+"\n"), 0o600)
	if code, _, errs := run(t, bg, "", "ingest", "--data-dir", dir, "--as", "exchanges", exs); code != 0 {
		t.Fatalf("ingest through the daemon: %s", errs)
	}
	code, sout, errs = run(t, bg, "", "decisions", "--data-dir", dir, "--json")
	var ds []struct{ ID, Verdict, Stage string }
	if code != 0 || json.Unmarshal([]byte(sout), &ds) != nil || len(ds) != 1 || ds[0].Verdict != "rejected" {
		t.Fatalf("decisions: %d %s %s", code, sout, errs)
	}
	code, sout, errs = run(t, bg, "", "keep", "--data-dir", dir, "--json", ds[0].ID)
	var kept struct {
		Verdict   string
		MemoryIDs []string `json:"memory_ids"`
	}
	if code != 0 || json.Unmarshal([]byte(sout), &kept) != nil || kept.Verdict != "stored" {
		t.Fatalf("keep: %d %s %s", code, sout, errs)
	}
	if code, sout, errs := run(t, bg, "", "mark-noise", "--data-dir", dir, kept.MemoryIDs[0]); code != 0 || !strings.Contains(sout, "moved "+kept.MemoryIDs[0]+" to the trash") {
		t.Fatalf("mark-noise: %d %s %s", code, sout, errs)
	}
	if code, sout, _ := run(t, bg, "", "stats", "--data-dir", dir); code != 0 || !strings.Contains(sout, "1 learned noise examples") {
		t.Fatalf("stats after mark-noise: %s", sout)
	}
	// Its restore from the trash brings it back and takes its text out of
	// the noise model.
	if code, sout, errs := run(t, bg, "", "trash", "restore", "--data-dir", dir, kept.MemoryIDs[0]); code != 0 {
		t.Fatalf("trash restore after mark-noise: %d %s %s", code, sout, errs)
	}
	if code, sout, errs := run(t, bg, "", "get", "--data-dir", dir, kept.MemoryIDs[0]); code != 0 || !strings.Contains(sout, "mutex") {
		t.Fatalf("get after the restore: %d %s %s", code, sout, errs)
	}
	if code, sout, _ := run(t, bg, "", "stats", "--data-dir", dir); code != 0 || !strings.Contains(sout, "0 learned noise examples") {
		t.Fatalf("stats after the restore of a memory marked as noise: %s", sout)
	}
	// Capture switch and recall through the daemon.
	if code, sout, errs := run(t, bg, "", "capture", "off", "--exclude", "secretproj", "--data-dir", dir); code != 0 ||
		!strings.Contains(sout, "capture:    off") || !strings.Contains(sout, "excluded:   secretproj") {
		t.Fatalf("capture off: %d %s %s", code, sout, errs)
	}
	if code, sout, _ := run(t, bg, "", "capture", "on", "--include", "secretproj", "--data-dir", dir); code != 0 ||
		!strings.Contains(sout, "capture:    on") || strings.Contains(sout, "excluded") {
		t.Fatalf("capture on: %d %s", code, sout)
	}
	if code, sout, errs := run(t, bg, "", "capture", "off", "--for", "1h", "--data-dir", dir); code != 0 || !strings.Contains(sout, "capture:    paused until") {
		t.Fatalf("capture off --for 1h: %d %s %s", code, sout, errs)
	}
	if code, _, errs := run(t, bg, "", "capture", "on", "--for", "1h", "--data-dir", dir); code != 2 || !strings.Contains(errs, "--for goes with off") {
		t.Fatalf("capture on --for: %d %s", code, errs)
	}
	if code, sout, _ := run(t, bg, "", "capture", "on", "--data-dir", dir); code != 0 || !strings.Contains(sout, "capture:    on") {
		t.Fatalf("capture on after a pause: %d %s", code, sout)
	}
	if code, _, _ := run(t, bg, "", "capture", "sideways", "--data-dir", dir); code != 2 {
		t.Fatalf("capture sideways: exit %d, want 2", code)
	}
	if _, err := os.Stat(filepath.Join(dir, "capture.json")); err != nil {
		t.Fatalf("capture state not saved: %v", err)
	}
	run(t, bg, "", "add", "--data-dir", dir, "--project", "cli", "Integration tests of the ledger service run against a real Postgres 16 started by testcontainers, never SQLite.")
	recallArgs := []string{"recall", "--data-dir", dir, "--session", "s1", "--project", "cli", "which database do the ledger integration tests use?"}
	if code, sout, errs := run(t, bg, "", recallArgs...); code != 0 || !strings.Contains(sout, "<memtray-context>") || !strings.Contains(sout, "testcontainers") {
		t.Fatalf("recall: %d %s %s", code, sout, errs)
	}
	if code, sout, _ := run(t, bg, "", recallArgs...); code != 0 || !strings.Contains(sout, "nothing to recall: already recalled") {
		t.Fatalf("recall of the same turn again: %d %s", code, sout)
	}
	if code, _, errs := run(t, bg, "", "reindex", "--data-dir", dir); code != 1 || !strings.Contains(errs, "already uses") {
		t.Fatalf("reindex to the daemon's own model: %d %s", code, errs)
	}
	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "daemon.json")); !os.IsNotExist(err) {
		t.Fatalf("daemon.json left behind: %v", err)
	}
}

// TestPullProgress runs `memtray pull` against a loopback server speaking
// Ollama's /api/pull stream (NDJSON progress lines, as Ollama sends them).
func TestPullProgress(t *testing.T) {
	isolate(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/pull" {
			http.NotFound(w, r)
			return
		}
		var req struct{ Model string }
		json.NewDecoder(r.Body).Decode(&req)
		if req.Model != "nomic-embed-text" {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"pull model manifest: file does not exist"}`)
			return
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range []string{`{"status":"pulling manifest"}`,
			`{"status":"pulling 970aa74c0a90","digest":"sha256:970aa74c0a90","total":274290656,"completed":137145328}`,
			`{"status":"pulling 970aa74c0a90","digest":"sha256:970aa74c0a90","total":274290656,"completed":274290656}`,
			`{"status":"verifying sha256 digest"}`, `{"status":"writing manifest"}`, `{"status":"success"}`} {
			io.WriteString(w, l+"\n")
		}
	}))
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	code, out, errs := run(t, context.Background(), "", "pull")
	// Into a buffer, not a terminal: each status once, a line each, no bar.
	if code != 0 || !strings.Contains(out, "nomic-embed-text is ready") || !strings.Contains(errs, "pulling manifest\npulling 970aa74c0a90\nverifying") || strings.Contains(errs, "\r") {
		t.Fatalf("pull: %d %q %q", code, out, errs)
	}
	code, _, errs = run(t, context.Background(), "", "pull", "no-such-model")
	if code != 1 || !strings.Contains(errs, "does not exist") {
		t.Fatalf("pull of a missing model: %d %q", code, errs)
	}
}

func TestEvalRecallCommand(t *testing.T) {
	isolate(t)
	code, out, errs := run(t, context.Background(), "", "eval", "recall", "--json", "../eval/testdata/recall-tiny.json")
	if code != 0 {
		t.Fatalf("eval recall: %d %s", code, errs)
	}
	var rep struct {
		Modes map[string]struct {
			Overall           map[string]float64 `json:"overall"`
			NegativeEmptyRate *float64           `json:"negative_empty_rate"`
		} `json:"modes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	for _, mode := range []string{"hybrid", "bm25", "vector"} {
		m, ok := rep.Modes[mode]
		if !ok || m.NegativeEmptyRate == nil {
			t.Fatalf("mode %s missing or without negative_empty_rate: %s", mode, out)
		}
		for _, k := range []string{"recall_at_5", "recall_at_10", "mrr", "ndcg_at_10"} {
			if v, ok := m.Overall[k]; !ok || v < 0 || v > 1 {
				t.Fatalf("%s overall %s = %v", mode, k, v)
			}
		}
	}
	code, out, _ = run(t, context.Background(), "", "eval", "recall", "../eval/testdata/recall-tiny.json")
	if code != 0 || !strings.Contains(out, "hybrid") || !strings.Contains(out, "R@5") {
		t.Fatalf("eval table: %d %q", code, out)
	}
	if code, _, errs = run(t, context.Background(), "", "eval", "recall", "--locomo", "x.json", "y.json"); code != 2 {
		t.Fatalf("eval with two inputs: %d %s", code, errs)
	}
	if code, _, errs = run(t, context.Background(), "", "eval", "recall", "/nonexistent.json"); code != 1 {
		t.Fatalf("eval of a missing file: %d %s", code, errs)
	}
}

// TestEvalStoreless: every evaluation runs on a temporary store with the
// default config, so it refuses --data-dir and --config (taken silently,
// they would suggest the user's store or settings were measured).
func TestEvalStoreless(t *testing.T) {
	for _, kind := range []string{"recall", "filter", "redact", "stickiness", "merge", "sessions"} {
		for _, flag := range []string{"--config=/tmp/x.json", "--data-dir=/tmp/x"} {
			code, _, errs := run(t, context.Background(), "", "eval", kind, flag, "a.json", "b.json")
			if code != 2 || !strings.Contains(errs, "--data-dir and --config are not read") {
				t.Errorf("eval %s %s: exit %d, %q; want a usage error", kind, flag, code, errs)
			}
		}
	}
}

// TestSearchWhyColumns: `search --why` keeps the table's columns aligned
// and as narrow as their values; the factors line under each hit once
// counted as a KIND cell and pushed PROJECT and TEXT some 180 columns
// right.
func TestSearchWhyColumns(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	for _, m := range [][2]string{
		{"api", "We pin Postgres to 16.4 because 16.5 broke logical replication slots."},
		{"web-frontend", "The Postgres connection pool holds at most 20 connections per service instance."},
	} {
		if code, _, errs := run(t, ctx, "", "add", dd, "--kind", "decision", "--project", m[0], m[1]); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
	code, out, errs := run(t, ctx, "", "search", dd, "--why", "postgres version")
	if code != 0 || !strings.Contains(out, "relevance") {
		t.Fatalf("search --why: %d %s %s", code, out, errs)
	}
	lines := strings.Split(out, "\n")
	if !regexp.MustCompile(`^SCORE +ID +KIND {2,12}PROJECT {2,14}TEXT$`).MatchString(lines[0]) {
		t.Errorf("header columns widened by the factors: %q", lines[0])
	}
	text := strings.Index(lines[0], "TEXT")
	rows := 0
	for _, l := range lines[1:] {
		for _, start := range []string{"We pin", "The Postgres", "relevance", "= composite"} {
			if i := strings.Index(l, start); i >= 0 {
				rows++
				if i != text {
					t.Errorf("%q starts at column %d, TEXT at %d:\n%s", start, i, text, out)
				}
			}
		}
	}
	if rows < 4 {
		t.Errorf("want two hits with their factors:\n%s", out)
	}
}

// TestExportImportDirectory: a directory given to export or import is
// refused up front with a message that says so. Export wrote the whole
// store beside the directory, then failed with "write DIR: rename
// /.tmp.tmp123 DIR: file exists"; import with a daemon running blamed
// the daemon ("memtray daemon at ...: unavailable: ... is a directory").
func TestExportImportDirectory(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	serveUntilEnd(t, dir) // import through a running daemon
	target := t.TempDir()
	for _, tc := range []struct {
		cmd  string
		want string
	}{
		{"export", target + " is a directory: name the file to write"},
		{"import", target + " is a directory: give the export file"},
	} {
		code, _, errs := run(t, ctx, "", tc.cmd, "--data-dir", dir, target)
		if code == 0 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "unavailable") {
			t.Errorf("%s DIR: exit %d %q, want %q", tc.cmd, code, errs, tc.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(target), ".*.tmp*")); len(left) > 0 {
		t.Errorf("export left %v", left)
	}
}

// TestListedIDsWork: the id `list` and `search` print is one that get,
// pin and the other commands taking an ID accept. They printed its first
// 12 characters, which every one of those commands answered with "memory
// not found".
func TestListedIDsWork(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	if code, _, errs := run(t, ctx, "", "add", dd, "--project", "api", "We pin Postgres to 16.4 because 16.5 broke logical replication slots."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	for _, args := range [][]string{{"list", dd}, {"search", dd, "postgres pinned"}, {"search", dd, "--why", "postgres pinned"}} {
		code, out, errs := run(t, ctx, "", args...)
		lines := strings.Split(out, "\n")
		if code != 0 || len(lines) < 2 {
			t.Fatalf("%v: %d %s %s", args, code, out, errs)
		}
		fields := strings.Fields(lines[1])
		col := 0 // list: ID first
		if args[0] == "search" {
			col = 1 // search: SCORE, then ID
		}
		id := fields[col]
		for _, cmd := range [][]string{{"get", dd, id}, {"pin", dd, id}, {"unpin", dd, id}} {
			if code, _, errs := run(t, ctx, "", cmd...); code != 0 {
				t.Errorf("%v printed id %s; %s: exit %d %s", args[0], id, cmd[0], code, errs)
			}
		}
	}
}

// TestUnknownCommandSuggests: a mistyped command names the one meant
// (`memtray status` printed "unknown command" above 45 lines of help,
// with stats somewhere in them); a word like no command gets the help.
func TestUnknownCommandSuggests(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		arg, want string
	}{
		{"status", `did you mean "stats"?`},
		{"serach", `did you mean "search"?`},
		{"imprt", `did you mean "import"?`},
		{"dreams", `did you mean "dream"?`},
		{"frobnicate", "commands:"},
	} {
		code, _, errs := run(t, context.Background(), "", tc.arg)
		if code != 2 || !strings.Contains(errs, `unknown command "`+tc.arg+`"`) || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: exit %d %q, want %q", tc.arg, code, errs, tc.want)
		}
	}
}

// TestListBounds: list's --limit and --offset out of range are usage
// errors, the same with or without a daemon; through a daemon --offset -5
// and --limit -1 were dropped silently (the first fifty memories), without
// one they were the store's error.
func TestListBounds(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	if code, _, errs := run(t, ctx, "", "add", "--data-dir", dir, "The staging Redis listens on port 6380."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	check := func(daemon string) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"--limit", "-1"}, "--limit must be within 1..1000"},
			{[]string{"--limit", "0"}, "--limit must be within 1..1000"},
			{[]string{"--limit", "1001"}, "--limit must be within 1..1000"},
			{[]string{"--offset", "-5"}, "--offset must not be negative"},
		} {
			code, out, errs := run(t, ctx, "", append([]string{"list", "--data-dir", dir}, tc.args...)...)
			if code != 2 || !strings.Contains(errs, tc.want) {
				t.Errorf("%s: list %v: exit %d %q %q, want %q", daemon, tc.args, code, out, errs, tc.want)
			}
		}
		if code, out, errs := run(t, ctx, "", "list", "--data-dir", dir, "--limit", "1000"); code != 0 || !strings.Contains(out, "1 of 1") {
			t.Errorf("%s: list --limit 1000: exit %d %q %q", daemon, code, out, errs)
		}
	}
	check("no daemon")
	serveUntilEnd(t, dir)
	check("daemon")
}

// TestServeHintCarriesDataDir: the setup command serve suggests names the
// data dir it serves; `memtray setup claude-code` alone pointed the
// agent's hooks and MCP server at the default data dir, where this daemon
// is not.
func TestServeHintCarriesDataDir(t *testing.T) {
	dir := isolate(t)
	out, _ := serveUntilEnd(t, dir)
	// isolate's MEMTRAY_CONFIG is no default either: the agent runs without it.
	cfg := os.Getenv("MEMTRAY_CONFIG")
	if want := "`memtray setup claude-code --config " + cfg + " --data-dir " + dir + "` wires both"; !strings.Contains(out.String(), want) {
		t.Errorf("serve's hint lacks %q:\n%s", want, out.String())
	}
}

// TestSubcommandHelp: -h on a command that reads a subcommand first (eval,
// team) shows its usage and exits 0; eval answered `unknown evaluation
// "--help"` with a usage that left out three of its six kinds.
func TestSubcommandHelp(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"eval", "--help"}, []string{"usage: memtray eval recall FILE", "stickiness", "merge RECALL META", "sessions SET.json"}},
		{[]string{"eval", "-h"}, []string{"usage: memtray eval"}},
		{[]string{"team", "-h"}, []string{"usage: memtray team init|status"}},
	} {
		code, out, errs := run(t, context.Background(), "", tc.args...)
		if code != 0 || errs != "" {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: %q lacks %q", tc.args, out, w)
			}
		}
	}
	// A wrong subcommand is still a usage error.
	if code, _, errs := run(t, context.Background(), "", "eval", "bogus"); code != 2 || !strings.Contains(errs, `unknown evaluation "bogus"`) {
		t.Errorf("eval bogus: exit %d %q", code, errs)
	}
}

// TestExportKeepsBackupFromEmptyStore: `memtray export FILE` on a store
// with no memories leaves an existing export of memories as it is (the
// user meant import, on a new machine) and says how to restore it; it
// replaced the only backup with an empty export. Over an empty export, or
// from a store with memories, export writes as before.
func TestExportKeepsBackupFromEmptyStore(t *testing.T) {
	ctx := context.Background()
	full, empty := isolate(t), t.TempDir()
	if code, _, errs := run(t, ctx, "", "add", "--data-dir", full, "The staging Redis listens on port 6380."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	backup := filepath.Join(t.TempDir(), "backup.jsonl")
	if code, _, errs := run(t, ctx, "", "export", "--data-dir", full, backup); code != 0 || !strings.Contains(errs, "exported 1 memories to") {
		t.Fatalf("export: %d %s", code, errs)
	}
	before, _ := os.ReadFile(backup)
	code, _, errs := run(t, ctx, "", "export", "--data-dir", empty, backup)
	if code == 0 || !strings.Contains(errs, "holds an export of 1 memories and this store has none") || !strings.Contains(errs, "memtray import "+backup) {
		t.Errorf("export of an empty store over a backup: exit %d %q", code, errs)
	}
	if after, _ := os.ReadFile(backup); !bytes.Equal(before, after) {
		t.Errorf("the backup changed")
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(backup), ".backup.jsonl.tmp*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
	// The mistake's remedy works; an empty export may be overwritten.
	if code, _, errs := run(t, ctx, "", "import", "--data-dir", empty, backup); code != 0 {
		t.Fatalf("import: %d %s", code, errs)
	}
	emptyExport := filepath.Join(t.TempDir(), "none.jsonl")
	other := t.TempDir()
	for i := 0; i < 2; i++ {
		if code, _, errs := run(t, ctx, "", "export", "--data-dir", other, emptyExport); code != 0 {
			t.Errorf("empty export #%d: %d %s", i+1, code, errs)
		}
	}
	if code, _, errs := run(t, ctx, "", "export", "--data-dir", full, backup); code != 0 {
		t.Errorf("export over an export from a store with memories: %d %s", code, errs)
	}
}

// TestImportNoBarWhenNotTerminal: import draws its progress bar only on a
// terminal; into a file or pipe (a log, a script) stderr got the bar
// redrawn a hundred times with carriage returns, and an empty line.
func TestImportNoBarWhenNotTerminal(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	if code, _, errs := run(t, ctx, "", "add", "--data-dir", dir, "The staging Redis listens on port 6380."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	backup := filepath.Join(t.TempDir(), "backup.jsonl")
	if code, _, errs := run(t, ctx, "", "export", "--data-dir", dir, backup); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	logf, err := os.Create(filepath.Join(t.TempDir(), "stderr.log")) // an *os.File, as in a redirect
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	var out strings.Builder
	code := Run(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: logf, Ctx: ctx}, []string{"import", "--data-dir", t.TempDir(), backup})
	logged, _ := os.ReadFile(logf.Name())
	if code != 0 || !strings.Contains(out.String(), "imported 1 of 1 memories") {
		t.Fatalf("import: exit %d %s %s", code, out.String(), logged)
	}
	if len(logged) != 0 {
		t.Errorf("stderr into a file got %q", logged)
	}
}

// TestOneLineWholeIDs: a decision's reason cut for a table never cuts a
// memory id (exp-ui3): at 1368516 the reasons named 8 characters of it,
// and with whole ids oneLine's cut at 60 runes left "new memory extending
// source …" and "the same rule of its file as …" one character short.
func TestOneLineWholeIDs(t *testing.T) {
	const id, id2 = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"short", "near duplicate of " + id + " (similarity 0.93)", 80, "near duplicate of " + id + " (similarity 0.93)"},
		{"cut after the id", "near duplicate of " + id + " (similarity 0.93)", 60, "near duplicate of " + id + " (similar…"},
		{"cut inside the id", "new memory extending source " + id + " (similarity 0.80)", 60, "new memory extending source " + id + "…"},
		{"cut inside the id, a comma after it", "merged " + id + ", " + id2 + " and more", 20, "merged " + id + "…"},
		{"the id ends the text", "the same rule of its file as " + id, 40, "the same rule of its file as " + id},
		{"a word that is no id is cut", "updates the configuration_management_subsystem_entry", 30, "updates the configuration_man…"},
		{"white space on one line", "updates\n  " + id + "\t(x)", 80, "updates " + id + " (x)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := oneLineWholeIDs(tc.s, tc.n); got != tc.want {
				t.Fatalf("oneLineWholeIDs(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

// TestEvalSessionsSweepFlags: --sweep-days, --sweep-apply and --sweep-use are checked
// before anything runs, each refusal naming what is wrong.
func TestEvalSessionsSweepFlags(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sweep-days", "-1"}, "--sweep-days -1: want 0..365"},
		{[]string{"--sweep-days", "7", "--sweep-apply", "merge,compact"}, `unknown operation "compact"`},
		{[]string{"--sweep-days", "7", "--live"}, "--sweep-days goes without --live"},
		{[]string{"--sweep-days", "7", "--sweep-use", "all"}, `--sweep-use "all": want none, gold or tokens`},
		{[]string{"--sweep-use", "gold"}, "--sweep-use goes with --sweep-days"},
	} {
		args := append([]string{"eval", "sessions"}, tc.args...)
		code, _, errs := run(t, ctx, "", append(args, "../eval/testdata/sessions/set.json")...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}
