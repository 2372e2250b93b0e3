package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/mcp"
)

// serveInThisProcess makes `memtray mcp` start its daemon as the real
// `memtray serve`, run in this process (its output in the daemon log)
// until it exits or the test ends. It returns how many it started.
func serveInThisProcess(t *testing.T) *atomic.Int32 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var started atomic.Int32
	old := startDaemon
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		startDaemon = old
	})
	startDaemon = func(cfg config.Config, _ string) (<-chan error, error) {
		started.Add(1)
		log, err := os.OpenFile(filepath.Join(cfg.DataDir, DaemonLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer log.Close()
			env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: log, Ctx: ctx}
			exited <- fmt.Errorf("exit status %d", Run(env, []string{"serve", "--data-dir", cfg.DataDir, "--listen", "127.0.0.1:0"}))
		}()
		return exited, nil
	}
	return &started
}

// toolText is the text of a tool's answer.
func toolText(res *sdk.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*sdk.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestMCPRecoversAfterRepair: `memtray mcp` started on a damaged store (a
// records file cut to half) serves its stand-in, every tool saying the file
// is damaged; a tool call right after tries no daemon again (the back-off,
// the store unchanged). The user runs `memtray doctor --salvage` in the
// middle of the agent's session: the next tool call sees the store's
// files changed, starts the daemon, which opens the salvaged store, and
// the same session (the agent's one initialize, replayed) stores and
// searches through it. The command then exits 0. Before, the session
// served the error until the agent was restarted.
func TestMCPRecoversAfterRepair(t *testing.T) {
	dir, path, _ := halvedStore(t)
	started := serveInThisProcess(t)
	ctx := context.Background()

	a := agentWire(t, nil, "--data-dir", dir)
	if ins := a.cs.InitializeResult().Instructions; !strings.Contains(ins, path+" is damaged") || !strings.Contains(ins, "work again in this session") {
		t.Errorf("initialize's instructions:\n%s", ins)
	}
	search := map[string]any{"query": "which file does service 3 read its settings from"}
	res := callTool(t, a.cs, mcp.ToolSearch, search, nil)
	if !res.IsError || !strings.Contains(toolText(res), path+" is damaged") || !strings.Contains(toolText(res), "no restart") {
		t.Fatalf("search on the damaged store: %+v %s", res, toolText(res))
	}
	if n := started.Load(); n != 1 {
		t.Errorf("%d daemons started for the first call within the back-off, want only the first one", n)
	}

	code, out, errs := run(t, ctx, "", "doctor", "--data-dir", dir, "--salvage")
	if code != 0 {
		t.Fatalf("salvage: exit %d\n%s%s", code, out, errs)
	}

	res = callTool(t, a.cs, mcp.ToolStore, map[string]any{"text": "The deploy script lives in ops/deploy.sh and needs the VPN."}, nil)
	if res.IsError {
		t.Fatalf("store after the repair: %s\nmemtray mcp said:\n%s", toolText(res), a.stderr.String())
	}
	var found mcp.SearchResult
	res = callTool(t, a.cs, mcp.ToolSearch, search, &found)
	if res.IsError || len(found.Hits) == 0 {
		t.Errorf("search after the repair: %s %+v", toolText(res), found)
	}
	if !strings.Contains(a.stderr.String(), "answers: serving memtray's tools through it") {
		t.Errorf("memtray mcp did not say it serves through the daemon:\n%s", a.stderr.String())
	}
	checkExchange(t, a)
	a.cs.Close()
	if code := waitExit(t, a.code); code != 0 {
		t.Errorf("exit code %d, want 0 (it served through the daemon in the end)", code)
	}
}

// TestMCPRecoversWhenDaemonAnswers: no daemon could be started when the
// agent came (here the start itself fails); the user then starts one
// (`memtray serve`, here served on loopback by the test). The next tool
// call finds it, without waiting for the back-off, and is served by it.
func TestMCPRecoversWhenDaemonAnswers(t *testing.T) {
	cfg := mcpIsolate(t)
	old := startDaemon
	t.Cleanup(func() { startDaemon = old })
	startDaemon = func(config.Config, string) (<-chan error, error) {
		return nil, errors.New("no memtray executable here")
	}
	oldEvery := recoverEvery
	t.Cleanup(func() { recoverEvery = oldEvery })
	recoverEvery = 1e9 * 3600 // an hour: only the daemon answering may end the wait

	a := agentWire(t, nil, "--data-dir", cfg.DataDir)
	res := callTool(t, a.cs, mcp.ToolStatus, nil, nil)
	if !res.IsError || !strings.Contains(toolText(res), "no memtray executable here") {
		t.Fatalf("status with no daemon: %+v %s", res, toolText(res))
	}
	serveDaemon(t, cfg)
	var st mcp.Status
	if res := callTool(t, a.cs, mcp.ToolStatus, nil, &st); res.IsError || st.Version == "" {
		t.Fatalf("status once the daemon runs: %s %+v\n%s", toolText(res), st, a.stderr.String())
	}
	checkExchange(t, a)
	a.cs.Close()
	if code := waitExit(t, a.code); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// TestMCPStaysDownUntilRepaired: while the store stays damaged, a tool
// call tries a daemon again only after the back-off, which doubles, and
// each failed try's reason is what the tools say; the command exits 1.
func TestMCPStaysDownUntilRepaired(t *testing.T) {
	dir, path, before := halvedStore(t)
	started := serveInThisProcess(t)
	oldEvery := recoverEvery
	t.Cleanup(func() { recoverEvery = oldEvery })
	recoverEvery = 0 // every call tries: the store is still damaged

	a := agentWire(t, nil, "--data-dir", dir)
	for i := range 3 {
		res := callTool(t, a.cs, mcp.ToolSearch, map[string]any{"query": "settings of service 3"}, nil)
		if !res.IsError || !strings.Contains(toolText(res), path+" is damaged") {
			t.Fatalf("call %d: %+v %s", i, res, toolText(res))
		}
	}
	if n := started.Load(); n != 4 {
		t.Errorf("%d daemons started, want 4 (the first, then one per call with no back-off)", n)
	}
	a.cs.Close()
	if code := waitExit(t, a.code); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the damaged records file was changed")
	}
}
