package teamsync

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// skewed is a machine's clock off by d.
type skewed time.Duration

func (d skewed) Now() time.Time { return time.Now().Add(time.Duration(d)) }

// drained waits until n's outbox is empty and its loop connected.
func drained(t *testing.T, n *node) {
	t.Helper()
	n.sy.Kick()
	polltest.Eventually(t, n.name+"'s outbox drained", func() error {
		if st := n.sy.Status(); st.Outbox != 0 || !st.Connected {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// setScope moves a memory as the daemon's SetScope does.
func setScope(t *testing.T, n *node, id string, sc memory.Scope) {
	t.Helper()
	if _, err := n.st.Update(context.Background(), id, func(m *memory.Memory) error { m.Scope = sc; return nil }); err != nil {
		t.Fatal(err)
	}
	n.sy.Kick()
}

// access counts k accesses of id, as recall does.
func access(t *testing.T, n *node, id string, k int) {
	t.Helper()
	if _, err := n.st.Update(context.Background(), id, func(m *memory.Memory) error { m.AccessCount += k; return nil }); err != nil {
		t.Fatal(err)
	}
	n.sy.Kick()
}

// TestRestoreOfAnothersMemory: a member restoring (from the trash, or by
// a steward undo, which restores the same way) a team memory another
// member deleted. The team refuses (only its owner or an admin may): the
// restore holds on the member's machine alone, as a personal memory, and
// the status says so. A later write of it there must not send it back to
// the trash (it did: the push of a team memory the team holds deleted
// relinks it to nothing). An admin's restore brings it back for everyone.
func TestRestoreOfAnothersMemory(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	o := startNode(t, "owner", t.TempDir(), tdb.url(tdb.owner), []string{"shop"})
	ctx := context.Background()
	m := a.write(t, "the shop's invoices are archived for ten years", "shop", memory.TypeProject)
	for _, n := range []*node{b, o} {
		polltest.Eventually(t, n.name+" has it", func() error { _, err := n.st.Get(ctx, m.ID); return err })
	}
	if err := a.st.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	a.sy.Kick()
	for _, n := range []*node{b, o} {
		polltest.Eventually(t, n.name+"'s trash has it", func() error {
			tr, err := n.st.TrashGet(ctx, []string{m.ID})
			if err != nil || len(tr) != 1 {
				return fmt.Errorf("trash %v, %v", tr, err)
			}
			return nil
		})
	}

	// bob's restore: refused by the team, kept on bob's machine as personal.
	if err := b.st.Restore(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	drained(t, b)
	st := b.sy.Status()
	if len(st.Refused) != 1 || st.Refused[0].ID != m.ID || st.Refused[0].Op != "restore" || st.Refused[0].Outcome != refusedRestore {
		t.Fatalf("b's status tells of refusals %+v, want the restore of %s", st.Refused, m.ID)
	}
	got, err := b.st.Get(ctx, m.ID)
	if err != nil || got.Scope != memory.ScopePersonal {
		t.Fatalf("b's restored copy: %+v, %v; want it live and personal", got.Scope, err)
	}
	// Recall counts an access (a write): the memory stays live on b.
	access(t, b, m.ID, 1)
	drained(t, b)
	if _, err := b.st.Get(ctx, m.ID); err != nil {
		t.Fatalf("b's restored memory after an access: %v (went back to the trash)", err)
	}
	if got := teamTexts(t, tdb.open(t, tdb.owner)); len(got) != 0 {
		t.Fatalf("the team holds %v after another member's restore", got)
	}

	// The owner's (an admin's) restore: back for everyone.
	if err := o.st.Restore(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	drained(t, o)
	polltest.Eventually(t, "the admin's restore reaches a", func() error { _, err := a.st.Get(ctx, m.ID); return err })
	if got := teamTexts(t, tdb.open(t, tdb.owner)); got[m.ID] != m.Text {
		t.Fatalf("the team holds %v after an admin's restore", got)
	}
	if st := o.sy.Status(); len(st.Refused) != 0 {
		t.Fatalf("the admin's restore was refused: %+v", st.Refused)
	}
}

// TestScopeFlipCounters: a memory moved team -> personal -> team keeps
// its counters in the team once: the counts pushed before it left are not
// pushed again when it comes back, nor those of a flip made offline; and
// coming back, it is restored in the team (the push took the team's
// delete of it as the last word and sent it to the trash).
func TestScopeFlipCounters(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	counters := func(id string) int64 {
		t.Helper()
		c, err := admin.Counters(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return c.Access
	}

	m := a.write(t, "the shop's cache is warmed at boot", "shop", memory.TypeProject)
	access(t, a, m.ID, 3)
	drained(t, a)
	if got := counters(m.ID); got != 3 {
		t.Fatalf("team access %d, want 3", got)
	}
	setScope(t, a, m.ID, memory.ScopePersonal)
	drained(t, a)
	if got := teamTexts(t, admin); len(got) != 0 {
		t.Fatalf("the team holds %v after the move to personal", got)
	}
	access(t, a, m.ID, 2) // personal now: counted here only, for now
	setScope(t, a, m.ID, memory.ScopeTeam)
	drained(t, a)
	if _, err := a.st.Get(ctx, m.ID); err != nil {
		t.Fatalf("a's memory moved back to the team: %v", err)
	}
	if got := teamTexts(t, admin); got[m.ID] != m.Text {
		t.Fatalf("the team holds %v after the move back, want %s", got, m.ID)
	}
	if got := counters(m.ID); got != 5 {
		t.Fatalf("team access %d after the flip, want 5 (3 before it left, 2 while personal)", got)
	}
	polltest.Eventually(t, "b has it with the team's counts", func() error {
		got, err := b.st.Get(ctx, m.ID)
		if err != nil {
			return err
		}
		if got.AccessCount != 5 {
			return fmt.Errorf("b: access %d", got.AccessCount)
		}
		return nil
	})

	// The same flips offline, before any push.
	c := startNode(t, "c", t.TempDir(), tdb.srv.ConnString(roles["alice"], "nowhere"), []string{"shop"})
	m2 := c.write(t, "the shop's queue retries three times", "shop", memory.TypeProject)
	access(t, c, m2.ID, 3)
	setScope(t, c, m2.ID, memory.ScopePersonal)
	setScope(t, c, m2.ID, memory.ScopeTeam)
	c.close()
	c.url = tdb.url(roles["alice"])
	c.start(t)
	drained(t, c)
	if got := counters(m2.ID); got != 3 {
		t.Fatalf("team access %d after an offline flip, want 3", got)
	}
}

// TestSkewedClockEdit: two daemons of one member (two machines of one
// role), one clock 10 minutes ahead. An edit made on the machine whose
// clock is right, of a version the other wrote, is newer than that
// version: the team takes it and the other machine gets it. (The team
// keeps the newest version by UpdatedAt: the edit was "older" by the
// clocks and the team kept the first text, each machine its own.)
func TestSkewedClockEdit(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := &node{name: "b", dir: t.TempDir(), url: tdb.url(roles["alice"]), share: []string{"shop"}, clock: skewed(10 * time.Minute)}
	b.start(t)
	t.Cleanup(b.close)
	ctx := context.Background()
	m := b.write(t, "the shop's logs rotate daily", "shop", memory.TypeProject)
	polltest.Eventually(t, "a has it", func() error { _, err := a.st.Get(ctx, m.ID); return err })
	const edit = "the shop's logs rotate hourly"
	if _, err := a.st.Update(ctx, m.ID, func(x *memory.Memory) error {
		x.Text, x.Embedding = edit, embedOne(t, edit)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	drained(t, a)
	if got, err := tdb.open(t, tdb.owner).Get(ctx, m.ID); err != nil || got.Text != edit {
		t.Fatalf("the team holds %q (%v), want a's edit %q", got.Text, err, edit)
	}
	polltest.Eventually(t, "b gets the edit", func() error {
		got, err := b.st.Get(ctx, m.ID)
		if err != nil || got.Text != edit {
			return fmt.Errorf("b holds %q, %v", got.Text, err)
		}
		return nil
	})
}

// TestLagSkewedClock: lag_seconds is measured on the database's clock: a
// daemon 10 minutes ahead reported 600 s of lag for changes seconds old.
func TestLagSkewedClock(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	ctx := context.Background()
	ts := tdb.open(t, roles["alice"])
	now := time.Now().UTC()
	tm := team.FromLocal(memory.Memory{ID: "lag1", Text: "the shop's cron runs at noon", Kind: memory.KindFact,
		Type: memory.TypeProject, Project: "shop", Importance: 0.5, CreatedAt: now, UpdatedAt: now})
	if _, err := ts.Push(ctx, []team.Memory{tm}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: words{}.Model(), Dim: dim, Shared: Shared([]string{"shop"})})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, skew := range []time.Duration{10 * time.Minute, -10 * time.Minute, 0} {
		sy, err := New(Options{Store: st, Embedder: words{}, Now: skewed(skew).Now,
			Connect: func(context.Context) (*team.Store, error) { return nil, errors.New("unused") }})
		if err != nil {
			t.Fatal(err)
		}
		sy.pulled(ctx, ts, team.Cursor{}, PullReport{}) // the change waits after the empty cursor
		if lag := sy.Status().LagSeconds; lag <= 0 || lag > 300 {
			t.Errorf("clock %v: lag %.1f s for a change seconds old", skew, lag)
		}
	}
}

// TestStatusProjects: the status names the team.projects the daemon runs
// with (read at start: memtray team status says a change needs a
// restart), as a copy.
func TestStatusProjects(t *testing.T) {
	st, err := store.Open(context.Background(), store.Options{Dir: t.TempDir(), Model: words{}.Model(), Dim: dim})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	projects := []string{"shop", "web"}
	sy, err := New(Options{Store: st, Embedder: words{}, Projects: projects,
		Connect: func(context.Context) (*team.Store, error) { return nil, errors.New("unused") }})
	if err != nil {
		t.Fatal(err)
	}
	projects[0] = "changed"
	got := sy.Status().Projects
	if len(got) != 2 || got[0] != "shop" || got[1] != "web" {
		t.Fatalf("status projects = %v, want [shop web]", got)
	}
	got[1] = "changed"
	if sy.Status().Projects[1] != "web" {
		t.Fatal("the status shares its projects with its caller")
	}
}

// TestConcurrentEditsConverge: two machines of one member edit the same
// memory before seeing each other's edit, one clock 10 minutes ahead. The
// team keeps the newer by UpdatedAt; the machine whose edit lost takes
// the team's version and says so. (Its push was "unchanged" and
// acknowledged, and the team's version, pulled while its edit waited in
// the outbox, was left to that push: it kept its own text for good.)
func TestConcurrentEditsConverge(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	ctx := context.Background()
	a := &node{name: "a", dir: t.TempDir(), url: tdb.url(roles["alice"]), share: []string{"shop"}, clock: skewed(10 * time.Minute)}
	a.start(t)
	t.Cleanup(a.close)
	// b's syncer is driven by hand (PullNow, PushNow), as memtray team
	// pull and push do, to order its steps.
	bst, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: words{}.Model(), Dim: dim, Shared: Shared([]string{"shop"})})
	if err != nil {
		t.Fatal(err)
	}
	defer bst.Close()
	b, err := New(Options{Store: bst, Embedder: words{}, Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, tdb.url(roles["alice"])) }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	m := a.write(t, "the shop's sessions expire after an hour", "shop", memory.TypeProject)
	drained(t, a)
	if _, err := b.PullNow(ctx); err != nil {
		t.Fatal(err)
	}
	edit := func(st *store.Store, text string) {
		t.Helper()
		if _, err := st.Update(ctx, m.ID, func(x *memory.Memory) error { x.Text, x.Embedding = text, embedOne(t, text); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	const won, lost = "the shop's sessions expire after a day", "the shop's sessions expire after a week"
	edit(a.st, won)
	drained(t, a)
	edit(bst, lost)
	if _, err := b.PullNow(ctx); err != nil { // a's edit waits behind b's
		t.Fatal(err)
	}
	if _, err := b.PushNow(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := tdb.open(t, tdb.owner).Get(ctx, m.ID); err != nil || got.Text != won {
		t.Fatalf("the team holds %q (%v), want the newer edit %q", got.Text, err, won)
	}
	if got, err := bst.Get(ctx, m.ID); err != nil || got.Text != won {
		t.Fatalf("b holds %q (%v), want the team's %q", got.Text, err, won)
	}
	if st := b.Status(); len(st.Refused) != 1 || st.Refused[0].Outcome != refusedStale {
		t.Fatalf("b's status tells of %+v, want its edit replaced by the newer one", st.Refused)
	}
}

// TestUndoReachesTeam: a steward undo puts a team memory back as it was
// before the run, its older UpdatedAt included (store.Batch.Put, as
// steward.UndoRun does); the team and the other daemons get the undo.
// (The push was older than the run's version the team held: "unchanged",
// and the undo stayed on the steward's machine.)
func TestUndoReachesTeam(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	ctx := context.Background()
	m := a.write(t, "the shop's search index is rebuilt on Sundays", "shop", memory.TypeProject)
	drained(t, a)
	before, err := a.st.Get(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.st.Update(ctx, m.ID, func(x *memory.Memory) error { x.Importance = 0.2; return nil }); err != nil { // the run's decay
		t.Fatal(err)
	}
	drained(t, a)
	polltest.Eventually(t, "b has the decay", func() error {
		if got, err := b.st.Get(ctx, m.ID); err != nil || got.Importance != 0.2 {
			return fmt.Errorf("b: %v, %v", got.Importance, err)
		}
		return nil
	})
	if err := a.st.Apply(ctx, store.Batch{Put: []memory.Memory{before}}); err != nil { // the undo
		t.Fatal(err)
	}
	drained(t, a)
	if got, err := tdb.open(t, tdb.owner).Get(ctx, m.ID); err != nil || got.Importance != before.Importance {
		t.Fatalf("the team holds importance %v (%v) after the undo, want %v", got.Importance, err, before.Importance)
	}
	polltest.Eventually(t, "b has the undo", func() error {
		if got, err := b.st.Get(ctx, m.ID); err != nil || got.Importance != before.Importance {
			return fmt.Errorf("b: %v, %v", got.Importance, err)
		}
		return nil
	})
	if got, _ := a.st.Get(ctx, m.ID); got.Importance != before.Importance {
		t.Fatalf("a holds importance %v after its undo", got.Importance)
	}
}

// TestProjectSharedLater: a project added to team.projects (a restart,
// then memtray team push --all) brings its memories to the team with
// their counters; pushing everything again counts nothing twice. (Only
// the memories went: the team counted 0 accesses, and the next pull of
// one set the local count to the team's.)
func TestProjectSharedLater(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	m := a.write(t, "the garden's sensors report every ten minutes", "garden", memory.TypeProject)
	access(t, a, m.ID, 4)
	drained(t, a)
	a.close()
	a.share = []string{"shop", "garden"}
	a.start(t)
	pushAll := func() {
		t.Helper()
		if _, err := a.st.EnqueueShared(ctx); err != nil { // memtray team push --all
			t.Fatal(err)
		}
		if _, err := a.sy.PushNow(ctx); err != nil {
			t.Fatal(err)
		}
	}
	pushAll()
	if got := teamTexts(t, admin); got[m.ID] != m.Text {
		t.Fatalf("the team holds %v, want the garden's memory", got)
	}
	c, err := admin.Counters(ctx, m.ID)
	if err != nil || c.Access != 4 {
		t.Fatalf("team counters %+v (%v), want the 4 accesses", c, err)
	}
	access(t, a, m.ID, 1)
	pushAll()
	if c, err := admin.Counters(ctx, m.ID); err != nil || c.Access != 5 {
		t.Fatalf("team counters %+v (%v) after another push --all, want 5", c, err)
	}
}

// TestRefusedDeleteAcrossRestart: a member's delete of another member's
// team memory is refused by the team. The status tells of it after a
// restart of the daemon (the list of refusals lived in memory only), and
// when the owner's next change brings the memory back to the member's
// machine, it leaves the trash there (a stale trash entry listed it as
// deleted while it was live, and its restore failed).
func TestRefusedDeleteAcrossRestart(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	ctx := context.Background()
	m := a.write(t, "the shop's price list is exported every Friday evening", "shop", memory.TypeProject)
	polltest.Eventually(t, "b has it", func() error { _, err := b.st.Get(ctx, m.ID); return err })
	if err := b.st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: m.ID, Reason: "deleted"}}}); err != nil {
		t.Fatal(err)
	}
	drained(t, b)
	want := func(n *node) error {
		st := n.sy.Status()
		if len(st.Refused) != 1 || st.Refused[0].ID != m.ID || st.Refused[0].Op != "delete" || st.Refused[0].Outcome != refusedDelete || st.Refused[0].At.IsZero() {
			return fmt.Errorf("%s's status tells of refusals %+v, want the delete of %s", n.name, st.Refused, m.ID)
		}
		return nil
	}
	if err := want(b); err != nil {
		t.Fatal(err)
	}
	b.close()
	b.start(t)
	if err := want(b); err != nil {
		t.Fatalf("after a restart: %v", err)
	}

	// The owner's change brings it back on b: live, and out of b's trash.
	if _, err := a.st.Update(ctx, m.ID, func(m *memory.Memory) error { m.Importance = 0.9; return nil }); err != nil {
		t.Fatal(err)
	}
	a.sy.Kick()
	polltest.Eventually(t, "the owner's change brings it back on b", func() error { _, err := b.st.Get(ctx, m.ID); return err })
	if tr, err := b.st.TrashGet(ctx, []string{m.ID}); err != nil || len(tr) != 0 {
		t.Fatalf("b's trash still holds %s, live again: %v %v", m.ID, tr, err)
	}
}
