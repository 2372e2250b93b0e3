package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/mcp"
)

// TestMCPDamagedStore: on a records file cut to half its size, the
// daemon `memtray mcp` starts (the real `memtray serve`, run in this
// process with its output in the daemon log) refuses to start. The agent,
// an SDK client over stdio, still gets a server: initialize's
// instructions, and every tool call's error (IsError), name the damaged
// file and `memtray doctor`; the tools are listed as usual. The command
// exits 1 when the agent disconnects, the file left as it was.
func TestMCPDamagedStore(t *testing.T) {
	dir, path, before := halvedStore(t)
	ctx := context.Background()

	old := startDaemon
	t.Cleanup(func() { startDaemon = old })
	startDaemon = func(cfg config.Config, _ string) (<-chan error, error) {
		log, err := os.OpenFile(filepath.Join(cfg.DataDir, DaemonLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		exited := make(chan error, 1)
		go func() {
			defer log.Close()
			env := &Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: log, Ctx: context.Background()}
			exited <- fmt.Errorf("exit status %d", Run(env, []string{"serve", "--data-dir", cfg.DataDir, "--listen", "127.0.0.1:0"}))
		}()
		return exited, nil
	}

	a := agentWire(t, nil, "--data-dir", dir)
	wantSaid := func(what, s string) {
		t.Helper()
		for _, want := range []string{path + " is damaged", "memtray doctor"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s does not say %q:\n%s", what, want, s)
			}
		}
	}
	wantSaid("initialize's instructions", a.cs.InitializeResult().Instructions)
	tools, err := a.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) < 8 {
		t.Errorf("%d tools listed, want memtray's 8", len(tools.Tools))
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{mcp.ToolSearch, map[string]any{"query": "settings of service 3"}},
		{mcp.ToolStore, map[string]any{"text": "The deploy script lives in ops/deploy.sh."}},
		{mcp.ToolStatus, nil},
	} {
		res := callTool(t, a.cs, c.tool, c.args, nil)
		if !res.IsError || len(res.Content) == 0 {
			t.Errorf("%s: not a tool error: %+v", c.tool, res)
			continue
		}
		wantSaid(c.tool, res.Content[0].(*sdk.TextContent).Text)
	}
	a.cs.Close()
	if code := waitExit(t, a.code); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	wantSaid("memtray mcp's standard error", a.stderr.String())
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the damaged records file was changed")
	}
}
