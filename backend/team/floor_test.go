package team

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestMigrationFloors: each migration's floor, as docs/team.md gives the
// reasons: 1 and 2 (a function only admins call) sync with version 1; 3
// (pushes carry their base) needs 3; 4 (a column a trigger fills, a table
// older code never reads), 5 (a prune policy), 6 (the team's settings,
// which the prune policy reads), 7 (exact dedup per project: the
// index decides, an older memtray's store-wide lookups only keep its old
// behaviour) and 8 (the retention in days, by a trigger whatever an older
// admin's memtray passes; withdrawals, which the read policy hides from
// an older memtray) are compatible with 3.
func TestMigrationFloors(t *testing.T) {
	want := []int{1, 1, 3, 3, 3, 3, 3, 3, 3}
	var got []int
	for _, m := range migrations {
		got = append(got, m.floor)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("floors %v, want %v", got, want)
	}
	for i, m := range migrations {
		if m.floor < 1 || m.floor > i+1 {
			t.Errorf("migration %d: floor %d is not a version at or before it", i+1, m.floor)
		}
	}
}

// compats reads schema_version's recorded floors by version (-1: none
// recorded).
func compats(t *testing.T, c *pgx.Conn) []int {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT coalesce((to_jsonb(v) ->> 'compat')::int, -1) FROM memtray.schema_version v ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchemaFloor: a database migrated to SchemaVersion records each
// version's floor, and code that speaks an older version (as an older
// memtray would: openAs) opens it when the floor allows and refuses it,
// naming the versions, when not; a version this code does not know is
// opened only by what its own recorded floor says.
func TestSchemaFloor(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	member := tm.member(t, owner, fmt.Sprintf("%s_m", tm.owner), false)
	member.Close()
	raw := tm.raw(t, tm.owner)
	if got := compats(t, raw); !slices.Equal(got, []int{1, 1, 3, 3, 3, 3, 3, 3, 3}) {
		t.Fatalf("recorded floors %v", got)
	}
	open := func(known int) (*Store, error) {
		s, err := openAs(ctx, tm.url(fmt.Sprintf("%s_m", tm.owner)), known)
		if err == nil {
			t.Cleanup(s.Close)
		}
		return s, err
	}
	tests := []struct {
		name    string
		setup   string // as the owner, before the open
		known   int
		refused bool
		used    int
		says    string // in the refusal: the versions
	}{
		{"this version", "", SchemaVersion, false, SchemaVersion, ""},
		{"a memtray of 8 on a database at 9", "", 8, false, 8, ""},
		{"a memtray of 7", "", 7, false, 7, ""},
		{"a memtray of 6", "", 6, false, 6, ""},
		{"a memtray of 5", "", 5, false, 5, ""},
		{"a memtray of 4", "", 4, false, 4, ""},
		{"a memtray of 3", "", 3, false, 3, ""},
		{"a memtray of 2 (bases)", "", 2, true, 0, fmt.Sprintf("at version %d, which memtray of schema version 3 or later may sync with; this memtray knows 2", SchemaVersion)},
		{"a memtray of 1", "", 1, true, 0, fmt.Sprintf("at version %d, which memtray of schema version 3 or later may sync with; this memtray knows 1", SchemaVersion)},
		{"a future version compatible with this one", fmt.Sprintf("INSERT INTO memtray.schema_version (version, compat) VALUES (%d, %d)", SchemaVersion+1, SchemaVersion), SchemaVersion, false, SchemaVersion, ""},
		{"a future version that is not", fmt.Sprintf("UPDATE memtray.schema_version SET compat = %d WHERE version = %d", SchemaVersion+1, SchemaVersion+1), SchemaVersion, true, 0, fmt.Sprintf("at version %d, which memtray of schema version %d or later", SchemaVersion+1, SchemaVersion+1)},
		{"a future version with no floor recorded", fmt.Sprintf("UPDATE memtray.schema_version SET compat = NULL WHERE version = %d", SchemaVersion+1), SchemaVersion, true, 0, ""},
		{"before floors were recorded, this version", fmt.Sprintf("DELETE FROM memtray.schema_version WHERE version > %d; ALTER TABLE memtray.schema_version DROP COLUMN compat", SchemaVersion), SchemaVersion, false, SchemaVersion, ""},
		// A memtray of 8 cannot know that 9, recorded without a floor,
		// was compatible: it refuses, as every memtray did before floors.
		{"before floors were recorded, a memtray of 8", "", 8, true, 0, "at version 9, which memtray of schema version 9 or later"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != "" {
				if _, err := raw.Exec(ctx, tc.setup); err != nil {
					t.Fatal(err)
				}
			}
			s, err := open(tc.known)
			if tc.refused {
				if !errors.Is(err, ErrSchemaNewer) {
					t.Fatalf("open: %v, want ErrSchemaNewer", err)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("this memtray knows %d", tc.known)) || !strings.Contains(err.Error(), tc.says) {
					t.Errorf("the error does not name the versions: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			if db, used := s.Schema(); used != tc.used || db < SchemaVersion {
				t.Errorf("Schema() = %d, %d; want the database's, %d", db, used, tc.used)
			}
		})
	}
}

// TestFloorSyncs: a memtray of version 4 on a database the owner
// migrated to 7 syncs: its push is stored, and a push of a copy behind
// the owner's edit merges onto it as on 6.
func TestFloorSyncs(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	role := fmt.Sprintf("%s_old", tm.owner)
	tm.member(t, owner, role, false)
	old, err := openAs(ctx, tm.url(role), 4)
	if err != nil {
		t.Fatalf("a memtray of 4 on a database at %d: %v", SchemaVersion, err)
	}
	defer old.Close()
	v0 := mem("f1", "the floor lets an older member sync")
	if res, err := old.Push(ctx, []Memory{v0}); err != nil || res[0].Status != PushInserted {
		t.Fatalf("push from 4: %+v, %v", res, err)
	}
	edit := withText(v0, "the floor lets an older member keep syncing")
	edit.Base = baseOf(v0)
	if res, err := owner.Push(ctx, []Memory{edit}); err == nil && res[0].Status != PushUpdated {
		t.Fatalf("the owner's edit: %+v", res)
	} else if err != nil {
		t.Fatal(err)
	}
	decay := v0
	decay.Importance, decay.Base = 0.2, baseOf(v0)
	if res, err := old.Push(ctx, []Memory{decay}); err != nil || res[0].Status != PushMerged {
		t.Fatalf("a decay from 4 on a copy behind the owner's edit: %+v, %v, want merged", res, err)
	}
	got, err := owner.Get(ctx, "f1")
	if err != nil || got.Text != edit.Text || got.Importance != 0.2 {
		t.Fatalf("the team holds %q %v (%v), want the owner's text with 4's decay", got.Text, got.Importance, err)
	}
}

// TestFloorsRecordedAtUpgrade: a database migrated before floors were
// recorded (no compat column) gets them at the owner's next migration:
// the versions applied before from what this code knows of them, the new
// one from its migration.
func TestFloorsRecordedAtUpgrade(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	tm.open(t, tm.owner)
	raw := tm.raw(t, tm.owner)
	// Back to version 5, as a memtray before floors left it.
	if _, err := raw.Exec(ctx, `DROP INDEX memtray.memories_content_hash_project;
		CREATE UNIQUE INDEX memories_content_hash ON memtray.memories (content_hash);
		DELETE FROM memtray.schema_version WHERE version IN (7, 8, 9);
		DROP POLICY prune ON memtray.conflicts;
		DROP FUNCTION memtray.set_conflict_retention(interval); DROP FUNCTION memtray.conflict_retention();
		DROP TABLE memtray.settings;
		CREATE POLICY prune ON memtray.conflicts FOR DELETE
			USING (memtray.is_member(current_user) AND at < now() - interval '90 days');
		DELETE FROM memtray.schema_version WHERE version = 6;
		ALTER TABLE memtray.schema_version DROP COLUMN compat`); err != nil {
		t.Fatal(err)
	}
	if got := compats(t, raw); !slices.Equal(got, []int{-1, -1, -1, -1, -1}) {
		t.Fatalf("set up: floors %v", got)
	}
	tm.open(t, tm.owner)
	if got := compats(t, raw); !slices.Equal(got, []int{1, 1, 3, 3, 3, 3, 3, 3, 3}) {
		t.Fatalf("after the owner's migration to 9: floors %v, want 1 1 3 3 3 3 3 3 3", got)
	}
}
