package team

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// retentionInSQL is the team's conflict retention as an admin reading
// the table sees it: its days (extract), and its text.
func retentionInSQL(t *testing.T, tm team) (days int, text string) {
	t.Helper()
	err := tm.raw(t, tm.owner).QueryRow(context.Background(),
		"SELECT extract(day FROM conflict_retention)::int, conflict_retention::text FROM memtray.settings").Scan(&days, &text)
	if err != nil {
		t.Fatal(err)
	}
	return days, text
}

// TestRetentionInDays: the conflict retention is held in days, the unit
// an admin sets it in (schema 8), so SQL reads what was set: extract(day
// FROM conflict_retention) is the days, the text "30 days". Before 8 it
// was stored as seconds (an interval of 720 hours and no days: extract
// read 0, the table showed 720:00:00). The migration to 8 converts the
// row stored by a memtray of 7 exactly, and an admin's memtray of 7 on a
// database at 8, which still passes seconds, stores days; every daemon
// reads the same retention throughout, a member of 5 (fixed 90 days)
// and of 7 included.
func TestRetentionInDays(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		days int
	}{{"30 days", 30}, {"1 day", 1}, {"3650 days", 3650}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tm := newTeam(t)
			// A database at 7 whose admin's memtray of 7 set the retention.
			old, err := openAs(ctx, tm.url(tm.owner), 7)
			if err != nil {
				t.Fatal(err)
			}
			defer old.Close()
			d := time.Duration(tc.days) * 24 * time.Hour
			if err := old.SetConflictRetention(ctx, d); err != nil {
				t.Fatal(err)
			}
			if days, text := retentionInSQL(t, tm); days != 0 || text != fmt.Sprintf("%d:00:00", tc.days*24) {
				t.Fatalf("at 7, SQL reads %d days, %q: want the seconds a memtray of 7 stored (0 days)", days, text)
			}
			// The owner's migration to 8 converts the row.
			owner := tm.open(t, tm.owner)
			if db, _ := owner.Schema(); db != SchemaVersion {
				t.Fatalf("the owner's open left the database at %d", db)
			}
			want := fmt.Sprintf("%d days", tc.days)
			if tc.days == 1 {
				want = "1 day"
			}
			if days, text := retentionInSQL(t, tm); days != tc.days || text != want {
				t.Fatalf("after the migration SQL reads %d days, %q; want %d, %q", days, text, tc.days, want)
			}
			for _, s := range []*Store{owner, old} {
				if st, err := s.Settings(ctx); err != nil || st.ConflictRetention != d || st.ChangedBy != tm.owner {
					t.Fatalf("the settings read at %d: %+v, %v; want %v", s.known, st, err, d)
				}
			}
			// Set again by this memtray and by the admin's memtray of 7.
			for _, s := range []*Store{owner, old} {
				if err := s.SetConflictRetention(ctx, 45*24*time.Hour); err != nil {
					t.Fatal(err)
				}
				if days, text := retentionInSQL(t, tm); days != 45 || text != "45 days" {
					t.Errorf("set by a memtray of %d: SQL reads %d days, %q; want 45 days", s.known, days, text)
				}
				if err := s.SetConflictRetention(ctx, d); err != nil {
					t.Fatal(err)
				}
				if days, _ := retentionInSQL(t, tm); days != tc.days {
					t.Errorf("set by a memtray of %d: SQL reads %d days, want %d", s.known, days, tc.days)
				}
			}
		})
	}
}

// TestWithdrawnHiddenFromOlder: a withdrawal (schema 8) names the
// refusal it withdraws and is recorded once; a member's memtray of 8
// reads it, and a memtray of 7, which would take an outcome it does not
// know for a refused delete, never does (the read policy shows it only
// to a session speaking 8), so it keeps the refusal as it was told.
func TestWithdrawnHiddenFromOlder(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	aRole, bRole := fmt.Sprintf("%s_a", tm.owner), fmt.Sprintf("%s_b", tm.owner)
	a := tm.member(t, owner, aRole, false)
	a.SetMachine("machine-a")
	b := tm.member(t, owner, bRole, false)
	b.SetMachine("machine-b")
	oldB, err := openAs(ctx, tm.url(bRole), 7)
	if err != nil {
		t.Fatal(err)
	}
	defer oldB.Close()
	oldB.SetMachine("machine-b")
	if err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
		if err := a.writing(ctx, tx); err != nil {
			return err
		}
		return a.noteConflict(ctx, tx, "m1", conflictRefused, []string{"text"}, "a's text", &versionWriter{member: bRole, machine: "machine-b"})
	}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 0} {
		if n, err := a.WithdrawConflicts(ctx, "m1", 1, WithdrawMerged); err != nil || n != want {
			t.Fatalf("withdrawal %d: %d, %v; want %d (a refusal is withdrawn once)", i+1, n, err, want)
		}
	}
	if n, err := b.WithdrawConflicts(ctx, "m1", 1, WithdrawMerged); err != nil || n != 0 {
		t.Errorf("b withdrew %d of a's refusals (%v), want none", n, err)
	}
	ns, _, err := b.Notices(ctx, 0, "machine-b")
	if err != nil || len(ns) != 2 || ns[0].Outcome != conflictRefused || ns[1].Outcome != ConflictWithdrawn || ns[1].Withdraws != ns[0].Seq || ns[1].Text != "a's text" {
		t.Fatalf("a memtray of 8 reads %+v, %v; want the refusal and its withdrawal", ns, err)
	}
	old, _, err := oldB.Notices(ctx, 0, "machine-b")
	if err != nil || len(old) != 1 || old[0].Outcome != conflictRefused {
		t.Fatalf("a memtray of 7 reads %+v, %v; want the refusal alone", old, err)
	}
	var seen int
	if err := tm.raw(t, bRole).QueryRow(ctx, "SELECT count(*) FROM memtray.conflicts WHERE outcome = 'withdrawn'").Scan(&seen); err != nil || seen != 0 {
		t.Errorf("a session not speaking 8 sees %d withdrawals (%v)", seen, err)
	}
}

// TestWithdrawnHiddenFromOwnerOn7: the conflict log binds its owner
// (schema 9: FORCE ROW LEVEL SECURITY), so the team owner's own machine,
// still on a memtray of 7 after the owner migrated the database with a
// newer one, is hidden the withdrawals as any member's memtray of 7 is,
// and keeps the refusals as told; before 9 the owner's session read every
// row whatever the policy, and a memtray of 7 took a withdrawal for a
// refused delete. A memtray of 8 on the owner's machine reads the
// withdrawals by a merge but not those with another why (it would tell
// them as merges); this memtray reads both. The owner's session that
// says it migrates (memtray.migrating) passes every row, as Migrate's
// transaction does; a member's that says so passes nothing more.
func TestWithdrawnHiddenFromOwnerOn7(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner) // migrates to SchemaVersion
	owner.SetMachine("machine-o")
	aRole := fmt.Sprintf("%s_a", tm.owner)
	a := tm.member(t, owner, aRole, false)
	a.SetMachine("machine-a")
	at := func(known int) *Store {
		s, err := openAs(ctx, tm.url(tm.owner), known)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		s.SetMachine("machine-o")
		return s
	}
	on7, on8 := at(7), at(8)
	for _, id := range []string{"m1", "m2"} {
		if err := pgx.BeginFunc(ctx, a.pool, func(tx pgx.Tx) error {
			if err := a.writing(ctx, tx); err != nil {
				return err
			}
			return a.noteConflict(ctx, tx, id, conflictRefused, []string{"text"}, "a's text of "+id, &versionWriter{member: tm.owner, machine: "machine-o"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := a.WithdrawConflicts(ctx, "m1", 1, WithdrawMerged); err != nil || n != 1 {
		t.Fatalf("withdrawal by merge: %d, %v", n, err)
	}
	if n, err := a.WithdrawConflicts(ctx, "m2", 1, WithdrawRelinked); err != nil || n != 1 {
		t.Fatalf("withdrawal by relink: %d, %v", n, err)
	}
	outcomes := func(ns []Notice) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.MemoryID+" "+n.Outcome+" "+n.Why)
		}
		return out
	}
	tests := []struct {
		name string
		s    *Store
		want []string
	}{
		{"the owner on 7", on7, []string{"m1 refused ", "m2 refused "}},
		{"the owner on 8", on8, []string{"m1 refused ", "m2 refused ", "m1 withdrawn "}},
		{"the owner on this memtray", owner, []string{"m1 refused ", "m2 refused ", "m1 withdrawn ", "m2 withdrawn relinked"}},
	}
	for _, tc := range tests {
		ns, _, err := tc.s.Notices(ctx, 0, "machine-o")
		if err != nil || !slices.Equal(outcomes(ns), tc.want) {
			t.Errorf("%s reads %q (%v), want %q", tc.name, outcomes(ns), err, tc.want)
		}
	}
	count := func(c *pgx.Conn) int {
		t.Helper()
		var n int
		if err := c.QueryRow(ctx, "SELECT count(*) FROM memtray.conflicts").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(tm.raw(t, tm.owner)); n != 2 {
		t.Errorf("the owner's session not speaking 8 reads %d rows, want the 2 refusals", n)
	}
	if n := count(tm.maintain(t)); n != 4 {
		t.Errorf("the owner's session that migrates reads %d rows, want all 4", n)
	}
	member := tm.raw(t, aRole)
	if _, err := member.Exec(ctx, "SELECT set_config('memtray.migrating', 'on', false)"); err != nil {
		t.Fatal(err)
	}
	if n := count(member); n != 2 {
		t.Errorf("a member's session that says it migrates reads %d rows, want the 2 refusals", n)
	}
	if tag, err := member.Exec(ctx, "DELETE FROM memtray.conflicts"); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("a member's session that says it migrates deleted %d rows (%v), want none", tag.RowsAffected(), err)
	}
}
