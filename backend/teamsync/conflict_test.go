package teamsync

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// conflictCopy is the conflict copy of memory id in n's trash (it fails
// the test when there is not exactly one).
func conflictCopy(t *testing.T, n *node, id string) store.TrashedMemory {
	t.Helper()
	tr, err := n.st.Trash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []store.TrashedMemory
	for _, m := range tr {
		if m.Conflict != nil && m.Conflict.Of == id {
			out = append(out, m)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%s's trash holds %d conflict copies of %s, want 1: %+v", n.name, len(out), id, tr)
	}
	return out[0]
}

// TestStaleEditKeptAsConflictCopy: a and b, two machines of one member,
// edit the text of one team memory before either saw the other's; b
// pushes first. a's edit is refused as stale and a takes b's version:
// a's words were then kept nowhere. They are now a conflict copy in a's
// trash, marked with the memory and the team's text it lost to, and
// named by the refusal in a's status. Restoring the copy (one action, as
// from the trash in the UI or the CLI) makes it a new edit of the team's
// version: the fields a changed (its text, its importance) go onto b's
// version, b's change of another field (the kind) stays, the edit pushes
// as any edit does, and b gets it.
func TestStaleEditKeptAsConflictCopy(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	a := manualNode(t, tdb.url(roles["alice"]))
	b := manualNode(t, tdb.url(roles["alice"]))
	a.name = "a"
	m := a.write(t, "the staging database is reset on Sundays", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	mustPull(t, b)
	const theirs = "the staging database is reset every night"
	const mine = "the staging database is reset on Sundays at six"
	if _, err := b.st.Update(ctx, m.ID, func(x *memory.Memory) error {
		x.Text, x.Embedding = theirs, embedOne(t, theirs)
		x.Kind, x.KindOrigin = memory.KindDecision, memory.KindGiven
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, b, 0)
	if _, err := a.st.Update(ctx, m.ID, func(x *memory.Memory) error {
		x.Text, x.Embedding = mine, embedOne(t, mine)
		x.Importance = 0.9
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, 1)
	if got, err := a.st.Get(ctx, m.ID); err != nil || got.Text != theirs {
		t.Fatalf("a holds %q (%v), want the team's %q", got.Text, err, theirs)
	}
	cp := conflictCopy(t, a, m.ID)
	if cp.Memory.Text != mine || cp.Memory.Importance != 0.9 || cp.Conflict.Theirs != theirs || cp.Memory.ID == m.ID {
		t.Fatalf("the conflict copy: %+v (%+v), want a's edit beside the team's text", cp.Memory, cp.Conflict)
	}
	st := a.sy.Status()
	if len(st.Refused) != 1 || st.Refused[0].Copy != cp.Memory.ID || st.Refused[0].Outcome != refusedStale {
		t.Fatalf("a's refusals: %+v, want the stale edit naming its copy %s", st.Refused, cp.Memory.ID)
	}
	// Not recalled: the copy is in the trash, not among the memories.
	if _, err := a.st.Get(ctx, cp.Memory.ID); err == nil {
		t.Fatal("the conflict copy is a live memory")
	}
	mustPull(t, a)
	if err := a.st.Restore(ctx, cp.Memory.ID); err != nil {
		t.Fatal(err)
	}
	if tr, err := a.st.TrashGet(ctx, []string{cp.Memory.ID}); err != nil || len(tr) != 0 {
		t.Fatalf("the copy is still in the trash (%v)", err)
	}
	mustPush(t, a, 0)
	mustPull(t, b)
	tm, err := admin.Get(ctx, m.ID)
	if err != nil || tm.Text != mine || tm.Importance != 0.9 || tm.Kind != memory.KindDecision {
		t.Fatalf("the team holds %q, %v, %s (%v): want a's text and importance on b's kind", tm.Text, tm.Importance, tm.Kind, err)
	}
	for _, n := range []*node{a, b} {
		got, err := n.st.Get(ctx, m.ID)
		if err != nil || got.Text != mine || got.Importance != 0.9 || got.Kind != memory.KindDecision {
			t.Fatalf("%s holds %q, %v, %s (%v)", n.name, got.Text, got.Importance, got.Kind, err)
		}
	}
	if k := refusalsOf(a, m.ID); k != 1 {
		t.Fatalf("a lists %d refusals of it, want the first only", k)
	}
}

// TestConflictCopyOfDeletedMemory: the memory a conflict copy was kept
// for is deleted since; restoring the copy brings a's version back as a
// memory of its own (a new team memory), not onto nothing.
func TestConflictCopyOfDeletedMemory(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	a := manualNode(t, tdb.url(roles["alice"]))
	b := manualNode(t, tdb.url(roles["alice"]))
	a.name = "a"
	m := a.write(t, "the release notes live in the wiki", "shop", memory.TypeProject)
	mustPush(t, a, 0)
	mustPull(t, b)
	edit(t, b, m.ID, "the release notes live in the repository")
	mustPush(t, b, 0)
	const mine = "the release notes live in the wiki, under Releases"
	edit(t, a, m.ID, mine)
	mustPush(t, a, 1)
	cp := conflictCopy(t, a, m.ID)
	if err := b.st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: m.ID, Reason: "deleted by the user"}}}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, b, 0)
	mustPull(t, a)
	if err := a.st.Restore(ctx, cp.Memory.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := a.st.Get(ctx, cp.Memory.ID); err != nil || got.Text != mine {
		t.Fatalf("a holds %q (%v) under the copy's id, want its version back", got.Text, err)
	}
	mustPush(t, a, 0)
	if got := teamTexts(t, admin)[cp.Memory.ID]; got != mine {
		t.Fatalf("the team holds %q under the copy's id, want a's version", got)
	}
}

// editOldWay writes an edit of memory id on n as a memtray from before
// bases (schema 3) did: the outbox entry is queued and no base is kept
// (the team_base bucket did not exist), then n starts again on this
// memtray.
func editOldWay(t *testing.T, n *node, id, text string) {
	t.Helper()
	edit(t, n, id, text)
	n.sy.Close()
	if err := n.st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(n.dir, "memtray.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("outbox")).Get([]byte(id)) == nil {
			t.Error("the edit queued nothing")
		}
		return tx.DeleteBucket([]byte("team_base"))
	})
	if err2 := db.Close(); err == nil {
		err = err2
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), store.Options{Dir: n.dir, Model: words{}.Model(), Dim: dim, Shared: Shared(n.share)})
	if err != nil {
		t.Fatal(err)
	}
	n.st = st
	n.sy = newManualSyncer(t, n)
	t.Cleanup(func() {
		n.sy.Close()
		_ = st.Close()
	})
}

// TestUnbasedPutQueuedBeforeUpgrade: an edit queued in a's outbox by a
// memtray from before bases carries none. Pushed after the upgrade, it
// was decided by the clock: newer than b's edit pushed meanwhile, it
// replaced it for everyone without a word. With no base, which came
// first cannot be told: the team keeps its version, a takes it and keeps
// its own as a conflict copy, listed; restored, it is a new edit. An
// edit queued the old way that the team holds already (the same text) is
// taken as it is, nothing refused.
func TestUnbasedPutQueuedBeforeUpgrade(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	t.Run("the team changed it", func(t *testing.T) {
		a := manualNode(t, tdb.url(roles["alice"]))
		b := manualNode(t, tdb.url(roles["alice"]))
		a.name = "a"
		m := a.write(t, "the CDN cache is purged by hand", "shop", memory.TypeProject)
		mustPush(t, a, 0)
		mustPull(t, b)
		const theirs = "the CDN cache is purged by the deploy script"
		edit(t, b, m.ID, theirs)
		mustPush(t, b, 0)
		const mine = "the CDN cache is purged by hand after a deploy" // later by the clock
		editOldWay(t, a, m.ID, mine)
		mustPush(t, a, 1)
		mustPull(t, a)
		mustPull(t, b)
		if got := teamTexts(t, admin)[m.ID]; got != theirs {
			t.Fatalf("the team holds %q, want b's %q kept", got, theirs)
		}
		for _, n := range []*node{a, b} {
			if got, err := n.st.Get(ctx, m.ID); err != nil || got.Text != theirs {
				t.Fatalf("%s holds %q (%v), want b's", n.name, got.Text, err)
			}
		}
		cp := conflictCopy(t, a, m.ID)
		if cp.Memory.Text != mine {
			t.Fatalf("the conflict copy holds %q, want a's %q", cp.Memory.Text, mine)
		}
		if st := a.sy.Status(); len(st.Refused) != 1 || st.Refused[0].Outcome != refusedUnbased || st.Refused[0].Copy != cp.Memory.ID {
			t.Fatalf("a's refusals: %+v", st.Refused)
		}
		if err := a.st.Restore(ctx, cp.Memory.ID); err != nil {
			t.Fatal(err)
		}
		mustPush(t, a, 0)
		if got := teamTexts(t, admin)[m.ID]; got != mine {
			t.Fatalf("the team holds %q after the restore, want a's %q", got, mine)
		}
	})
	t.Run("the team holds it already", func(t *testing.T) {
		a := manualNode(t, tdb.url(roles["alice"]))
		b := manualNode(t, tdb.url(roles["alice"]))
		a.name = "a"
		m := a.write(t, "the sitemap is rebuilt at midnight", "shop", memory.TypeProject)
		mustPush(t, a, 0)
		mustPull(t, b)
		const both = "the sitemap is rebuilt at midnight and at noon"
		edit(t, b, m.ID, both)
		mustPush(t, b, 0)
		editOldWay(t, a, m.ID, both)
		mustPush(t, a, 0)
		if got := teamTexts(t, admin)[m.ID]; got != both {
			t.Fatalf("the team holds %q", got)
		}
		if tr, err := a.st.Trash(ctx); err != nil || len(tr) != 0 {
			t.Fatalf("a's trash: %+v (%v), want nothing", tr, err)
		}
	})
}

// TestToldOfConflicts: a's write of a team memory meets b's edit, pushed
// first and not pulled by a: merged onto it (another field), refused as
// stale (the text too) or, a delete, refused. a is told by its push's
// answer; b, whose edit it met, was told nothing. b is now told at its
// next pull, in words (which memory, who, what they changed), kept across
// a restart; c, a third machine that only pulls, and a are not.
func TestToldOfConflicts(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	ctx := context.Background()
	tests := []struct {
		name    string
		write   func(a *node, id string)
		refused int
		words   []string // in b's sentence
	}{
		{"merged", func(a *node, id string) {
			if _, err := a.st.Update(ctx, id, func(m *memory.Memory) error { m.Importance = 0.2; return nil }); err != nil {
				t.Fatal(err)
			}
		}, 0, []string{"you, on another machine, changed the importance of", "kept both changes"}},
		{"refused", func(a *node, id string) { edit(t, a, id, "the mail queue is flushed by a's hand") }, 1,
			[]string{"also changed the text of", "kept yours", "their text: “the mail queue is flushed by a's hand”", "conflict copy"}},
		{"a delete", func(a *node, id string) {
			if err := a.st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: id, Reason: "deleted by the user"}}}); err != nil {
				t.Fatal(err)
			}
		}, 1, []string{"deleted", "kept your edit"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := manualNode(t, tdb.url(roles["alice"]))
			b := manualNode(t, tdb.url(roles["alice"]))
			c := manualNode(t, tdb.url(roles["alice"]))
			a.name, c.name = "a", "c"
			m := a.write(t, "the mail queue is flushed every hour by "+tc.name, "shop", memory.TypeProject)
			mustPush(t, a, 0)
			mustPull(t, b)
			mustPull(t, c)
			theirs := "the mail queue is flushed every ten minutes by " + tc.name
			edit(t, b, m.ID, theirs)
			mustPush(t, b, 0)
			tc.write(a, m.ID)
			mustPush(t, a, tc.refused)
			for _, n := range []*node{a, b, c} {
				mustPull(t, n)
			}
			told := b.sy.Status().Told
			if len(told) != 1 || told[0].ID != m.ID || told[0].Member != roles["alice"] || !strings.Contains(told[0].What, "“"+theirs+"”") {
				t.Fatalf("b was told %+v, want a's write of %s", told, m.ID)
			}
			for _, w := range tc.words {
				if !strings.Contains(told[0].What, w) {
					t.Fatalf("b was told %q, want it to say %q", told[0].What, w)
				}
			}
			for _, n := range []*node{a, c} {
				if got := n.sy.Status().Told; len(got) != 0 {
					t.Fatalf("%s was told %+v, want nothing", n.name, got)
				}
			}
			mustPull(t, b) // read once
			b.sy.Close()
			b.sy = newManualSyncer(t, b)
			if got := b.sy.Status().Told; len(got) != 1 || got[0].What != told[0].What || !got[0].At.Equal(told[0].At) {
				t.Fatalf("after a restart b holds %+v, want %+v", got, told)
			}
			mustPull(t, b)
			if got := b.sy.Status().Told; len(got) != 1 {
				t.Fatalf("after a restart's pull b holds %d, want the one", len(got))
			}
		})
	}
}

// TestSecondEditOfRefusedMemory: a's edit of a team memory is refused as
// stale (b's edit of the text was pushed first), and a's user edits the
// memory again before a takes the team's version (the write lands
// between the push's acknowledgement and the take, or a stop comes in
// between): the second edit is pushed and refused too. Both refused
// edits are kept: in one conflict copy, a's version as the user left it,
// which holds the first edit with the second made on it, and which both
// refusals name. The first copy used to be dropped: the second refusal
// chose a new id, so the first refusal named a copy that never was.
// Restoring the copy puts both edits onto the team's version.
func TestSecondEditOfRefusedMemory(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	const theirs = "the staging database is reset every night"
	tests := []struct {
		name   string
		second func(t *testing.T, a *node, id string) // a's second edit
		text   string                                 // the copy's text (one per case: the team holds one memory per text)
		imp    float64                                // the copy's importance
		stop   bool                                   // a stops between the refusal and the take
	}{
		{"an edit of another field", func(t *testing.T, a *node, id string) { setImportance(t, a, id, 0.9) },
			"the staging database is reset on Sundays at six (0)", 0.9, false},
		{"the text edited again", func(t *testing.T, a *node, id string) {
			edit(t, a, id, "the staging database is reset on Sundays at seven (1)")
		}, "the staging database is reset on Sundays at seven (1)", 0.5, false},
		{"an edit after a stop", func(t *testing.T, a *node, id string) { setImportance(t, a, id, 0.9) },
			"the staging database is reset on Sundays at six (2)", 0.9, true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := manualNode(t, tdb.url(roles["alice"]))
			b := manualNode(t, tdb.url(roles["alice"]))
			a.name = "a"
			m := a.write(t, fmt.Sprintf("the staging database is reset on Sundays (%d)", i), "shop", memory.TypeProject)
			mustPush(t, a, 0)
			mustPull(t, b)
			edit(t, b, m.ID, fmt.Sprintf("%s (%d)", theirs, i))
			mustPush(t, b, 0)
			edit(t, a, m.ID, fmt.Sprintf("the staging database is reset on Sundays at six (%d)", i))
			a.sy.crashAt = func(at string) error {
				if at != crashAfterAck {
					return nil
				}
				a.sy.crashAt = nil
				if tc.stop {
					return errCrash
				}
				tc.second(t, a, m.ID)
				return nil
			}
			if r, err := a.sy.PushNow(ctx); tc.stop != errors.Is(err, errCrash) || (!tc.stop && (err != nil || r.Refused != 1)) {
				t.Fatalf("the first push = %+v, %v: want 1 refused", r, err)
			}
			if tc.stop {
				a.sy.Close()
				a.sy = newManualSyncer(t, a)
				tc.second(t, a, m.ID)
			}
			mustPush(t, a, 1) // the second edit, refused as stale too
			if got, err := a.st.Get(ctx, m.ID); err != nil || got.Text != fmt.Sprintf("%s (%d)", theirs, i) {
				t.Fatalf("a holds %q (%v), want the team's", got.Text, err)
			}
			cp := conflictCopy(t, a, m.ID)
			if cp.Memory.Text != tc.text || cp.Memory.Importance != tc.imp {
				t.Fatalf("the copy holds %q %v, want %q %v", cp.Memory.Text, cp.Memory.Importance, tc.text, tc.imp)
			}
			var named []string
			for _, r := range a.sy.Status().Refused {
				if r.ID == m.ID {
					named = append(named, r.Copy)
				}
			}
			if len(named) != 2 || named[0] != cp.Memory.ID || named[1] != cp.Memory.ID {
				t.Fatalf("the refusals name copies %q, want both %s (the copy in the trash)", named, cp.Memory.ID)
			}
			if err := a.st.Restore(ctx, cp.Memory.ID); err != nil {
				t.Fatal(err)
			}
			mustPush(t, a, 0)
			if tm, err := admin.Get(ctx, m.ID); err != nil || tm.Text != tc.text || tm.Importance != tc.imp {
				t.Fatalf("after the restore the team holds %q %v (%v), want %q %v", tm.Text, tm.Importance, err, tc.text, tc.imp)
			}
		})
	}
}

// setImportance sets id's importance as a user's edit does.
func setImportance(t *testing.T, n *node, id string, v float64) {
	t.Helper()
	if _, err := n.st.Update(context.Background(), id, func(m *memory.Memory) error {
		m.Importance = v
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCopyFor: the copy a stale refusal names is the one an earlier
// refusal of the memory chose while that copy is not made (both edits in
// one copy), and a new one when there was none or it is in the trash
// already (taken: a later conflict has a copy of its own).
func TestCopyFor(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: words{}.Model(), Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sy, err := New(Options{Store: st, Embedder: words{},
		Connect: func(context.Context) (*team.Store, error) { return nil, errors.New("unused") }})
	if err != nil {
		t.Fatal(err)
	}
	m := memory.Memory{ID: st.NewID(), Text: "the copy is in the trash", Type: memory.TypeProject, Project: "shop", Importance: 0.5}
	m.Embedding = embedOne(t, m.Text)
	if _, err := st.Put(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: m.ID, Reason: "a copy made"}}}); err != nil {
		t.Fatal(err)
	}
	pending := st.NewID()
	for _, tc := range []struct {
		name, pending string
		same          bool
	}{{"none", "", false}, {"chosen, not made", pending, true}, {"made already", m.ID, false}} {
		got, err := sy.copyFor(ctx, tc.pending)
		if err != nil || got == "" || (got == tc.pending) != tc.same {
			t.Errorf("%s: copyFor(%q) = %q, %v; want the same id %v", tc.name, tc.pending, got, err, tc.same)
		}
	}
}

// TestSecondEditPutsFieldBack: a's edit of the text is refused as stale
// (b's edit of the text was pushed first), and a's user edits the memory
// again before a takes the team's version, putting the text back as it
// was in the version both edits were made on: the second edit changes no
// field b changed, so it merges (alone, or with another field it changed).
// The version the user left conflicts with nothing, so no conflict copy
// is made (a copy would hold words the user replaced): the first refusal,
// which named the copy it would be, must not name it any more, and says
// that the next edit merged. At d916b52 it named a copy that never was.
func TestSecondEditPutsFieldBack(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	tests := []struct {
		name string
		imp  float64 // the second edit's importance (0.5: unchanged)
	}{
		{"the text alone put back", 0.5},
		{"the text put back and the importance changed", 0.9},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := fmt.Sprintf("the nightly export runs at two (%d)", i)
			theirs := fmt.Sprintf("the nightly export runs at three (%d)", i)
			a := manualNode(t, tdb.url(roles["alice"]))
			b := manualNode(t, tdb.url(roles["alice"]))
			a.name = "a"
			m := a.write(t, orig, "shop", memory.TypeProject)
			mustPush(t, a, 0)
			mustPull(t, b)
			edit(t, b, m.ID, theirs)
			mustPush(t, b, 0)
			edit(t, a, m.ID, fmt.Sprintf("the nightly export runs at four (%d)", i))
			a.sy.crashAt = func(at string) error {
				if at == crashAfterAck {
					a.sy.crashAt = nil
					edit(t, a, m.ID, orig) // the text put back
					if tc.imp != 0.5 {
						setImportance(t, a, m.ID, tc.imp)
					}
				}
				return nil
			}
			mustPush(t, a, 1) // the first edit, refused as stale
			mustPush(t, a, 0) // the second, merged
			tm, err := admin.Get(ctx, m.ID)
			if err != nil || tm.Text != theirs || tm.Importance != tc.imp {
				t.Fatalf("the team holds %q %v (%v), want b's text with a's importance %v", tm.Text, tm.Importance, err, tc.imp)
			}
			if got, err := a.st.Get(ctx, m.ID); err != nil || got.Text != theirs || got.Importance != tc.imp {
				t.Fatalf("a holds %q %v (%v), want the team's", got.Text, got.Importance, err)
			}
			tr, err := a.st.Trash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			inTrash := map[string]bool{}
			for _, c := range tr {
				if c.Conflict != nil && c.Conflict.Of == m.ID {
					t.Errorf("a's trash holds a conflict copy of the version the user replaced: %+v", c.Memory)
				}
				inTrash[c.Memory.ID] = true
			}
			var refusals []Refusal
			for _, r := range a.sy.Status().Refused {
				if r.ID == m.ID {
					refusals = append(refusals, r)
				}
			}
			if len(refusals) != 1 {
				t.Fatalf("a lists %d refusals of the memory, want the first: %+v", len(refusals), refusals)
			}
			r := refusals[0]
			if r.Copy != "" && !inTrash[r.Copy] {
				t.Errorf("the refusal names conflict copy %s, which a's trash does not hold", r.Copy)
			}
			if r.Copy != "" || r.Outcome != refusedThenMerged {
				t.Errorf("the refusal says %q (copy %q), want %q and no copy", r.Outcome, r.Copy, refusedThenMerged)
			}
			// Across a restart, as stored.
			a.sy.Close()
			a.sy = newManualSyncer(t, a)
			for _, r := range a.sy.Status().Refused {
				if r.ID == m.ID && (r.Copy != "" || r.Outcome != refusedThenMerged) {
					t.Errorf("after a restart the refusal says %q (copy %q)", r.Outcome, r.Copy)
				}
			}
		})
	}
}
