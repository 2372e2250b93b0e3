package store

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// outboxOps is the outbox as id -> "put", "restore" or "delete".
func outboxOps(t *testing.T, s *Store) map[string]string {
	t.Helper()
	es, _, err := s.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		switch {
		case e.Delete:
			out[e.ID] = "delete"
		case e.Restore:
			out[e.ID] = "restore"
		default:
			out[e.ID] = "put"
		}
	}
	return out
}

// TestEnqueueSinceBase: the team memories whose copy changed from its base
// while team memory was off (no policy, so nothing was queued) are queued
// at the pass, each as the write made online would be: an edit of a
// shared field as a put, a move to personal (by scope, or by an edit of
// its type or project) and a delete as a delete, a copy kept apart that
// is a team memory again as a restore. A copy unchanged in what the team
// shares (an access, a pin), a copy kept apart, one that is personal only
// because team.projects changed, and one with a write waiting are not.
// The pass changes no base, so it queues the same until the push answers,
// and nothing once it has.
func TestEnqueueSinceBase(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Team memory on, sharing projects "team" and "gone"; on again later
	// with "team" only (team.projects changed while off).
	on, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: t0},
		Shared: func(m *memory.Memory) bool {
			return teamPolicy(m) || m.Scope == memory.ScopeDefault && m.Project == "gone"
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	edited := func(c SinceBase) int { return c.Edited }
	left := func(c SinceBase) int { return c.Left }
	cases := []struct {
		name    string
		project string
		scope   memory.Scope // the copy's own scope when it was synced
		pulled  bool         // taken from the team (else pushed from here)
		off     func(s *Store, id string) error
		want    string // what the pass queues ("" nothing)
		kind    func(c SinceBase) int
	}{
		{"untouched (a write waiting from before)", "team", "", false, nil, "put", nil},
		{"untouched", "team", "", false, nil, "", nil},
		{"untouched, pulled", "team", "", true, nil, "", nil},
		{"text edited", "team", "", false, update(func(m *memory.Memory) { m.Text += " (checked)"; m.Embedding = testEmb.vec(m.Text) }), "put", edited},
		{"importance changed, pulled", "team", "", true, update(func(m *memory.Memory) { m.Importance = 0.9 }), "put", edited},
		{"accessed and pinned", "team", "", false, update(func(m *memory.Memory) { m.AccessCount += 3; m.Pinned = true }), "", nil},
		{"made personal", "team", "", false, update(func(m *memory.Memory) { m.Scope = memory.ScopePersonal }), "delete", left},
		{"made personal, pulled", "team", "", true, update(func(m *memory.Memory) { m.Scope = memory.ScopePersonal }), "delete", left},
		{"shared by scope, made personal", "other", memory.ScopeTeam, false, update(func(m *memory.Memory) { m.Scope = memory.ScopePersonal }), "delete", left},
		{"typed user", "team", "", false, update(func(m *memory.Memory) { m.Type = memory.TypeUser }), "delete", left},
		{"moved to a project not shared", "team", "", false, update(func(m *memory.Memory) { m.Project = "other" }), "delete", left},
		{"typed user, pulled (its scope is team)", "team", "", true, update(func(m *memory.Memory) { m.Type = memory.TypeUser }), "put", edited},
		{"project no longer shared (team.projects)", "gone", "", false, nil, "", nil},
		{"project no longer shared, edited", "gone", "", false, update(func(m *memory.Memory) { m.Importance = 0.9 }), "", nil},
		{"deleted", "team", "", false, func(s *Store, id string) error { return s.Delete(ctx, id) }, "delete", func(c SinceBase) int { return c.Deleted }},
		{"trashed, pulled", "team", "", true, func(s *Store, id string) error { return s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: id}}}) }, "delete", func(c SinceBase) int { return c.Deleted }},
		{"kept apart", "team", memory.ScopePersonal, true, nil, "", nil},
		{"kept apart, then deleted", "team", memory.ScopePersonal, true, func(s *Store, id string) error { return s.Delete(ctx, id) }, "", nil},
		{"kept apart, then shared", "team", memory.ScopePersonal, true, update(func(m *memory.Memory) { m.Scope = memory.ScopeTeam }), "restore", func(c SinceBase) int { return c.Back }},
	}
	ids := make([]string, len(cases))
	var pulls []memory.Memory
	for i, tc := range cases {
		m := mem(fmt.Sprintf("fact %d: %s", i, tc.name))
		m.ID, m.Project, m.Type, m.CreatedAt, m.UpdatedAt, m.Scope = fmt.Sprintf("m%02d", i), tc.project, memory.TypeProject, t0, t0, tc.scope
		ids[i] = m.ID
		if !tc.pulled || tc.scope == memory.ScopePersonal {
			// Pushed from here, or (personal) a copy the user set here
			// before the pull, which keeps its scope.
			mustPut(t, on, m)
		}
		if tc.pulled {
			m.Scope = memory.ScopeTeam
			pulls = append(pulls, m)
		}
	}
	drain(t, on)
	if _, err := on.ApplyTeam(ctx, TeamChanges{Put: pulls}); err != nil {
		t.Fatal(err)
	}
	// A write made online and not pushed before team memory went off: the
	// push sends the copy as it is, so the pass leaves it.
	if err := update(func(m *memory.Memory) { m.Importance = 0.7 })(on, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := on.Close(); err != nil {
		t.Fatal(err)
	}

	off := openTest(t, dir) // team memory off
	for i, tc := range cases {
		if tc.off != nil {
			if err := tc.off(off, ids[i]); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
	}
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}

	s := openTeam(t, dir) // team memory on again
	got, err := s.EnqueueSinceBase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ids[0]: "put"}
	for i, tc := range cases {
		if tc.want != "" {
			want[ids[i]] = tc.want
		}
	}
	queued := outboxOps(t, s)
	if !maps.Equal(queued, want) {
		for i, tc := range cases {
			if queued[ids[i]] != tc.want {
				t.Errorf("%s: queued %q, want %q", tc.name, queued[ids[i]], tc.want)
			}
		}
	}
	for _, tc := range cases {
		if tc.kind != nil && tc.kind(got) == 0 {
			t.Errorf("%s: not counted in %+v", tc.name, got)
		}
	}
	if got.Total() != len(want)-1 {
		t.Errorf("EnqueueSinceBase = %+v, total %d; want %d", got, got.Total(), len(want)-1)
	}
	// The entries wait: a second pass (a restart before the push) adds
	// nothing.
	if again, err := s.EnqueueSinceBase(ctx); err != nil || again.Total() != 0 {
		t.Fatalf("second pass = %+v, %v; want nothing", again, err)
	}
	// The push answers: puts and restores accepted (their version is the
	// base), the deletes of the personal copies and the trashed one
	// refused (kept apart), the others accepted (no base).
	es, ds, err := s.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		es[i].Accepted = !es[i].Delete || es[i].ID != ids[6] && es[i].ID != ids[15]
		es[i].Refused = !es[i].Accepted
		if es[i].ID == ids[3] {
			// The edit refused (another member's memory): its copy stays
			// as edited, its base the team's; the next pass compares only
			// what was written since this one, so it is not queued at
			// every start (the push would only hold it back again).
			es[i].Accepted = false
		}
	}
	dids := make([]string, len(ds))
	for i, d := range ds {
		dids[i] = d.ID
	}
	if err := s.AckOutbox(ctx, es, dids); err != nil {
		t.Fatal(err)
	}
	if again, err := s.EnqueueSinceBase(ctx); err != nil || again.Total() != 0 {
		t.Fatalf("pass after the push = %+v, %v; want nothing", again, err)
	}

	// Off again: a write since the last pass is compared and queued.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	off = openTest(t, dir)
	if err := update(func(m *memory.Memory) { m.Importance = 0.8 })(off, ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTeam(t, dir)
	if got, err := s.EnqueueSinceBase(ctx); err != nil || got != (SinceBase{Edited: 1}) {
		t.Fatalf("pass after a later edit = %+v, %v; want one edit", got, err)
	}
	if q := outboxOps(t, s); !maps.Equal(q, map[string]string{ids[1]: "put"}) {
		t.Fatalf("outbox %v, want %s's edit alone", q, ids[1])
	}
}

// update is a change of a record made with team memory off.
func update(f func(*memory.Memory)) func(s *Store, id string) error {
	return func(s *Store, id string) error {
		_, err := s.Update(context.Background(), id, func(m *memory.Memory) error { f(m); return nil })
		return err
	}
}

// drain acknowledges the whole outbox as the team took it.
func drain(t *testing.T, s *Store) {
	t.Helper()
	es, ds, err := s.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range es {
		es[i].Accepted = true
	}
	dids := make([]string, len(ds))
	for i, d := range ds {
		dids[i] = d.ID
	}
	if err := s.AckOutbox(context.Background(), es, dids); err != nil {
		t.Fatal(err)
	}
}

// TestEnqueueSinceBaseWithoutPolicy: a store without a team policy (team
// memory off) queues nothing and says why.
func TestEnqueueSinceBaseWithoutPolicy(t *testing.T) {
	s := openTest(t, t.TempDir())
	if _, err := s.EnqueueSinceBase(context.Background()); err == nil {
		t.Fatal("EnqueueSinceBase without a policy: no error")
	}
}
