package teamsync

import (
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// TestSharedWriteKeepsTeamsEdit: two machines of one member share a team
// memory; b edits its text and pushes; a, which has not pulled b's edit,
// writes a shared field of its copy: the steward's decay of importance,
// a kind or a type change, the steward's undo of an earlier decay, or an
// edit of the text too. Every such write pushed a's older text as the
// newest version (the write moved UpdatedAt), and the team took it with
// no refusal: b's edit was lost for every machine. The push now carries
// the version a's copy was based on, and the team applies it onto that:
// a field b did not touch is merged onto b's text (nothing refused, as a
// field-level merge of the best sync tools does); a's text edit, a true
// conflict, is refused as stale whatever the clocks say (a newer edit is
// refused and listed, never replaced unseen). After both sync, the team
// and both machines hold b's text and a's change of another field.
func TestSharedWriteKeepsTeamsEdit(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	update := func(n *node, id string, f func(m *memory.Memory)) {
		t.Helper()
		if _, err := n.st.Update(ctx, id, func(m *memory.Memory) error { f(m); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var undo memory.Memory // the copy before an earlier decay, for "an undo"
	tests := []struct {
		name    string
		before  func(a, b *node, id string) // before b's edit, both synced after
		write   func(a *node, id string)    // a's write, b's edit not pulled
		refused int                         // of a's push
		field   func(m memory.Memory) any   // the field a changed
		want    any                         // its value everywhere at the end
	}{
		{"the steward's decay", nil, func(a *node, id string) { update(a, id, func(m *memory.Memory) { m.Importance = 0.2 }) }, 0,
			func(m memory.Memory) any { return m.Importance }, 0.2},
		{"a kind change", nil, func(a *node, id string) {
			update(a, id, func(m *memory.Memory) { m.Kind, m.KindOrigin = memory.KindDecision, memory.KindGiven })
		}, 0, func(m memory.Memory) any { return string(m.Kind) + "/" + string(m.KindOrigin) }, "decision/given"},
		{"a type change", nil, func(a *node, id string) { update(a, id, func(m *memory.Memory) { m.Type = memory.TypeReference }) }, 0,
			func(m memory.Memory) any { return m.Type }, memory.TypeReference},
		{"the steward's undo of a decay", func(a, b *node, id string) {
			undo, _ = a.st.Get(ctx, id)
			update(a, id, func(m *memory.Memory) { m.Importance = 0.1 })
		}, func(a *node, id string) {
			if err := a.st.Apply(ctx, store.Batch{Put: []memory.Memory{undo}}); err != nil { // as steward.UndoRun does
				t.Fatal(err)
			}
		}, 0, func(m memory.Memory) any { return m.Importance }, 0.5},
		{"an edit of the text too", nil, func(a *node, id string) { edit(t, a, id, "the backups run at midnight, a's edit") }, 1,
			func(m memory.Memory) any { return m.Importance }, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := manualNode(t, tdb.url(roles["alice"]))
			b := manualNode(t, tdb.url(roles["alice"]))
			a.name = "a"
			m := a.write(t, "the backups run at two by "+tc.name, "shop", memory.TypeProject)
			mustPush(t, a, 0)
			mustPull(t, b)
			if tc.before != nil {
				tc.before(a, b, m.ID)
				mustPush(t, a, 0)
				mustPull(t, b)
			}
			want := "the backups run at four, after the import, by " + tc.name
			edit(t, b, m.ID, want)
			mustPush(t, b, 0)
			tc.write(a, m.ID)
			mustPush(t, a, tc.refused)
			mustPull(t, a)
			mustPull(t, b)
			tm, err := admin.Get(ctx, m.ID)
			if err != nil || tm.Text != want || tc.field(tm.Local()) != tc.want {
				t.Fatalf("the team holds %q with %v (%v), want b's %q with %v", tm.Text, tc.field(tm.Local()), err, want, tc.want)
			}
			for _, n := range []*node{a, b} {
				got, err := n.st.Get(ctx, m.ID)
				if err != nil || got.Text != want || tc.field(got) != tc.want {
					t.Fatalf("%s holds %q with %v (%v), want %q with %v", n.name, got.Text, tc.field(got), err, want, tc.want)
				}
				if k, _ := n.st.OutboxLen(); k != 0 {
					t.Fatalf("%s: %d waiting to be pushed", n.name, k)
				}
			}
			if k := refusalsOf(a, m.ID); k != tc.refused {
				t.Fatalf("a lists %d refusals of it, want %d: %+v", k, tc.refused, a.sy.Status().Refused)
			}
			if tc.refused > 0 && a.sy.Status().Refused[0].Outcome != refusedStale {
				t.Fatalf("a's refusal: %+v, want the stale edit's", a.sy.Status().Refused[0])
			}
			if k := refusalsOf(b, m.ID); k != 0 {
				t.Fatalf("b lists %d refusals of it", k)
			}
		})
	}
}

// TestDeleteRacesEdit: a delete and an edit of one team memory made on
// two machines that had not seen each other's. A delete pushed after the
// other machine's edit of the text is refused as stale: the team keeps
// the edit and the deleting machine gets it back, out of its trash, with
// the refusal listed (the delete removed the edit from the team without
// a word). An edit pushed after the other machine's delete stays deleted
// (a delete is the team's), its copy with the edit moved to the trash
// here, and the status lists it (it said nothing).
func TestDeleteRacesEdit(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	trash := func(n *node, id string) {
		t.Helper()
		if err := n.st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: id, Reason: "deleted by the user"}}}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("a delete after the edit", func(t *testing.T) {
		a := manualNode(t, tdb.url(roles["alice"]))
		b := manualNode(t, tdb.url(roles["alice"]))
		a.name = "a"
		m := a.write(t, "the invoices are mailed on the first", "shop", memory.TypeProject)
		mustPush(t, a, 0)
		mustPull(t, b)
		const want = "the invoices are mailed on the first and the fifteenth"
		edit(t, b, m.ID, want)
		mustPush(t, b, 0)
		trash(a, m.ID)
		mustPush(t, a, 1)
		mustPull(t, a)
		mustPull(t, b)
		if got, err := admin.Get(ctx, m.ID); err != nil || got.Text != want {
			t.Fatalf("the team holds %q (%v), want b's edit", got.Text, err)
		}
		for _, n := range []*node{a, b} {
			if got, err := n.st.Get(ctx, m.ID); err != nil || got.Text != want {
				t.Fatalf("%s holds %q (%v), want b's edit", n.name, got.Text, err)
			}
		}
		if st := a.sy.Status(); len(st.Refused) != 1 || st.Refused[0].Op != "delete" || st.Refused[0].Outcome != refusedStaleDelete {
			t.Fatalf("a's refusals: %+v, want its delete refused as stale", st.Refused)
		}
	})
	t.Run("an edit after the delete", func(t *testing.T) {
		a := manualNode(t, tdb.url(roles["alice"]))
		b := manualNode(t, tdb.url(roles["alice"]))
		a.name = "a"
		m := a.write(t, "the tills are counted at six", "shop", memory.TypeProject)
		mustPush(t, a, 0)
		mustPull(t, b)
		trash(b, m.ID)
		mustPush(t, b, 0)
		const edited = "the tills are counted at six and at noon"
		edit(t, a, m.ID, edited)
		mustPush(t, a, 1)
		mustPull(t, a)
		mustPull(t, b)
		if _, err := admin.Get(ctx, m.ID); err == nil {
			t.Fatal("the team holds it again, want b's delete kept")
		}
		for _, n := range []*node{a, b} {
			if _, err := n.st.Get(ctx, m.ID); !errors.Is(err, memory.ErrNotFound) {
				t.Fatalf("%s holds it (%v), want it deleted", n.name, err)
			}
		}
		tr, err := a.st.TrashGet(ctx, []string{m.ID})
		if err != nil || tr[m.ID].Memory.Text != edited {
			t.Fatalf("a's trash holds %+v (%v), want the edit", tr[m.ID].Memory.Text, err)
		}
		if st := a.sy.Status(); len(st.Refused) != 1 || st.Refused[0].Op != "change" || st.Refused[0].Outcome != refusedDeletedEdit {
			t.Fatalf("a's refusals: %+v, want its edit listed", st.Refused)
		}
	})
}

// TestAppliedReportsChanges: a pull tells Options.Applied (the UI's
// announcements) only of what it changed here: not of a put left to a
// local write waiting in the outbox, nor of a delete of a copy kept
// personal here or of a memory this machine never had. It told of every
// put and delete of the page.
func TestAppliedReportsChanges(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	ctx := context.Background()
	a := manualNode(t, tdb.url(roles["alice"]))
	b := manualNode(t, tdb.url(roles["alice"]))
	kept := a.write(t, "the price list is exported on Fridays", "shop", memory.TypeProject)
	personal := a.write(t, "the shop's theme is built with make theme", "shop", memory.TypeProject)
	changed := a.write(t, "the shop's search is reindexed nightly", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	mustPull(t, b)
	edit(t, b, kept.ID, "the price list is exported on Fridays at noon") // waits in b's outbox
	setScope(t, b, personal.ID, memory.ScopePersonal)
	never := a.write(t, "a memory b never sees", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	edit(t, a, kept.ID, "the price list is exported on Mondays")
	edit(t, a, changed.ID, "the shop's search is reindexed hourly")
	for _, id := range []string{personal.ID, never.ID} {
		if err := a.st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: id, Reason: "deleted by the user"}}}); err != nil {
			t.Fatal(err)
		}
	}
	mustPush(t, a, 0)
	for _, id := range []string{kept.ID, personal.ID, changed.ID, never.ID} {
		b.toldOf(id)
	}
	mustPull(t, b)
	for id, want := range map[string]string{kept.ID: "", personal.ID: "", never.ID: "", changed.ID: "put"} {
		if got := b.toldOf(id); got != want {
			t.Errorf("Applied told of %s %q, want %q", id, got, want)
		}
	}
}
