package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/project"
)

// Claude Code keeps a session at ~/.claude/projects/<folder>/<session>.jsonl,
// where <folder> is the working directory with every UTF-16 code unit other
// than an ASCII letter or digit replaced by "-" (ClaudeProjectDir); past
// claudeDirMax characters it keeps the first claudeDirMax and appends "-"
// and a hash of the path. The encoding is lossy ("/a/b-c", "/a/b/c",
// "/a/b.c" and "/a/b_c" are all "-a-b-c"), so the folder names a working
// directory only as checked against the filesystem: ResolveClaudeProjectDir.

// claudeDirMax is the length past which Claude Code cuts a folder name and
// appends a hash.
const claudeDirMax = 200

// claudeDirName is what a folder name Claude Code made looks like: "-"
// (a Unix path's root) or a drive letter and "--" ("C:\" on Windows), then
// letters, digits and "-".
var claudeDirName = regexp.MustCompile(`^(?:-|[A-Za-z]--)[A-Za-z0-9-]*$`)

// claudeDirHash is the "-" and base-36 hash Claude Code appends to a name
// it cut at claudeDirMax.
var claudeDirHash = regexp.MustCompile(`^-[0-9a-z]+$`)

// Bounds of the walk that resolves a folder name: directories read, and
// entries read per directory.
const (
	maxResolveDirs    = 4096
	maxResolveEntries = 20000
)

// ClaudeDirMatch is what ResolveClaudeProjectDir found for a folder name.
type ClaudeDirMatch struct {
	// Dir is the working directory the name encodes, when exactly one
	// directory on this machine does (Exact), else the deepest existing
	// directory whose encoding starts the name ("" when two directories
	// read it as far: neither is sure).
	Dir   string
	Exact bool
	// Others counts the other directories the whole name encodes as well
	// (Exact is then false and Dir the first found).
	Others int
	// Cut says the name was cut and hashed by Claude Code (a path longer
	// than the name keeps): only its start can be matched.
	Cut bool
}

// ResolveClaudeProjectDir finds on this machine the directory a Claude Code
// project folder name (~/.claude/projects/<name>) encodes, by walking down
// from the root through the directories whose encoding the name continues
// with. Nothing is guessed: an exact match is a directory whose encoding
// is the whole name; otherwise Dir is the deepest directory the walk
// reached. ok is false for a name Claude Code cannot have made.
func ResolveClaudeProjectDir(name string) (m ClaudeDirMatch, ok bool) {
	if !claudeDirName.MatchString(name) {
		return m, false
	}
	root, rest := claudeRoot(name)
	if root == "" {
		return m, true // a Windows path read elsewhere, or a Unix one on Windows
	}
	if len(name) > claudeDirMax && claudeDirHash.MatchString(name[claudeDirMax:]) {
		m.Cut = true
		rest = rest[:len(rest)-(len(name)-claudeDirMax)]
	}
	if rest == "" && !m.Cut {
		return ClaudeDirMatch{Dir: root, Exact: true}, true
	}
	w := &claudeWalk{cut: m.Cut}
	w.walk(root, rest, 0)
	switch {
	case len(w.exact) > 0:
		m.Dir, m.Exact, m.Others = w.exact[0], len(w.exact) == 1, len(w.exact)-1
	case !w.tied:
		m.Dir = w.deepest
	}
	return m, true
}

// claudeRoot returns the root directory a folder name starts from on this
// machine and the rest of the name after the root's encoding; root is ""
// when the name is of another system's paths.
func claudeRoot(name string) (root, rest string) {
	if runtime.GOOS == "windows" {
		if len(name) >= 3 && name[1:3] == "--" && name[0] != '-' {
			return name[:1] + `:\`, name[3:]
		}
		return "", ""
	}
	if strings.HasPrefix(name, "-") {
		return "/", name[1:]
	}
	return "", ""
}

// claudeWalk is one walk of ResolveClaudeProjectDir.
type claudeWalk struct {
	cut     bool
	dirs    int
	exact   []string
	deepest string
	depth   int  // how much of the name deepest consumed
	tied    bool // another directory consumed as much
}

// walk visits dir, whose encoding consumed consumed bytes of the name,
// with rest the name's remainder after the "-" that separates dir from
// its child.
func (w *claudeWalk) walk(dir, rest string, consumed int) {
	if w.dirs >= maxResolveDirs {
		return
	}
	w.dirs++
	switch {
	case consumed > w.depth || w.deepest == "":
		w.deepest, w.depth, w.tied = dir, consumed, false
	case consumed == w.depth && dir != w.deepest:
		w.tied = true // two directories read the name as far: neither is sure
	}
	if rest == "" {
		return // a cut name ending at a "-": dir is as far as it goes
	}
	f, err := os.Open(dir)
	if err != nil {
		return
	}
	entries, _ := f.ReadDir(maxResolveEntries)
	f.Close()
	for _, e := range entries {
		enc := ClaudeProjectDir(e.Name())
		var next string
		switch {
		case rest == enc, w.cut && strings.HasPrefix(enc, rest):
			if isDir(filepath.Join(dir, e.Name())) {
				if w.cut {
					// The cut falls inside this name: only its start is
					// known, and another directory may share it; dir is
					// the deepest directory the name surely holds.
					continue
				}
				w.exact = append(w.exact, filepath.Join(dir, e.Name()))
			}
			continue
		case strings.HasPrefix(rest, enc+"-"):
			next = rest[len(enc)+1:]
		default:
			continue
		}
		child := filepath.Join(dir, e.Name())
		if isDir(child) {
			w.walk(child, next, consumed+len(enc)+1)
		}
	}
}

// isDir reports whether path is a directory (a symbolic link to one too).
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// folderProject is the project a Claude Code session's folder names, and
// how it was found (or why none was).
type folderProject struct {
	name, note string
}

// projectOfClaudeFolder names the project of a Claude Code session whose
// records name no working directory, from the folder it sits in
// (~/.claude/projects/<encoded working directory>/): the project of the
// directory the folder name encodes when exactly one directory on this
// machine does, else of the repository holding the deepest directory of
// the name that exists (the working directory was removed, or the name
// was cut), else none. note says which, or why there is none; "" and ""
// when the folder is not one Claude Code named.
func projectOfClaudeFolder(path string) (name, note string) {
	if path == "" || path == "-" {
		return "", ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", ""
	}
	// Not cached: a directory made since (a repository cloned) counts at
	// the next read, and only a session whose records name no working
	// directory is resolved (a few directories read).
	fp := resolveClaudeFolder(filepath.Base(filepath.Dir(abs)))
	return fp.name, fp.note
}

// resolveClaudeFolder is projectOfClaudeFolder for a folder's name.
func resolveClaudeFolder(base string) folderProject {
	name, note := ClaudeFolderProject(base, "the records name no working directory")
	return folderProject{name, note}
}

// ClaudeFolderProject names the project of a Claude Code project folder
// (~/.claude/projects/<name>) from its name alone, checked against this
// machine (ResolveClaudeProjectDir): the project of the directory the name
// encodes when exactly one directory does, else of the repository holding
// the deepest directory of the name that exists, else none. note, opened
// by lead (why the folder's name is read at all), says which or why none;
// "" and "" for a name Claude Code cannot have made. `memtray ingest` (a
// session whose records name no working directory) and `memtray
// import-claude` (a folder none of whose transcripts does) both read it.
func ClaudeFolderProject(name, lead string) (proj, note string) {
	m, ok := ResolveClaudeProjectDir(name)
	if !ok {
		return "", ""
	}
	switch {
	case m.Exact:
		n := ProjectName(m.Dir)
		return n, fmt.Sprintf("%s; project %q from the folder name %s, which encodes %s on this machine", lead, n, name, m.Dir)
	case m.Others > 0:
		return "", fmt.Sprintf("%s, and the folder name %s encodes %d directories on this machine (%s and others): no project chosen", lead, name, m.Others+1, m.Dir)
	}
	if m.Dir != "" && m.Dir != "/" {
		if info, err := project.Resolve(m.Dir); err == nil && info.InRepository() && !isHome(info.TopLevel) {
			return info.Name, fmt.Sprintf("%s, and the directory the folder name %s encodes is not on this machine; project %q from the repository %s holding the part of it that is (%s)", lead, name, info.Name, info.TopLevel, m.Dir)
		}
	}
	return "", fmt.Sprintf("%s, and the directory the folder name %s encodes (slashes, dots and other characters all became \"-\") is not on this machine, nor a repository holding it: no project guessed", lead, name)
}

// isHome reports whether dir is the user's home directory (a dotfiles
// repository there holds every path below it, and names none of them).
func isHome(dir string) bool {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return false
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	return filepath.Clean(dir) == filepath.Clean(home)
}

// labelFromClaudeFolder gives the Exchanges of a Claude Code session whose
// records name no working directory the project of its folder
// (projectOfClaudeFolder), and says so in Stats.ProjectNote.
func labelFromClaudeFolder(path string, exs []memory.Exchange, st Stats, opts Options) ([]memory.Exchange, Stats) {
	if opts.Project != "" || st.Project != "" || st.CWD != "" {
		return exs, st
	}
	name, note := projectOfClaudeFolder(path)
	st.ProjectNote = note
	if name == "" {
		return exs, st
	}
	st.Project = clean(name)
	for i := range exs {
		exs[i].Project = st.Project
	}
	return exs, st
}
