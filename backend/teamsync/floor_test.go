package teamsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// olderNode is a member's daemon whose memtray speaks team schema version
// known, as an older memtray's daemon does: its syncer opens the team
// database through team.OpenAs, which checks the database's version and
// floor as Open does and then reads and writes what version known does.
// Its loop does not run: the test pushes and pulls it.
func olderNode(t *testing.T, url string, known int) *node {
	t.Helper()
	n := manualNode(t, url)
	n.name = fmt.Sprintf("a memtray of %d", known)
	n.sy.Close()
	sy, err := New(Options{Store: n.st, Embedder: words{}, Applied: n.told,
		Connect: func(ctx context.Context) (*team.Store, error) { return team.OpenAs(ctx, n.url, known) }})
	if err != nil {
		t.Fatal(err)
	}
	n.sy = sy
	return n
}

// TestOlderMemberSyncs: no older memtray is built, so each schema version
// N a database migrated to the latest admits by its floor (3 to
// team.SchemaVersion) runs a member's whole sync as a memtray of N does
// (olderNode), beside a machine of the same member at the latest version, through the code
// that checks the version: its memories reach the other member and the
// other's reach it; an edit of another field on a copy behind the other's
// edit merges onto it (bases, schema 3); an edit of the text there is
// refused as stale and kept as a conflict copy, and the other machine is
// told of it only where a memtray of N records conflicts (4 and later);
// its status says what the database is and what it uses. A memtray of a
// version below the floor (1, 2) is refused at its first exchange, naming
// the versions, and nothing of its reaches the team.
func TestOlderMemberSyncs(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	for known := 1; known <= team.SchemaVersion; known++ {
		t.Run(fmt.Sprintf("a memtray of %d", known), func(t *testing.T) {
			// Two machines of one member (only the owner of a memory edits
			// it), one not upgraded yet.
			tdb, roles := newTeamDB(t, srv, "alice")
			admin := tdb.open(t, tdb.owner)
			if db, _ := admin.Schema(); db != team.SchemaVersion {
				t.Fatalf("the database is at %d, want %d", db, team.SchemaVersion)
			}
			old := olderNode(t, tdb.url(roles["alice"]), known)
			cur := manualNode(t, tdb.url(roles["alice"]))
			cur.name = "a memtray of the latest version"
			m := old.write(t, fmt.Sprintf("the release train leaves on Thursdays (%d)", known), "shop", memory.TypeProject)
			r, err := old.sy.PushNow(ctx)
			if known < 3 {
				if !errors.Is(err, team.ErrSchemaNewer) || !strings.Contains(err.Error(), fmt.Sprintf("which memtray of schema version 3 or later may sync with; this memtray knows %d", known)) {
					t.Fatalf("a push from a memtray of %d = %+v, %v; want refused, naming the versions", known, r, err)
				}
				if st := old.sy.Status(); st.Connected || !strings.Contains(st.LastError, "upgrade memtray") {
					t.Fatalf("the refused member's status = %+v", st)
				}
				if ids := teamTexts(t, admin); len(ids) != 0 {
					t.Fatalf("the team holds %v from a member below the floor", ids)
				}
				return
			}
			if err != nil || r.Pushed != 1 {
				t.Fatalf("a push from a memtray of %d = %+v, %v", known, r, err)
			}
			st := old.sy.Status()
			if !st.Connected || st.Settings == nil {
				t.Fatalf("the status of a memtray of %d = %+v", known, st)
			}
			want := SettingsStatus{ConflictRetentionDays: 90, ChangedBy: tdb.owner, MinDays: MinRetentionDays, MaxDays: MaxRetentionDays,
				Settable: known >= team.SettingsSchema, Schema: team.SchemaVersion, Floor: 3, Known: known, Used: known}
			got := *st.Settings
			got.ChangedAt, got.ReadAt = want.ChangedAt, want.ReadAt
			if known < team.SettingsSchema {
				want.ChangedBy = "" // it does not read the settings table: the fixed 90 days
			}
			if got != want {
				t.Fatalf("the settings a memtray of %d reads = %+v, want %+v", known, got, want)
			}
			// Both ways.
			mustPull(t, cur)
			if got, err := cur.st.Get(ctx, m.ID); err != nil || got.Text != m.Text {
				t.Fatalf("the latest member holds %q (%v), want the older one's memory", got.Text, err)
			}
			n := cur.write(t, fmt.Sprintf("the hotfix branch is cut from main (%d)", known), "shop", memory.TypeProject)
			mustPush(t, cur, 0)
			mustPull(t, old)
			if got, err := old.st.Get(ctx, n.ID); err != nil || got.Text != n.Text {
				t.Fatalf("a memtray of %d holds %q (%v), want the latest member's memory", known, got.Text, err)
			}
			// Another field on a copy behind the other's edit: merged.
			theirs := fmt.Sprintf("the release train now departs every Wednesday morning (%d)", known)
			edit(t, cur, m.ID, theirs)
			mustPush(t, cur, 0)
			setImportance(t, old, m.ID, 0.9)
			mustPush(t, old, 0)
			if tm, err := admin.Get(ctx, m.ID); err != nil || tm.Text != theirs || tm.Importance != 0.9 {
				t.Fatalf("the team holds %q %v (%v), want the latest's text with the older one's importance", tm.Text, tm.Importance, err)
			}
			// The text on a copy behind the other's edit: refused, kept.
			mustPull(t, cur)
			edit(t, cur, m.ID, fmt.Sprintf("the release train moved to Tuesday evenings after review (%d)", known))
			mustPush(t, cur, 0)
			edit(t, old, m.ID, fmt.Sprintf("the release train is cancelled until further notice (%d)", known))
			mustPush(t, old, 1)
			if cp := conflictCopy(t, old, m.ID); cp.Memory.Text != fmt.Sprintf("the release train is cancelled until further notice (%d)", known) {
				t.Fatalf("the conflict copy holds %q", cp.Memory.Text)
			}
			mustPull(t, cur)
			told := 0
			for _, tl := range cur.sy.Status().Told {
				if tl.ID == m.ID && strings.Contains(tl.What, "refused theirs") {
					told++
				}
			}
			if wantTold := known >= 4; (told == 1) != wantTold || told > 1 {
				t.Fatalf("the latest member was told %d times of the refused edit of a memtray of %d, want %v (conflicts are recorded from 4)", told, known, wantTold)
			}
		})
	}
}
