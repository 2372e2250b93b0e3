package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/steward"
)

// TestOneUnreadableRecordLive: a real store with one record garbled by
// the test (its bytes on disk) serves every read — stats, list, search in
// each mode, export, the overview, the steward's plan — both from a
// command that opens the store itself and through a real daemon's HTTP
// API on loopback: each succeeds with the other records all there, and
// stats and the overview say one record is unreadable.
func TestOneUnreadableRecordLive(t *testing.T) {
	ctx := context.Background()
	const n = 12
	cfg := mcpIsolate(t)
	dd := "--data-dir=" + cfg.DataDir
	addWorkerMemories(t, ctx, dd, n)
	garbleRecordInFile(t, filepath.Join(cfg.DataDir, daemon.StoreDir, "memtray.db"), "Worker 3 retries")
	others := func(what, out string) {
		t.Helper()
		for i := range n {
			has := strings.Contains(out, fmt.Sprintf("batch-%d.bin", i))
			if has != (i != 3) {
				t.Errorf("%s: batch-%d.bin listed %v\n%s", what, i, has, out)
			}
		}
	}
	commands := func(where string) {
		t.Helper()
		code, out, errs := run(t, ctx, "", "stats", dd)
		if code != 0 || !strings.Contains(out, fmt.Sprintf("memories:   %d (", n-1)) || !strings.Contains(out, "1 unreadable") {
			t.Errorf("%s: stats: exit %d\n%s%s", where, code, out, errs)
		}
		code, out, errs = run(t, ctx, "", "list", dd, "--limit=100")
		if code != 0 {
			t.Errorf("%s: list: exit %d %s", where, code, errs)
		}
		others(where+": list", out)
		for _, mode := range []string{"hybrid", "bm25", "vector"} {
			if code, out, errs := run(t, ctx, "", "search", dd, "--mode="+mode, "--k=50", "worker retries failed upload batch"); code != 0 || strings.Contains(out, "batch-3.bin") {
				t.Errorf("%s: search --mode=%s: exit %d\n%s%s", where, mode, code, out, errs)
			}
		}
		code, out, errs = run(t, ctx, "", "export", dd)
		if code != 0 {
			t.Errorf("%s: export: exit %d %s", where, code, errs)
		}
		others(where+": export", out)
	}
	commands("without a daemon")

	serveDaemon(t, cfg)
	commands("through the daemon")
	rt, err := daemon.ReadRuntime(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := daemon.ReadToken(cfg.DataDir)
	if err != nil {
		t.Fatal(err)
	}
	cl := httpapi.NewClient(rt.Listen, tok)
	st, err := cl.Stats(ctx)
	if err != nil || st.Store.Unreadable != 1 || st.Store.Count != n-1 {
		t.Errorf("GET /api/stats: %v %+v", err, st.Store)
	}
	total := 0
	for _, c := range st.ByKind {
		total += c
	}
	if total != n-1 {
		t.Errorf("GET /api/stats counts %d memories by kind, want %d", total, n-1)
	}
	list, err := cl.List(ctx, httpapi.ListRequest{Limit: 100})
	if err != nil || list.Total != n-1 || len(list.Memories) != n-1 {
		t.Errorf("GET /api/memories: %v, %d of %d", err, len(list.Memories), list.Total)
	}
	for _, mode := range []string{"hybrid", "bm25", "vector"} {
		if _, err := cl.Search(ctx, httpapi.SearchRequest{Query: "worker retries failed upload batch", K: 50, Mode: mode}); err != nil {
			t.Errorf("search %s: %v", mode, err)
		}
	}
	var exp bytes.Buffer
	if err := cl.Export(ctx, &exp); err != nil {
		t.Errorf("GET /api/export: %v", err)
	}
	others("GET /api/export", exp.String())
	if _, err := cl.StewardPlan(ctx, steward.PlanOptions{}); err != nil {
		t.Errorf("POST /api/steward/plan: %v", err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+rt.Listen+"/api/overview", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var ov httpapi.Overview
	if err := json.NewDecoder(resp.Body).Decode(&ov); err != nil || resp.StatusCode != http.StatusOK || ov.Memories != n-1 {
		t.Errorf("GET /api/overview: %s %v %+v", resp.Status, err, ov)
	}
	var said bool
	for _, w := range ov.Warnings {
		said = said || strings.Contains(w.Message, "is unreadable")
	}
	if !said {
		t.Errorf("the overview does not say a record is unreadable: %+v", ov.Warnings)
	}
}

// addWorkerMemories adds n memories through the cli (dd: its --data-dir
// flag), "Worker i retries a failed upload of batch-i.bin ...", each
// naming its own file.
func addWorkerMemories(t *testing.T, ctx context.Context, dd string, n int) {
	t.Helper()
	for i := range n {
		if code, _, errs := run(t, ctx, "", "add", dd, fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times, then gives up.", i, i)); code != 0 {
			t.Fatalf("add: %d %s", code, errs)
		}
	}
}
