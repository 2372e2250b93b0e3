package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/mcp"
)

// mcpIsolate keeps a test away from the user's config and store.
func mcpIsolate(t *testing.T) config.Config {
	t.Helper()
	t.Setenv("MEMTRAY_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("MEMTRAY_DATA_DIR", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1")
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.Embedder.Provider = "builtin"
	return cfg
}

// noFork fails the test if `memtray mcp` tries to start a daemon.
func noFork(t *testing.T) {
	t.Helper()
	old := startDaemon
	startDaemon = func(config.Config, string) (<-chan error, error) {
		t.Error("memtray mcp started a daemon although one runs")
		return nil, errors.New("no fork in this test")
	}
	t.Cleanup(func() { startDaemon = old })
}

// serveDaemon opens a daemon on cfg's data dir and serves it on a loopback
// listener until the test ends.
// liveClient is a client of the daemon serving dataDir, with the
// install's token.
func liveClient(t *testing.T, dataDir string) *httpapi.Client {
	t.Helper()
	rt, err := daemon.ReadRuntime(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := daemon.ReadToken(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.NewClient(rt.Listen, tok)
}

func serveDaemon(t *testing.T, cfg config.Config) *daemon.Daemon {
	t.Helper()
	d, _ := runDaemon(t, cfg)
	return d
}

// runDaemon opens a daemon on cfg's data dir and serves it on a loopback
// listener until stop (or the test's end): with Serve when the daemon
// mounts /mcp itself, else with the same routes put together here (MCP
// behind the token, the API beside it) and the runtime file Serve would
// write.
func runDaemon(t *testing.T, cfg config.Config) (d *daemon.Daemon, stop func()) {
	t.Helper()
	d, err := daemon.Open(context.Background(), daemon.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatalf("open daemon: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	if servesMCP(d) {
		ready := make(chan string, 1)
		go func() { done <- d.Serve(ctx, func(addr string) { ready <- addr }) }()
		select {
		case <-ready:
		case err := <-done:
			t.Fatalf("serve: %v", err)
		}
	} else {
		t.Log("the daemon does not mount /mcp yet: serving MCPHandler behind the token here")
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		mux := http.NewServeMux()
		mux.Handle("/", d.Handler(addr))
		mcpH := d.MCPHandler()
		mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+d.Token() {
				http.Error(w, "missing or wrong token", http.StatusUnauthorized)
				return
			}
			mcpH.ServeHTTP(w, r)
		}))
		srv := &http.Server{Handler: mux}
		rtPath := filepath.Join(cfg.DataDir, daemon.RuntimeFile)
		go func() { srv.Serve(ln); done <- nil }()
		go func() { <-ctx.Done(); srv.Close(); os.Remove(rtPath) }()
		rt, _ := json.Marshal(daemon.Runtime{PID: os.Getpid(), Listen: addr})
		if err := os.WriteFile(rtPath, rt, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			d.Close()
		})
	}
	t.Cleanup(stop)
	return d, stop
}

// servesMCP reports whether the daemon's own handler answers an MCP
// initialize at /mcp.
func servesMCP(d *daemon.Daemon) bool {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	d.Handler("").ServeHTTP(rec, req)
	return rec.Header().Get("Mcp-Session-Id") != ""
}

// agent runs `memtray mcp` with args on pipes and connects an SDK client to
// it, as an agent would to a stdio MCP server. The returned channel gives
// the command's exit code once the client closes.
func agent(t *testing.T, args ...string) (*sdk.ClientSession, <-chan int) {
	return agentThen(t, nil, args...)
}

// agentThen is agent, calling then (if not nil) between starting the
// command and connecting to it.
func agentThen(t *testing.T, then func(), args ...string) (*sdk.ClientSession, <-chan int) {
	t.Helper()
	a := agentWire(t, then, args...)
	return a.cs, a.code
}

// tappedAgent is an agent whose exchange with `memtray mcp` is recorded.
type tappedAgent struct {
	cs        *sdk.ClientSession
	code      <-chan int
	sent, got *wireLog    // what the agent wrote, what it read
	stderr    *syncBuffer // what `memtray mcp` logged
}

// agentWire is agentThen, recording both directions of the exchange.
func agentWire(t *testing.T, then func(), args ...string) *tappedAgent {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	a := &tappedAgent{sent: &wireLog{}, got: &wireLog{}, stderr: &syncBuffer{}}
	env := &Env{Stdin: inR, Stdout: outW, Stderr: a.stderr, Ctx: context.Background()}
	code := make(chan int, 1)
	a.code = code
	go func() {
		c := Run(env, append([]string{"mcp"}, args...))
		outW.Close()
		inR.Close()
		if c != 0 {
			t.Logf("memtray mcp exited %d: %s", c, a.stderr.String())
		}
		code <- c
	}()
	if then != nil {
		then()
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout())
	defer cancel()
	transport := &sdk.IOTransport{
		Reader: readCloser{io.TeeReader(outR, a.got), outR},
		Writer: writeCloser{io.MultiWriter(inW, a.sent), inW},
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v (stderr: %s)", err, a.stderr.String())
	}
	a.cs = cs
	return a
}

// connectTimeout bounds an agent's connect to `memtray mcp`, which answers
// the initialize only once it has found the daemon or started one and seen
// it answer (up to daemonStartTimeout). It is a guard against a hang, not a
// measure: a daemon started from the race-built test binary on a loaded
// machine takes seconds to answer, so it leaves a generous margin.
func connectTimeout() time.Duration { return daemonStartTimeout + 30*time.Second }

type readCloser struct {
	io.Reader
	io.Closer
}

type writeCloser struct {
	io.Writer
	io.Closer
}

// wireLog records a stream of JSON-RPC messages.
type wireLog struct {
	mu   sync.Mutex
	data []byte
}

func (w *wireLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.data = append(w.data, p...)
	return len(p), nil
}

// wireMsg is a JSON-RPC message as recorded.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// messages decodes what was recorded.
func (w *wireLog) messages(t *testing.T) []wireMsg {
	t.Helper()
	w.mu.Lock()
	data := slices.Clone(w.data)
	w.mu.Unlock()
	var msgs []wireMsg
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var m wireMsg
		if err := dec.Decode(&m); err == io.EOF {
			return msgs
		} else if err != nil {
			t.Fatalf("bad JSON-RPC on the wire: %v\n%s", err, data)
		}
		msgs = append(msgs, m)
	}
}

// checkExchange checks that the agent initialized once and got exactly one
// answer to each of its calls, and nothing else.
func checkExchange(t *testing.T, a *tappedAgent) {
	t.Helper()
	calls := map[string]string{}
	inits := 0
	for _, m := range a.sent.messages(t) {
		if m.Method == "initialize" {
			inits++
		}
		if m.Method != "" && m.ID != nil {
			calls[string(m.ID)] = m.Method
		}
	}
	if inits != 1 {
		t.Errorf("the agent sent initialize %d times", inits)
	}
	answers := map[string]int{}
	for _, m := range a.got.messages(t) {
		if m.Method == "" {
			answers[string(m.ID)]++
		}
	}
	for id, method := range calls {
		if n := answers[id]; n != 1 {
			t.Errorf("call %s (%s): %d answers, want 1", id, method, n)
		}
	}
	for id := range answers {
		if _, ok := calls[id]; !ok {
			t.Errorf("an answer to %s, which the agent never asked", id)
		}
	}
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if out != nil && !res.IsError {
		data, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s: %s: %v", name, data, err)
		}
	}
	return res
}

func waitExit(t *testing.T, code <-chan int) int {
	t.Helper()
	return waitRecv(t, "memtray mcp to return after stdin closed", code)
}

func TestMCPBridge(t *testing.T) {
	cfg := mcpIsolate(t)
	serveDaemon(t, cfg)
	noFork(t)
	dd := "--data-dir=" + cfg.DataDir

	cs, code := agent(t, dd)
	if info := cs.InitializeResult(); info == nil || info.ServerInfo.Name != "memtray" {
		t.Fatalf("initialize: %+v", info)
	}
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil {
			t.Errorf("%s has no input schema", tool.Name)
		}
	}
	if slices.Sort(names); !slices.Equal(names, slices.Sorted(slices.Values(mcp.ToolNames))) {
		t.Fatalf("tools over stdio: %v", names)
	}

	const fact = "The staging database is reset every night at 02:00 UTC from the anonymised production snapshot."
	var st mcp.StoreResult
	callTool(t, cs, mcp.ToolStore, map[string]any{"text": fact, "kind": "fact", "project": "infra"}, &st)
	if st.Result != "created" || len(st.IDs) != 1 {
		t.Fatalf("store over stdio: %+v", st)
	}

	// A second agent shares the daemon and the store, with its own session.
	cs2, code2 := agent(t, dd)
	for i, s := range []*sdk.ClientSession{cs, cs2} {
		var found mcp.SearchResult
		callTool(t, s, mcp.ToolSearch, map[string]any{"query": "when is the staging database reset"}, &found)
		if len(found.Hits) == 0 || found.Hits[0].ID != st.IDs[0] {
			t.Fatalf("agent %d: search over stdio: %+v", i+1, found)
		}
	}
	// Within one session the memory is not given twice.
	var again mcp.SearchResult
	callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "when is the staging database reset"}, &again)
	if slices.ContainsFunc(again.Hits, func(h mcp.SearchHit) bool { return h.ID == st.IDs[0] }) {
		t.Fatalf("the same memory twice in one session: %+v", again)
	}

	// Bad arguments come back as tool errors through the bridge.
	res := callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "x", "limit": 500}, nil)
	if !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "limit") {
		t.Fatalf("bad limit over stdio: %+v", res)
	}
	// An unknown tool is a protocol error, answered rather than dropped.
	if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "memory_nope"}); err == nil {
		t.Fatal("unknown tool: no error")
	}

	cs.Close()
	cs2.Close()
	if c := waitExit(t, code); c != 0 {
		t.Fatalf("exit code %d", c)
	}
	if c := waitExit(t, code2); c != 0 {
		t.Fatalf("second agent: exit code %d", c)
	}
}

func TestMCPStartsDaemon(t *testing.T) {
	cfg := mcpIsolate(t)
	started := make(chan config.Config, 1)
	old := startDaemon
	t.Cleanup(func() { startDaemon = old })
	startDaemon = func(c config.Config, _ string) (<-chan error, error) {
		started <- c
		return make(chan error), nil
	}
	cs, code := agentThen(t, func() {
		// The daemon comes up a little after it was started, as a real one would.
		c := <-started
		if c.DataDir != cfg.DataDir {
			t.Fatalf("daemon started on %s, want %s", c.DataDir, cfg.DataDir)
		}
		time.Sleep(300 * time.Millisecond)
		serveDaemon(t, cfg)
	}, "--data-dir", cfg.DataDir)
	var status mcp.StatusResult
	if res := callTool(t, cs, mcp.ToolStatus, nil, &status); res.IsError || status.Version != "test" {
		t.Fatalf("status: %+v %+v", res, status)
	}
	cs.Close()
	if c := waitExit(t, code); c != 0 {
		t.Fatalf("exit code %d", c)
	}
}

func TestMCPDaemonDoesNotStart(t *testing.T) {
	old, oldTimeout := startDaemon, daemonStartTimeout
	t.Cleanup(func() { startDaemon, daemonStartTimeout = old, oldTimeout })
	daemonStartTimeout = 400 * time.Millisecond
	cases := []struct {
		name  string
		start func(config.Config, string) (<-chan error, error)
		want  string
	}{
		{"cannot start", func(config.Config, string) (<-chan error, error) {
			return nil, errors.New("exec format error")
		}, "starting one failed: exec format error"},
		{"exits", func(c config.Config, _ string) (<-chan error, error) {
			os.WriteFile(filepath.Join(c.DataDir, DaemonLog), []byte("memtray serve: listen: address in use\n"), 0o600)
			ch := make(chan error, 1)
			ch <- errors.New("exit status 1")
			return ch, nil
		}, "address in use"},
		{"never answers", func(config.Config, string) (<-chan error, error) {
			return make(chan error), nil
		}, "did not answer within"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mcpIsolate(t)
			startDaemon = c.start
			var stderr strings.Builder
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Ctx: context.Background()}
			if code := Run(env, []string{"mcp", "--data-dir", cfg.DataDir}); code != 1 {
				t.Fatalf("exit code %d, want 1", code)
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("stderr %q does not say %q", stderr.String(), c.want)
			}
		})
	}
}

func TestMCPUsage(t *testing.T) {
	mcpIsolate(t)
	noFork(t)
	var stderr strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Ctx: context.Background()}
	if code := Run(env, []string{"mcp", "extra"}); code != 2 || !strings.Contains(stderr.String(), "no arguments") {
		t.Fatalf("mcp extra: %d %q", code, stderr.String())
	}
}

func TestDaemonCommand(t *testing.T) {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	log, err := os.Create(filepath.Join(cfg.DataDir, DaemonLog))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, c := range []struct {
		configPath string
		want       []string
	}{
		{"", []string{"/opt/memtray", "serve", "--data-dir", cfg.DataDir}},
		{"/etc/memtray.json", []string{"/opt/memtray", "serve", "--data-dir", cfg.DataDir, "--config", "/etc/memtray.json"}},
	} {
		cmd := daemonCommand("/opt/memtray", cfg, c.configPath, log)
		if !slices.Equal(cmd.Args, c.want) {
			t.Errorf("args %q, want %q", cmd.Args, c.want)
		}
		if cmd.Stdout != nil || cmd.Stderr != log || cmd.Stdin != nil {
			t.Errorf("output not to the log, or stdin not closed")
		}
		if cmd.SysProcAttr == nil {
			t.Errorf("not detached")
		}
	}
}

func TestBridgeHeaders(t *testing.T) {
	cfg := mcpIsolate(t)
	d, err := daemon.Open(context.Background(), daemon.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	type seen struct{ method, auth, version, rpc string }
	reqs := make(chan seen, 100)
	h := d.MCPHandler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Method string `json:"method"`
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			json.Unmarshal(body, &msg)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		reqs <- seen{r.Method, r.Header.Get("Authorization"), r.Header.Get("Mcp-Protocol-Version"), msg.Method}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- bridgeMCP(context.Background(), inR, outW, io.Discard, fixedDaemon(srv.URL, "secret-token"))
		outW.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	version := cs.InitializeResult().ProtocolVersion
	cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
	close(reqs)
	var afterInit int
	for r := range reqs {
		if r.auth != "Bearer secret-token" {
			t.Errorf("%s %s without the token: %q", r.method, r.rpc, r.auth)
		}
		if r.rpc == "tools/list" || r.rpc == "notifications/initialized" || r.method == http.MethodDelete {
			afterInit++
			if r.version != version {
				t.Errorf("%s %s: protocol version header %q, want %q", r.method, r.rpc, r.version, version)
			}
		}
	}
	if afterInit < 3 {
		t.Errorf("saw %d requests after initialize (initialized, tools/list, DELETE)", afterInit)
	}
}

// callAll makes n memory_status calls at once, each under ctx, and
// returns their errors.
func callAll(ctx context.Context, cs *sdk.ClientSession, n int) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolStatus})
			if err == nil && res.IsError {
				var text []string
				for _, c := range res.Content {
					if tc, ok := c.(*sdk.TextContent); ok {
						text = append(text, tc.Text)
					}
				}
				err = fmt.Errorf("tool error: %s", strings.Join(text, "; "))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return errs
}

// callGuarded is callAll of calls that wait on nothing but the daemon,
// under testWait: a guard against a hang.
func callGuarded(t *testing.T, cs *sdk.ClientSession, n int) []error {
	ctx, cancel := context.WithTimeout(t.Context(), testWait)
	defer cancel()
	return callAll(ctx, cs, n)
}

// TestMCPReconnects: the daemon goes away under a running `memtray mcp`;
// a new one (on a new port) takes over the data dir, at once or after a
// while in which none can start. The agent keeps its session: no second
// initialize, one answer per call, errors only while no daemon runs.
//
// While none can start, each round of calls shares one attempt to start a
// daemon: a first call's attempt is held in the (fake) start until every
// call of the round has lost the session, so they all failed before the
// next attempt began and share it, exactly one more, whatever the load.
// Each attempt comes at least reconnectEvery after the one before.
func TestMCPReconnects(t *testing.T) {
	oldEvery := reconnectEvery
	t.Cleanup(func() { reconnectEvery = oldEvery })
	reconnectEvery = 300 * time.Millisecond
	const cannot = "no daemon can start in this test"
	const lostLine = "lost the daemon's session"
	cases := []struct {
		name string
		// downRounds are rounds of calls made at once while no daemon runs
		// and none can start: each call must fail.
		downRounds []int
		// upCalls are the calls made at once when the new daemon runs.
		upCalls int
	}{
		{"restarted", nil, 4},
		{"down, then back", []int{4, 1, 2}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := mcpIsolate(t)
			_, stop := runDaemon(t, cfg)

			var (
				mu               sync.Mutex
				starts           []time.Time
				running, overlap int
				hold             bool // the next attempt waits for release
			)
			entered, release := make(chan struct{}, 1), make(chan struct{})
			old := startDaemon
			t.Cleanup(func() { startDaemon = old })
			startDaemon = func(config.Config, string) (<-chan error, error) {
				mu.Lock()
				starts = append(starts, time.Now())
				if running++; running > 1 {
					overlap++
				}
				held := hold
				hold = false
				mu.Unlock()
				if held {
					entered <- struct{}{}
					<-release
				} else {
					time.Sleep(20 * time.Millisecond) // long enough for overlapping attempts to show
				}
				mu.Lock()
				running--
				mu.Unlock()
				return nil, errors.New(cannot)
			}
			unavailable := func(what string, err error) {
				t.Helper()
				// A tool error (isError), which the model reads, not a
				// JSON-RPC error (at 4c30b9e).
				if err == nil || !strings.HasPrefix(err.Error(), "tool error: memtray daemon unavailable") || !strings.Contains(err.Error(), cannot) {
					t.Fatalf("%s with no daemon: %v", what, err)
				}
			}

			a := agentWire(t, nil, "--data-dir", cfg.DataDir)
			initResult := a.cs.InitializeResult()
			const fact = "The release train leaves every second Tuesday; hotfixes go out with a signed tag."
			var st mcp.StoreResult
			callTool(t, a.cs, mcp.ToolStore, map[string]any{"text": fact, "kind": "fact", "project": "release"}, &st)
			if len(st.IDs) != 1 {
				t.Fatalf("store: %+v", st)
			}

			stop()
			// notBefore[i] is a time the test saw before attempt i began.
			var notBefore []time.Time
			for r, n := range c.downRounds {
				mu.Lock()
				hold = true
				mu.Unlock()
				notBefore = append(notBefore, time.Now())
				first := make(chan error, 1)
				// The round's calls wait on the test's events (the held
				// start, every call losing the session), however long a
				// loaded machine takes: their answers are awaited after
				// the release, each wait with its own guard. Under a
				// 20 s timeout of their own, begun before those waits,
				// they failed correct code.
				go func() { first <- callAll(t.Context(), a.cs, 1)[0] }()
				waitRecv(t, fmt.Sprintf("round %d: the first call's attempt to start a daemon", r+1), entered)
				lost := strings.Count(a.stderr.String(), lostLine)
				round := make(chan []error, 1)
				go func() { round <- callAll(t.Context(), a.cs, n) }()
				waitText(t, fmt.Sprintf("round %d: its %d calls to lose the session", r+1, n), a.stderr,
					func(s string) bool { return strings.Count(s, lostLine) >= lost+n }, nil, nil)
				notBefore = append(notBefore, time.Now())
				release <- struct{}{}
				unavailable(fmt.Sprintf("round %d: the first call", r+1), waitRecv(t, "the first call's answer", first))
				for i, err := range waitRecv(t, fmt.Sprintf("the answers to round %d", r+1), round) {
					unavailable(fmt.Sprintf("round %d: call %d/%d", r+1, i+1, n), err)
				}
			}
			mu.Lock()
			tries := slices.Clone(starts)
			mu.Unlock()
			if overlap > 0 {
				t.Errorf("%d daemon starts overlapped", overlap)
			}
			if len(tries) != len(notBefore) {
				t.Errorf("%d attempts to start a daemon in %d rounds, want %d: the first call's, then one shared by the round's calls",
					len(tries), len(c.downRounds), len(notBefore))
			}
			for i := 1; i < len(tries) && len(tries) == len(notBefore); i++ {
				if earliest := notBefore[i-1].Add(reconnectEvery); tries[i].Before(earliest) {
					t.Errorf("attempt %d to start a daemon began %s after a moment before attempt %d began, want at least %s",
						i+1, tries[i].Sub(notBefore[i-1]), i, reconnectEvery)
				}
			}

			runDaemon(t, cfg)
			for i, err := range callGuarded(t, a.cs, c.upCalls) {
				if err != nil {
					t.Fatalf("call %d/%d once a daemon runs again: %v (stderr: %s)", i+1, c.upCalls, err, a.stderr.String())
				}
			}
			// The new daemon serves the same store.
			var found mcp.SearchResult
			callTool(t, a.cs, mcp.ToolSearch, map[string]any{"query": "when does the release train leave"}, &found)
			if len(found.Hits) == 0 || found.Hits[0].ID != st.IDs[0] {
				t.Fatalf("search after the restart: %+v", found)
			}
			if a.cs.InitializeResult() != initResult {
				t.Error("the agent's session was initialized again")
			}
			if n := strings.Count(a.stderr.String(), "reconnected to the daemon"); n != 1 {
				t.Errorf("reconnected %d times, want 1; stderr:\n%s", n, a.stderr.String())
			}

			a.cs.Close()
			if code := waitExit(t, a.code); code != 0 {
				t.Fatalf("exit code %d", code)
			}
			checkExchange(t, a)
		})
	}
}

// TestBridgeSessionForgotten: the daemon still runs but forgot the session
// (its idle timeout, say): calls in flight at once reconnect once, on a
// session that gets the agent's own initialize and initialized again.
func TestBridgeSessionForgotten(t *testing.T) {
	cfg := mcpIsolate(t)
	d, err := daemon.Open(context.Background(), daemon.Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var handler atomic.Pointer[http.Handler]
	forget := func() {
		h := d.MCPHandler() // with no sessions
		handler.Store(&h)
	}
	forget()
	type seen struct{ rpc, client, version, header string }
	var mu sync.Mutex
	var reqs []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				Method string `json:"method"`
				Params struct {
					ProtocolVersion string `json:"protocolVersion"`
					ClientInfo      struct {
						Name string `json:"name"`
					} `json:"clientInfo"`
				} `json:"params"`
			}
			json.Unmarshal(body, &msg)
			mu.Lock()
			reqs = append(reqs, seen{msg.Method, msg.Params.ClientInfo.Name, msg.Params.ProtocolVersion, r.Header.Get("Mcp-Protocol-Version")})
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		(*handler.Load()).ServeHTTP(w, r)
	}))
	defer srv.Close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- bridgeMCP(context.Background(), inR, outW, &stderr, fixedDaemon(srv.URL, d.Token()))
		outW.Close()
	}()
	a := &tappedAgent{sent: &wireLog{}, got: &wireLog{}, stderr: &stderr}
	a.cs, err = sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(context.Background(), &sdk.IOTransport{
			Reader: readCloser{io.TeeReader(outR, a.got), outR},
			Writer: writeCloser{io.MultiWriter(inW, a.sent), inW},
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}

	forget()
	for i, err := range callGuarded(t, a.cs, 4) {
		if err != nil {
			t.Fatalf("call %d after the daemon forgot the session: %v (stderr: %s)", i+1, err, stderr.String())
		}
	}
	a.cs.Close()
	if err := <-done; err != nil {
		t.Fatalf("bridge: %v", err)
	}
	checkExchange(t, a)
	if n := strings.Count(stderr.String(), "reconnected to the daemon"); n != 1 {
		t.Errorf("reconnected %d times, want 1; stderr:\n%s", n, stderr.String())
	}
	var rpcs []string
	var inits []seen
	for _, r := range reqs {
		rpcs = append(rpcs, r.rpc)
		switch {
		case r.rpc == "initialize":
			inits = append(inits, r)
		case r.header == "":
			t.Errorf("%s without the protocol version header", r.rpc)
		}
	}
	// The agent's initialize and initialized, then the same again on the
	// new session, once.
	if len(inits) != 2 || inits[0] != inits[1] || inits[0].client != "agent" {
		t.Fatalf("initialize requests %+v, want the agent's twice; requests: %v", inits, rpcs)
	}
	replay := slices.Index(rpcs[1:], "initialize") + 1
	if n := strings.Count(strings.Join(rpcs, " "), "notifications/initialized"); n != 2 ||
		!slices.Contains(rpcs[replay:], "notifications/initialized") {
		t.Fatalf("initialized not sent again after the replayed initialize: %v", rpcs)
	}
}

// TestBridgeSessionLost: which failures of a call mean the daemon's session
// is gone (reconnect) and what the agent is told, from the errors the SDK
// gives for what a daemon (or what took its address) may answer.
func TestBridgeSessionLost(t *testing.T) {
	cases := []struct {
		name     string
		answer   func(w http.ResponseWriter) // the answer to the call; nil: nothing listens any more
		moved    bool                        // the runtime file names another address
		lost     bool
		wantCode int64
		wantMsg  string
	}{
		{"session forgotten", func(w http.ResponseWriter) {
			http.Error(w, "session not found", http.StatusNotFound)
		}, false, true, codeDaemonUnavailable, "session not found"},
		{"nothing listens", nil, false, true, codeDaemonUnavailable, "memtray daemon unavailable: sending \"tools/call\""},
		{"daemon's error", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad params"}}`)
		}, false, false, jsonrpc.CodeInvalidParams, "bad params"},
		{"busy", func(w http.ResponseWriter) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
		}, false, false, jsonrpc.CodeInternalError, "memtray daemon: "},
		{"another server on the old address", func(w http.ResponseWriter) {
			http.Error(w, "who are you", http.StatusUnauthorized)
		}, true, true, codeDaemonUnavailable, "Unauthorized"},
		{"unauthorized, daemon still there", func(w http.ResponseWriter) {
			http.Error(w, "who are you", http.StatusUnauthorized)
		}, false, false, jsonrpc.CodeInternalError, "Unauthorized"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				if !strings.Contains(string(body), `"initialize"`) {
					c.answer(w)
					return
				}
				w.Header().Set("Mcp-Session-Id", "s1")
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}}`)
			}))
			defer srv.Close()
			loc := fixedDaemon(srv.URL, "tok")
			if c.moved {
				loc.find = func(context.Context) (string, string, bool) { return "http://127.0.0.1:1/mcp", "tok", true }
			}
			b := &bridge{loc: loc, stderr: io.Discard}
			ctx := context.Background()
			up, err := dialDaemon(ctx, srv.URL, "tok")
			if err != nil {
				t.Fatal(err)
			}
			defer up.conn.Close()
			initID, _ := jsonrpc.MakeID(float64(1))
			if err := up.send(ctx, &jsonrpc.Request{ID: initID, Method: "initialize", Params: json.RawMessage(`{}`)}, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := up.conn.Read(ctx); err != nil {
				t.Fatal(err)
			}
			if c.answer == nil {
				srv.Close()
			}
			callID, _ := jsonrpc.MakeID(float64(2))
			err = up.send(ctx, &jsonrpc.Request{ID: callID, Method: "tools/call", Params: json.RawMessage(`{"name":"memory_status"}`)}, 0)
			if err == nil {
				t.Fatal("the call went through")
			}
			lost := b.sessionLost(ctx, up, err)
			if lost != c.lost {
				t.Errorf("session lost: %v, want %v (%v)", lost, c.lost, err)
			}
			wire := daemonError(err, lost)
			if wire.Code != c.wantCode || !strings.Contains(wire.Message, c.wantMsg) {
				t.Errorf("answer %d %q, want %d with %q", wire.Code, wire.Message, c.wantCode, c.wantMsg)
			}
		})
	}
}
