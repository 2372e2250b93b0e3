package daemon

import (
	"context"
	"errors"
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
	if _, err := c.StewardUndo(ctx); err != nil {
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
	if _, err := c.StewardUndo(ctx); err == nil {
		t.Error("a second undo succeeded")
	}

	// The scheduled sweep applies decay and snooze by itself, never prune.
	if err := d.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Store().Get(ctx, "prune-me"); err != nil {
		t.Errorf("the scheduled sweep pruned without approval: %v", err)
	}
	if got, _ := d.Store().Get(ctx, "stale"); got.Importance >= 0.5 {
		t.Errorf("the scheduled sweep did not decay a stale memory: %v", got.Importance)
	}
	if got, _ := d.Store().Get(ctx, "sticky"); got.CooldownUntil.IsZero() {
		t.Errorf("the scheduled sweep did not snooze a sticky memory")
	}
}
