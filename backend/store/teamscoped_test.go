package store

import (
	"context"
	"reflect"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestEnqueueTeamScoped: memories whose own scope is team and that the
// team was never sent (shared while team memory was off) are queued, once;
// personal and default-scope ones are not, nor is a team memory that
// waits in the outbox or that the team took already (it has a base).
func TestEnqueueTeamScoped(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	off := openTest(t, dir) // team memory off: no policy, no outbox
	cases := []struct {
		name  string
		m     memory.Memory
		scope memory.Scope
		want  bool
	}{
		{"shared while off", mem("the staging database is refreshed on Mondays"), memory.ScopeTeam, true},
		{"shared while off, in a team project", teamMem("the release notes live in the wiki"), memory.ScopeTeam, true},
		{"personal", teamMem("my review queue is filtered by label"), memory.ScopePersonal, false},
		{"default scope, team project", teamMem("the build cache is pruned weekly"), memory.ScopeDefault, false},
		{"default scope, no project", mem("tabs are four columns wide"), memory.ScopeDefault, false},
	}
	ids := make([]string, len(cases))
	for i, tc := range cases {
		m := mustPut(t, off, tc.m)
		if tc.scope != memory.ScopeDefault {
			if _, err := off.Update(ctx, m.ID, func(m *memory.Memory) error { m.Scope = tc.scope; return nil }); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		ids[i] = m.ID
	}
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}

	s := openTeam(t, dir) // team memory on
	sent := mem("the on-call rota is in the team calendar")
	sent.Scope = memory.ScopeTeam
	sent = mustPut(t, s, sent)
	es, _, err := s.Outbox(ctx, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("Outbox = %d entries, %v", len(es), err)
	}
	es[0].Accepted = true
	if err := s.AckOutbox(ctx, es, nil); err != nil { // the team took it
		t.Fatal(err)
	}
	waiting := mem("the linter runs before every commit")
	waiting.Scope = memory.ScopeTeam
	waiting = mustPut(t, s, waiting)

	n, err := s.EnqueueTeamScoped(ctx)
	if err != nil {
		t.Fatal(err)
	}
	queued, _ := outboxState(t, s)
	want := map[string]string{waiting.ID: "put"}
	for i, tc := range cases {
		if tc.want {
			want[ids[i]] = "put"
		}
	}
	if n != len(want)-1 || !reflect.DeepEqual(queued, want) {
		t.Fatalf("EnqueueTeamScoped = %d, outbox %v; want %d, %v", n, queued, len(want)-1, want)
	}
	if queued[sent.ID] != "" {
		t.Fatalf("the memory the team took was queued again")
	}
	// Once: a second call (a restart before the push, or after it) finds
	// their bases and queues nothing.
	if n, err := s.EnqueueTeamScoped(ctx); err != nil || n != 0 {
		t.Fatalf("second EnqueueTeamScoped = %d, %v; want 0", n, err)
	}
	es, ds, err := s.Outbox(ctx, 0)
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
	if err := s.AckOutbox(ctx, es, dids); err != nil {
		t.Fatal(err)
	}
	if n, err := s.EnqueueTeamScoped(ctx); err != nil || n != 0 {
		t.Fatalf("EnqueueTeamScoped after the push = %d, %v; want 0", n, err)
	}
}

// TestEnqueueTeamScopedWithoutPolicy: a store without a team policy (team
// memory off) queues nothing and says why.
func TestEnqueueTeamScopedWithoutPolicy(t *testing.T) {
	s := openTest(t, t.TempDir())
	if _, err := s.EnqueueTeamScoped(context.Background()); err == nil {
		t.Fatal("EnqueueTeamScoped without a policy: no error")
	}
}
