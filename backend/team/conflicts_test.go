package team

import (
	"context"
	"fmt"
	"slices"
	"testing"

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
	// The owner's role owns the table (row-level security does not apply
	// to it): the rows' age, as months of use would leave it.
	if _, err := tm.raw(t, tm.owner).Exec(ctx, `UPDATE memtray.conflicts SET at = now() - CASE memory_id
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
