package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/chunk"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/transcript"
)

// scanned is one file the scan looked at: the items it yields, or why it
// was skipped as a whole.
type scanned struct {
	path    string
	format  string
	project string
	notes   []string
	skip    string
	items   []item
}

// item is one memory a file yields (or one part of it, for a text longer
// than a memory may be).
type item struct {
	source  string
	text    string // as it is stored: injected blocks stripped, secrets redacted, trimmed
	kind    memory.Kind
	typ     memory.Type
	project string
	// guessed: the project is the fallback name of a Claude Code project
	// folder, not a working directory a transcript recorded.
	guessed bool
	note    string
	skip    string
}

// scanner walks the files of one Request, reading only: it never writes.
type scanner struct {
	home       string // as given, cleaned
	claude     string // <home>/.claude
	projects   string // <home>/.claude/projects
	userMD     string // <home>/.claude/CLAUDE.md
	homeReal   string // home with symlinks resolved: where symlinks may point
	files      []*scanned
	count      int
	dirFiles   map[string]bool // CLAUDE.md paths of the requested project dirs
	notes      []string
	partRunes  int
	maxFiles   int
	maxBytes   int64
	transcript int64 // bytes of a transcript read for its working directory
}

func newScanner(home string) (*scanner, error) {
	home = filepath.Clean(home)
	real, err := filepath.EvalSymlinks(home)
	if err != nil {
		return nil, fmt.Errorf("home %s: %w", home, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("home %s: %w", home, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: home %s is not a directory", memory.ErrInvalid, home)
	}
	claude := filepath.Join(home, ".claude")
	return &scanner{home: home, claude: claude, projects: filepath.Join(claude, "projects"),
		userMD: filepath.Join(claude, "CLAUDE.md"), homeReal: real, dirFiles: map[string]bool{},
		partRunes: memory.MaxTextBytes / 8, maxFiles: MaxFiles, maxBytes: MaxFileBytes, transcript: maxTranscriptHead}, nil
}

// scan reads every file of req; an error means the scan as a whole failed
// (and nothing may be written).
func (s *scanner) scan(projectDirs []string) error {
	if err := s.scanMemoryDirs(); err != nil {
		return err
	}
	if f := s.readClaudeMD(s.userMD, memory.TypeUser, "", []string{s.homeReal}); f != nil {
		s.files = append(s.files, f)
	}
	for _, dir := range projectDirs {
		dir = filepath.Clean(dir)
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return fmt.Errorf("project dir %s: %w", dir, err)
		}
		if fi, err := os.Stat(real); err != nil {
			return fmt.Errorf("project dir %s: %w", dir, err)
		} else if !fi.IsDir() {
			return fmt.Errorf("%w: project dir %s is not a directory", memory.ErrInvalid, dir)
		}
		project := transcript.ProjectName(dir)
		found := false
		for _, p := range []string{filepath.Join(dir, "CLAUDE.md"), filepath.Join(dir, ".claude", "CLAUDE.md")} {
			s.dirFiles[p] = true
			if f := s.readClaudeMD(p, memory.TypeProject, project, []string{s.homeReal, real}); f != nil {
				s.files = append(s.files, f)
				found = true
			}
		}
		if !found {
			s.notes = append(s.notes, fmt.Sprintf("%s has no CLAUDE.md or .claude/CLAUDE.md", dir))
		}
		if s.count > s.maxFiles {
			return fmt.Errorf("%w: more than %d files to import", memory.ErrInvalid, s.maxFiles)
		}
	}
	return nil
}

// scanMemoryDirs reads <home>/.claude/projects/*/memory/*.md but MEMORY.md.
func (s *scanner) scanMemoryDirs() error {
	if ok, why := s.isDir(s.projects); !ok {
		s.notes = append(s.notes, fmt.Sprintf("%s %s: no Claude Code file memories read", s.projects, why))
		return nil
	}
	dirs, err := os.ReadDir(s.projects)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.projects, err)
	}
	for _, d := range dirs {
		projDir := filepath.Join(s.projects, d.Name())
		if ok, why := s.isDir(projDir); !ok {
			if why != "is not a directory" {
				s.notes = append(s.notes, fmt.Sprintf("%s %s: not read", projDir, why))
			}
			continue
		}
		memDir := filepath.Join(projDir, "memory")
		if ok, why := s.isDir(memDir); !ok {
			if why != "does not exist" {
				s.notes = append(s.notes, fmt.Sprintf("%s %s: not read", memDir, why))
			}
			continue
		}
		entries, err := os.ReadDir(memDir)
		if err != nil {
			return fmt.Errorf("read %s: %w", memDir, err)
		}
		var proj *projectGuess
		for _, e := range entries {
			name := e.Name()
			if !strings.EqualFold(filepath.Ext(name), ".md") || strings.EqualFold(name, "MEMORY.md") {
				continue
			}
			path := filepath.Join(memDir, name)
			if e.IsDir() {
				continue
			}
			s.count++
			if s.count > s.maxFiles {
				return fmt.Errorf("%w: more than %d files to import", memory.ErrInvalid, s.maxFiles)
			}
			if proj == nil {
				g := s.guessProject(projDir)
				proj = &g
			}
			s.files = append(s.files, s.readMemoryFile(path, *proj))
		}
	}
	return nil
}

// isDir reports whether path is a directory, or a symlink to one inside
// the home, and says why not.
func (s *scanner) isDir(path string) (bool, string) {
	real, why := s.resolve(path, []string{s.homeReal})
	if why != "" {
		return false, why
	}
	fi, err := os.Stat(real)
	if err != nil {
		return false, err.Error()
	}
	if !fi.IsDir() {
		return false, "is not a directory"
	}
	return true, ""
}

// resolve follows path's symlinks and says why not when the target lies
// outside every root (or the path cannot be resolved).
func (s *scanner) resolve(path string, roots []string) (string, string) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if _, lerr := os.Lstat(path); lerr == nil {
				return "", "is a broken symlink"
			}
			return "", "does not exist"
		}
		return "", err.Error()
	}
	for _, r := range roots {
		if within(r, real) {
			return real, ""
		}
	}
	return "", "is a symlink pointing outside " + strings.Join(roots, " and ")
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// readFile reads a regular file of at most maxBytes of UTF-8 text; a
// non-empty reason says why it is skipped.
func (s *scanner) readFile(path string, roots []string) (string, string) {
	real, why := s.resolve(path, roots)
	if why != "" {
		return "", why
	}
	f, err := os.Open(real)
	if err != nil {
		return "", "cannot be read: " + err.Error()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", "cannot be read: " + err.Error()
	}
	if !fi.Mode().IsRegular() {
		return "", "not a regular file"
	}
	if fi.Size() > s.maxBytes {
		return "", fmt.Sprintf("larger than %d bytes", s.maxBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, s.maxBytes+1))
	if err != nil {
		return "", "cannot be read: " + err.Error()
	}
	if int64(len(data)) > s.maxBytes {
		return "", fmt.Sprintf("larger than %d bytes", s.maxBytes)
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	if !memory.ValidUTF8(text) {
		return "", "not valid UTF-8 text (or holds NUL bytes)"
	}
	return text, ""
}

// projectGuess is the project of a Claude Code project folder.
type projectGuess struct {
	name    string
	guessed bool
	note    string
}

// guessProject names the project of ~/.claude/projects/<dir>: the working
// directory its newest transcript recorded, else the directory the
// folder's name encodes on this machine as `memtray ingest` resolves it
// (transcript.ClaudeFolderProject), else the folder's name without its
// leading dash (the folder name replaces every "/" and "." of the path by
// "-", so the last path element cannot be told apart from the rest). A
// project from the folder's name is guessed: one a transcript named at an
// earlier import wins over it.
func (s *scanner) guessProject(projDir string) projectGuess {
	dirName := filepath.Base(projDir)
	fallback := strings.TrimLeft(dirName, "-")
	entries, err := os.ReadDir(projDir)
	type tr struct {
		path string
		mod  int64
	}
	var trs []tr
	if err == nil {
		for _, e := range entries {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if fi, err := e.Info(); err == nil {
				trs = append(trs, tr{filepath.Join(projDir, e.Name()), fi.ModTime().UnixNano()})
			}
		}
	}
	sort.Slice(trs, func(i, j int) bool {
		if trs[i].mod != trs[j].mod {
			return trs[i].mod > trs[j].mod
		}
		return trs[i].path > trs[j].path
	})
	var first string
	for i, t := range trs {
		if i == maxTranscriptsTried {
			break
		}
		for _, cwd := range s.transcriptCWDs(t.path) {
			if transcript.ClaudeProjectDir(cwd) == dirName {
				return projectGuess{name: transcript.ProjectName(cwd)}
			}
			if first == "" {
				first = cwd
			}
		}
	}
	if first != "" && transcript.ProjectName(first) != "" {
		return projectGuess{name: transcript.ProjectName(first),
			note: fmt.Sprintf("project %q from the working directory %s a transcript recorded (it does not match the folder name %s)", transcript.ProjectName(first), first, dirName)}
	}
	const lead = "no transcript there records its working directory"
	if name, note := transcript.ClaudeFolderProject(dirName, lead); name != "" {
		return projectGuess{name: name, guessed: true, note: note}
	}
	return projectGuess{name: fallback, guessed: true,
		note: fmt.Sprintf("project %q is the folder name %s: %s, nor does the name encode a directory of this machine", fallback, dirName, lead)}
}

// transcriptCWDs reads the first transcript.maxHead bytes of a transcript
// and returns the "cwd" of its complete lines, in order.
func (s *scanner) transcriptCWDs(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, s.transcript+1))
	if err != nil {
		return nil
	}
	lines := bytes.Split(head, []byte("\n"))
	if int64(len(head)) > s.transcript {
		lines = lines[:len(lines)-1] // the last line is cut
	}
	var out []string
	for _, l := range lines {
		if !bytes.Contains(l, []byte(`"cwd"`)) {
			continue
		}
		var e struct {
			CWD string `json:"cwd"`
		}
		if json.Unmarshal(l, &e) == nil && strings.TrimSpace(e.CWD) != "" && memory.ValidUTF8(e.CWD) && len(e.CWD) <= 4096 {
			out = append(out, e.CWD)
		}
	}
	return out
}

// readMemoryFile reads one Claude Code file memory: YAML front matter
// (name, type, description) and a body.
func (s *scanner) readMemoryFile(path string, proj projectGuess) *scanned {
	f := &scanned{path: path, format: FormatMemory}
	text, why := s.readFile(path, []string{s.homeReal})
	if why != "" {
		f.skip = why
		return f
	}
	fm, body, ok := splitFrontMatter(text)
	if !ok {
		f.skip = "front matter opened with --- is never closed"
		return f
	}
	typ, note := memoryType(fm["type"])
	body = strings.TrimSpace(body)
	if body == "" {
		body = strings.TrimSpace(fm["description"])
	}
	if typ != memory.TypeUser {
		f.project = proj.name
		if proj.note != "" {
			f.notes = append(f.notes, proj.note)
		}
	}
	if body == "" {
		f.skip = "no text: the body is empty and there is no description"
		return f
	}
	f.items = s.items(sourceOf(path, ""), body, typ, f.project, proj.guessed && typ != memory.TypeUser, note, func(t string) memory.Kind {
		return memoryKind(typ, t)
	})
	return f
}

// splitFrontMatter returns the front matter (search.ParseFrontMatter) and
// the body after it; ok is false when a front matter is opened and not
// closed.
func splitFrontMatter(text string) (map[string]string, string, bool) {
	first, rest, _ := strings.Cut(text, "\n")
	if strings.TrimSpace(first) != "---" {
		return map[string]string{}, text, true
	}
	for off := 0; off <= len(rest); {
		line, next, more := strings.Cut(rest[off:], "\n")
		if strings.TrimSpace(line) == "---" {
			body := ""
			if more {
				body = next
			}
			return search.ParseFrontMatter([]byte(text)), body, true
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return nil, "", false
}

// memoryType maps a front matter type to a memory.Type; anything else is
// a project memory, with a note saying so.
func memoryType(v string) (memory.Type, string) {
	t := memory.Type(strings.ToLower(strings.TrimSpace(v)))
	if t.Valid() {
		return t, ""
	}
	if v == "" {
		return memory.TypeProject, "no type in the front matter: imported as a project memory"
	}
	return memory.TypeProject, fmt.Sprintf("type %q is not user, feedback, project or reference: imported as a project memory", v)
}

// memoryKind guesses a file memory's kind from its type and text.
func memoryKind(t memory.Type, text string) memory.Kind {
	switch t {
	case memory.TypeUser:
		return memory.KindPreference
	case memory.TypeReference:
		return memory.KindReference
	case memory.TypeFeedback:
		if k := ingest.GuessKind(text); k == memory.KindConvention || k == memory.KindInvariant {
			return memory.KindConvention
		}
		return memory.KindPreference
	}
	return ingest.GuessKind(text)
}

// readClaudeMD reads a CLAUDE.md file, nil when there is none.
func (s *scanner) readClaudeMD(path string, typ memory.Type, project string, roots []string) *scanned {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	s.count++
	f := &scanned{path: path, format: FormatClaudeMD, project: project}
	text, why := s.readFile(path, roots)
	if why != "" {
		f.skip = why
		return f
	}
	kind := func(t string) memory.Kind {
		k := ingest.GuessKind(t)
		if typ == memory.TypeUser && k == memory.KindFact {
			k = memory.KindPreference
		}
		return k
	}
	secs := sections(text)
	if len(secs) == 0 {
		f.skip = "no text besides headings"
		return f
	}
	for _, sec := range secs {
		if sec.empty {
			f.items = append(f.items, item{source: sourceOf(path, sec.slug), typ: typ, project: project,
				skip: "the section has no text under its heading"})
			continue
		}
		f.items = append(f.items, s.items(sourceOf(path, sec.slug), sec.text, typ, project, false, "", kind)...)
	}
	return f
}

// section is one top-level "##" section of a CLAUDE.md (slug ""
// for the text before the first one, or for a file without sections).
type section struct {
	slug, text string
	empty      bool // a heading and nothing under it
}

var fence = regexp.MustCompile("^ {0,3}(```|~~~)")

// sections splits a Markdown text at its top-level "## " headings
// (outside fenced code blocks). The text before the first heading is a
// section of its own unless it holds only headings (a "# Title").
func sections(text string) []section {
	lines := strings.SplitAfter(text, "\n")
	var out []section
	var cur strings.Builder
	heading := ""
	inFence := ""
	slugs := map[string]int{}
	flush := func() {
		t := strings.TrimSpace(cur.String())
		cur.Reset()
		if heading == "" {
			if hasProse(t) {
				out = append(out, section{text: t})
			}
			return
		}
		slug := slugify(heading)
		if n := slugs[slug]; n > 0 {
			slugs[slug] = n + 1
			slug += "-" + strconv.Itoa(n+1)
		} else {
			slugs[slug] = 1
		}
		_, body, _ := strings.Cut(t, "\n")
		out = append(out, section{slug: slug, text: t, empty: strings.TrimSpace(body) == ""})
	}
	for _, l := range lines {
		trimmed := strings.TrimRight(l, "\r\n")
		if m := fence.FindStringSubmatch(trimmed); m != nil {
			switch {
			case inFence == "":
				inFence = m[1]
			case inFence == m[1]:
				inFence = ""
			}
		}
		if inFence == "" && (strings.HasPrefix(trimmed, "## ") || trimmed == "##") {
			flush()
			heading = strings.TrimSpace(strings.TrimLeft(trimmed, "#"))
			if heading == "" {
				heading = "section"
			}
		}
		cur.WriteString(l)
	}
	flush()
	return out
}

// hasProse reports whether t holds a line that is not a heading.
func hasProse(t string) bool {
	for _, l := range strings.Split(t, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// slugify makes a heading a source fragment: lower case letters and
// digits, other runs as "-", at most 64 bytes.
func slugify(h string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(h) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			if b.Len()+len(string(r)) > 64 {
				break
			}
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "section"
	}
	return b.String()
}

// items prepares one text as memories: stripped, redacted, trimmed, and
// cut into parts ("<source>~2", "~3"...) when longer than a memory may be.
func (s *scanner) items(source, text string, typ memory.Type, project string, guessed bool, note string, kind func(string) memory.Kind) []item {
	base := item{source: source, typ: typ, project: project, guessed: guessed, note: note}
	// The write pipeline's strip stage, so the text compared is the text stored.
	text = ingest.StripInjected(text)
	text, found := redact.Redact(text)
	text = strings.TrimSpace(text)
	if len(found) > 0 {
		base.note = joinNotes(base.note, fmt.Sprintf("%d secret(s) redacted", len(found)))
	}
	if text == "" {
		base.skip = "no text left once memtray's injected blocks are removed"
		return []item{base}
	}
	if len(source) > maxSourceBytes {
		base.skip = fmt.Sprintf("the path is too long for a memory's source (%d bytes, at most %d)", len(source), maxSourceBytes)
		return []item{base}
	}
	parts := []string{text}
	if len(text) > memory.MaxTextBytes {
		parts = chunk.Split(text, chunk.Options{Size: s.partRunes, Min: 1})
		base.note = joinNotes(base.note, fmt.Sprintf("longer than %d bytes: split into %d parts", memory.MaxTextBytes, len(parts)))
	}
	out := make([]item, 0, len(parts))
	for i, p := range parts {
		it := base
		it.text, it.kind = p, kind(p)
		if i > 0 {
			it.source = partSource(source, i+1)
		}
		if len(it.source) > maxSourceBytes {
			it.skip = "the path is too long for a memory's source"
		} else if len(p) > memory.MaxTextBytes {
			it.skip = fmt.Sprintf("a part longer than %d bytes (one code block or list)", memory.MaxTextBytes)
		}
		out = append(out, it)
	}
	return out
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// sourceOf is the source of a file's memory: "import:claude:<path>", and
// "#<slug>" for a CLAUDE.md section.
func sourceOf(path, slug string) string {
	if slug == "" {
		return SourcePrefix + path
	}
	return SourcePrefix + path + "#" + slug
}

// partSource names the n-th part (n >= 2) of a text cut into parts.
func partSource(source string, n int) string { return source + "~" + strconv.Itoa(n) }

var partSuffix = regexp.MustCompile(`~[0-9]+$`)

// fileOfSource is the file path a source names.
func fileOfSource(src string) string {
	p := partSuffix.ReplaceAllString(strings.TrimPrefix(src, SourcePrefix), "")
	if i := strings.LastIndex(p, "CLAUDE.md#"); i >= 0 {
		return p[:i+len("CLAUDE.md")]
	}
	return p
}

// inScope reports whether a file belongs to what this scan covers, so a
// memory of it whose source the scan no longer produced is missing on disk.
func (s *scanner) inScope(path string) bool {
	return path == s.userMD || s.dirFiles[path] || strings.HasPrefix(path, s.projects+string(filepath.Separator))
}
