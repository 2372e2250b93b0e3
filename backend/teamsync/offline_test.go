package teamsync

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// offNode is a member's daemon driven by hand (no loop, project "shop"
// shared) that whileOff turns off and on again.
func offNode(t *testing.T, name, url string) *node {
	t.Helper()
	n := &node{name: name, dir: t.TempDir(), url: url, share: []string{"shop"}}
	openManual(t, n)
	t.Cleanup(func() {
		n.sy.Close()
		if err := n.st.Close(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// openManual opens n's store with team memory on and a syncer without its
// loop; its first push connects, which runs the first connection's pass.
func openManual(t *testing.T, n *node) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Dir: n.dir, Model: words{}.Model(), Dim: dim, Shared: Shared(n.share)})
	if err != nil {
		t.Fatal(err)
	}
	n.st = st
	n.sy = newManualSyncer(t, n)
}

// whileOff stops n, runs f (nil: nothing) on its store opened with team
// memory off (no policy, so no outbox: as a daemon with team.share false),
// and starts n again with team memory on.
func whileOff(t *testing.T, n *node, f func(st *store.Store)) {
	t.Helper()
	n.sy.Close()
	if err := n.st.Close(); err != nil {
		t.Fatal(err)
	}
	off, err := store.Open(context.Background(), store.Options{Dir: n.dir, Model: words{}.Model(), Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	if f != nil {
		f(off)
	}
	if err := off.Close(); err != nil {
		t.Fatal(err)
	}
	openManual(t, n)
}

// change writes f onto memory id of st (a store with team memory off).
func change(t *testing.T, st *store.Store, id string, f func(m *memory.Memory)) {
	t.Helper()
	if _, err := st.Update(context.Background(), id, func(m *memory.Memory) error { f(m); return nil }); err != nil {
		t.Fatal(err)
	}
}

// trash moves memory id of st to its trash, as a delete by the user does.
func trash(t *testing.T, st *store.Store, id string) {
	t.Helper()
	if err := st.Apply(context.Background(), store.Batch{Trash: []store.TrashRequest{{ID: id, Reason: "deleted"}}}); err != nil {
		t.Fatal(err)
	}
}

// sendsNothing restarts n with nothing changed while off and checks that
// its first push sends nothing: what the team answered is not sent again.
func sendsNothing(t *testing.T, n *node, what string) {
	t.Helper()
	whileOff(t, n, nil)
	r, err := n.sy.PushNow(context.Background())
	if err != nil || r != (PushReport{}) {
		t.Fatalf("%s: the start's push = %+v, %v; want nothing sent", what, r, err)
	}
	if k, err := n.st.OutboxLen(); err != nil || k != 0 {
		t.Fatalf("%s: %d waiting (%v)", what, k, err)
	}
}

// liveScope is the scope of n's live memory id ("gone" when not live).
func liveScope(t *testing.T, n *node, id string) memory.Scope {
	t.Helper()
	m, err := n.st.Get(context.Background(), id)
	if err != nil {
		return "gone"
	}
	return m.Scope
}

// inTrash says whether memory id is in n's trash.
func inTrash(t *testing.T, n *node, id string) bool {
	t.Helper()
	tr, err := n.st.TrashGet(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	_, ok := tr[id]
	return ok
}

// TestMadePersonalWhileOff: alice makes two team memories personal while
// team memory is off on her machine, her own and one of bob's. Once it is
// on, her first connection withdraws hers from the team, as a move to
// personal made online does (bob's machine moves it to the trash at its
// next pull), and the team refuses to withdraw bob's (his memory stays in
// the team, her copy stays personal here, the refusal listed). Before,
// nothing was sent: the team kept her memory and bob kept using it. A
// restart sends nothing again (the refused move is not sent at every
// start), nor does one after her personal copy took bob's next edit.
func TestMadePersonalWhileOff(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	a := offNode(t, "a", tdb.url(roles["alice"]))
	b := offNode(t, "b", tdb.url(roles["bob"]))
	mine := a.write(t, "the shop's coupons expire after thirty days", "shop", memory.TypeProject)
	theirs := b.write(t, "the shop's stock is counted on the first Monday", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	mustPush(t, b, 0)
	mustPull(t, a)
	mustPull(t, b)

	whileOff(t, a, func(st *store.Store) {
		for _, id := range []string{mine.ID, theirs.ID} {
			change(t, st, id, func(m *memory.Memory) { m.Scope = memory.ScopePersonal })
		}
	})
	mustPush(t, a, 1) // bob's: refused
	got := teamTexts(t, admin)
	if got[mine.ID] != "" || got[theirs.ID] != theirs.Text {
		t.Fatalf("the team holds %v: want alice's memory withdrawn and bob's kept", got)
	}
	if st := a.sy.Status(); len(st.Refused) != 1 || st.Refused[0].ID != theirs.ID || st.Refused[0].Op != "delete" {
		t.Fatalf("a's refusals %+v, want the delete of bob's memory", st.Refused)
	}
	mustPull(t, b)
	if sc := liveScope(t, b, mine.ID); sc != "gone" || !inTrash(t, b, mine.ID) {
		t.Fatalf("b's copy of alice's memory: %q, in the trash %v; want it in the trash", sc, inTrash(t, b, mine.ID))
	}
	mustPull(t, a)
	for _, id := range []string{mine.ID, theirs.ID} {
		if sc := liveScope(t, a, id); sc != memory.ScopePersonal {
			t.Fatalf("a's %s is %q, want personal", id, sc)
		}
	}
	sendsNothing(t, a, "a restart")

	// Bob edits his memory: alice's personal copy takes his text and stays
	// personal, and her next start sends nothing for it.
	edit(t, b, theirs.ID, "the shop's stock is counted on the first Monday of the quarter")
	mustPush(t, b, 0)
	mustPull(t, a)
	if m, err := a.st.Get(ctx, theirs.ID); err != nil || m.Text != "the shop's stock is counted on the first Monday of the quarter" || m.Scope != memory.ScopePersonal {
		t.Fatalf("a's copy of bob's memory: %+v, %v", m, err)
	}
	sendsNothing(t, a, "a restart after the pull")
	if n := refusalsOf(a, theirs.ID); n != 1 {
		t.Fatalf("a lists %d refusals of bob's memory, want 1", n)
	}
}

// TestEditedWhileOff: alice edits three team memories while team memory
// is off on her machine (a); her other machine (a2) edited two of them
// online meanwhile. Once it is on, her first connection pushes each edit
// with the base it was made on, and the team decides as for an edit made
// online: one a2 did not touch is taken (bob pulls it), a change of
// another field (the importance) is merged onto a2's text, and a text a2
// changed too is refused as stale, kept in a's trash as a conflict copy
// and listed, a2 being told. Before, none was pushed until its next write
// or push --all. A restart sends nothing again.
func TestEditedWhileOff(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	a := offNode(t, "a", tdb.url(roles["alice"]))
	a2 := offNode(t, "a2", tdb.url(roles["alice"]))
	b := offNode(t, "b", tdb.url(roles["bob"]))
	plain := a.write(t, "the shop's newsletter goes out on Tuesdays", "shop", memory.TypeProject)
	merged := a.write(t, "the shop's search index is rebuilt nightly", "shop", memory.TypeProject)
	both := a.write(t, "the shop's returns are accepted for two weeks", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	mustPull(t, a2)
	mustPull(t, b)
	const (
		plainText  = "the shop's newsletter goes out on Tuesdays and Fridays"
		mergedText = "the shop's search index is rebuilt every six hours"
		theirText  = "the shop's returns are accepted for four weeks"
		mineText   = "the shop's returns are accepted for three weeks"
	)
	edit(t, a2, merged.ID, mergedText)
	edit(t, a2, both.ID, theirText)
	mustPush(t, a2, 0)

	whileOff(t, a, func(st *store.Store) {
		change(t, st, plain.ID, func(m *memory.Memory) { m.Text, m.Embedding = plainText, embedOne(t, plainText) })
		change(t, st, merged.ID, func(m *memory.Memory) { m.Importance = 0.2 }) // a decay run by hand, say
		change(t, st, both.ID, func(m *memory.Memory) { m.Text, m.Embedding = mineText, embedOne(t, mineText) })
	})
	mustPush(t, a, 1) // both: refused as stale
	want := map[string]string{plain.ID: plainText, merged.ID: mergedText, both.ID: theirText}
	if got := teamTexts(t, admin); !maps.Equal(got, want) {
		t.Fatalf("the team holds %v, want %v", got, want)
	}
	if tm, err := admin.Get(ctx, merged.ID); err != nil || tm.Importance != 0.2 {
		t.Fatalf("the team's merged memory has importance %v (%v), want a's 0.2 on a2's text", tm.Importance, err)
	}
	mustPull(t, a)
	mustPull(t, a2)
	mustPull(t, b)
	for _, n := range []*node{a, a2, b} {
		got := n.texts(t)
		if !maps.Equal(got, want) {
			t.Fatalf("%s holds %v, want %v", n.name, got, want)
		}
		if m, err := n.st.Get(ctx, merged.ID); err != nil || m.Importance != 0.2 {
			t.Fatalf("%s's merged memory has importance %v (%v), want 0.2", n.name, m.Importance, err)
		}
	}
	if cp := conflictCopy(t, a, both.ID); cp.Memory.Text != mineText {
		t.Fatalf("a's conflict copy holds %q, want its edit %q", cp.Memory.Text, mineText)
	}
	if st := a.sy.Status(); len(st.Refused) != 1 || st.Refused[0].ID != both.ID || st.Refused[0].Outcome != refusedStale || st.Refused[0].Copy == "" {
		t.Fatalf("a's refusals %+v, want the stale edit of %s with its copy", st.Refused, both.ID)
	}
	told := a2.sy.Status().Told
	if !slices.ContainsFunc(told, func(x Told) bool { return x.ID == both.ID }) || !slices.ContainsFunc(told, func(x Told) bool { return x.ID == merged.ID }) {
		t.Fatalf("a2 was told %+v, want the refusal of %s and the merge of %s", told, both.ID, merged.ID)
	}
	sendsNothing(t, a, "a restart")
}

// TestDeletedWhileOff: alice deletes four team memories while team memory
// is off on her machine (a): two of hers (one to the trash, one purged),
// one her other machine (a2) edited online meanwhile, and one of bob's.
// Once it is on, her first connection pushes each delete as a delete made
// online: hers leave the team (bob's machine moves them to its trash);
// the one edited meanwhile is refused as stale and comes back to a with
// a2's edit; bob's is refused as his, and stays in a's trash only. Before,
// none reached the team. A restart sends nothing again.
func TestDeletedWhileOff(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	a := offNode(t, "a", tdb.url(roles["alice"]))
	a2 := offNode(t, "a2", tdb.url(roles["alice"]))
	b := offNode(t, "b", tdb.url(roles["bob"]))
	trashed := a.write(t, "the shop's gift cards never expire", "shop", memory.TypeProject)
	purged := a.write(t, "the shop's old catalogue is archived in March", "shop", memory.TypeProject)
	raced := a.write(t, "the shop's invoices are sent on the fifth", "shop", memory.TypeProject)
	theirs := b.write(t, "the shop's parcels leave before noon", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	mustPush(t, b, 0)
	for _, n := range []*node{a, a2, b} {
		mustPull(t, n)
	}
	const racedText = "the shop's invoices are sent on the first working day"
	edit(t, a2, raced.ID, racedText)
	mustPush(t, a2, 0)

	whileOff(t, a, func(st *store.Store) {
		trash(t, st, trashed.ID)
		if err := st.Delete(ctx, purged.ID); err != nil {
			t.Fatal(err)
		}
		trash(t, st, raced.ID)
		trash(t, st, theirs.ID)
	})
	mustPush(t, a, 2) // raced: stale; theirs: bob's
	want := map[string]string{raced.ID: racedText, theirs.ID: theirs.Text}
	if got := teamTexts(t, admin); !maps.Equal(got, want) {
		t.Fatalf("the team holds %v, want %v", got, want)
	}
	if m, err := a.st.Get(ctx, raced.ID); err != nil || m.Text != racedText {
		t.Fatalf("a's copy of the memory edited meanwhile: %q, %v; want it back with a2's edit", m.Text, err)
	}
	if liveScope(t, a, theirs.ID) != "gone" || !inTrash(t, a, theirs.ID) {
		t.Fatalf("a's copy of bob's memory is not in a's trash only")
	}
	refused := map[string]string{}
	for _, r := range a.sy.Status().Refused {
		refused[r.ID] = r.Outcome
	}
	if refused[raced.ID] != refusedStaleDelete || refused[theirs.ID] != refusedDelete || len(refused) != 2 {
		t.Fatalf("a's refusals %v, want the stale delete of %s and the delete of bob's %s", refused, raced.ID, theirs.ID)
	}
	mustPull(t, b)
	for _, id := range []string{trashed.ID, purged.ID} {
		if liveScope(t, b, id) != "gone" || !inTrash(t, b, id) {
			t.Fatalf("b's copy of %s is not in b's trash", id)
		}
	}
	sendsNothing(t, a, "a restart")
}
