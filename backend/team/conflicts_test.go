package team

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestConflictLogPruned: a push that records a conflict deletes the rows
// of the conflict log older than ConflictRetention (every machine has had
// that long to pull its notices) and keeps the younger ones; a member may
// not delete a younger row itself (schema 5's policy).
func TestConflictLogPruned(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	b := tm.member(t, owner, fmt.Sprintf("%s_b", tm.owner), false)
	note := func(id string) {
		t.Helper()
		if err := pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
			return b.noteConflict(ctx, tx, id, "refused", []string{"text"}, "a text", &versionWriter{member: tm.owner, machine: "m1"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func() []string {
		t.Helper()
		rows, err := tm.raw(t, tm.owner).Query(ctx, "SELECT memory_id FROM memtray.conflicts ORDER BY memory_id")
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	note("old")
	note("recent")
	// The owner's session that says it migrates (schema 9's migrate
	// policy; the log binds its owner otherwise): the rows' age, as
	// months of use would leave it.
	if _, err := tm.maintain(t).Exec(ctx, `UPDATE memtray.conflicts SET at = now() - CASE memory_id
		WHEN 'old' THEN interval '91 days' ELSE interval '89 days' END`); err != nil {
		t.Fatal(err)
	}
	tag, err := tm.raw(t, fmt.Sprintf("%s_b", tm.owner)).Exec(ctx, "DELETE FROM memtray.conflicts WHERE memory_id = 'recent'")
	if err != nil || tag.RowsAffected() != 0 {
		t.Errorf("a member deleting a row younger than the retention: %v rows, %v; want none", tag.RowsAffected(), err)
	}
	if got := ids(); !slices.Equal(got, []string{"old", "recent"}) {
		t.Fatalf("before the next conflict: %q", got)
	}
	note("new")
	if got := ids(); !slices.Equal(got, []string{"new", "recent"}) {
		t.Errorf("after the next conflict: %q, want the 91-day-old row pruned, the others kept", got)
	}
}

// TestConflictRetentionSetting: the conflict log's retention is a team
// setting (schema 6): 90 days until an admin changes it, changed by
// admins only, within 1 to 3650 days; the prune of every member's push
// and the policy follow it. A member whose memtray knows 5 (which
// prunes at its fixed 90 days, and syncs with 6 by its floor) cannot
// delete a row younger than a longer setting: the policy stops it.
func TestConflictRetentionSetting(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	bRole := fmt.Sprintf("%s_b", tm.owner)
	b := tm.member(t, owner, bRole, false)
	oldRole := fmt.Sprintf("%s_old", tm.owner)
	tm.member(t, owner, oldRole, false)
	old, err := openAs(ctx, tm.url(oldRole), 5)
	if err != nil {
		t.Fatalf("a memtray of 5 on a database at 6: %v", err)
	}
	defer old.Close()
	raw := tm.maintain(t)
	st, err := b.Settings(ctx)
	if err != nil || st.ConflictRetention != ConflictRetention || st.ChangedBy != tm.owner {
		t.Fatalf("the default settings: %+v, %v", st, err)
	}
	if err := b.SetConflictRetention(ctx, 30*24*time.Hour); !errors.Is(err, ErrNotAdmin) {
		t.Fatalf("a member's change: %v, want ErrNotAdmin", err)
	}
	for _, d := range []time.Duration{0, time.Hour, 3651 * 24 * time.Hour} {
		if err := owner.SetConflictRetention(ctx, d); err == nil {
			t.Errorf("a retention of %v was taken", d)
		}
	}
	if err := old.SetConflictRetention(ctx, 30*24*time.Hour); !errors.Is(err, ErrNeedsOwner) {
		t.Errorf("a change by a memtray of 5: %v, want ErrNeedsOwner", err)
	}
	note := func(s *Store, id string) {
		t.Helper()
		if err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			return s.noteConflict(ctx, tx, id, "refused", []string{"text"}, "a text", &versionWriter{member: tm.owner, machine: "m1"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	// rows gives the log's rows these ages in days, and lists what is left
	// after a conflict s records.
	rows := func(ages map[string]int, s *Store) []string {
		t.Helper()
		if _, err := raw.Exec(ctx, "DELETE FROM memtray.conflicts"); err != nil {
			t.Fatal(err)
		}
		for id := range ages {
			note(b, id) // all noted, then aged: a note prunes the older
		}
		for id, days := range ages {
			if _, err := raw.Exec(ctx, "UPDATE memtray.conflicts SET at = now() - make_interval(days => $2) WHERE memory_id = $1", id, days); err != nil {
				t.Fatal(err)
			}
		}
		note(s, "new")
		r, err := raw.Query(ctx, "SELECT memory_id FROM memtray.conflicts ORDER BY memory_id")
		if err != nil {
			t.Fatal(err)
		}
		out, err := pgx.CollectRows(r, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name      string
		retention time.Duration
		by        *Store
		ages      map[string]int
		want      []string
	}{
		{"the default", 0, b, map[string]int{"d91": 91, "d89": 89}, []string{"d89", "new"}},
		{"30 days", 30 * 24 * time.Hour, b, map[string]int{"d31": 31, "d29": 29}, []string{"d29", "new"}},
		{"180 days", 180 * 24 * time.Hour, b, map[string]int{"d181": 181, "d100": 100}, []string{"d100", "new"}},
		{"180 days, pruned by a memtray of 5", 0, old, map[string]int{"d181": 181, "d100": 100}, []string{"d100", "new"}},
		{"30 days, pruned by a memtray of 5", 30 * 24 * time.Hour, old, map[string]int{"d91": 91, "d60": 60}, []string{"d60", "new"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.retention > 0 {
				if err := owner.SetConflictRetention(ctx, tc.retention); err != nil {
					t.Fatal(err)
				}
				if st, err := b.Settings(ctx); err != nil || st.ConflictRetention != tc.retention {
					t.Fatalf("settings read by a member: %+v, %v", st, err)
				}
			}
			if got := rows(tc.ages, tc.by); !slices.Equal(got, tc.want) {
				t.Errorf("after the next conflict: %q, want %q", got, tc.want)
			}
		})
	}
	// A member's own delete of a row younger than the setting: refused.
	tag, err := tm.raw(t, bRole).Exec(ctx, "DELETE FROM memtray.conflicts WHERE memory_id = 'new'")
	if err != nil || tag.RowsAffected() != 0 {
		t.Errorf("a member deleting a row younger than the retention: %v rows, %v; want none", tag.RowsAffected(), err)
	}
}
