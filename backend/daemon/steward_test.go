package daemon

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
)

// TestStewardThroughAPI: plan, apply, trash, restore and undo through the
// HTTP API; pinned memories are never touched; a scheduled sweep applies
// only the auto-applied operations.
func TestStewardThroughAPI(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := testConfig(t)
	cfg.Steward.Every = 0 // the test runs the sweep itself
	d, err := Open(context.Background(), Options{Config: cfg, Clock: memory.FixedClock{T: now}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(a string) { addrc <- a }) }()
	addr := <-addrc
	defer func() { cancel(); <-done; d.Close() }()

	emb := embed.NewBuiltin()
	old := now.AddDate(0, 0, -200)
	mk := func(id, text string, importance float64, pinned bool, access int) memory.Memory {
		v, _ := emb.Embed(ctx, []string{text})
		return memory.Memory{ID: id, Text: text, Kind: memory.KindFact, Type: memory.TypeProject, Project: "p",
			Importance: importance, Pinned: pinned, AccessCount: access, CreatedAt: old, Embedding: v[0]}
	}
	ms := []memory.Memory{
		mk("prune-me", "The old staging host was called stg-legacy-01 and ran CentOS 7.", 0.02, false, 0),
		mk("pinned", "The release train leaves every second Tuesday at 10:00 UTC.", 0.02, true, 0),
		mk("stale", "The nightly export writes CSV files to the reports bucket under /exports/nightly.", 0.5, false, 0),
		mk("sticky", "The monorepo uses pnpm workspaces with a shared eslint config package.", 0.5, false, 40),
	}
	if _, err := d.Store().PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	c := httpapi.NewClient(addr, d.Token())
	before := map[string]memory.Memory{}
	for _, m := range ms {
		got, _ := d.Store().Get(ctx, m.ID)
		before[m.ID] = got
	}

	plan, err := c.StewardPlan(ctx, steward.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]string{}
	for _, a := range plan.Actions {
		ops[a.ID] += a.Op + " "
		if a.ID == "pinned" {
			t.Errorf("a pinned memory is in the plan: %+v", a)
		}
	}
	if ops["prune-me"] == "" || ops["stale"] == "" || ops["sticky"] == "" {
		t.Fatalf("plan misses expected actions: %v", ops)
	}
	// A plan changes nothing.
	for id, m := range before {
		if got, _ := d.Store().Get(ctx, id); got.Importance != m.Importance || !got.CooldownUntil.Equal(m.CooldownUntil) {
			t.Errorf("plan changed %s", id)
		}
	}
	if _, err := c.StewardApply(ctx, httpapi.ApplyRequest{PlanID: "nope"}); !errors.Is(err, memory.ErrNotFound) && err == nil {
		t.Errorf("apply of an unknown plan: %v", err)
	}
	res, err := c.StewardApply(ctx, httpapi.ApplyRequest{PlanID: plan.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trashed != 1 {
		t.Errorf("trashed %d, want 1 (%+v)", res.Trashed, res)
	}
	trash, err := c.Trash(ctx)
	if err != nil || len(trash) != 1 || trash[0].Memory.ID != "prune-me" {
		t.Fatalf("trash: %+v %v", trash, err)
	}
	if _, err := d.Store().Get(ctx, "prune-me"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("a pruned memory is still live: %v", err)
	}
	if err := c.Restore(ctx, []string{"prune-me"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store().Get(ctx, "prune-me"); err != nil {
		t.Errorf("restore: %v", err)
	}
	// Undo puts back what the run changed (the restored memory stays).
	if _, err := c.StewardUndo(ctx, httpapi.UndoRequest{}); err != nil {
		t.Fatal(err)
	}
	for id, m := range before {
		got, err := d.Store().Get(ctx, id)
		if err != nil {
			t.Fatalf("after undo %s: %v", id, err)
		}
		if got.Importance != m.Importance || !got.CooldownUntil.Equal(m.CooldownUntil) || got.Text != m.Text {
			t.Errorf("after undo %s: importance %v cooldown %v, want %v %v", id, got.Importance, got.CooldownUntil, m.Importance, m.CooldownUntil)
		}
	}
	if _, err := c.StewardUndo(ctx, httpapi.UndoRequest{}); err == nil {
		t.Error("a second undo succeeded")
	}

	// A run the user applies (prune), then the scheduled sweep.
	plan, err = c.StewardPlan(ctx, steward.PlanOptions{Ops: []string{steward.OpPrune}})
	if err != nil {
		t.Fatal(err)
	}
	manual, err := c.StewardApply(ctx, httpapi.ApplyRequest{PlanID: plan.ID})
	if err != nil || manual.Trashed != 1 {
		t.Fatalf("manual prune: %+v %v", manual, err)
	}

	// The scheduled sweep applies decay and snooze by itself, never prune.
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Store().Get(ctx, "stale"); got.Importance >= 0.5 {
		t.Errorf("the scheduled sweep did not decay a stale memory: %v", got.Importance)
	}
	if got, _ := d.Store().Get(ctx, "sticky"); got.CooldownUntil.IsZero() {
		t.Errorf("the scheduled sweep did not snooze a sticky memory")
	}

	// The user's run stays undoable after the scheduled one, and undoing it
	// keeps the sweep's changes.
	runs, err := c.StewardRuns(ctx)
	if err != nil || len(runs) != 2 || runs[1].RunID != manual.RunID || runs[1].Counts[steward.OpPrune] != 1 {
		t.Fatalf("runs: %+v %v", runs, err)
	}
	if !runs[0].Scheduled || runs[1].Scheduled {
		t.Errorf("runs not told apart: the sweep's scheduled %v, the user's %v", runs[0].Scheduled, runs[1].Scheduled)
	}
	if runs[0].Counts[steward.OpPrune] != 0 || slices.Contains(runs[0].Ops, steward.OpPrune) {
		t.Errorf("the scheduled sweep pruned without approval: %+v", runs[0])
	}
	for _, tc := range []struct {
		body any
		code int
	}{
		{"not an object", 400},
		{map[string]string{"run": "x"}, 400},
		{map[string]string{"run_id": string(make([]byte, 200))}, 400},
		{map[string]string{"run_id": "20260601T120000Z-00000000"}, 404},
	} {
		if code, body := apiCall(t, addr, d.Token(), "POST", "/api/steward/undo", tc.body); code != tc.code {
			t.Errorf("undo with %v: %d %s, want %d", tc.body, code, body, tc.code)
		}
	}
	decayed, _ := d.Store().Get(ctx, "stale")
	res, err = c.StewardUndo(ctx, httpapi.UndoRequest{RunID: manual.RunID})
	if err != nil || res.RunID != manual.RunID || res.Counts["restored"] != 1 {
		t.Fatalf("undo of the manual run: %+v %v", res, err)
	}
	if _, err := d.Store().Get(ctx, "prune-me"); err != nil {
		t.Errorf("the manual run's prune is not undone: %v", err)
	}
	if got, _ := d.Store().Get(ctx, "stale"); got.Importance != decayed.Importance {
		t.Errorf("undoing the manual run reverted the sweep's decay: %v, want %v", got.Importance, decayed.Importance)
	}
	// An empty body undoes the newest run: the sweep's.
	if code, body := apiCall(t, addr, d.Token(), "POST", "/api/steward/undo", nil); code != 200 {
		t.Errorf("undo with an empty body: %d %s", code, body)
	}
	if got, _ := d.Store().Get(ctx, "stale"); got.Importance != before["stale"].Importance {
		t.Errorf("the sweep's decay is not undone: %v", got.Importance)
	}
	if runs, err := c.StewardRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("runs left: %+v %v", runs, err)
	}
}

// TestScheduledSweepJudgesWhatItApplies: the scheduled sweep plans a merge
// it does not apply (merge is not in auto_apply), and judges what it
// applies on the memories as they are: the memory the merge would absorb
// is decayed on its own record, the survivor is not snoozed for the
// accesses it would absorb, and every action it plans to apply is applied.
func TestScheduledSweepJudgesWhatItApplies(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	cfg := testConfig(t)
	cfg.Steward.Every = 0 // the test runs the sweep itself
	d, err := Open(context.Background(), Options{Config: cfg, Clock: memory.FixedClock{T: now}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- d.Serve(ctx, func(a string) { addrc <- a }) }()
	<-addrc
	defer func() { cancel(); <-done; d.Close() }()

	emb := embed.NewBuiltin()
	dup := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	mk := func(id, text string, reinforced int) memory.Memory {
		v, _ := emb.Embed(ctx, []string{text})
		// Each alone: 6 accesses, stickiness 6 (> 5: decayed, < 10
		// accesses: not snoozed); merged: 12 accesses, stickiness 12.
		return memory.Memory{ID: id, Text: text, Kind: memory.KindFact, Type: memory.TypeProject, Project: "p",
			Importance: 0.6, AccessCount: 6, ReinforcedCount: reinforced, CreatedAt: now.AddDate(0, 0, -30),
			LastAccessed: now.AddDate(0, 0, -1), Embedding: v[0]}
	}
	if _, err := d.Store().PutBatch(ctx, []memory.Memory{mk("keep", dup+" via scripts/deploy.sh", 1), mk("dup", dup+".", 0)}); err != nil {
		t.Fatal(err)
	}
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	runs, err := d.steward.Runs()
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	if want := map[string]int{steward.OpDecayUnreinforced: 2}; !maps.Equal(runs[0].Counts, want) || !runs[0].Scheduled {
		t.Errorf("the scheduled run applied %v (scheduled %v), want %v", runs[0].Counts, runs[0].Scheduled, want)
	}
	for _, id := range []string{"keep", "dup"} {
		m, err := d.Store().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if m.Importance > 0.6*0.9+1e-9 || m.Snoozed(now) {
			t.Errorf("%s after the sweep: importance %.3f, snoozed %v; want decayed, not snoozed", id, m.Importance, m.Snoozed(now))
		}
	}
	// The merge is still proposed, for the user.
	pl, err := d.stewardSvc.StewardPlan(ctx, steward.PlanOptions{})
	if err != nil || pl.Counts[steward.OpMerge] != 1 {
		t.Errorf("the next plan proposes %v (%v); want the merge", pl.Counts, err)
	}
}
