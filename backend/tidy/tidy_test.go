package tidy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2025, 6, 15, 12, 0, 0, 0, time.UTC)

func testOptions() Options {
	o := DefaultOptions(testNow)
	o.Location = time.UTC
	return o
}

func daysAgo(d float64) time.Time { return testNow.Add(-time.Duration(d * float64(24*time.Hour))) }

// writePlan writes a plan file with the given modification time.
func writePlan(t *testing.T, dir, name, content string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// big is a body over the default 2048-byte stale limit.
var big = strings.Repeat("Some notes about the approach, with progress. Done: step one. Complete: step two.\n", 40)

func byName(plans []Plan) map[string]Plan {
	m := map[string]Plan{}
	for _, p := range plans {
		m[p.Name] = p
	}
	return m
}

func TestScanClasses(t *testing.T) {
	type file struct {
		name, content string
		age           float64 // days
	}
	cases := []struct {
		name    string
		files   []file
		current string
		want    map[string]Class
		dest    map[string]string
	}{
		{
			name: "each class",
			files: []file{
				{"today.md", "# Today -- Done\n", 0.01},
				{"done.md", "# Auth — COMPLETED\n" + big, 20},
				{"stub.md", "# Idea\n", 8},
				{"cold.md", "# Cold plan\n" + big, 15},
				{"fresh.md", "# Fresh\n", 3},
				{"big-recent.md", "# Work\n" + big, 10},
			},
			want: map[string]Class{"today.md": Active, "done.md": Completed, "stub.md": Stale, "cold.md": Dormant, "fresh.md": Recent, "big-recent.md": Recent},
			dest: map[string]string{"done.md": "archive/2025-05/done.md", "stub.md": ".trash/stub.md"},
		},
		{
			name: "false positives are not completed",
			files: []file{
				{"checklist.md", "# Plan\n\n- [x] Done: parser\n- [x] Step 2 -- Done\n", 30},
				{"midfile.md", "# Plan\n\nPhase 1 -- Complete\n\nPhase 2 next\n" + big, 30},
				{"body.md", "# Plan\n\nCOMPLETED\n\nmore work\n", 30},
				{"h1.md", "# Plan COMPLETED\n\nmore work\n", 30},
			},
			want: map[string]Class{"checklist.md": Stale, "midfile.md": Dormant, "body.md": Stale, "h1.md": Completed},
		},
		{
			name:    "current plan is active however old",
			files:   []file{{"mine.md", "# x -- Done\n", 40}, {"other.md", "# x\n", 40}},
			current: "mine.md",
			want:    map[string]Class{"mine.md": Active, "other.md": Stale},
		},
		{
			name:  "modified in the future is active",
			files: []file{{"skew.md", "# x -- Done\n", -2}},
			want:  map[string]Class{"skew.md": Active},
		},
		{
			name: "thresholds are strict",
			files: []file{
				{"seven.md", "# x\n", 7},
				{"fourteen.md", "# x\n" + big, 14},
				{"justover.md", "# x\n", 7.01},
			},
			want: map[string]Class{"seven.md": Recent, "fourteen.md": Recent, "justover.md": Stale},
		},
		{
			name: "sub-plans inherit completed and go to the parent's archive folder",
			files: []file{
				{"auth.md", "# Auth -- Done\n", 45},
				{"auth-agent-research.md", "# research notes\n" + big, 3},
				{"auth-agent-tests.md", "# tests\n", 1},
				{"auth-agent-tests-agent-deep.md", "# deeper\n", 2},
			},
			want: map[string]Class{"auth.md": Completed, "auth-agent-research.md": Completed, "auth-agent-tests.md": Completed, "auth-agent-tests-agent-deep.md": Completed},
			dest: map[string]string{
				"auth.md": "archive/2025-05/auth.md", "auth-agent-research.md": "archive/2025-05/auth-agent-research.md",
				"auth-agent-tests.md": "archive/2025-05/auth-agent-tests.md", "auth-agent-tests-agent-deep.md": "archive/2025-05/auth-agent-tests-agent-deep.md",
			},
		},
		{
			name: "an active sub-plan stays active under a completed parent",
			files: []file{
				{"auth.md", "# Auth -- Done\n", 45},
				{"auth-agent-live.md", "# live\n", 0.01},
			},
			want: map[string]Class{"auth.md": Completed, "auth-agent-live.md": Active},
		},
		{
			name: "sub-plans follow an active or recent parent, not their own markers",
			files: []file{
				{"live.md", "# live\n", 0.01},
				{"live-agent-old.md", "# old -- Done\n", 30},
				{"fresh.md", "# fresh\n", 2},
				{"fresh-agent-stub.md", "# stub\n", 30},
			},
			want: map[string]Class{"live.md": Active, "live-agent-old.md": Active, "fresh.md": Recent, "fresh-agent-stub.md": Recent},
		},
		{
			name: "no parent file: classified on its own",
			files: []file{
				{"orphan-agent-x.md", "# x -- Done\n", 30},
				{"-agent-y.md", "# y\n", 30},
				{"z-agent-.md", "# z\n", 30},
				{"z.md", "# z\n" + big, 2},
			},
			want: map[string]Class{"orphan-agent-x.md": Completed, "-agent-y.md": Stale, "z-agent-.md": Stale, "z.md": Recent},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range c.files {
				writePlan(t, dir, f.name, f.content, daysAgo(f.age))
			}
			opts := testOptions()
			opts.Current = c.current
			rep, err := Scan(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := byName(rep.Plans)
			if len(got) != len(c.want) {
				t.Fatalf("got %d plans, want %d: %+v", len(got), len(c.want), rep.Plans)
			}
			for name, class := range c.want {
				if got[name].Class != class {
					t.Errorf("%s: got %s (%s), want %s", name, got[name].Class, got[name].Reason, class)
				}
			}
			for name, dest := range c.dest {
				if got[name].Dest != dest {
					t.Errorf("%s: dest %q, want %q", name, got[name].Dest, dest)
				}
			}
		})
	}
}

func TestScanSkipsAndIgnores(t *testing.T) {
	dir := t.TempDir()
	writePlan(t, dir, "target.md", "# target -- Done\n", daysAgo(30))
	if err := os.Symlink("target.md", filepath.Join(dir, "link.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join(dir, "nowhere.md"), filepath.Join(dir, "dangling.md")); err != nil {
		t.Fatal(err)
	}
	huge := make([]byte, MaxFileBytes+1)
	copy(huge, "# huge -- Done\n")
	writePlan(t, dir, "huge.md", string(huge), daysAgo(30))
	writePlan(t, dir, "notes.txt", "# x -- Done\n", daysAgo(30))
	for _, sub := range []string{"archive/2025-01", ".trash", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	writePlan(t, dir, "archive/2025-01/old.md", "# old\n", daysAgo(300))
	writePlan(t, dir, ".trash/gone.md", "# gone\n", daysAgo(300))
	writePlan(t, dir, "other/nested.md", "# nested\n", daysAgo(300))
	if err := os.Mkdir(filepath.Join(dir, "folder.md"), 0o700); err != nil {
		t.Fatal(err)
	}
	rep, err := Scan(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := byName(rep.Plans)
	if len(got) != 4 {
		t.Fatalf("want target, link, dangling, huge; got %+v", rep.Plans)
	}
	for _, n := range []string{"link.md", "dangling.md", "huge.md"} {
		if got[n].Class != Skipped || got[n].Action != Skip || got[n].Dest != "" {
			t.Errorf("%s: %+v, want skipped", n, got[n])
		}
	}
	if !strings.Contains(got["link.md"].Reason, "symlink") || !strings.Contains(got["huge.md"].Reason, "MiB") {
		t.Errorf("reasons: %q, %q", got["link.md"].Reason, got["huge.md"].Reason)
	}
	if got["target.md"].Class != Completed {
		t.Errorf("target: %+v", got["target.md"])
	}
}

func TestScanCurrentByPathAndFreeNames(t *testing.T) {
	dir := t.TempDir()
	writePlan(t, dir, "mine.md", "# x\n", daysAgo(30))
	writePlan(t, dir, "stub.md", "# x\n", daysAgo(30))
	writePlan(t, dir, "done.md", "# x -- Done\n", daysAgo(30))
	for _, p := range []string{".trash/stub.md", "archive/2025-05/done.md", "archive/2025-05/done.2.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		writePlan(t, dir, p, "earlier\n", daysAgo(100))
	}
	opts := testOptions()
	opts.Current = filepath.Join(dir, "mine.md")
	rep, err := Scan(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	got := byName(rep.Plans)
	if got["mine.md"].Class != Active {
		t.Errorf("--current by path: %+v", got["mine.md"])
	}
	if got["stub.md"].Dest != ".trash/stub.2.md" || got["done.md"].Dest != "archive/2025-05/done.3.md" {
		t.Errorf("free names: %q %q", got["stub.md"].Dest, got["done.md"].Dest)
	}
	if _, err := Scan(filepath.Join(dir, "missing"), opts); err == nil {
		t.Error("scan of a missing dir: no error")
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]Plan{{Class: Completed, Action: Archive}, {Class: Stale, Action: Trash}, {Class: Stale, Action: Trash}, {Class: Dormant, Action: Keep}})
	if s.Total != 4 || s.Archived != 1 || s.Trashed != 2 || s.ByClass[Stale] != 2 || s.ByClass[Active] != 0 || len(s.ByClass) != len(Classes) {
		t.Fatalf("%+v", s)
	}
}
