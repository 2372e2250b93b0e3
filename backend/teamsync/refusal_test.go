package teamsync

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// edit rewrites id's text (with its embedding) as a user's edit does.
func edit(t *testing.T, n *node, id, text string) {
	t.Helper()
	_, err := n.st.Update(context.Background(), id, func(m *memory.Memory) error {
		m.Text, m.Embedding = text, embedOne(t, text)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n.sy.Kick()
}

// refusalsOf is how many refusals n's status lists for id.
func refusalsOf(n *node, id string) int {
	k := 0
	for _, r := range n.sy.Status().Refused {
		if r.ID == id {
			k++
		}
	}
	return k
}

// TestRefusedEditNotResent: a member's edit of another member's team
// memory is refused by the team and stays on the member's machine. A
// later write of it there that does not change it (an access, as recall
// counts) must not push it again: it was, and was refused again, at every
// such write, each time listed as one more refusal. The accesses still
// reach the team's counters. Any change of the team's pulled back, its
// counters too, gives the member the team's version and ends the hold (a
// held edit may rest on an owner's change the member never applied, see
// TestTwoDaemonsShare). An edit made here sends it again, as does a write
// after the team's version replaced the local copy; the held edit
// survives a restart.
func TestRefusedEditNotResent(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	m := a.write(t, "the shop's price list is exported every Friday evening", "shop", memory.TypeProject)
	polltest.Eventually(t, "b has it", func() error { _, err := b.st.Get(ctx, m.ID); return err })

	edit(t, b, m.ID, "the shop's price list is exported every Monday morning")
	drained(t, b)
	if k := refusalsOf(b, m.ID); k != 1 {
		t.Fatalf("b's edit: %d refusals of it, want 1: %+v", k, b.sy.Status().Refused)
	}
	wantTeam := func(text string) {
		t.Helper()
		if got := teamTexts(t, admin)[m.ID]; got != text {
			t.Fatalf("the team holds %q, want %q", got, text)
		}
	}
	wantTeam(m.Text)

	steps := []struct {
		name  string
		do    func()
		wantN int // refusals of m listed after it
	}{
		{"an access", func() { access(t, b, m.ID, 1) }, 1},
		{"another access", func() { access(t, b, m.ID, 2) }, 1},
		{"a restart and an access", func() { b.close(); b.start(t); access(t, b, m.ID, 1) }, 1},
		{"another edit", func() { edit(t, b, m.ID, "the shop's price list is exported every Tuesday") }, 2},
		{"an access after it", func() { access(t, b, m.ID, 1) }, 2},
		{"push --all", func() {
			// The access's counters came back from the team and took the
			// team's version: nothing of b's is left to refuse. The pull
			// bringing them follows the push on the team's notification,
			// after the outbox drained: wait for it, not for the push.
			polltest.Eventually(t, "b takes the team's version", func() error {
				if got, err := b.st.Get(ctx, m.ID); err != nil || got.Text != m.Text {
					return fmt.Errorf("b holds %q (%v)", got.Text, err)
				}
				return nil
			})
			r, err := b.sy.PushAll(ctx)
			if err != nil || r.Refused != 0 {
				t.Fatalf("PushAll = %+v, %v: want nothing refused (b holds the team's version)", r, err)
			}
		}, 2},
	}
	for _, s := range steps {
		s.do()
		drained(t, b)
		if k := refusalsOf(b, m.ID); k != s.wantN {
			t.Fatalf("after %s: %d refusals of it, want %d (pushed again?): %+v", s.name, k, s.wantN, b.sy.Status().Refused)
		}
		wantTeam(m.Text)
	}
	polltest.Eventually(t, "b's accesses reach the team", func() error {
		if c, err := admin.Counters(ctx, m.ID); err != nil || c.Access != 5 {
			return fmt.Errorf("team counters %+v (%v), want 5 accesses", c, err)
		}
		return nil
	})
	// A change of the team's pulled back (its counters too) gives b the
	// team's version, with the team's counters: the two machines agree.
	if _, err := b.sy.PullNow(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := b.st.Get(ctx, m.ID); err != nil || got.Text != m.Text || got.AccessCount != 5 {
		t.Fatalf("b holds %q with %d accesses (%v), want the team's version with 5", got.Text, got.AccessCount, err)
	}

	// The owner's next change replaces b's copy; a write of it then is
	// pushed as usual (and the team holds that version: nothing refused).
	const owners = "the shop's price list is exported every Friday at noon"
	edit(t, a, m.ID, owners)
	polltest.Eventually(t, "the owner's change reaches b", func() error {
		if got, err := b.st.Get(ctx, m.ID); err != nil || got.Text != owners {
			return fmt.Errorf("b holds %q (%v)", got.Text, err)
		}
		return nil
	})
	access(t, b, m.ID, 1)
	drained(t, b)
	if k := refusalsOf(b, m.ID); k != 2 {
		t.Fatalf("after the owner's change: %d refusals of it, want 2: %+v", k, b.sy.Status().Refused)
	}
	wantTeam(owners)
}

// errCrash stands for the daemon dying at a crash point of the push.
var errCrash = errors.New("crashed here")

// TestRefusalCrash: the daemon dies while it records a refusal of the
// team. Recording it and removing the refused entry from the outbox are one
// store transaction, so after a restart either both happened (nothing is
// pushed again) or neither (the edit is pushed again and refused once
// more): the status lists the refusal once. Stored in two writes, a crash
// between them left the entry in the outbox with its refusal recorded:
// pushed again, it was listed twice.
func TestRefusalCrash(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	for _, point := range []string{crashBeforeAck, crashAfterAck} {
		t.Run(point, func(t *testing.T) {
			b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
			ctx := context.Background()
			m := a.write(t, "the warehouse counts stock on the first Monday of "+point, "shop", memory.TypeProject)
			polltest.Eventually(t, "b has it", func() error { _, err := b.st.Get(ctx, m.ID); return err })
			b.close()

			// b, its loop stopped, edits another member's memory and
			// pushes; it dies at the crash point.
			st, err := store.Open(ctx, store.Options{Dir: b.dir, Model: words{}.Model(), Dim: dim, Shared: Shared(b.share)})
			if err != nil {
				t.Fatal(err)
			}
			text := "the warehouse counts stock every Friday of " + point
			if _, err := st.Update(ctx, m.ID, func(m *memory.Memory) error {
				m.Text, m.Embedding = text, embedOne(t, text)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			sy, err := New(Options{Store: st, Embedder: words{}, Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, b.url) }})
			if err != nil {
				t.Fatal(err)
			}
			sy.crashAt = func(at string) error {
				if at == point {
					return errCrash
				}
				return nil
			}
			if _, err := sy.PushNow(ctx); !errors.Is(err, errCrash) {
				t.Fatalf("push = %v, want the crash", err)
			}
			sy.Close()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}

			b.start(t)
			drained(t, b)
			if k := refusalsOf(b, m.ID); k != 1 {
				t.Fatalf("after a crash %s and a restart: %d refusals of the edit, want 1: %+v", point, k, b.sy.Status().Refused)
			}
			if got, err := b.st.Get(ctx, m.ID); err != nil || got.Text != text {
				t.Fatalf("b holds %q (%v), want its edit kept", got.Text, err)
			}
		})
	}
}

// TestHeldEditPulledWhileWaiting: a member's refused edit is held; its
// access pushes counters, so the team's copy changes. If the next write
// of it here waits in the outbox when that change is pulled, the store
// keeps the local copy for the push. An access waiting so must not push
// the refused edit again (it did: the pull ended the hold, and the access
// sent the edit to be refused once more): the push takes the team's
// version with its counters instead, as the pull would have. An edit
// waiting so is pushed, and refused again. Run step by step, without the
// loop: under load the loop's pull fell between the access and its push.
// A daemon stopped after the push acknowledged the access and before it
// took the team's version takes it after its restart (the edit was no
// longer held then, and its next access pushed it again).
func TestHeldEditPulledWhileWaiting(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	tests := []struct {
		name     string
		wait     func(b *node, id string) // the write waiting at the pull
		refusals int                      // of the memory, listed at the end
		text     string                   // b's copy at the end ("": the team's)
		accesses int                      // b's copy's count at the end
		crash    bool                     // b stops after the push acknowledged
	}{
		{"an access", func(b *node, id string) { access(t, b, id, 1) }, 1, "", 2, false},
		{"an edit", func(b *node, id string) { edit(t, b, id, "the till is counted at closing, twice") }, 2, "the till is counted at closing, twice", 1, false},
		{"an access and a stop", func(b *node, id string) { access(t, b, id, 1) }, 1, "", 3, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := a.write(t, "the till is counted at closing by "+tc.name, "shop", memory.TypeProject)
			drained(t, a)
			b := manualNode(t, tdb.url(roles["bob"]))
			mustPull(t, b)
			edit(t, b, m.ID, "the till is counted at opening by "+tc.name)
			mustPush(t, b, 1)
			access(t, b, m.ID, 1)
			mustPush(t, b, 0) // held back; its counters reach the team
			tc.wait(b, m.ID)
			mustPull(t, b) // the team's counters changed: kept for the push
			if tc.crash {
				b.sy.crashAt = func(at string) error {
					if at == crashAfterAck {
						return errCrash
					}
					return nil
				}
				if _, err := b.sy.PushNow(ctx); !errors.Is(err, errCrash) {
					t.Fatalf("push = %v, want the crash", err)
				}
				b.sy.Close()
				b.sy = newManualSyncer(t, b)
				access(t, b, m.ID, 1)
			}
			mustPush(t, b, tc.refusals-1)
			if k := refusalsOf(b, m.ID); k != tc.refusals {
				t.Fatalf("%d refusals of it, want %d: %+v", k, tc.refusals, b.sy.Status().Refused)
			}
			want := tc.text
			if want == "" {
				want = m.Text
			}
			if got, err := b.st.Get(ctx, m.ID); err != nil || got.Text != want || got.AccessCount != tc.accesses {
				t.Fatalf("b holds %q with %d accesses (%v), want %q with %d", got.Text, got.AccessCount, err, want, tc.accesses)
			}
			if got := teamTexts(t, admin)[m.ID]; got != m.Text {
				t.Fatalf("the team holds %q, want %q", got, m.Text)
			}
		})
	}
}

// manualNode is a member's daemon whose loop does not run: the test
// pushes and pulls it (mustPush, mustPull).
func manualNode(t *testing.T, url string) *node {
	t.Helper()
	b := &node{name: "b", dir: t.TempDir(), url: url, share: []string{"shop"}}
	st, err := store.Open(context.Background(), store.Options{Dir: b.dir, Model: words{}.Model(), Dim: dim, Shared: Shared(b.share)})
	if err != nil {
		t.Fatal(err)
	}
	b.st = st
	b.sy = newManualSyncer(t, b)
	t.Cleanup(func() {
		b.sy.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// newManualSyncer starts n's syncer on its store, without its loop.
func newManualSyncer(t *testing.T, n *node) *Syncer {
	t.Helper()
	sy, err := New(Options{Store: n.st, Embedder: words{}, Applied: n.told, Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, n.url) }})
	if err != nil {
		t.Fatal(err)
	}
	return sy
}

// mustPush pushes n's outbox and checks how many writes the team refused.
func mustPush(t *testing.T, n *node, refused int) {
	t.Helper()
	r, err := n.sy.PushNow(context.Background())
	if err != nil || r.Refused != refused {
		t.Fatalf("push = %+v, %v: want %d refused", r, err, refused)
	}
}

// mustPull pulls the team's changes into n.
func mustPull(t *testing.T, n *node) {
	t.Helper()
	if _, err := n.sy.PullNow(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestStaleEditTaken: a member's edit made on one machine (b) while
// another machine of the member (a) made a newer one is refused as stale
// at its push: b takes the team's version (a's). An access written just
// after the push acknowledged the edit waits as counters alone (it
// changes nothing the team shares), so b takes the team's version at
// once and the access reaches the team's counters; a new edit waiting
// then is left to the next push, and refused as stale too: made on a copy
// that never saw a's edit, it changes the text a's changed since the base
// (it won by the clock, before pushes carried their base). A b stopped
// after the acknowledgement and before the take takes the team's version
// after its restart (the edit was no longer held then, and its next access
// pushed it again). Options.Applied is told of a memory when the team's
// version replaced b's, not when it was left for a waiting write.
func TestStaleEditTaken(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	tests := []struct {
		name     string
		afterAck func(b *node, id string) // at the acknowledgement of the stale edit
		crash    bool                     // b stops after the acknowledgement
		told     bool                     // Applied told of a put at the stale push
		pushes   int                      // pushes after the stale one until b holds want
		again    int                      // refused by those pushes
		text     string                   // b's and the team's copy at the end ("": a's edit)
		accesses int                      // b's copy's count at the end
	}{
		{"nothing waiting", nil, false, true, 0, 0, "", 0},
		{"an access waiting", func(b *node, id string) { access(t, b, id, 1) }, false, true, 1, 0, "", 1},
		{"an edit waiting", func(b *node, id string) { edit(t, b, id, "the till is balanced at noon, then again") }, false, false, 1, 1, "", 0},
		{"a stop and an access", func(b *node, id string) { access(t, b, id, 1) }, true, false, 1, 0, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := a.write(t, "the till is balanced by "+tc.name, "shop", memory.TypeProject)
			drained(t, a)
			b := manualNode(t, tdb.url(roles["alice"]))
			mustPull(t, b)
			edit(t, b, m.ID, "the till is balanced at opening by "+tc.name)
			edit(t, a, m.ID, "the till is balanced at closing by "+tc.name)
			drained(t, a) // a's edit, the newer, is the team's
			want := tc.text
			if want == "" {
				want = "the till is balanced at closing by " + tc.name
			}
			b.toldOf(m.ID)
			b.sy.crashAt = func(at string) error {
				if at != crashAfterAck {
					return nil
				}
				if tc.afterAck != nil {
					tc.afterAck(b, m.ID)
				}
				if tc.crash {
					return errCrash
				}
				return nil
			}
			if r, err := b.sy.PushNow(ctx); tc.crash != errors.Is(err, errCrash) || (!tc.crash && (err != nil || r.Refused != 1)) {
				t.Fatalf("the stale push = %+v, %v: want 1 refused (crash %v)", r, err, tc.crash)
			}
			b.sy.crashAt = nil
			if tc.crash {
				b.sy.Close()
				b.sy = newManualSyncer(t, b)
			}
			if op := b.toldOf(m.ID); (op == "put") != tc.told {
				t.Fatalf("Applied told of it %q at the stale push, want put only if the team's version replaced b's", op)
			}
			for range tc.pushes {
				mustPush(t, b, tc.again)
			}
			if k := refusalsOf(b, m.ID); k != 1+tc.again {
				t.Fatalf("%d refusals of it, want 1 (pushed again?): %+v", k, b.sy.Status().Refused)
			}
			if got := teamTexts(t, admin)[m.ID]; got != want {
				t.Fatalf("the team holds %q, want %q", got, want)
			}
			if got, err := b.st.Get(ctx, m.ID); err != nil || got.Text != want || got.AccessCount != tc.accesses {
				t.Fatalf("b holds %q with %d accesses (%v), want %q with %d", got.Text, got.AccessCount, err, want, tc.accesses)
			}
		})
	}
}
