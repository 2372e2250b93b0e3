package importer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

func TestSections(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string // slug=first line of the text ("!" marks an empty section)
	}{
		{"no sections", "Use tabs.\n\nAlways.", []string{"=Use tabs."}},
		{"title only before sections", "# Title\n\n## A\nx\n## B\ny", []string{"a=## A", "b=## B"}},
		{"preamble kept", "Intro line.\n## A\nx", []string{"=Intro line.", "a=## A"}},
		{"fenced heading is not a section", "## Build\n```\n## comment\n```\n## Next\nz", []string{"build=## Build", "next=## Next"}},
		{"tilde fence", "## A\n~~~\n## no\n~~~\nmore", []string{"a=## A"}},
		{"duplicate slugs", "## Go & Rust!\nx\n## go rust\ny\n## Go Rust\nz", []string{"go-rust=## Go & Rust!", "go-rust-2=## go rust", "go-rust-3=## Go Rust"}},
		{"empty section", "## Empty\n\n## Full\ntext", []string{"empty!=## Empty", "full=## Full"}},
		{"h3 stays inside", "## A\n### sub\ntext", []string{"a=## A"}},
		{"unicode heading", "## Überblick – Café\ntext", []string{"überblick-café=## Überblick – Café"}},
		{"punctuation heading", "## ???\ntext", []string{"section=## ???"}},
		{"crlf", "## A\r\nx\r\n## B\r\ny\r\n", []string{"a=## A", "b=## B"}},
		{"only headings", "# T\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, s := range sections(c.text) {
				first, _, _ := strings.Cut(s.text, "\n")
				mark := ""
				if s.empty {
					mark = "!"
				}
				got = append(got, s.slug+mark+"="+strings.TrimRight(first, "\r"))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("sections = %q, want %q", got, c.want)
			}
		})
	}
}

func TestSplitFrontMatter(t *testing.T) {
	for _, c := range []struct {
		name, text, typ, body string
		ok                    bool
	}{
		{"front matter", "---\nname: a\ntype: user\n---\nbody\n", "user", "body\n", true},
		{"crlf", "---\r\ntype: feedback\r\n---\r\nbody", "feedback", "body", true},
		{"no front matter", "just text", "", "just text", true},
		{"closed at end", "---\ntype: project\n---", "project", "", true},
		{"unclosed", "---\ntype: project\nbody", "", "", false},
		{"block scalar", "---\ndescription: >\n  two\n  lines\ntype: reference\n---\nb", "reference", "b", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			fm, body, ok := splitFrontMatter(c.text)
			if ok != c.ok || (ok && (fm["type"] != c.typ || body != c.body)) {
				t.Fatalf("= %v %q %v, want type %q body %q ok %v", fm, body, ok, c.typ, c.body, c.ok)
			}
		})
	}
}

func TestFileOfSource(t *testing.T) {
	for src, want := range map[string]string{
		"import:claude:/h/.claude/projects/-a/memory/x.md":   "/h/.claude/projects/-a/memory/x.md",
		"import:claude:/h/.claude/projects/-a/memory/x.md~3": "/h/.claude/projects/-a/memory/x.md",
		"import:claude:/p/CLAUDE.md#build":                   "/p/CLAUDE.md",
		"import:claude:/p/CLAUDE.md#build~2":                 "/p/CLAUDE.md",
		"import:claude:/p/.claude/CLAUDE.md":                 "/p/.claude/CLAUDE.md",
		"import:claude:/p#1/CLAUDE.md#a":                     "/p#1/CLAUDE.md",
		"import:claude:/h/.claude/projects/-a/memory/a#b.md": "/h/.claude/projects/-a/memory/a#b.md",
	} {
		if got := fileOfSource(src); got != want {
			t.Errorf("fileOfSource(%q) = %q, want %q", src, got, want)
		}
	}
}

func TestScanLimitsAndProjects(t *testing.T) {
	home := t.TempDir()
	projects := filepath.Join(home, ".claude", "projects")
	mk := func(rel, text string) {
		p := filepath.Join(projects, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		mk(fmt.Sprintf("-w-a/memory/m%d.md", i), "---\ntype: project\n---\nMemory number "+fmt.Sprint(i)+" of the limit test.\n")
	}
	// A transcript whose first cwd belongs to another folder name, then the right one.
	mk("-srv-my-app/s.jsonl", `{"type":"summary"}`+"\n"+`{"cwd":"/srv/other"}`+"\n"+`{"cwd":"/srv/my.app"}`+"\n")
	mk("-srv-my-app/memory/a.md", "---\ntype: project\n---\nThe service runs on port 9000.\n")
	// Only a mismatching cwd: used, with a note.
	mk("-x-y/t.jsonl", `{"cwd":"/elsewhere/z"}`+"\n")
	mk("-x-y/memory/b.md", "---\ntype: feedback\n---\nKeep commits small.\n")
	// A cwd beyond the first 64 KiB is not read.
	mk("-late-q/t.jsonl", strings.Repeat(`{"type":"x"}`+"\n", 7000)+`{"cwd":"/late/q"}`+"\n")
	mk("-late-q/memory/c.md", "---\ntype: project\n---\nThe late project uses Bazel.\n")
	// No transcript records a cwd, and the folder's name encodes a
	// directory of this machine: its project, as `memtray ingest` resolves
	// it (transcript.ClaudeFolderProject), still guessed.
	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(realHome, "src", "my.tool")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	resolved := transcript.ClaudeProjectDir(work)
	mk(resolved+"/memory/d.md", "---\ntype: project\n---\nThe tool ships as one binary.\n")

	sc, err := newScanner(home)
	if err != nil {
		t.Fatal(err)
	}
	sc.maxFiles = 3
	if err := sc.scan(nil); err == nil || !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "more than 3 files") {
		t.Fatalf("scan over the file limit: %v", err)
	}

	sc, _ = newScanner(home)
	if err := sc.scan(nil); err != nil {
		t.Fatal(err)
	}
	got := map[string]*scanned{}
	for _, f := range sc.files {
		got[filepath.Base(filepath.Dir(filepath.Dir(f.path)))] = f
	}
	for _, c := range []struct{ dir, project, note string }{
		{"-srv-my-app", "my.app", ""},
		{"-x-y", "z", "does not match the folder name"},
		{"-late-q", "late-q", "no transcript there records"},
		{"-w-a", "w-a", "no transcript there records"},
		{resolved, "my.tool", "which encodes " + work + " on this machine"},
	} {
		f := got[c.dir]
		if f == nil || f.project != c.project || (c.note == "") != (len(f.notes) == 0) || (c.note != "" && !strings.Contains(f.notes[0], c.note)) {
			t.Errorf("%s: %+v, want project %q note %q", c.dir, f, c.project, c.note)
		}
	}
	if it := got["-srv-my-app"].items; len(it) != 1 || it[0].guessed || it[0].kind != memory.KindConfig {
		t.Errorf("items of -srv-my-app: %+v", it)
	}
	for _, dir := range []string{"-w-a", resolved} {
		if it := got[dir].items; len(it) != 1 || !it[0].guessed {
			t.Errorf("%s: a folder-name project is not marked guessed: %+v", dir, it)
		}
	}
}
