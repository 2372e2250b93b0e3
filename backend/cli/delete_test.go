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
	for _, daemon := range []bool{false, true} {
		name := "local"
		if daemon {
			name = "daemon"
		}
		t.Run(name, func(t *testing.T) { testDeleteGoesToTheTrash(t, daemon) })
	}
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
