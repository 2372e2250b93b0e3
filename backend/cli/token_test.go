package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/mcp"
)

// TestTokenRotateRunningDaemon: `memtray token rotate` with a daemon
// running switches the daemon to the new token at once (no restart): the
// old token is refused on the API, the new one works, the file holds it,
// and an agent's `memtray mcp` bridge opened before the rotation goes on
// working (it reconnects with the token it reads again).
func TestTokenRotateRunningDaemon(t *testing.T) {
	cfg := mcpIsolate(t)
	d := serveDaemon(t, cfg)
	noFork(t)
	dd := "--data-dir=" + cfg.DataDir
	ctx := context.Background()
	rt, err := daemon.ReadRuntime(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}

	cs, code := agent(t, dd)
	const fact = "The release branch is cut every second Tuesday; hotfixes go to the release branch first, then back to main."
	var st mcp.StoreResult
	callTool(t, cs, mcp.ToolStore, map[string]any{"text": fact, "kind": "fact", "project": "infra"}, &st)
	if st.Result != "created" {
		t.Fatalf("store before the rotation: %+v", st)
	}

	old := d.Token()
	c, out, errs := run(t, ctx, "", "token", "rotate", dd)
	if c != 0 {
		t.Fatalf("token rotate: exit %d: %s", c, errs)
	}
	tok := strings.TrimSpace(out)
	if len(tok) != 64 || tok == old || tok != d.Token() || !strings.Contains(errs, "refuses the old one") {
		t.Fatalf("token rotate printed %q (stderr %q); daemon holds %q, old %q", tok, errs, d.Token(), old)
	}
	if f, err := daemon.ReadToken(cfg.DataDir); err != nil || f != tok {
		t.Fatalf("token file holds %q, %v", f, err)
	}
	if _, err := httpapi.NewClient(rt.Listen, old).Stats(ctx); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("old token after the rotation: %v", err)
	}
	if _, err := httpapi.NewClient(rt.Listen, tok).Stats(ctx); err != nil {
		t.Fatalf("new token: %v", err)
	}
	if _, ok := httpapi.Probe(ctx, rt.Listen, old, 2*time.Second); ok {
		t.Fatal("the daemon still proves it holds the old token")
	}
	if _, ok := httpapi.Probe(ctx, rt.Listen, tok, 2*time.Second); !ok {
		t.Fatal("the daemon does not prove it holds the new token")
	}
	// `memtray token` prints the new one.
	if c, out, _ := run(t, ctx, "", "token", dd); c != 0 || strings.TrimSpace(out) != tok {
		t.Fatalf("token after the rotation: %d %q", c, out)
	}

	var found mcp.SearchResult
	callTool(t, cs, mcp.ToolSearch, map[string]any{"query": "when is the release branch cut"}, &found)
	if len(found.Hits) == 0 || found.Hits[0].ID != st.IDs[0] {
		t.Fatalf("the agent's bridge after the rotation: %+v", found)
	}
	cs.Close()
	if c := waitExit(t, code); c != 0 {
		t.Fatalf("memtray mcp exit code %d", c)
	}
}

// TestTokenRotateOffline: with no daemon, rotate replaces the file's token.
func TestTokenRotateOffline(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	ctx := context.Background()
	c, first, _ := run(t, ctx, "", "token", "--data-dir", dir)
	if c != 0 || len(strings.TrimSpace(first)) != 64 {
		t.Fatalf("token: %d %q", c, first)
	}
	c, second, errs := run(t, ctx, "", "token", "rotate", "--data-dir", dir)
	if c != 0 || strings.TrimSpace(second) == strings.TrimSpace(first) || !strings.Contains(errs, "no daemon is running") {
		t.Fatalf("token rotate: %d %q %q", c, second, errs)
	}
	if f, err := daemon.ReadToken(dir); err != nil || f != strings.TrimSpace(second) {
		t.Fatalf("token file %q, %v", f, err)
	}
}
