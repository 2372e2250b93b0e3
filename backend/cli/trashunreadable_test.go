package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/daemon"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestUnreadableTrashEntryCommands: with one trash entry garbled by the
// test (its text's bytes in the records file), `memtray trash` lists the
// others and names it after them, `memtray trash restore` of it fails
// saying it cannot be read and how to delete it, and `memtray trash purge`
// deletes it; from a command that opens the store itself and through a
// running daemon. At 9937c7b `memtray trash` failed with "list trash:
// trash entry …: corrupt record" and listed nothing.
func TestUnreadableTrashEntryCommands(t *testing.T) {
	for _, withDaemon := range []bool{false, true} {
		t.Run(fmt.Sprintf("daemon=%v", withDaemon), func(t *testing.T) {
			ctx := context.Background()
			dir := isolate(t)
			dd := "--data-dir=" + dir
			var ids []string
			for i := range 3 {
				code, out, errs := run(t, ctx, "", "add", dd, "--json", fmt.Sprintf("The archive job %d moves old logs to cold-%d storage every night.", i, i))
				var m memory.Memory
				if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
					t.Fatalf("add: %d %q %s", code, out, errs)
				}
				ids = append(ids, m.ID)
				if code, _, errs := run(t, ctx, "", "delete", dd, m.ID); code != 0 {
					t.Fatalf("delete: %d %s", code, errs)
				}
			}
			garbleRecordInFile(t, filepath.Join(dir, daemon.StoreDir, "memtray.db"), "The archive job 1 moves")
			if withDaemon {
				serveUntilEnd(t, dir)
			}
			bad := ids[1]
			code, out, errs := run(t, ctx, "", "trash", dd)
			if code != 0 || !strings.Contains(out, ids[0]) || !strings.Contains(out, ids[2]) || !strings.Contains(out, "2 in the trash") ||
				!strings.Contains(out, "1 more cannot be read and are not listed ("+bad+")") {
				t.Fatalf("trash: exit %d\n%s%s", code, out, errs)
			}
			code, _, errs = run(t, ctx, "", "trash", dd, "restore", bad)
			if code != 1 || !strings.Contains(errs, "cannot be read") || !strings.Contains(errs, "memtray trash purge "+bad) {
				t.Fatalf("trash restore of the unreadable entry: exit %d %s", code, errs)
			}
			if code, out, errs := run(t, ctx, "", "trash", dd, "purge", bad); code != 0 || !strings.Contains(out, "deleted 1") {
				t.Fatalf("trash purge: exit %d %q %s", code, out, errs)
			}
			code, out, errs = run(t, ctx, "", "trash", dd)
			if code != 0 || strings.Contains(out, "cannot be read") || !strings.Contains(out, "2 in the trash") {
				t.Fatalf("trash after the purge: exit %d\n%s%s", code, out, errs)
			}
		})
	}
}

// TestUnreadableTrashLine: `memtray trash` names the unreadable entries by
// the stats' ids (store.Info.TrashUnreadableIDs), whatever the warnings
// say: at 1368516 it parsed "trash entry ID is unreadable" out of the
// warnings' text, so a reworded warning named nothing.
func TestUnreadableTrashLine(t *testing.T) {
	const a, b = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	for _, tc := range []struct {
		name string
		info store.Info
		want string // "" for no line
	}{
		{"healthy", store.Info{}, ""},
		{"named by the data, warnings reworded", store.Info{TrashUnreadable: 2, TrashUnreadableIDs: []string{a, b},
			Warnings: []string{"2 entries of the trash could not be decoded"}}, "2 more cannot be read and are not listed (" + a + ", " + b + "): "},
		{"named by the data, no warning", store.Info{TrashUnreadable: 1, TrashUnreadableIDs: []string{a}}, "1 more cannot be read and are not listed (" + a + "): "},
		{"counted, not named", store.Info{TrashUnreadable: 1}, "1 more cannot be read and are not listed: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unreadableTrashLine(tc.info)
			if tc.want == "" {
				if got != "" {
					t.Fatalf("got %q, want no line", got)
				}
				return
			}
			if !strings.HasPrefix(got, tc.want) || !strings.Contains(got, "memtray trash purge ID") {
				t.Fatalf("got %q, want it to begin %q and say how to purge", got, tc.want)
			}
		})
	}
}
