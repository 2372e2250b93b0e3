package cli

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// idsByText opens the closed store of dataDir and maps each needle to the
// id of the memory whose text holds it.
func idsByText(t *testing.T, ctx context.Context, dataDir string, needles ...string) map[string]string {
	t.Helper()
	s, err := store.Open(ctx, store.Options{Dir: filepath.Join(dataDir, daemon.StoreDir)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out := map[string]string{}
	err = s.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		for _, n := range needles {
			if strings.Contains(m.Text, n) {
				out[n] = m.ID
			}
		}
		return nil
	})
	if err != nil || len(out) != len(needles) {
		t.Fatalf("ids of %v: %v %v", needles, out, err)
	}
	return out
}

// TestUnreadableRecordWritesLive: through a real daemon's HTTP API on
// loopback, with two records garbled by the test on disk, a write on one
// of them is a 404 naming memtray doctor (an edit, a pin, a snooze, a
// reinforcement: each was a 500 at d916b52), a new memory of its text is
// stored, the steward plans and applies over the others, and a delete
// succeeds (to the trash, or for good with purge): the trash keeps
// nothing of it, stats no longer count it, and memtray doctor through the
// daemon finds the store clean once both are gone.
func TestUnreadableRecordWritesLive(t *testing.T) {
	ctx := context.Background()
	const n = 10
	cfg := mcpIsolate(t)
	dd := "--data-dir=" + cfg.DataDir
	addWorkerMemories(t, ctx, dd, n)
	ids := idsByText(t, ctx, cfg.DataDir, "Worker 3 retries", "Worker 5 retries", "Worker 6 retries")
	bad, purged, other := ids["Worker 3 retries"], ids["Worker 5 retries"], ids["Worker 6 retries"]
	path := filepath.Join(cfg.DataDir, daemon.StoreDir, "memtray.db")
	garbleRecordInFile(t, path, "Worker 3 retries")
	garbleRecordInFile(t, path, "Worker 5 retries")

	serveDaemon(t, cfg)
	cl := liveClient(t, cfg.DataDir)
	wantNotFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, memory.ErrNotFound) || !strings.Contains(err.Error(), "memtray doctor") {
			t.Errorf("%s of the unreadable memory: %v, want a 404 naming memtray doctor", what, err)
		}
	}
	imp := 0.9
	_, err := cl.Edit(ctx, bad, httpapi.MemoryPatch{Importance: &imp})
	wantNotFound("PATCH", err)
	_, err = cl.Pin(ctx, bad, true)
	wantNotFound("POST pin", err)
	_, err = cl.Snooze(ctx, bad, 3)
	wantNotFound("POST snooze", err)
	_, err = cl.Reinforce(ctx, bad)
	wantNotFound("POST reinforce", err)
	if m, err := cl.Pin(ctx, other, true); err != nil || !m.Pinned {
		t.Errorf("POST pin of another: %v", err)
	}
	if m, err := cl.Add(ctx, httpapi.AddRequest{Text: "Worker 3 retries a failed upload of batch-3.bin three times, then gives up."}); err != nil || m.ID == bad {
		t.Errorf("POST /api/memories of the unreadable memory's text: %v %v", m.ID, err)
	}
	plan, err := cl.StewardPlan(ctx, steward.PlanOptions{})
	if err != nil {
		t.Fatalf("steward plan: %v", err)
	}
	if _, err := cl.StewardApply(ctx, httpapi.ApplyRequest{PlanID: plan.ID}); err != nil {
		t.Errorf("steward apply: %v", err)
	}

	if err := cl.Delete(ctx, bad); err != nil {
		t.Errorf("DELETE of the unreadable memory: %v", err)
	}
	if err := cl.Purge(ctx, purged); err != nil {
		t.Errorf("DELETE ?purge=true of the unreadable memory: %v", err)
	}
	trash, err := cl.Trash(ctx)
	if err != nil {
		t.Errorf("the trash: %v", err)
	}
	for _, tm := range trash {
		if tm.Memory.ID == bad || tm.Memory.ID == purged {
			t.Errorf("the trash holds the deleted unreadable memory %s", tm.Memory.ID)
		}
	}
	st, err := cl.Stats(ctx)
	if err != nil || st.Store.Unreadable != 0 {
		t.Errorf("GET /api/stats after the deletes: %v %+v", err, st.Store)
	}
	if err := cl.Delete(ctx, bad); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("a second DELETE: %v, want not found", err)
	}
	code, out, errs := run(t, ctx, "", "doctor", dd)
	if code != 0 || !strings.Contains(out, "daemon") {
		t.Errorf("memtray doctor after the deletes: exit %d\n%s%s", code, out, errs)
	}
}
