package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/mcp"
)

// asMemtrayEnv makes this test binary run as the memtray command, so a
// test can spawn real daemons the way `memtray mcp` does
// (config.Executable is the test binary).
const asMemtrayEnv = "MEMTRAY_TEST_AS_MEMTRAY"

func TestMain(m *testing.M) {
	if os.Getenv(asMemtrayEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	// No test reads the user's home: the daemons the tests start capture
	// from the agents' session folders under $HOME (~/.claude/projects,
	// ~/.codex/sessions) by default, and a live session there must not
	// reach a test's store.
	home, err := os.MkdirTemp("", "memtray-cli-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// TestMCPSpawnedDaemonUsesConfigAndIdleExits is issue 24 item 6: the
// daemon `memtray mcp` starts reads the user's config file (here named by a
// relative --config, which the daemon, running in its data dir, used to
// miss and fall back to the defaults) and exits by itself once no agent
// has used it for idle_exit.
func TestMCPSpawnedDaemonUsesConfigAndIdleExits(t *testing.T) {
	mcpIsolate(t)
	t.Setenv(asMemtrayEnv, "1")
	t.Setenv(OnDemandEnv, "") // as a shell would have it
	work := t.TempDir()
	t.Chdir(work)
	const upstream = "http://127.0.0.1:9/from-the-users-config"
	if err := os.WriteFile("config.json", []byte(`{"listen": "127.0.0.1:0", "idle_exit": "1s",
		"embedder": {"provider": "builtin"}, "capture": {"anthropic_upstream": "`+upstream+`"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	old, oldTimeout := startDaemon, daemonStartTimeout
	t.Cleanup(func() { startDaemon, daemonStartTimeout = old, oldTimeout })
	// The daemon is this race-built test binary: on a loaded machine it
	// takes longer to answer than a release build, and this test is about
	// what it reads and when it exits, not how fast it starts.
	daemonStartTimeout = 90 * time.Second
	startDaemon = func(c config.Config, configPath string) (<-chan error, error) {
		ch, err := spawnDaemon(c, configPath)
		if err != nil {
			return nil, err
		}
		mine := make(chan error, 1)
		go func() { err := <-ch; exited <- err; mine <- err }()
		return mine, nil
	}
	cs, code := agentThen(t, nil, "--config", "config.json", "--data-dir", "data")
	var status mcp.StatusResult
	if res := callTool(t, cs, mcp.ToolStatus, nil, &status); res.IsError {
		t.Fatalf("status: %+v", res)
	}
	cfg := config.Default()
	cfg.DataDir, cfg.Listen = filepath.Join(work, "data"), "127.0.0.1:0"
	cl, ok := remote(context.Background(), cfg)
	if !ok {
		t.Fatal("no daemon answers on the data dir")
	}
	st, err := cl.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Anthropic != upstream {
		t.Errorf("the spawned daemon's upstream is %q, not the config's %q", st.Anthropic, upstream)
	}
	cs.Close() // the agent goes away
	if c := waitExit(t, code); c != 0 {
		t.Fatalf("memtray mcp exited %d", c)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the daemon exited with %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the daemon memtray mcp started still runs with no agent, past idle_exit")
	}
	log, _ := os.ReadFile(filepath.Join(work, "data", DaemonLog))
	if !strings.Contains(string(log), "idle_exit") {
		t.Errorf("the daemon's log does not say why it stopped:\n%s", log)
	}
}
