package project

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// git runs git in dir for a test (only tests run git: the resolver reads
// git's files itself).
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git binary to make repositories with")
	}
}

func mkdir(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with one commit at root/name.
func newRepo(t *testing.T, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	mkdir(t, dir)
	git(t, dir, "init", "-q")
	write(t, filepath.Join(dir, "README"), "x\n")
	git(t, dir, "add", "README")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func resolver(t *testing.T) *Resolver {
	return NewResolver(Options{TTL: -1, Home: filepath.Join(t.TempDir(), "home")})
}

// TestResolveGit covers the layouts git makes: a repository, its
// subdirectories, linked worktrees, a submodule, a bare repository with a
// worktree.
func TestResolveGit(t *testing.T) {
	needGit(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	spotter := newRepo(t, root, "spotter")
	mkdir(t, filepath.Join(spotter, "assets", "img"))
	git(t, spotter, "worktree", "add", "-q", filepath.Join(root, "spotter-fum"))
	fum := filepath.Join(root, "spotter-fum")
	mkdir(t, filepath.Join(fum, "assets"))

	lib := newRepo(t, root, "lib")
	git(t, spotter, "submodule", "add", "-q", lib, "vendor/lib")

	git(t, root, "clone", "-q", "--bare", spotter, filepath.Join(root, "tool.git"))
	git(t, filepath.Join(root, "tool.git"), "worktree", "add", "-q", filepath.Join(root, "wt", "tool-feature"))
	mkdir(t, filepath.Join(root, "wt", "tool-feature", "assets"))

	// A bare repository with an unusable name (".bare", a common
	// layout): the remote names it.
	mkdir(t, filepath.Join(root, "proj"))
	git(t, filepath.Join(root, "proj"), "clone", "-q", "--bare", spotter, ".bare")
	git(t, filepath.Join(root, "proj", ".bare"), "config", "remote.origin.url", "git@example.com:me/widget.git")
	git(t, filepath.Join(root, "proj", ".bare"), "worktree", "add", "-q", filepath.Join(root, "proj", "main"))

	plain := filepath.Join(root, "plain", "notes")
	mkdir(t, plain)
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(fum, "assets"), link); err != nil {
		t.Fatal(err)
	}
	linkPlain := filepath.Join(root, "notes-link")
	if err := os.Symlink(plain, linkPlain); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, dir, want string
		source          Source
		repo            bool
	}{
		{"plain dir", plain, "notes", FromDirectory, false},
		{"repo top", spotter, "spotter", FromRepository, true},
		{"repo top, trailing slash", spotter + "/", "spotter", FromRepository, true},
		{"subdir", filepath.Join(spotter, "assets", "img"), "spotter", FromRepository, true},
		{"a file in the repo", filepath.Join(spotter, "README"), "spotter", FromRepository, true},
		{"linked worktree", fum, "spotter", FromRepository, true},
		{"worktree subdir", filepath.Join(fum, "assets"), "spotter", FromRepository, true},
		{"submodule", filepath.Join(spotter, "vendor", "lib"), "lib", FromRepository, true},
		{"bare repo's worktree", filepath.Join(root, "wt", "tool-feature"), "tool", FromRepository, true},
		{"bare repo's worktree subdir", filepath.Join(root, "wt", "tool-feature", "assets"), "tool", FromRepository, true},
		{"hidden bare repo: the remote", filepath.Join(root, "proj", "main"), "widget", FromRemote, true},
		{"symlink into a worktree", link, "spotter", FromRepository, true},
		{"symlink to a plain dir", linkPlain, "notes-link", FromDirectory, false},
		{"path not on this machine", filepath.Join(root, "gone", "spotter-fum", "assets"), "assets", FromPath, false},
		{"relative path", "src/spotter-fum", "spotter-fum", FromPath, false},
		{"windows path", `C:\Users\me\src\spotter`, "spotter", FromPath, false},
	}
	r := resolver(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := r.Resolve(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != tc.want || info.Source != tc.source || info.InRepository() != tc.repo {
				t.Errorf("Resolve(%s) = %+v, want %q from %s (repository %v)", tc.dir, info, tc.want, tc.source, tc.repo)
			}
			if got := r.Name(tc.dir); got != tc.want {
				t.Errorf("Name(%s) = %q, want %q", tc.dir, got, tc.want)
			}
		})
	}
}

// TestResolveHandMade covers layouts written by hand (no git needed): a
// worktree's git dir found through its commondir, a ".git" file naming a
// missing directory or holding garbage, core.worktree, a dotfiles
// repository in the home directory.
func TestResolveHandMade(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// An ordinary repository and a linked worktree of it.
	mkdir(t, filepath.Join(root, "api", ".git", "worktrees", "api-x"), filepath.Join(root, "api", "cmd"))
	write(t, filepath.Join(root, "api", ".git", "worktrees", "api-x", "commondir"), "../..\n")
	write(t, filepath.Join(root, "api-x", ".git"), "gitdir: "+filepath.Join(root, "api", ".git", "worktrees", "api-x")+"\n")
	mkdir(t, filepath.Join(root, "api-x", "cmd", "srv"))
	// A relative gitdir, with CRLF.
	write(t, filepath.Join(root, "api-y", ".git"), "gitdir: ../api/.git/worktrees/api-x\r\n")
	// Broken .git files.
	write(t, filepath.Join(root, "moved", ".git"), "gitdir: "+filepath.Join(root, "nowhere")+"\n")
	mkdir(t, filepath.Join(root, "moved", "sub"))
	write(t, filepath.Join(root, "garbage", ".git"), "not a git file\n")
	// A common dir with core.worktree (a submodule's worktree).
	mkdir(t, filepath.Join(root, "super", ".git", "modules", "dep", "worktrees", "dep2"))
	write(t, filepath.Join(root, "super", ".git", "modules", "dep", "config"), "[core]\n\tbare = false\n\tworktree = ../../../dep\n")
	write(t, filepath.Join(root, "super", ".git", "modules", "dep", "worktrees", "dep2", "commondir"), "../..\n")
	write(t, filepath.Join(root, "dep2", ".git"), "gitdir: "+filepath.Join(root, "super", ".git", "modules", "dep", "worktrees", "dep2")+"\n")
	// A dotfiles repository in the home directory.
	home := filepath.Join(root, "home")
	mkdir(t, filepath.Join(home, ".git"), filepath.Join(home, "src", "tool"))

	tests := []struct {
		name, dir, want string
		source          Source
	}{
		{"repo subdir", filepath.Join(root, "api", "cmd"), "api", FromRepository},
		{"worktree via commondir", filepath.Join(root, "api-x", "cmd", "srv"), "api", FromRepository},
		{"relative gitdir", filepath.Join(root, "api-y"), "api", FromRepository},
		{".git file to a missing dir", filepath.Join(root, "moved", "sub"), "moved", FromTopLevel},
		{".git file with garbage", filepath.Join(root, "garbage"), "garbage", FromTopLevel},
		{"core.worktree", filepath.Join(root, "dep2"), "dep", FromRepository},
		{"home repo, home itself", home, "home", FromRepository},
		{"home repo, below home", filepath.Join(home, "src", "tool"), "tool", FromDirectory},
	}
	r := NewResolver(Options{TTL: -1, Home: home})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := r.Resolve(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != tc.want || info.Source != tc.source {
				t.Errorf("Resolve(%s) = %+v, want %q from %s", tc.dir, info, tc.want, tc.source)
			}
		})
	}
}

func TestResolveInvalid(t *testing.T) {
	r := resolver(t)
	for _, dir := range []string{"", "/a\x00b", "/" + strings.Repeat("a", MaxPathBytes), "/bad\xffutf8"} {
		if _, err := r.Resolve(dir); !errors.Is(err, ErrInvalid) {
			t.Errorf("Resolve(%q): %v, want ErrInvalid", dir, err)
		}
	}
	// Name falls back to the directory name.
	for dir, want := range map[string]string{"": "", "/a\x00b": "a\x00b", "/x/bad\xffutf8": "bad\xffutf8"} {
		if got := r.Name(dir); got != want {
			t.Errorf("Name(%q) = %q, want %q", dir, got, want)
		}
	}
	if err := Validate("rel/dir"); !errors.Is(err, ErrInvalid) {
		t.Errorf("Validate(rel/dir): %v", err)
	}
}

// TestCache: results are reused within the TTL and seen anew after it;
// the cache stays bounded.
func TestCache(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "app", "web")
	mkdir(t, dir)
	now := time.Unix(1000, 0)
	r := NewResolver(Options{TTL: time.Minute, MaxEntries: 4, Home: "/nonexistent", Now: func() time.Time { return now }})
	if got := r.Name(dir); got != "web" {
		t.Fatalf("before git init: %q", got)
	}
	mkdir(t, filepath.Join(root, "app", ".git"))
	if got := r.Name(dir); got != "web" {
		t.Errorf("within the TTL: %q, want the cached web", got)
	}
	now = now.Add(time.Minute)
	if got := r.Name(dir); got != "app" {
		t.Errorf("after the TTL: %q, want app", got)
	}
	for i := range 20 {
		r.Name(filepath.Join(root, "gone", strings.Repeat("x", i+1)))
	}
	r.mu.Lock()
	n := len(r.cache)
	r.mu.Unlock()
	if n > 4 {
		t.Errorf("cache holds %d entries, bound 4", n)
	}
}

func TestParseGitFile(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"gitdir: /a/.git/worktrees/x\n", "/a/.git/worktrees/x", true},
		{"gitdir: ../.git/modules/lib\r\n", "../.git/modules/lib", true},
		{"gitdir:/a b/c", "/a b/c", true},
		{"gitdir: ", "", false},
		{"ref: refs/heads/main\n", "", false},
		{"", "", false},
		{"gitdir: a\x00b", "", false},
	}
	for _, tc := range tests {
		got, ok := ParseGitFile([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseGitFile(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseConfig(t *testing.T) {
	cfg := ParseConfig([]byte(`# a comment
[core]
	repositoryformatversion = 0
	Bare = true ; trailing comment
	worktree = "../../../dep dir"
[remote "origin"]
	url = git@example.com:me/spotter.git
	fetch = +refs/heads/*:refs/remotes/origin/*
[Remote.upstream]
	url = https://example.com/up/stream
[broken
	url = nope
`))
	for _, tc := range []struct{ section, sub, key, want string }{
		{"core", "", "bare", "true"},
		{"core", "", "worktree", "../../../dep dir"},
		{"remote", "origin", "url", "git@example.com:me/spotter.git"},
		{"remote", "upstream", "url", "https://example.com/up/stream"},
		{"broken", "", "url", ""},
	} {
		if got := cfg.get(tc.section, tc.sub, tc.key); got != tc.want {
			t.Errorf("%s.%s.%s = %q, want %q", tc.section, tc.sub, tc.key, got, tc.want)
		}
	}
}

func TestRemoteName(t *testing.T) {
	for in, want := range map[string]string{
		"git@github.com:me/spotter.git":     "spotter",
		"https://github.com/me/spotter.git": "spotter",
		"https://github.com/me/spotter/":    "spotter",
		"/srv/git/spotter.git":              "spotter",
		"spotter":                           "spotter",
		"":                                  "",
	} {
		if got := RemoteName(in); got != want {
			t.Errorf("RemoteName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDirName(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/src/memtray/": "memtray", `C:\src\app`: "app", "": "", "/": "", "x": "x",
	} {
		if got := DirName(in); got != want {
			t.Errorf("DirName(%q) = %q, want %q", in, got, want)
		}
	}
}
