package transcript

import (
	"os"
	"os/exec"
	"path/filepath"
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
