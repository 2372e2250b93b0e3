package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
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
// listener until the test ends: with Serve when the daemon mounts /mcp
// itself, else with the same routes put together here (MCP behind the
// token, the API beside it) and the runtime file Serve would write.
func serveDaemon(t *testing.T, cfg config.Config) *daemon.Daemon {
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
		go func() { srv.Serve(ln); done <- nil }()
		go func() { <-ctx.Done(); srv.Close() }()
		rt, _ := json.Marshal(daemon.Runtime{PID: os.Getpid(), Listen: addr})
		if err := os.WriteFile(filepath.Join(cfg.DataDir, daemon.RuntimeFile), rt, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		cancel()
		<-done
		d.Close()
	})
	return d
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
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	env := &Env{Stdin: inR, Stdout: outW, Stderr: &stderr, Ctx: context.Background()}
	code := make(chan int, 1)
	go func() {
		c := Run(env, append([]string{"mcp"}, args...))
		outW.Close()
		inR.Close()
		if c != 0 {
			t.Logf("memtray mcp exited %d: %s", c, stderr.String())
		}
		code <- c
	}()
	if then != nil {
		then()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v (stderr: %s)", err, stderr.String())
	}
	return cs, code
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
	select {
	case c := <-code:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("memtray mcp did not return after stdin closed")
		return -1
	}
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
		done <- bridgeMCP(context.Background(), inR, outW, io.Discard, srv.URL, "secret-token")
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
