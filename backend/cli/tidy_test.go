package cli

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tidySnapshot maps every path under dir to its content and modification time.
func tidySnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	snap := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			snap[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		snap[rel] = fi.ModTime().Format(time.RFC3339Nano) + " " + string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func tidyFixture(t *testing.T, now time.Time) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []struct {
		name, content string
		mtime         time.Time
	}{
		{"today.md", "# Today -- Done\n", now.Add(-time.Minute)},
		{"done.md", "# Auth — COMPLETED\n\nbody\n", now.AddDate(0, 0, -20)},
		{"done-agent-sub.md", "# sub\n", now.AddDate(0, 0, -2)},
		{"stub.md", "# Idea\n", now.AddDate(0, 0, -8)},
		{"cold.md", "# Cold\n" + strings.Repeat("notes\n", 500), now.AddDate(0, 0, -15)},
		{"fresh.md", "# Fresh\n\n- [x] Done\n", now.AddDate(0, 0, -1)},
	} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestTidyCommand(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	now := time.Date(2025, 6, 15, 12, 0, 0, 0, time.Local)
	nowFlag := "--now=" + now.Format(time.RFC3339)
	dir := tidyFixture(t, now)
	before := tidySnapshot(t, dir)

	code, out, errs := run(t, ctx, "", "tidy", dir, nowFlag)
	if code != 0 {
		t.Fatalf("dry run: %d %s", code, errs)
	}
	for _, want := range []string{"CLASS", "active", "today.md", "-> archive/2025-05/done.md", "-> archive/2025-05/done-agent-sub.md",
		"-> .trash/stub.md", "dormant", "recent", "Dry run: nothing changed", "safe delete"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if !reflect.DeepEqual(before, tidySnapshot(t, dir)) {
		t.Fatal("dry run changed the dir")
	}

	code, out, _ = run(t, ctx, "", "tidy", dir, nowFlag, "--json")
	var res struct {
		Applied bool `json:"applied"`
		Plans   []struct {
			Name   string `json:"name"`
			Class  string `json:"class"`
			Action string `json:"action"`
		} `json:"plans"`
		Summary struct {
			Total   int            `json:"total"`
			ByClass map[string]int `json:"by_class"`
		} `json:"summary"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Applied || res.Summary.Total != 6 ||
		res.Summary.ByClass["completed"] != 2 || res.Summary.ByClass["stale"] != 1 || res.Summary.ByClass["dormant"] != 1 {
		t.Fatalf("--json: %d %s", code, out)
	}

	code, out, errs = run(t, ctx, "", "tidy", dir, nowFlag, "--current", filepath.Join(dir, "stub.md"))
	if code != 0 || strings.Contains(out, ".trash/stub.md") || !strings.Contains(out, "current session") {
		t.Fatalf("--current: %d %s %s", code, out, errs)
	}

	code, out, errs = run(t, ctx, "", "tidy", dir, nowFlag, "--apply")
	if code != 0 || !strings.Contains(out, "Moved 3") || !strings.Contains(out, "--undo") {
		t.Fatalf("--apply: %d %s %s", code, out, errs)
	}
	for _, p := range []string{"archive/2025-05/done.md", "archive/2025-05/done-agent-sub.md", ".trash/stub.md", "today.md", "cold.md", ".tidy-undo.json"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("after --apply: %v", err)
		}
	}

	code, out, errs = run(t, ctx, "", "tidy", dir, "--undo")
	if code != 0 || !strings.Contains(out, "restored 3 files") {
		t.Fatalf("--undo: %d %s %s", code, out, errs)
	}
	if after := tidySnapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("undo did not restore the dir:\nbefore %v\nafter  %v", before, after)
	}
	code, _, errs = run(t, ctx, "", "tidy", dir, "--undo")
	if code != 1 || !strings.Contains(errs, "nothing to undo") {
		t.Fatalf("second --undo: %d %s", code, errs)
	}
}

func TestTidyUsage(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"tidy"},
		{"tidy", dir, dir},
		{"tidy", dir, "--apply", "--undo"},
		{"tidy", dir, "--now", "yesterday"},
		{"tidy", dir, "--stale-days", "-1"},
	} {
		if code, _, errs := run(t, ctx, "", args...); code != 2 || !strings.Contains(errs, "usage: memtray tidy") {
			t.Errorf("%v: %d %s", args, code, errs)
		}
	}
	if code, _, errs := run(t, ctx, "", "tidy", filepath.Join(dir, "missing")); code != 1 || !strings.Contains(errs, "read plans dir") {
		t.Errorf("missing dir: %d %s", code, errs)
	}
	if code, out, _ := run(t, ctx, "", "tidy", dir); code != 0 || !strings.Contains(out, "no plan files") {
		t.Errorf("empty dir: %d %s", code, out)
	}
}
