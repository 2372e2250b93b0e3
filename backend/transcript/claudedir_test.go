package transcript

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestClaudeProjectDir(t *testing.T) {
	for _, tc := range []struct{ cwd, want string }{
		{"/home/me/src/memtray", "-home-me-src-memtray"},
		{"/home/me/.config/my_app", "-home-me--config-my-app"},
		{"/Users/me/Open Source/a+b", "-Users-me-Open-Source-a-b"},
		{"/home/me/Проект", "-home-me-------"},
		{"/home/me/x😀y", "-home-me-x--y"}, // a surrogate pair: two code units
		{`C:\Users\me\proj`, "C--Users-me-proj"},
	} {
		if got := ClaudeProjectDir(tc.cwd); got != tc.want {
			t.Errorf("ClaudeProjectDir(%q) = %q, want %q", tc.cwd, got, tc.want)
		}
	}
}

// mkdirs makes the directories under root and returns root's real path.
func mkdirs(t *testing.T, root string, dirs ...string) string {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	return real
}

// TestResolveClaudeProjectDir: a folder name is read against the
// filesystem: one directory encoding the whole name is the working
// directory; two are ambiguous; a removed one leaves the deepest
// directory of the name that exists; other names are not Claude Code's.
func TestResolveClaudeProjectDir(t *testing.T) {
	root := mkdirs(t, t.TempDir(), "src/my.app", "amb/a-b", "amb/a/b", "repo/.git", "repo/backend")
	for _, tc := range []struct {
		name       string
		ok, exact  bool
		dir        string
		others     int
		notClaudes bool
	}{
		{ClaudeProjectDir(filepath.Join(root, "src/my.app")), true, true, filepath.Join(root, "src/my.app"), 0, false},
		{ClaudeProjectDir(filepath.Join(root, "amb/a-b")), true, false, "", 1, false},
		{ClaudeProjectDir(filepath.Join(root, "repo/backend/gone")), true, false, filepath.Join(root, "repo/backend"), 0, false},
		{"sessions", false, false, "", 0, true},
		{"-home-me-src-x_y", false, false, "", 0, true},
	} {
		m, ok := ResolveClaudeProjectDir(tc.name)
		if ok != tc.ok || m.Exact != tc.exact || m.Others != tc.others || (tc.dir != "" && m.Dir != tc.dir) {
			t.Errorf("%s: %+v ok %v; want exact %v dir %q others %d ok %v", tc.name, m, ok, tc.exact, tc.dir, tc.others, tc.ok)
		}
	}
	// Two directories read a name as far (the rest is not on this
	// machine): neither is the deepest, no repository is taken.
	if m, ok := ResolveClaudeProjectDir(ClaudeProjectDir(filepath.Join(root, "amb/a-b/gone"))); !ok || m.Exact || m.Dir != "" {
		t.Errorf("tied name: %+v ok %v, want no directory", m, ok)
	}
	// A name Claude Code cut at 200 characters and hashed: its start leads
	// to the deepest directory, never an exact one.
	long := filepath.Join(root, "repo/backend", strings.Repeat("deep/", 50))
	name := ClaudeProjectDir(long)[:claudeDirMax] + "-1x2y3z"
	if m, ok := ResolveClaudeProjectDir(name); !ok || m.Exact || !m.Cut || m.Dir != filepath.Join(root, "repo/backend") {
		t.Errorf("cut name: %+v ok %v", m, ok)
	}
}

// noCWD returns testdata/basic.jsonl without its "cwd" fields: a Claude
// Code session whose records name no working directory.
func noCWD(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "basic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`"cwd":"[^"]*",`).ReplaceAll(data, nil)
}

// TestClaudeFolderProject: a Claude Code session whose records name no
// working directory takes the project of the directory its folder name
// encodes, when that directory (or a repository holding it) is on this
// machine, and none otherwise, saying why; records that name one win.
func TestClaudeFolderProject(t *testing.T) {
	base := t.TempDir()
	root := mkdirs(t, base, "work/harbor.web", "work/kiln/.git", "work/kiln/fw")
	data := noCWD(t)
	write := func(folder string, content []byte) string {
		p := filepath.Join(base, "claude", "projects", folder, "sess-basic.jsonl")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	withCWD, err := os.ReadFile(filepath.Join("testdata", "basic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, folder string
		data         []byte
		project      string
		note         string
	}{
		{"exact", ClaudeProjectDir(filepath.Join(root, "work/harbor.web")), data, "harbor.web", "encodes " + filepath.Join(root, "work/harbor.web")},
		{"removed, in a repository", ClaudeProjectDir(filepath.Join(root, "work/kiln/fw/old")), data, "kiln", "from the repository"},
		{"not on this machine", "-nowhere-to-be-found-here", data, "", "not on this machine"},
		{"not a Claude Code folder", "sessions", data, "", ""},
		{"the records name it", ClaudeProjectDir(filepath.Join(root, "work/harbor.web")), withCWD, "kvstore", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exs, st, err := ParseFile(write(tc.folder, tc.data), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(exs) == 0 || st.Project != tc.project || !strings.Contains(st.ProjectNote, tc.note) || (tc.note == "" && st.ProjectNote != "") {
				t.Fatalf("project %q note %q (%d exchanges), want %q and a note with %q", st.Project, st.ProjectNote, len(exs), tc.project, tc.note)
			}
			for _, ex := range exs {
				if ex.Project != tc.project {
					t.Fatalf("exchange %d: project %q, want %q", ex.Turn, ex.Project, tc.project)
				}
			}
		})
	}
}
