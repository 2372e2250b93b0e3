package transcript

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCollectedHistories: histories of several projects copied into one
// folder each get the project their own content names (the working
// directory of Claude Code's records and of a Codex rollout's session
// meta, else the repository a legacy rollout's meta names); the folder is
// only the fallback, for the formats whose content names none (Aider,
// SpecStory), and never for a session that does name one. A rollout
// naming neither a directory nor a repository is of no project: a Codex
// folder is a date (~/.codex/sessions/2025/10/04), not a project.
func TestCollectedHistories(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	envCWD := regexp.MustCompile(`(?m)^.*<environment_context>.*\n`)
	legacy := envCWD.ReplaceAllString(read("codex-legacy.jsonl"), "")
	withRepo := strings.Replace(legacy, `"git": {"branch": "main"}`, `"git": {"branch": "main", "repository_url": "git@github.com:dev/ledger-api.git"}`, 1)
	if withRepo == legacy {
		t.Fatal("the legacy fixture's meta changed: no git field to name a repository in")
	}
	claude := read("basic.jsonl")
	folder := filepath.Join(t.TempDir(), "histories")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, content, project string
	}{
		{"claude-kvstore.jsonl", claude, "kvstore"},
		{"claude-harbor.jsonl", strings.ReplaceAll(claude, "/home/dev/src/kvstore", "/home/dev/src/harbor"), "harbor"},
		{"rollout-tiles.jsonl", read("codex.jsonl"), "tiles"},
		{"rollout-legacy-env.jsonl", read("codex-legacy.jsonl"), "legacy-app"},
		{"rollout-legacy-repo.jsonl", withRepo, "ledger-api"},
		{"rollout-legacy-none.jsonl", legacy, ""},
		{"afi.aider.chat.history.md", read("aider-repo/.aider.chat.history.md"), "histories"},
		{"retry-policy.md", read("spec-repo/.specstory/history/2025-04-26_22-29-retry-policy.md"), "histories"},
	} {
		path := filepath.Join(folder, tc.file)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		exs, st, err := ParseFile(path, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if fromFolder := strings.Contains(st.ProjectNote, "from the folder it sits in"); fromFolder != (tc.project == "histories") {
			t.Errorf("%s: note %q: the folder named %v", tc.file, st.ProjectNote, fromFolder)
		}
		if len(exs) == 0 || st.Project != tc.project {
			t.Errorf("%s: project %q (%d exchanges; note %q), want %q", tc.file, st.Project, len(exs), st.ProjectNote, tc.project)
		}
		for _, ex := range exs {
			if ex.Project != st.Project {
				t.Errorf("%s: exchange %d of project %q, the session's %q", tc.file, ex.Turn, ex.Project, st.Project)
				break
			}
		}
	}
}
