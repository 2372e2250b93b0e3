package teamsync

import (
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// TestAccessKeepsTeamsEdit: two machines of one member hold a team
// memory; b edits it and pushes; a, which has not pulled b's edit, counts
// an access (a recall gave it). An access changes nothing the team shares:
// it must not push a's older text as the newest version (it did: the
// access moved UpdatedAt, so a's push was PushUpdated and the team went
// back to the old text with no refusal, losing b's edit). After both sync,
// the team and both machines hold b's text, nothing is refused, and the
// access is counted in the team's counters and on both machines. The
// access is recorded before or after b's push, and a pulls before or
// after its own push.
func TestAccessKeepsTeamsEdit(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	admin := tdb.open(t, tdb.owner)
	ctx := context.Background()
	tests := []struct {
		name           string
		accessFirst    bool // a's access is recorded before b pushes its edit
		pullBeforePush bool // a pulls b's edit before pushing its access
	}{
		{"access after the edit's push", false, false},
		{"access before the edit's push", true, false},
		{"pulled while the access waits", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := manualNode(t, tdb.url(roles["alice"]))
			b := manualNode(t, tdb.url(roles["alice"]))
			m := a.write(t, "the backups run at two by "+tc.name, "shop", memory.TypeProject)
			mustPush(t, a, 0)
			mustPull(t, b)
			want := "the backups run at four, after the import, by " + tc.name
			edit(t, b, m.ID, want)
			recordAccess := func() {
				if _, err := a.st.RecordAccess(ctx, time.Now(), m.ID); err != nil {
					t.Fatal(err)
				}
			}
			if tc.accessFirst {
				recordAccess()
			}
			mustPush(t, b, 0)
			if !tc.accessFirst {
				recordAccess()
			}
			if tc.pullBeforePush {
				mustPull(t, a)
			}
			mustPush(t, a, 0)
			mustPull(t, a)
			mustPull(t, b)
			if got := teamTexts(t, admin)[m.ID]; got != want {
				t.Fatalf("the team holds %q, want b's edit %q", got, want)
			}
			c, err := admin.Counters(ctx, m.ID)
			if err != nil || c.Access != 1 {
				t.Fatalf("the team counts %d accesses (%v), want 1", c.Access, err)
			}
			for _, n := range []*node{a, b} {
				got, err := n.st.Get(ctx, m.ID)
				if err != nil || got.Text != want || got.AccessCount != 1 {
					t.Fatalf("%s holds %q with %d accesses (%v), want %q with 1", n.name, got.Text, got.AccessCount, err, want)
				}
				if k := refusalsOf(n, m.ID); k != 0 {
					t.Fatalf("%s lists %d refusals of it: %+v", n.name, k, n.sy.Status().Refused)
				}
			}
		})
	}
}
