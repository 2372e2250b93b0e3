package store

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// TestTeamBase: the outbox entry of a team memory carries the team's
// version its copy is based on (OutboxEntry.Base): the one ApplyTeam last
// wrote, kept while a write of it waits (a put left to the push, a second
// edit), the pushed version once the team holds it as pushed (an entry
// acknowledged as Accepted), forgotten at the team's delete; a copy
// without one (a store from before bases) takes the record before its
// first write, and push --all (EnqueueShared) the record as it is, unless
// a write of it waits.
func TestTeamBase(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	update := func(id string, f func(m *memory.Memory)) {
		t.Helper()
		if _, err := s.Update(ctx, id, func(m *memory.Memory) error { f(m); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	entry := func(id string) OutboxEntry {
		t.Helper()
		es, _, err := s.Outbox(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.ID == id {
				return e
			}
		}
		t.Fatalf("no outbox entry of %s", id)
		return OutboxEntry{}
	}
	wantBase := func(what, id string, want *memory.Memory) {
		t.Helper()
		got := entry(id).Base
		switch {
		case want == nil && got != nil:
			t.Fatalf("%s: base %+v, want none", what, *got)
		case want != nil && (got == nil || *got != BaseOf(*want)):
			t.Fatalf("%s: base %+v, want %+v", what, got, BaseOf(*want))
		}
	}
	ackEntry := func(e OutboxEntry, accepted bool) {
		t.Helper()
		e.Accepted = accepted
		if err := s.AckOutbox(ctx, []OutboxEntry{e}, nil); err != nil {
			t.Fatal(err)
		}
	}
	ack := func(id string, accepted bool) { t.Helper(); ackEntry(entry(id), accepted) }

	r := teamMem("the release branch is cut on Thursdays")
	r.ID, r.CreatedAt, r.UpdatedAt, r.Scope = "r1", t0, t0, memory.ScopeTeam
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{r}}); err != nil {
		t.Fatal(err)
	}
	pulled, _ := s.Get(ctx, "r1")
	update("r1", func(m *memory.Memory) { m.Importance = 0.3 })
	wantBase("a write of a pulled copy", "r1", &pulled)
	update("r1", func(m *memory.Memory) { m.Kind = memory.KindDecision })
	wantBase("a second write waiting", "r1", &pulled)
	newer := r
	newer.Text, newer.Embedding = "the release branch is cut on Fridays", testEmb.vec("release Fridays")
	if res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{newer}}); err != nil || res.Kept != 1 {
		t.Fatalf("ApplyTeam = %+v, %v: want the put kept", res, err)
	}
	wantBase("a put left to the push", "r1", &pulled)
	read := entry("r1")
	update("r1", func(m *memory.Memory) { m.Type = memory.TypeReference }) // after the push read it
	ackEntry(read, true)
	wantBase("acknowledged as pushed, a write since", "r1", &read.Memory)
	ack("r1", true)
	local, _ := s.Get(ctx, "r1")
	update("r1", func(m *memory.Memory) { m.Importance = 0.2 })
	wantBase("a write after the acknowledgement", "r1", &local)
	if _, err := s.ApplyTeam(ctx, TeamChanges{Delete: []TeamDelete{{ID: "r1", Reason: "deleted by the team"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.view(func(tx *bolt.Tx) error {
		if b := teamBase(tx, []byte("r1")); b != nil {
			t.Fatalf("the team's delete kept the base %+v", *b)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// A copy without a base: its record before the first write.
	m := mustPut(t, s, teamMem("the nightly build publishes to staging"))
	ack(m.ID, false)
	before, _ := s.Get(ctx, m.ID)
	update(m.ID, func(x *memory.Memory) { x.Importance = 0.9 })
	wantBase("seeded at the first write", m.ID, &before)
	// push --all: as it is when nothing waits; not when a write waits.
	n := mustPut(t, s, teamMem("the docs site deploys on merge"))
	ack(n.ID, false)
	if _, err := s.EnqueueShared(ctx); err != nil {
		t.Fatal(err)
	}
	wantBase("push --all, nothing waiting", n.ID, &n)
	w := mustPut(t, s, teamMem("the linter runs before the tests"))
	if _, err := s.EnqueueShared(ctx); err != nil {
		t.Fatal(err)
	}
	wantBase("push --all of a new memory waiting", w.ID, nil)
	// A delete carries the base (the team refuses it once the text
	// changed), a move to the personal scope not (it leaves regardless).
	ack(n.ID, true)
	ack(m.ID, true)
	if err := s.Delete(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	wantBase("a delete", n.ID, &n)
	update(m.ID, func(x *memory.Memory) { x.Scope = memory.ScopePersonal })
	if e := entry(m.ID); !e.Delete || e.Base != nil {
		t.Fatalf("a move to personal: %+v, want a delete without a base", e)
	}
}
