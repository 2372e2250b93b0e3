package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestDeleteGoesToTheTrash: delete moves a memory to the trash and says how
// to bring it back (with the store's --data-dir); trash lists it, trash
// restore brings it back; delete --purge deletes it for good. The same on
// the store and through a daemon (DELETE /api/memories/{id}[?purge=true]).
func TestDeleteGoesToTheTrash(t *testing.T) {
	localAndDaemon(t, testDeleteGoesToTheTrash)
}

func testDeleteGoesToTheTrash(t *testing.T, daemon bool) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	if daemon {
		serveUntilEnd(t, dir)
		if code, out, _ := run(t, ctx, "", "stats", dd); code != 0 || !strings.Contains(out, "running, pid") {
			t.Fatalf("stats: the daemon does not answer: %q", out)
		}
	}
	code, out, errs := run(t, ctx, "", "add", dd, "--kind", "fact", "--json", "The nightly backup job writes to the cold-storage bucket at 02:00 UTC.")
	var m memory.Memory
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.ID == "" {
		t.Fatalf("add: %d %q %s", code, out, errs)
	}
	id := m.ID
	code, out, errs = run(t, ctx, "", "delete", dd, id)
	if code != 0 || !strings.Contains(out, "moved "+id+" to the trash") || !strings.Contains(out, "--data-dir "+dir) || !strings.Contains(out, id+"` brings it back") {
		t.Fatalf("delete: %d %q %s", code, out, errs)
	}
	if code, _, errs := run(t, ctx, "", "get", dd, id); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("get after delete: %d %s", code, errs)
	}
	if code, out, errs := run(t, ctx, "", "trash", dd); code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "deleted") {
		t.Fatalf("trash: %d %q %s", code, out, errs)
	}
	if code, _, errs := run(t, ctx, "", "trash", dd, "restore", id); code != 0 {
		t.Fatalf("trash restore: %d %s", code, errs)
	}
	if code, out, errs := run(t, ctx, "", "get", dd, id); code != 0 || !strings.Contains(out, "cold-storage") {
		t.Fatalf("get after restore: %d %q %s", code, out, errs)
	}
	if code, out, errs := run(t, ctx, "", "delete", dd, "--purge", id); code != 0 || !strings.Contains(out, "for good") {
		t.Fatalf("delete --purge: %d %q %s", code, out, errs)
	}
	if code, out, _ := run(t, ctx, "", "trash", dd); code != 0 || strings.Contains(out, id) {
		t.Fatalf("trash after purge lists %s: %q", id, out)
	}
	for _, args := range [][]string{{"no-such-id"}, {"--purge", "no-such-id"}} {
		if code, _, errs := run(t, ctx, "", append([]string{"delete", dd}, args...)...); code != 1 || !strings.Contains(errs, "not found") {
			t.Fatalf("delete %v: %d %s", args, code, errs)
		}
	}
}

// TestPurgeFromTheTrash: delete --purge of a memory already in the trash
// deletes its trash entry for good and says so; trash purge ID deletes
// entries for good, trash purge --all empties the trash. The same on the
// store and through a daemon (POST /api/trash/purge).
func TestPurgeFromTheTrash(t *testing.T) {
	localAndDaemon(t, testPurgeFromTheTrash)
}

func testPurgeFromTheTrash(t *testing.T, daemon bool) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	if daemon {
		serveUntilEnd(t, dir)
	}
	var ids []string
	for _, text := range []string{
		"The staging database is refreshed from a masked snapshot every Monday.",
		"Release branches are cut on the first Tuesday of each month.",
		"The design review board meets in the small room on the third floor.",
	} {
		code, out, errs := run(t, ctx, "", "add", dd, "--kind", "fact", "--json", text)
		var m memory.Memory
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.ID == "" {
			t.Fatalf("add: %d %q %s", code, out, errs)
		}
		if code, out, errs := run(t, ctx, "", "delete", dd, m.ID); code != 0 {
			t.Fatalf("delete: %d %q %s", code, out, errs)
		}
		ids = append(ids, m.ID)
	}
	if code, out, errs := run(t, ctx, "", "delete", dd, "--purge", ids[0]); code != 0 || !strings.Contains(out, "deleted "+ids[0]+" for good from the trash") {
		t.Fatalf("delete --purge of a trashed memory: %d %q %s", code, out, errs)
	}
	if code, out, errs := run(t, ctx, "", "trash", dd, "restore", ids[0]); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("restore after delete --purge: %d %q %s", code, out, errs)
	}
	if code, out, errs := run(t, ctx, "", "trash", dd, "purge", ids[1]); code != 0 || !strings.Contains(out, "deleted 1 from the trash for good") {
		t.Fatalf("trash purge ID: %d %q %s", code, out, errs)
	}
	if code, out, _ := run(t, ctx, "", "trash", dd); code != 0 || strings.Contains(out, ids[1]) || !strings.Contains(out, ids[2]) {
		t.Fatalf("trash after purge ID: %q", out)
	}
	if code, out, errs := run(t, ctx, "", "trash", dd, "purge", ids[1]); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("trash purge of a purged ID: %d %q %s", code, out, errs)
	}
	if code, out, errs := run(t, ctx, "", "trash", dd, "purge", "--all"); code != 0 || !strings.Contains(out, "deleted 1 from the trash for good") {
		t.Fatalf("trash purge --all: %d %q %s", code, out, errs)
	}
	if code, out, _ := run(t, ctx, "", "trash", dd); code != 0 || !strings.Contains(out, "0 in the trash") {
		t.Fatalf("trash after purge --all: %q", out)
	}
	for _, args := range [][]string{{"purge"}, {"purge", "--all", ids[2]}, {"--all"}, {"restore", "--all", ids[2]}, {"empty"}} {
		if code, _, errs := run(t, ctx, "", append([]string{"trash", dd}, args...)...); code != 2 {
			t.Errorf("trash %v: %d %s, want a usage error", args, code, errs)
		}
	}
}

// localAndDaemon runs test twice: on the store directly ("local") and
// through a running daemon ("daemon").
func localAndDaemon(t *testing.T, test func(t *testing.T, daemon bool)) {
	for _, daemon := range []bool{false, true} {
		name := "local"
		if daemon {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) { test(t, daemon) })
	}
}
