// Package project names the project a working directory belongs to: the
// git repository it is in (worktrees and subdirectories of one repository
// are one project), else the directory itself.
//
// The rule, for an absolute directory that exists on this machine:
//
//   - Walk up from the directory (symbolic links resolved) to the first
//     one holding ".git": a directory (an ordinary repository), or a file
//     "gitdir: <path>" (a linked worktree, a submodule, a repository made
//     with --separate-git-dir). The directory holding it is the top level.
//   - A linked worktree's git dir names the repository's common git dir
//     (its "commondir" file). The project is named after the main working
//     tree: the common dir's parent when the common dir is called ".git",
//     else the common dir's core.worktree, else (a bare repository) the
//     common dir's own name without ".git" ("spotter.git" -> "spotter").
//     Any other repository is its own main working tree: the top level. A
//     submodule is a repository of its own, so a project of its own.
//   - A name that is unusable (empty, or hidden like ".bare") gives way to
//     the last element of remote.origin.url without ".git", else to the
//     top level's name.
//   - A ".git" file whose git dir is missing (a repository moved, or a
//     worktree pruned) is no repository: the project is the top level's
//     name. A repository whose top level is the user's home directory (a
//     dotfiles repository) names only the home directory itself; below it
//     the working directory rule applies.
//   - Outside any repository the project is the directory's name.
//
// A path that does not exist on this machine (a transcript recorded
// elsewhere), or that is not absolute (a Windows path read on Unix), is
// named by its last element, "/" and "\\" both separating: the rule of
// memtray before repositories were resolved, which is also what the
// migration of old labels compares with (DirName).
//
// Only git's own files are read (.git, commondir, config): no git
// subprocess. Results are cached for a short while per path (Resolver).
package project

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// MaxPathBytes bounds a directory Resolve accepts.
const MaxPathBytes = 4096

// maxGitFile bounds the git files read (.git file, commondir, config).
const maxGitFile = 64 << 10

// maxDepth bounds the walk up the tree (a path of 4 KiB has at most 2048
// elements).
const maxDepth = 2048

// ErrInvalid is wrapped by the errors of a directory Resolve refuses.
var ErrInvalid = errors.New("invalid directory")

// Source says which rule named a project.
type Source string

// The rules, in the order they are tried.
const (
	// FromRepository: the main working tree's directory name (or a bare
	// common dir's name without ".git").
	FromRepository Source = "repository"
	// FromRemote: the last element of remote.origin.url.
	FromRemote Source = "remote"
	// FromTopLevel: the name of the top-level directory of the working
	// tree (no usable repository name, or a broken ".git" file).
	FromTopLevel Source = "top-level"
	// FromDirectory: the directory itself (no repository above it).
	FromDirectory Source = "directory"
	// FromPath: the path's last element; the path is not on this machine
	// or not absolute.
	FromPath Source = "path"
)

// Info is what Resolve found out about a directory.
type Info struct {
	// Name is the project name.
	Name string `json:"name"`
	// Source is the rule that gave Name.
	Source Source `json:"source"`
	// TopLevel is the top-level directory of the working tree holding the
	// directory; "" outside a repository.
	TopLevel string `json:"top_level,omitempty"`
	// CommonDir is the repository's common git dir; "" outside a
	// repository (and for a broken ".git" file).
	CommonDir string `json:"common_dir,omitempty"`
}

// InRepository reports whether Info names a git repository.
func (i Info) InRepository() bool { return i.CommonDir != "" }

// DirName is the rule of memtray before repositories were resolved: the
// last element of the path ("/home/me/src/memtray/" -> "memtray"; both "/"
// and "\\" separate elements), "" for "".
func DirName(dir string) string {
	dir = strings.TrimRight(dir, `/\`)
	if i := strings.LastIndexAny(dir, `/\`); i >= 0 {
		dir = dir[i+1:]
	}
	return dir
}

// Validate checks a directory given from outside: absolute, at most
// MaxPathBytes, valid UTF-8, no NUL byte.
func Validate(dir string) error {
	if err := check(dir); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %q is not absolute", ErrInvalid, dir)
	}
	return nil
}

// check is Validate but for the path being absolute.
func check(dir string) error {
	switch {
	case dir == "":
		return fmt.Errorf("%w: empty", ErrInvalid)
	case len(dir) > MaxPathBytes:
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalid, MaxPathBytes)
	case !utf8.ValidString(dir):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalid)
	case strings.IndexByte(dir, 0) >= 0:
		return fmt.Errorf("%w: contains a NUL byte", ErrInvalid)
	}
	return nil
}

// Resolver resolves directories with a bounded cache. The zero value is
// not usable: use NewResolver. A Resolver is safe for concurrent use.
type Resolver struct {
	ttl  time.Duration
	max  int
	now  func() time.Time
	home string

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	info Info
	at   time.Time
}

// Options configure a Resolver.
type Options struct {
	// TTL is how long a result is reused (default 10 s; negative: never).
	// A repository made, moved or turned into worktrees is seen at most
	// this late.
	TTL time.Duration
	// MaxEntries bounds the cache (default 1024).
	MaxEntries int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Home is the user's home directory, whose repository (if any) names
	// only itself (default os.UserHomeDir; "" when unknown).
	Home string
}

// NewResolver returns a Resolver.
func NewResolver(o Options) *Resolver {
	if o.TTL == 0 {
		o.TTL = 10 * time.Second
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 1024
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Home == "" {
		o.Home, _ = os.UserHomeDir()
	}
	if o.Home != "" {
		if real, err := filepath.EvalSymlinks(o.Home); err == nil {
			o.Home = real
		}
	}
	return &Resolver{ttl: o.TTL, max: o.MaxEntries, now: o.Now, home: filepath.Clean(o.Home), cache: map[string]cached{}}
}

var (
	defaultOnce sync.Once
	defaultRes  *Resolver
)

func defaultResolver() *Resolver {
	defaultOnce.Do(func() { defaultRes = NewResolver(Options{}) })
	return defaultRes
}

// Resolve resolves dir with the package's shared Resolver.
func Resolve(dir string) (Info, error) { return defaultResolver().Resolve(dir) }

// Name is the project of dir with the package's shared Resolver: Resolve's
// name, else (an invalid dir, an unreadable tree) DirName(dir). "" for "".
func Name(dir string) string { return defaultResolver().Name(dir) }

// Name is the project of dir: Resolve's name, else DirName(dir).
func (r *Resolver) Name(dir string) string {
	if dir == "" {
		return ""
	}
	info, err := r.Resolve(dir)
	if err != nil || info.Name == "" {
		return DirName(dir)
	}
	return info.Name
}

// Resolve names the project of dir (see the package doc). A dir that is
// not absolute, or not on this machine, is named by DirName with
// FromPath. Errors: an invalid dir (ErrInvalid), a tree that cannot be
// read (permissions).
func (r *Resolver) Resolve(dir string) (Info, error) {
	if err := check(dir); err != nil {
		return Info{}, err
	}
	if !filepath.IsAbs(dir) {
		// A relative path, or a Windows path read on Unix: named as before.
		return Info{Name: DirName(dir), Source: FromPath}, nil
	}
	dir = filepath.Clean(dir)
	now := r.now()
	r.mu.Lock()
	c, ok := r.cache[dir]
	r.mu.Unlock()
	if ok && r.ttl > 0 && now.Sub(c.at) < r.ttl && !now.Before(c.at) {
		return c.info, nil
	}
	info, err := r.resolve(dir)
	if err != nil {
		return Info{}, err
	}
	if r.ttl > 0 {
		r.mu.Lock()
		if len(r.cache) >= r.max {
			for k, v := range r.cache {
				if now.Sub(v.at) >= r.ttl || now.Before(v.at) {
					delete(r.cache, k)
				}
			}
			if len(r.cache) >= r.max {
				clear(r.cache) // all fresh: start over rather than track ages
			}
		}
		r.cache[dir] = cached{info: info, at: now}
		r.mu.Unlock()
	}
	return info, nil
}

// resolve does the work of Resolve for a clean absolute dir.
func (r *Resolver) resolve(dir string) (Info, error) {
	real, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return Info{Name: DirName(dir), Source: FromPath}, nil
	}
	if err != nil {
		return Info{}, fmt.Errorf("project of %s: %w", dir, err)
	}
	if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
		real = filepath.Dir(real) // a file: its directory
	}
	plain := Info{Name: DirName(dir), Source: FromDirectory}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		plain.Name = DirName(filepath.Dir(dir))
	}
	top, dotgit, err := findDotGit(real)
	if err != nil {
		return Info{}, fmt.Errorf("project of %s: %w", dir, err)
	}
	if top == "" {
		return plain, nil
	}
	if r.home != "" && r.home != "." && top == r.home && real != top {
		return plain, nil // a dotfiles repository does not swallow ~/src/*
	}
	topInfo := Info{Name: DirName(top), Source: FromTopLevel, TopLevel: top}
	gitDir, ok, err := gitDirOf(top, dotgit)
	if err != nil {
		return Info{}, fmt.Errorf("project of %s: %w", dir, err)
	}
	if !ok {
		return topInfo, nil // a .git file whose git dir is gone
	}
	common, linked, err := commonDirOf(gitDir)
	if err != nil {
		return Info{}, fmt.Errorf("project of %s: %w", dir, err)
	}
	info := Info{TopLevel: top, CommonDir: common}
	cfg, err := readConfig(filepath.Join(common, "config"))
	if err != nil {
		return Info{}, fmt.Errorf("project of %s: %w", dir, err)
	}
	name := DirName(top) // a repository is its own main working tree...
	if linked {
		name = mainTreeName(common, cfg) // ...unless a linked worktree
	}
	switch {
	case usable(name):
		info.Name, info.Source = name, FromRepository
	case usable(RemoteName(cfg.get("remote", "origin", "url"))):
		info.Name, info.Source = RemoteName(cfg.get("remote", "origin", "url")), FromRemote
	default:
		info.Name, info.Source = DirName(top), FromTopLevel
	}
	return info, nil
}

// usable reports whether name can name a project: not empty, not hidden
// (".git", ".bare"), not a path.
func usable(name string) bool {
	return name != "" && name[0] != '.' && !strings.ContainsAny(name, `/\`)
}

// findDotGit walks up from dir to the first directory holding ".git";
// "" when there is none.
func findDotGit(dir string) (top string, dotgit fs.FileInfo, err error) {
	for d, i := dir, 0; i < maxDepth; i++ {
		fi, err := os.Lstat(filepath.Join(d, ".git"))
		switch {
		case err == nil && (fi.IsDir() || fi.Mode().IsRegular()):
			return d, fi, nil
		case err == nil && fi.Mode()&fs.ModeSymlink != 0:
			if st, err := os.Stat(filepath.Join(d, ".git")); err == nil {
				return d, st, nil
			}
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", nil, err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil, nil
		}
		d = parent
	}
	return "", nil, nil
}

// gitDirOf returns the git dir of the working tree top: top/.git, or the
// directory its ".git" file names. ok is false when the file names a
// directory that does not exist, or is not a ".git" file.
func gitDirOf(top string, dotgit fs.FileInfo) (dir string, ok bool, err error) {
	p := filepath.Join(top, ".git")
	if dotgit.IsDir() {
		return p, true, nil
	}
	data, err := readSmall(p)
	if err != nil {
		return "", false, err
	}
	target, ok := ParseGitFile(data)
	if !ok {
		return "", false, nil
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(top, target)
	}
	target = filepath.Clean(target)
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		return "", false, nil
	}
	return target, true, nil
}

// commonDirOf returns the common git dir of gitDir: the one its
// "commondir" file names (linked is then true), else gitDir itself.
func commonDirOf(gitDir string) (common string, linked bool, err error) {
	data, err := readSmall(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, false, nil
	}
	if err != nil {
		return "", false, err
	}
	c := strings.TrimSpace(string(firstLine(data)))
	if c == "" {
		return gitDir, false, nil
	}
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	c = filepath.Clean(c)
	if real, err := filepath.EvalSymlinks(c); err == nil {
		c = real
	}
	if fi, err := os.Stat(c); err != nil || !fi.IsDir() {
		return gitDir, false, nil // a dangling commondir: the worktree alone
	}
	return c, c != gitDir, nil
}

// mainTreeName names the main working tree of the repository whose common
// git dir is common: the parent of a ".git", else core.worktree, else the
// bare repository's own name without ".git".
func mainTreeName(common string, cfg gitConfig) string {
	if filepath.Base(common) == ".git" {
		return DirName(filepath.Dir(common))
	}
	if wt := cfg.get("core", "", "worktree"); wt != "" && !strings.EqualFold(cfg.get("core", "", "bare"), "true") {
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(common, wt)
		}
		return DirName(filepath.Clean(wt))
	}
	return strings.TrimSuffix(DirName(common), ".git")
}

// RemoteName is the last element of a remote URL without ".git"
// ("git@github.com:me/spotter.git" -> "spotter"); "" for "".
func RemoteName(url string) string {
	url = strings.TrimRight(strings.TrimSpace(url), `/\`)
	url = strings.TrimSuffix(url, ".git")
	if i := strings.LastIndexAny(url, `/\:`); i >= 0 {
		url = url[i+1:]
	}
	return url
}

// ParseGitFile reads the content of a ".git" file: "gitdir: <path>" on its
// first line. ok is false for anything else.
func ParseGitFile(data []byte) (path string, ok bool) {
	line := string(bytes.TrimRight(firstLine(data), "\r"))
	rest, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if rest == "" || strings.IndexByte(rest, 0) >= 0 {
		return "", false
	}
	return rest, true
}

func firstLine(data []byte) []byte {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[:i]
	}
	return data
}

// readSmall reads a git file of at most maxGitFile bytes (the rest is
// ignored: git's own files are small).
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxGitFile))
}

// gitConfig holds the values of a git config file: "section\x00sub\x00key"
// (section and key lower case) -> the last value.
type gitConfig map[string]string

func (c gitConfig) get(section, sub, key string) string {
	return c[strings.ToLower(section)+"\x00"+sub+"\x00"+strings.ToLower(key)]
}

// readConfig reads a git config file; a missing one is empty.
func readConfig(path string) (gitConfig, error) {
	data, err := readSmall(path)
	if errors.Is(err, fs.ErrNotExist) {
		return gitConfig{}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseConfig(data), nil
}

// ParseConfig reads the subset of git's config syntax the resolver needs:
// "[section]" and "[section "sub"]" headers, "key = value" lines (values
// unquoted, "#" and ";" comments outside quotes dropped), "[section.sub]".
// Lines it does not understand are skipped; includes are not followed.
func ParseConfig(data []byte) gitConfig {
	cfg := gitConfig{}
	section, sub := "", ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxGitFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.LastIndexByte(line, ']')
			if end < 0 {
				section, sub = "", ""
				continue
			}
			head := strings.TrimSpace(line[1:end])
			if name, rest, ok := strings.Cut(head, " "); ok {
				section = strings.ToLower(name)
				sub = strings.Trim(strings.TrimSpace(rest), `"`)
			} else if name, rest, ok := strings.Cut(head, "."); ok {
				section, sub = strings.ToLower(name), rest
			} else {
				section, sub = strings.ToLower(head), ""
			}
			// "[core] bare = true" on the header's line.
			line = strings.TrimSpace(line[end+1:])
			if line == "" || line[0] == '#' || line[0] == ';' {
				continue
			}
		}
		if section == "" {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if key == "" {
			continue
		}
		if !ok {
			value = "true" // "bare" alone means true
		}
		cfg[section+"\x00"+sub+"\x00"+key] = configValue(value)
	}
	return cfg
}

// configValue unquotes a config value and drops a trailing comment.
func configValue(v string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			switch v[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(v[i])
			}
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}
