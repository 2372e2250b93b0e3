package store

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

func TestCounterDeltaGrowth(t *testing.T) {
	team := CounterDelta{Access: 3, Reinforced: 1, FeedbackSum: 1, FeedbackN: 1}
	for _, tc := range []struct {
		name string
		d    CounterDelta
		want CounterDelta
	}{
		{"a growth is its own", CounterDelta{ID: "g", MemoryID: "m", Access: 2}, CounterDelta{ID: "g", MemoryID: "m", Access: 2}},
		{"a baseline adds its excess", CounterDelta{ID: "b", MemoryID: "m", Access: 5, Reinforced: 1, FeedbackSum: 0, FeedbackN: 3, Baseline: true},
			CounterDelta{ID: "b", MemoryID: "m", Access: 2, FeedbackSum: -1, FeedbackN: 2}},
		{"never less than nothing", CounterDelta{ID: "b", MemoryID: "m", Access: 1, Baseline: true}, CounterDelta{ID: "b", MemoryID: "m"}},
		{"a sum the new ratings cannot make is clipped", CounterDelta{ID: "b", MemoryID: "m", FeedbackSum: -3, FeedbackN: 2, Baseline: true},
			CounterDelta{ID: "b", MemoryID: "m", FeedbackSum: -1, FeedbackN: 1}},
		{"only the excess over what the team counted", CounterDelta{ID: "b", MemoryID: "m", Access: 4, Baseline: true},
			CounterDelta{ID: "b", MemoryID: "m", Access: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.d.Growth(team); got != tc.want {
				t.Fatalf("Growth = %+v, want %+v", got, tc.want)
			}
			if err := tc.d.Growth(team).Validate(); err != nil && !tc.d.Baseline {
				t.Fatalf("a growth fails Validate: %v", err)
			}
		})
	}
	if got := (CounterDelta{Access: 4, Baseline: true}).Growth(CounterDelta{}); got.Access != 4 || got.Baseline {
		t.Fatalf("a baseline against nothing = %+v, want all of it as a growth", got)
	}
}

func TestCounterDeltaValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    CounterDelta
		bad  string
	}{
		{"ok", CounterDelta{ID: "d1", MemoryID: "m1", Access: 1, FeedbackSum: -1, FeedbackN: 1}, ""},
		{"no id", CounterDelta{MemoryID: "m1"}, "id"},
		{"long id", CounterDelta{ID: strings.Repeat("x", 129), MemoryID: "m1"}, "1-128"},
		{"bad memory id", CounterDelta{ID: "d1", MemoryID: "m 1"}, "memory id"},
		{"negative", CounterDelta{ID: "d1", MemoryID: "m1", Access: -1}, "negative"},
		{"sum beyond the ratings", CounterDelta{ID: "d1", MemoryID: "m1", FeedbackSum: 2, FeedbackN: 1}, "feedback sum"},
		{"NaN", CounterDelta{ID: "d1", MemoryID: "m1", FeedbackSum: math.NaN(), FeedbackN: 1}, "feedback sum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.d.Validate()
			if (err == nil) != (tc.bad == "") || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
				t.Fatalf("Validate = %v, want an error about %q", err, tc.bad)
			}
		})
	}
}

// deltasOf is the outbox's deltas of memory id.
func deltasOf(t *testing.T, s *Store, id string) []CounterDelta {
	t.Helper()
	_, ds, err := s.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []CounterDelta
	for _, d := range ds {
		if d.MemoryID == id {
			out = append(out, d)
		}
	}
	return out
}

// TestOutboxBaseline: a memory entering the team scope (new, moved from
// personal, restored from the trash) carries its counters as one
// baseline, which replaces its deltas still waiting: a flip team ->
// personal -> team before a push counted them twice.
func TestOutboxBaseline(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	m := mustPut(t, s, teamMem("the cache is warmed at boot"))
	update := func(f func(*memory.Memory)) {
		t.Helper()
		if _, err := s.Update(ctx, m.ID, func(x *memory.Memory) error { f(x); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	update(func(x *memory.Memory) { x.AccessCount += 3 })
	if ds := deltasOf(t, s, m.ID); len(ds) != 1 || ds[0].Access != 3 || ds[0].Baseline {
		t.Fatalf("deltas after 3 accesses = %+v, want one growth of 3", ds)
	}
	update(func(x *memory.Memory) { x.Scope = memory.ScopePersonal })
	if ds := deltasOf(t, s, m.ID); len(ds) != 0 {
		t.Fatalf("deltas of a memory made personal = %+v, want none", ds)
	}
	update(func(x *memory.Memory) { x.AccessCount += 2 })
	update(func(x *memory.Memory) { x.Scope = memory.ScopeTeam })
	ds := deltasOf(t, s, m.ID)
	if len(ds) != 1 || !ds[0].Baseline || ds[0].Access != 5 {
		t.Fatalf("deltas after a flip = %+v, want one baseline of 5", ds)
	}
	es, _, _ := s.Outbox(ctx, 0)
	if len(es) != 1 || !es[0].Restore {
		t.Fatalf("outbox after the move back = %+v, want a restore (the team deleted it when it left)", es)
	}
	// A growth after it adds to it.
	update(func(x *memory.Memory) { x.AccessCount++ })
	if ds := deltasOf(t, s, m.ID); len(ds) != 2 {
		t.Fatalf("deltas = %+v, want the baseline and a growth", ds)
	}
	// Back from the trash: a baseline again.
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: m.ID, Reason: "test"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if ds := deltasOf(t, s, m.ID); len(ds) != 1 || !ds[0].Baseline || ds[0].Access != 6 {
		t.Fatalf("deltas after a restore = %+v, want one baseline of 6", ds)
	}
}

// TestOutboxEditNewerThanSeen: an edit of a team memory is stored newer
// than the version it edits even when this machine's clock is behind the
// clock that wrote that version (the team keeps the newest by UpdatedAt);
// a change of counters alone is not made newer.
func TestOutboxEditNewerThanSeen(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir()) // its clock says t0
	ahead := t0.Add(10 * time.Minute)
	r := teamMem("the logs rotate daily")
	r.ID, r.CreatedAt, r.UpdatedAt = "r1", ahead, ahead
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{r}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Update(ctx, "r1", func(m *memory.Memory) error { m.AccessCount++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !got.UpdatedAt.Equal(ahead) {
		t.Fatalf("an access moved UpdatedAt from %v to %v", ahead, got.UpdatedAt)
	}
	got, err = s.Update(ctx, "r1", func(m *memory.Memory) error {
		m.Text, m.Embedding = "the logs rotate hourly", testEmb.vec("the logs rotate hourly")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !got.UpdatedAt.After(ahead) {
		t.Fatalf("the edit's UpdatedAt %v is not after the version it edits (%v)", got.UpdatedAt, ahead)
	}
	if stored, _ := s.Get(ctx, "r1"); !stored.UpdatedAt.Equal(got.UpdatedAt) {
		t.Fatalf("stored UpdatedAt %v, returned %v", stored.UpdatedAt, got.UpdatedAt)
	}
}

// TestApplyTeamKeepsPersonal: the team's delete of a memory made personal
// here leaves it live (moving a team memory to personal deleted it from
// the team, and the pull of that delete sent the personal copy to the
// trash).
func TestApplyTeamKeepsPersonal(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	m := mustPut(t, s, teamMem("kept here, not in the team"))
	if _, err := s.Update(ctx, m.ID, func(x *memory.Memory) error { x.Scope = memory.ScopePersonal; return nil }); err != nil {
		t.Fatal(err)
	}
	o := mustPut(t, s, teamMem("deleted by the team"))
	res, err := s.ApplyTeam(ctx, TeamChanges{Delete: []TeamDelete{{ID: m.ID, Reason: "deleted from the team"}, {ID: o.ID, Reason: "deleted from the team"}}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != 1 || res.Deleted != 1 {
		t.Fatalf("ApplyTeam = %+v, want one kept, one deleted", res)
	}
	if got, err := s.Get(ctx, m.ID); err != nil || got.Scope != memory.ScopePersonal {
		t.Fatalf("the personal memory: %+v, %v", got.Scope, err)
	}
	if _, err := s.Get(ctx, o.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the team memory: %v", err)
	}
}
