package teamsync

import (
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// TestSharedWhileOff: memories the user shared with the team (scope team)
// while team memory was off reach the team at the first connection once it
// is on, and the other member pulls them; a second start pushes nothing
// again; a personal memory never reaches the team, nor does a default-scope
// one written while off (it follows the team's policy at its next write,
// or push --all, as before).
func TestSharedWhileOff(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	dir := t.TempDir()
	share := []string{"shop"}

	// Team memory off: the store has no team policy, so no outbox.
	off, err := store.Open(ctx, store.Options{Dir: dir, Model: words{}.Model(), Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	put := func(text, project string, sc memory.Scope) memory.Memory {
		t.Helper()
		m, err := off.Put(ctx, memory.Memory{Text: text, Project: project, Type: memory.TypeProject, Embedding: embedOne(t, text)})
		if err != nil {
			t.Fatal(err)
		}
		if sc == memory.ScopeDefault {
			return m
		}
		// memtray scope ID SCOPE / Share with team, as the daemon does.
		m, err = off.Update(ctx, m.ID, func(m *memory.Memory) error { m.Scope = sc; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	shared := put("the garden's sensors report every ten minutes", "garden", memory.ScopeTeam)
	personal := put("my shop login is kept in the password manager", "shop", memory.ScopePersonal)
	byDefault := put("the shop's invoices are numbered by year", "shop", memory.ScopeDefault)
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}

	// Team memory on: a daemon with the policy, its syncer driven by hand.
	start := func() (*store.Store, *Syncer) { return startManual(t, dir, tdb.url(roles["alice"]), share) }
	st, sy := start()
	r, err := sy.PushNow(ctx)
	if err != nil || r.Pushed != 1 || r.Refused != 0 {
		t.Fatalf("first push = %+v, %v: want the memory shared while off pushed, alone", r, err)
	}
	got := teamTexts(t, admin)
	if got[shared.ID] != shared.Text || len(got) != 1 {
		t.Fatalf("the team holds %v, want only %s", got, shared.ID)
	}
	sy.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), share)
	polltest.Eventually(t, "b pulled the memory shared while off", converged(t, map[string]string{shared.ID: shared.Text}, b))

	// A second start queues and pushes nothing again.
	st, sy = start()
	defer func() { sy.Close(); _ = st.Close() }()
	r, err = sy.PushNow(ctx)
	if err != nil || r != (PushReport{}) {
		t.Fatalf("second start's push = %+v, %v: want nothing pushed", r, err)
	}
	if n, err := st.OutboxLen(); err != nil || n != 0 {
		t.Fatalf("outbox holds %d (%v) after the second start's push", n, err)
	}
	for _, m := range []memory.Memory{personal, byDefault} {
		if got := teamTexts(t, admin); got[m.ID] != "" {
			t.Fatalf("the team holds %s (%q), which was not shared", m.ID, m.Text)
		}
	}
}

// startManual opens the store in dir with team memory on (projects share)
// and a syncer that connects as url, driven by hand (no loop): a push
// pushes only what the call does, and nothing pulls.
func startManual(t *testing.T, dir, url string, share []string) (*store.Store, *Syncer) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Dir: dir, Model: words{}.Model(), Dim: dim, Shared: Shared(share)})
	if err != nil {
		t.Fatal(err)
	}
	sy, err := New(Options{Store: st, Embedder: words{}, Projects: share, MaxBackoff: 300 * time.Millisecond,
		Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, url) }})
	if err != nil {
		t.Fatal(err)
	}
	return st, sy
}

// TestReSharedWhileOff: a team memory made personal (the team deleted it)
// and shared again while team memory was off reaches the team again once
// it is on. (Before the base was dropped with the accepted delete, the
// base left from its first push said the team had it, and nothing pushed
// it.)
func TestReSharedWhileOff(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	dir := t.TempDir()
	url := tdb.url(roles["alice"])
	// Shared, then made personal, pushed by hand and stopped before any
	// pull (a pull of its own delete would drop the base too).
	st, sy := startManual(t, dir, url, nil)
	text := "the garden's sensors report every ten minutes"
	m, err := st.Put(ctx, memory.Memory{Text: text, Project: "garden", Type: memory.TypeProject, Scope: memory.ScopeTeam, Embedding: embedOne(t, text)})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []memory.Scope{memory.ScopeTeam, memory.ScopePersonal} {
		if _, err := st.Update(ctx, m.ID, func(m *memory.Memory) error { m.Scope = sc; return nil }); err != nil {
			t.Fatal(err)
		}
		if r, err := sy.PushNow(ctx); err != nil || r.Refused != 0 {
			t.Fatalf("push after the move to %q = %+v, %v", sc, r, err)
		}
	}
	if got := teamTexts(t, admin); got[m.ID] != "" {
		t.Fatalf("the team holds %v after the move to personal", got)
	}
	sy.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	off, err := store.Open(ctx, store.Options{Dir: dir, Model: words{}.Model(), Dim: dim}) // team memory off
	if err != nil {
		t.Fatal(err)
	}
	if _, err := off.Update(ctx, m.ID, func(m *memory.Memory) error { m.Scope = memory.ScopeTeam; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}
	st, sy = startManual(t, dir, url, nil)
	defer func() { sy.Close(); _ = st.Close() }()
	if r, err := sy.PushNow(ctx); err != nil || r.Pushed != 1 {
		t.Fatalf("push after team memory came on = %+v, %v; want the memory shared again pushed", r, err)
	}
	if got := teamTexts(t, admin); got[m.ID] != text {
		t.Fatalf("the team holds %v, want the memory shared again", got)
	}
	// The pull of the team's delete (of this machine's move to personal)
	// leaves the memory shared again: its restore was pushed after it.
	if _, err := sy.PullNow(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(ctx, m.ID); err != nil || got.Scope != memory.ScopeTeam {
		t.Fatalf("after the pull: %+v, %v", got.Scope, err)
	}
}
