package teamsync

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// pushAny pushes n's outbox, whatever the team refuses.
func pushAny(t *testing.T, n *node) {
	t.Helper()
	if _, err := n.sy.PushNow(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// update changes id on n as a user's write does.
func update(t *testing.T, n *node, id string, f func(m *memory.Memory)) {
	t.Helper()
	if _, err := n.st.Update(context.Background(), id, func(m *memory.Memory) error { f(m); return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestRefusalWithdrawnWhenMoot: every way a stale refusal becomes moot
// before the refused machine takes the team's version, so that no
// conflict copy is kept, withdraws it (schema 8 withdrew only a next
// edit that merged). Two members, alice (who owns the memory) and bob
// (an admin, so his edit of it is taken): bob's edit of the text is
// pushed first, alice's is refused as stale, and bob reads "the team
// refused theirs, which their machine keeps as a conflict copy". Then,
// before alice's machine takes bob's version: her next edit moves the
// memory to a project where the team holds its merged text (relinked to
// that memory); bob deletes it from the team before her machine could
// take his version, or after, and her next edit meets the delete; she deletes it; she makes it personal; or her next edit
// merges in a push that also has ten refusals of carol's memories, which
// push the first refusal out of her status's last 10 lines. Each time the
// team's log withdraws the refusal once with its why, bob's status says
// "resolved" and why instead of the refusal, and alice's own line names
// no copy. A memtray of 8 on bob's machine, which would tell a withdrawal
// with a why as a merge, keeps the refusal as told. Before exp-team6 the
// first four were never withdrawn (bob kept "refused theirs … conflict
// copy") and the fifth counted only the status's last 10 lines (none).
func TestRefusalWithdrawnWhenMoot(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	type world struct {
		a, b, c *node
		admin   *team.Store // the owner's
		alice   string      // alice's role
		id      string
		orig    string
		carols  []string
	}
	// The relinked cases: bob puts the memory's text in project web as a
	// team memory of its own (prep), then alice's next edit moves hers
	// there, its text put back, and it is relinked to bob's (next).
	relinkPrep := func(w world) {
		mustPull(t, w.b)
		text := w.b.texts(t)[w.id]
		if _, err := w.b.st.Put(ctx, memory.Memory{Text: text, Project: "web", Type: memory.TypeProject, Scope: memory.ScopeTeam, Embedding: embedOne(t, text)}); err != nil {
			t.Fatal(err)
		}
		mustPush(t, w.b, 0)
	}
	relinkNext := func(w world) {
		update(t, w.a, w.id, func(m *memory.Memory) {
			m.Text, m.Embedding, m.Project, m.Scope = w.orig, embedOne(t, w.orig), "web", memory.ScopeTeam
		})
	}
	tests := []struct {
		name      string
		why       string
		says      string // in bob's resolved line
		bobKnows  int
		carol     bool          // carol writes ten memories alice pulls first
		prep      func(w world) // before alice's refused push
		next      func(w world) // after it, before her machine took bob's version
		between   func(w world) // after bob read the refusal, before her next push
		carolOwns bool          // carol wrote the memory; alice, an admin, edits it
	}{
		{name: "the next edit refused as another member's", why: team.WithdrawRefused, says: "was refused too", carolOwns: true, next: func(w world) {
			// Alice is no longer an admin: her next edit of carol's
			// memory (the text put back, the importance changed: it
			// would merge) is refused as another member's.
			if err := w.admin.SetMember(ctx, w.alice, false); err != nil {
				t.Fatal(err)
			}
			edit(t, w.a, w.id, w.orig)
			setImportance(t, w.a, w.id, 0.9)
		}},
		{name: "the next edit meets the team's delete", why: team.WithdrawTeamDeleted, says: "deleted from the team", next: func(w world) {
			edit(t, w.a, w.id, w.orig+" (again)")
		}, between: func(w world) {
			if err := w.b.st.Delete(ctx, w.id); err != nil {
				t.Fatal(err)
			}
			mustPush(t, w.b, 0)
		}},
		{name: "relinked", why: team.WithdrawRelinked, says: "text of another team memory", prep: relinkPrep, next: relinkNext},
		{name: "deleted by the team", why: team.WithdrawTeamDeleted, says: "deleted from the team", next: func(w world) {
			edit(t, w.a, w.id, w.orig+" (again)")
			mustPull(t, w.b)
			if err := w.b.st.Delete(ctx, w.id); err != nil {
				t.Fatal(err)
			}
			mustPush(t, w.b, 0)
		}},
		{name: "deleted there", why: team.WithdrawDeleted, says: "their machine then deleted it", next: func(w world) {
			if err := w.a.st.Delete(ctx, w.id); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "made personal there", why: team.WithdrawPersonal, says: "made it personal", next: func(w world) {
			update(t, w.a, w.id, func(m *memory.Memory) { m.Scope = memory.ScopePersonal })
		}},
		{name: "merged, the refusal past the last 10 lines", why: team.WithdrawMerged, says: "resolved by merge", carol: true, next: func(w world) {
			edit(t, w.a, w.id, w.orig)
			for _, id := range w.carols {
				edit(t, w.a, id, "alice's word on "+id) // carol's: refused
			}
		}},
		{name: "relinked, bob on a memtray of 8", why: team.WithdrawRelinked, bobKnows: 8, prep: relinkPrep, next: relinkNext},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tdb, roles := newTeamDB(t, srv, "alice", "bob", "carol")
			admin := tdb.open(t, tdb.owner)
			if err := admin.SetMember(ctx, roles["bob"], true); err != nil {
				t.Fatal(err)
			}
			w := world{a: manualNode(t, tdb.url(roles["alice"])), admin: admin, alice: roles["alice"]}
			if tc.bobKnows != 0 {
				w.b = olderNode(t, tdb.url(roles["bob"]), tc.bobKnows)
			} else {
				w.b = manualNode(t, tdb.url(roles["bob"]))
			}
			w.orig = fmt.Sprintf("the nightly export runs at two (%d)", i)
			theirs := fmt.Sprintf("the nightly export runs at three (%d)", i)
			mine := fmt.Sprintf("the nightly export runs at four (%d)", i)
			if tc.carol || tc.carolOwns {
				w.c = manualNode(t, tdb.url(roles["carol"]))
			}
			if tc.carol {
				for k := range maxRefused {
					w.carols = append(w.carols, w.c.write(t, fmt.Sprintf("carol's fact number %d of case %d", k, i), "shop", memory.TypeProject).ID)
				}
				mustPush(t, w.c, 0)
			}
			writer := w.a
			if tc.carolOwns {
				writer = w.c
				if err := admin.SetMember(ctx, roles["alice"], true); err != nil {
					t.Fatal(err)
				}
			}
			m := writer.write(t, w.orig, "shop", memory.TypeProject)
			w.id = m.ID
			mustPush(t, writer, 0)
			mustPull(t, w.a)
			mustPull(t, w.b)
			edit(t, w.b, m.ID, theirs)
			mustPush(t, w.b, 0)
			if tc.prep != nil {
				tc.prep(w)
			}
			edit(t, w.a, m.ID, mine)
			w.a.sy.crashAt = func(at string) error {
				if at == crashAfterAck {
					w.a.sy.crashAt = nil
					tc.next(w)
				}
				return nil
			}
			mustPush(t, w.a, 1) // refused as stale
			mustPull(t, w.b)
			// The refusal (or, the team having deleted the memory before
			// alice's machine could take bob's version, its withdrawal
			// already: both read in one pull).
			if got := toldOf(w.b, m.ID); len(got) != 1 || !strings.Contains(got[0].What, "refused theirs") && !got[0].Withdrawn {
				t.Fatalf("after the refusal bob was told %+v, want the refusal", got)
			}
			if tc.between != nil {
				tc.between(w)
			}
			pushAny(t, w.a) // what made it moot
			pushAny(t, w.a)

			raw, err := pgx.Connect(ctx, tdb.url(tdb.owner))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close(ctx)
			if _, err := raw.Exec(ctx, "SELECT set_config('memtray.speaks', '9', false)"); err != nil {
				t.Fatal(err)
			}
			var n int
			var why string
			if err := raw.QueryRow(ctx, `SELECT count(*), coalesce(max(w.why), '-') FROM memtray.conflicts w JOIN memtray.conflicts r ON r.seq = w.withdraws
				WHERE w.outcome = 'withdrawn' AND r.outcome = 'refused' AND w.memory_id = $1`, m.ID).Scan(&n, &why); err != nil || n != 1 || why != tc.why {
				t.Fatalf("the team's log holds %d withdrawals of alice's refusal, why %q (%v); want 1, %q", n, why, err, tc.why)
			}
			for _, r := range w.a.sy.Status().Refused {
				if r.ID == m.ID && r.Copy != "" {
					t.Errorf("alice's refusal still names a copy that is never made: %+v", r)
				}
			}
			if cps := conflictCopies(t, w.a); len(cps) != 0 {
				t.Errorf("alice's trash holds conflict copies %v, want none", cps)
			}
			mustPull(t, w.b)
			got := toldOf(w.b, m.ID)
			var refusals, resolved int
			for _, tl := range got {
				switch {
				case tl.Withdrawn && tl.Why == tc.why && strings.Contains(tl.What, tc.says) && strings.Contains(tl.What, "no conflict copy was kept"):
					resolved++
				case !tl.Withdrawn && strings.Contains(tl.What, "refused theirs"):
					refusals++
				}
			}
			if tc.bobKnows == 0 && (resolved != 1 || refusals != 0) {
				t.Errorf("bob was told %+v, want the refusal resolved (%s), once, and no refusal left", got, tc.says)
			}
			if tc.bobKnows != 0 && (resolved != 0 || refusals != 1) {
				t.Errorf("a memtray of %d told bob %+v, want the refusal as told", tc.bobKnows, got)
			}
		})
	}
}

// conflictCopies are the ids of n's trash entries that are conflict
// copies.
func conflictCopies(t *testing.T, n *node) []string {
	t.Helper()
	tr, err := n.st.Trash(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range tr {
		if e.Conflict != nil {
			out = append(out, e.Memory.ID)
		}
	}
	return out
}
