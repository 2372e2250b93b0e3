package tidy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// entry is what a snapshot records of one path under the plans dir.
type entry struct {
	Kind    string // "file", "dir" or "symlink"
	Content string // file content or symlink target
	ModTime time.Time
}

// snapshot records every path under dir: names, kinds, contents and file
// modification times (folders' own times are left out: renames change them).
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	snap := map[string]entry{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			snap[rel] = entry{Kind: "symlink", Content: target}
			return err
		case fi.IsDir():
			snap[rel] = entry{Kind: "dir"}
		default:
			data, err := os.ReadFile(p)
			snap[rel] = entry{Kind: "file", Content: string(data), ModTime: fi.ModTime()}
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// fixture makes a plans dir with one plan of every class, sub-plans and a symlink.
func fixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writePlan(t, dir, "active.md", "# Active -- Done\n", testNow.Add(-time.Minute))
	writePlan(t, dir, "done.md", "# Auth — COMPLETED\n"+big, daysAgo(20))
	writePlan(t, dir, "done-agent-research.md", "# research\n"+big, daysAgo(3))
	writePlan(t, dir, "done-agent-live.md", "# live\n", testNow.Add(-time.Hour))
	writePlan(t, dir, "older-done.md", "# Old\n\nNo further planning needed.\n", daysAgo(70))
	writePlan(t, dir, "stub.md", "# Idea\n", daysAgo(8))
	writePlan(t, dir, "cold.md", "# Cold\n"+big, daysAgo(15))
	writePlan(t, dir, "fresh.md", "# Fresh\n", daysAgo(2))
	writePlan(t, dir, "checklist.md", "# Plan\n\n- [x] Done\n"+big, daysAgo(30))
	if err := os.Symlink("done.md", filepath.Join(dir, "link.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	return dir
}

func TestDryRunChangesNothing(t *testing.T) {
	dir := fixture(t)
	before := snapshot(t, dir)
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Archived != 3 || rep.Summary.Trashed != 1 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("scan changed the dir:\nbefore %v\nafter  %v", before, after)
	}
}

func TestApplyThenUndo(t *testing.T) {
	dir := fixture(t)
	if err := os.MkdirAll(filepath.Join(dir, "archive", "2024-01"), 0o700); err != nil {
		t.Fatal(err)
	}
	writePlan(t, dir, "archive/2024-01/ancient.md", "# ancient\n", daysAgo(500))
	before := snapshot(t, dir)
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	j, err := Apply(rep, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Moves) != 4 {
		t.Fatalf("moves %+v", j.Moves)
	}
	if want := []string{"archive/2025-04", "archive/2025-05", ".trash"}; !sameSet(j.CreatedDirs, want) {
		t.Errorf("created dirs %v, want %v", j.CreatedDirs, want)
	}
	after := snapshot(t, dir)
	moved := map[string]string{
		"done.md":                "archive/2025-05/done.md",
		"done-agent-research.md": "archive/2025-05/done-agent-research.md",
		"older-done.md":          "archive/2025-04/older-done.md",
		"checklist.md":           "", // dormant: stays
		"stub.md":                ".trash/stub.md",
	}
	for from, to := range moved {
		if to == "" {
			continue
		}
		if _, ok := after[from]; ok {
			t.Errorf("%s still there", from)
		}
		if after[to].Content != before[from].Content || !after[to].ModTime.Equal(before[from].ModTime) {
			t.Errorf("%s -> %s: not the same file", from, to)
		}
	}
	for _, kept := range []string{"active.md", "done-agent-live.md", "cold.md", "fresh.md", "checklist.md", "archive/2024-01/ancient.md"} {
		if !reflect.DeepEqual(after[kept], before[kept]) {
			t.Errorf("%s was touched", kept)
		}
	}
	if after["link.md"] != (entry{Kind: "symlink", Content: "done.md"}) {
		t.Errorf("symlink touched: %+v", after["link.md"])
	}
	if _, ok := after[JournalName]; !ok {
		t.Fatal("no journal")
	}

	res, err := Undo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Restored) != 4 || len(res.Changed) != 0 || len(res.NotMoved) != 0 {
		t.Errorf("undo result %+v", res)
	}
	if restored := snapshot(t, dir); !reflect.DeepEqual(before, restored) {
		t.Fatalf("undo did not restore the dir:\nbefore   %v\nrestored %v", before, restored)
	}
	if _, err := Undo(dir); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("second undo: %v, want ErrNothingToUndo", err)
	}
}

func TestUndoNothing(t *testing.T) {
	_, err := Undo(t.TempDir())
	if !errors.Is(err, ErrNothingToUndo) || !strings.Contains(err.Error(), JournalName) {
		t.Fatalf("got %v", err)
	}
}

func TestUndoRefusesClash(t *testing.T) {
	dir := fixture(t)
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(rep, testNow); err != nil {
		t.Fatal(err)
	}
	writePlan(t, dir, "stub.md", "# a new plan by the same name\n", testNow)
	before := snapshot(t, dir)
	_, err = Undo(dir)
	if err == nil || !strings.Contains(err.Error(), "stub.md is taken") || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("got %v", err)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused undo changed the dir")
	}
	// Once the clash is gone, the undo goes through.
	if err := os.Remove(filepath.Join(dir, "stub.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Undo(dir); err != nil {
		t.Fatal(err)
	}
}

func TestApplyRefusesChangedSource(t *testing.T) {
	dir := fixture(t)
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	writePlan(t, dir, "stub.md", "# Idea, now being worked on\n", testNow) // edited after the scan
	before := snapshot(t, dir)
	if _, err := Apply(rep, testNow); err == nil || !strings.Contains(err.Error(), "stub.md changed") {
		t.Fatalf("got %v", err)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused apply changed the dir")
	}
}

func TestApplyRefusesNonFolderArchive(t *testing.T) {
	dir := fixture(t)
	writePlan(t, dir, "archive", "not a folder\n", daysAgo(1))
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, dir)
	if _, err := Apply(rep, testNow); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Fatalf("got %v", err)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused apply changed the dir")
	}
}

func TestApplyNothingWritesNoJournal(t *testing.T) {
	dir := t.TempDir()
	writePlan(t, dir, "fresh.md", "# Fresh\n", daysAgo(1))
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	j, err := Apply(rep, testNow)
	if err != nil || len(j.Moves) != 0 {
		t.Fatalf("%+v %v", j, err)
	}
	if _, err := os.Stat(filepath.Join(dir, JournalName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("journal written: %v", err)
	}
}

func TestUndoKeepsEditsToMovedFiles(t *testing.T) {
	dir := fixture(t)
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(rep, testNow); err != nil {
		t.Fatal(err)
	}
	edited := testNow.Add(-time.Minute).Truncate(time.Second)
	writePlan(t, dir, ".trash/stub.md", "# Idea, rescued and edited\n", edited)
	res, err := Undo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 1 || res.Changed[0] != "stub.md" {
		t.Fatalf("changed %v", res.Changed)
	}
	fi, err := os.Stat(filepath.Join(dir, "stub.md"))
	if err != nil || !fi.ModTime().Equal(edited) {
		t.Fatalf("edited file: %v %v", fi, err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}
