package transcript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outsideRepo copies testdata/name to a temporary directory outside any
// git repository and returns the copy: the fixture stands for a
// repository of that name, which it is not inside memtray's checkout.
func outsideRepo(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestProjectOfHistoryInRepository: an Aider history in a subdirectory of
// a git repository belongs to the repository.
func TestProjectOfHistoryInRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary to make a repository with")
	}
	root := filepath.Join(t.TempDir(), "spotter")
	sub := filepath.Join(root, "assets")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "init", "-q", root)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "aider-repo", ".aider.chat.history.md"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sub, ".aider.chat.history.md")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, st, err := ParseFile(path, Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if st.Project != "spotter" {
		t.Errorf("project %q, want spotter (the repository, not the subdirectory assets)", st.Project)
	}
	if got := SessionIDFromPath(filepath.Join(sub, "abc.jsonl")); got != "abc" {
		t.Errorf("SessionIDFromPath: %q", got)
	}
}

// placeTree makes, under a temporary root, a repository "ledger" (a ".git"
// directory at src/ledger), a linked worktree of it at wt/ledger-fix (a
// ".git" file naming the repository's worktrees/ledger-fix, whose
// commondir is the repository's git dir) and a folder "histories" in no
// repository, without a git binary: the project resolver reads only git's
// files. It returns the root.
func placeTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	gitDir := filepath.Join(root, "src", "ledger", ".git")
	wtGit := filepath.Join(gitDir, "worktrees", "ledger-fix")
	for _, d := range []string{wtGit, filepath.Join(root, "src", "ledger", "cmd"), filepath.Join(root, "wt", "ledger-fix", "notes"), filepath.Join(root, "histories")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(wtGit, "commondir"), "../..\n")
	writeFile(t, filepath.Join(root, "wt", "ledger-fix", ".git"), "gitdir: "+wtGit+"\n")
	return root
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProjectOfEachReader: every reader's session gets the project of the
// place it names or lives in: a Claude Code transcript's and a Codex
// rollout's working directory (its repository when that is on this
// machine, a linked worktree's main repository included, else the
// directory's own name), an Aider history's folder and a SpecStory
// export's project folder (the one holding .specstory/history/, else the
// one holding the file), also when the file was renamed or copied out of
// its repository. Only a file with no place (stdin) has no project; an
// explicit project wins. At e6cd3fa a history outside its usual place
// (renamed, or a SpecStory export moved out of .specstory/history/) had
// no project.
func TestProjectOfEachReader(t *testing.T) {
	root := placeTree(t)
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	aider := read(filepath.Join("aider-repo", ".aider.chat.history.md"))
	spec := read(filepath.Join("spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"))
	withCWD := func(name, cwd string) string {
		q, _ := json.Marshal(cwd)
		return strings.ReplaceAll(read(filepath.Join("place", name)), `"@CWD@"`, string(q))
	}
	for _, tc := range []struct {
		name   string
		path   string // relative to root; "-" for stdin
		text   string
		format Format
		opts   Options
		want   string
	}{
		{"aider at the repository's root", "src/ledger/.aider.chat.history.md", aider, FormatAider, Options{}, "ledger"},
		{"aider renamed, in a folder of no repository", "histories/afi-core.aider.chat.history.md", aider, FormatAider, Options{}, "histories"},
		{"aider renamed, in a worktree's subfolder", "wt/ledger-fix/notes/chat.md", aider, FormatAider, Options{}, "ledger"},
		{"aider from stdin", "-", aider, FormatAider, Options{}, ""},
		{"aider with a project given", "histories/afi-core.aider.chat.history.md", aider, FormatAider, Options{Project: "mine"}, "mine"},
		{"specstory in a worktree's .specstory/history", "wt/ledger-fix/.specstory/history/2025-04-26_22-29-retry-policy.md", spec, FormatSpecStory, Options{}, "ledger"},
		{"specstory moved to a folder of no repository", "histories/edobry__minsky__retry-policy.md", spec, FormatSpecStory, Options{}, "histories"},
		{"specstory from stdin", "-", spec, FormatSpecStory, Options{}, ""},
		{"codex in a linked worktree", "histories/rollout.jsonl", withCWD("codex.jsonl", filepath.Join(root, "wt", "ledger-fix")), FormatCodex, Options{}, "ledger"},
		{"codex elsewhere", "histories/rollout.jsonl", withCWD("codex.jsonl", "/home/randy/projects/OpenLedger"), FormatCodex, Options{}, "OpenLedger"},
		{"claude code in a repository's subdirectory", "histories/s.jsonl", withCWD("claude.jsonl", filepath.Join(root, "src", "ledger", "cmd")), FormatClaudeCode, Options{}, "ledger"},
		{"claude code elsewhere", "-", withCWD("claude.jsonl", "/home/USER/projects/ledger-worktrees/ledger-4te"), FormatClaudeCode, Options{}, "ledger-4te"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if path != "-" {
				path = filepath.Join(root, filepath.FromSlash(tc.path))
				writeFile(t, path, tc.text)
			}
			exs, st, err := ParseBytes(path, []byte(tc.text), tc.format, tc.opts)
			if err != nil || len(exs) == 0 {
				t.Fatalf("%d exchanges, %v", len(exs), err)
			}
			if st.Project != tc.want {
				t.Errorf("project %q, want %q", st.Project, tc.want)
			}
			for _, ex := range exs {
				if ex.Project != st.Project {
					t.Fatalf("exchange %d: project %q, stats %q", ex.Turn, ex.Project, st.Project)
				}
			}
		})
	}
}
