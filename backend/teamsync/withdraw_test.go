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

// TestRefusalWithdrawnByMerge: two members, alice (who owns the memory)
// and bob (an admin, so his edit of it is taken). Bob's edit of the text
// is pushed first; alice's edit of the text, made without having seen
// it, is refused as stale, and bob's machine is told "the team refused
// theirs, which their machine keeps as a conflict copy". Alice's next
// edit, made before her machine took bob's version, puts the text back:
// it merges and no conflict copy is kept (TestSecondEditPutsFieldBack),
// so her machine withdraws the refusal in the team (schema 8) and bob's
// status no longer says her edit met his: it says the conflict was
// resolved by merge, whether bob read the refusal before the withdrawal
// or both in one pull, and across a restart of his daemon. A memtray of
// 7 on bob's machine never reads a withdrawal (the read policy hides it
// from a session that does not speak 8): it keeps the refusal as told,
// as it did before, rather than take the outcome it does not know for a
// refused delete. At 9937c7b bob's status kept saying "met yours … their
// machine keeps as a conflict copy" for a copy that never was. Bob's
// machine may connect as the team's owner: the conflict log binds its
// owner too from schema 9, so the owner's memtray of 7 keeps the refusal
// as told as well (at 1368516 it read the withdrawal, row-level security
// not binding a table's owner, and told it as a delete).
func TestRefusalWithdrawnByMerge(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	tests := []struct {
		name       string
		bobKnows   int  // the schema version bob's memtray speaks
		readFirst  bool // bob pulls between the refusal and the merge
		resolved   bool // bob's status says it was resolved by merge
		importance float64
		owner      bool // bob's machine connects as the team's owner
	}{
		{"bob read the refusal first", team.SchemaVersion, true, true, 0.5, false},
		{"bob reads both in one pull", team.SchemaVersion, false, true, 0.5, false},
		{"the text put back and the importance changed", team.SchemaVersion, true, true, 0.9, false},
		{"bob on a memtray of 7", 7, true, false, 0.5, false},
		// The owner's role, on a memtray of 7 after the owner migrated the
		// database with this one: the conflict log binds its owner too
		// (schema 9), so it keeps the refusal as told (at 8 it read the
		// withdrawal, whatever the policy, as a refused delete).
		{"the owner on a memtray of 7", 7, true, false, 0.5, true},
		{"the owner on this memtray", team.SchemaVersion, true, true, 0.5, true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tdb, roles := newTeamDB(t, srv, "alice", "bob")
			admin := tdb.open(t, tdb.owner)
			if err := admin.SetMember(ctx, roles["bob"], true); err != nil {
				t.Fatal(err)
			}
			a := manualNode(t, tdb.url(roles["alice"]))
			a.name = "alice's"
			bobURL := tdb.url(roles["bob"])
			if tc.owner {
				bobURL = tdb.url(tdb.owner)
			}
			var b *node
			if tc.bobKnows == team.SchemaVersion {
				b = manualNode(t, bobURL)
			} else {
				b = olderNode(t, bobURL, tc.bobKnows)
			}
			orig := fmt.Sprintf("the invoice run starts at six (%d)", i)
			theirs := fmt.Sprintf("the invoice run starts at seven (%d)", i)
			m := a.write(t, orig, "shop", memory.TypeProject)
			mustPush(t, a, 0)
			mustPull(t, b)
			edit(t, b, m.ID, theirs)
			mustPush(t, b, 0)
			edit(t, a, m.ID, fmt.Sprintf("the invoice run starts at eight (%d)", i))
			a.sy.crashAt = func(at string) error {
				if at == crashAfterAck {
					a.sy.crashAt = nil
					edit(t, a, m.ID, orig) // the text put back
					if tc.importance != 0.5 {
						setImportance(t, a, m.ID, tc.importance)
					}
				}
				return nil
			}
			mustPush(t, a, 1) // refused as stale
			if tc.readFirst {
				mustPull(t, b)
				if got := toldOf(b, m.ID); len(got) != 1 || !strings.Contains(got[0].What, "refused theirs") || got[0].Withdrawn {
					t.Fatalf("after the refusal bob was told %+v, want the refusal", got)
				}
			}
			mustPush(t, a, 0) // the text put back: merged
			if tm, err := admin.Get(ctx, m.ID); err != nil || tm.Text != theirs || tm.Importance != tc.importance {
				t.Fatalf("the team holds %q %v (%v), want bob's text", tm.Text, tm.Importance, err)
			}
			var withdrawn int
			raw, err := pgx.Connect(ctx, tdb.url(tdb.owner)) // the owner, speaking 9: it reads every withdrawal
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close(ctx)
			if _, err := raw.Exec(ctx, "SELECT set_config('memtray.speaks', '9', false)"); err != nil {
				t.Fatal(err)
			}
			if err := raw.QueryRow(ctx, `SELECT count(*) FROM memtray.conflicts w JOIN memtray.conflicts r ON r.seq = w.withdraws
				WHERE w.outcome = 'withdrawn' AND r.outcome = 'refused' AND w.memory_id = $1 AND r.memory_id = $1`, m.ID).Scan(&withdrawn); err != nil || withdrawn != 1 {
				t.Fatalf("the team's conflict log holds %d withdrawals of alice's refusal (%v), want 1", withdrawn, err)
			}
			mustPull(t, b)
			check := func(when string) {
				t.Helper()
				got := toldOf(b, m.ID)
				var refusals, resolved, deleted int
				for _, tl := range got {
					switch {
					case strings.Contains(tl.What, "deleted"):
						deleted++
					case tl.Withdrawn && strings.Contains(tl.What, "resolved by merge") && strings.Contains(tl.What, "“"+fmt.Sprintf("the invoice run starts at eight (%d)", i)+"”"):
						resolved++
					case !tl.Withdrawn && strings.Contains(tl.What, "refused theirs"):
						refusals++
					}
				}
				if deleted > 0 {
					t.Errorf("%s bob was told of a delete: %+v", when, got)
				}
				if tc.resolved && (resolved != 1 || refusals != 0) {
					t.Errorf("%s bob was told %+v, want the refusal resolved by merge, once, and no refusal left", when, got)
				}
				if !tc.resolved && (refusals != 1 || resolved != 0) {
					t.Errorf("%s a memtray of %d told bob %+v, want the refusal as told before", when, tc.bobKnows, got)
				}
			}
			check("after the merge")
			if !tc.resolved {
				// What bob's older memtray reads of the log: no withdrawal
				// (this code, speaking an older version, would skip one it
				// read; a memtray of 7 told it as a delete).
				old, err := team.OpenAs(ctx, bobURL, tc.bobKnows)
				if err != nil {
					t.Fatal(err)
				}
				ns, _, err := old.Notices(ctx, 0, b.sy.machine)
				old.Close()
				for _, n := range ns {
					if err != nil || n.Outcome == team.ConflictWithdrawn {
						t.Errorf("a memtray of %d as %s reads %+v (%v), want no withdrawal", tc.bobKnows, map[bool]string{true: "the owner", false: "bob"}[tc.owner], n, err)
					}
				}
				if err != nil || len(ns) == 0 {
					t.Errorf("a memtray of %d reads %+v (%v), want the refusal", tc.bobKnows, ns, err)
				}
			}
			mustPull(t, b) // read once
			check("after another pull")
			if tc.bobKnows == team.SchemaVersion {
				b.sy.Close()
				b.sy = newManualSyncer(t, b)
				check("after a restart")
			}
			if got := toldOf(a, m.ID); len(got) > 0 {
				t.Errorf("alice's machine was told %+v of its own edits", got)
			}
		})
	}
}

// toldOf is what n's status tells of memory id.
func toldOf(n *node, id string) []Told {
	var out []Told
	for _, tl := range n.sy.Status().Told {
		if tl.ID == id {
			out = append(out, tl)
		}
	}
	return out
}
