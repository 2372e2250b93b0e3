package tail

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A session in a subdirectory of a linked worktree is labelled with the
// repository; a cursor saved by a version that named projects after the
// directory ("pkg") is relabelled at the next read, so a session that
// spans the upgrade does not go on under the old name.
func TestProjectIsTheRepository(t *testing.T) {
	r := newRig(t)
	repos, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// ledgerd/.git and a worktree of it, ledgerd-wt, written as git does.
	wtGit := filepath.Join(repos, "ledgerd", ".git", "worktrees", "ledgerd-wt")
	cwd := filepath.Join(repos, "ledgerd-wt", "pkg")
	for _, d := range []string{wtGit, cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wtGit, "commondir"), []byte("../..\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repos, "ledgerd-wt", ".git"), []byte("gitdir: "+wtGit+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines := fixture(t)
	for i := range lines {
		lines[i] = bytes.ReplaceAll(lines[i], []byte(`"/home/dev/src/ledgerd"`), []byte(`"`+cwd+`"`))
	}
	path := r.session("worktree")
	appendTo(t, path, bytes.Join(lines[:12], nil))
	r.hook(path, EventPreCompact)
	before := r.exchanges()
	if len(before) == 0 {
		t.Fatal("no exchanges before the restart")
	}
	for _, ex := range before {
		if ex.Project != "ledgerd" {
			t.Fatalf("project %q, want ledgerd", ex.Project)
		}
	}
	// The cursor as an older version saved it.
	cs, errs := SavedCursors(r.dir)
	if len(cs) != 1 || len(errs) != 0 || cs[0].CWD != cwd {
		t.Fatalf("saved cursors %+v, %v", cs, errs)
	}
	c := cs[0]
	c.Project = "pkg"
	if err := (cursorStore{filepath.Join(r.dir, "cursors")}).save(&c); err != nil {
		t.Fatal(err)
	}
	r.open()
	appendTo(t, path, bytes.Join(lines[12:], nil))
	r.hook(path, EventStop)
	after := r.exchanges()[len(before):]
	if len(after) == 0 {
		t.Fatal("no exchanges after the restart")
	}
	for _, ex := range after {
		if ex.Project != "ledgerd" {
			t.Errorf("after the restart: project %q, want ledgerd", ex.Project)
		}
	}
}
