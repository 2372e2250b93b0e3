package ingest

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// Files the session moved, renamed or deleted. A statement that locates a
// file ("The script is in `scripts/` at the repo root", a list item
// "`scripts/tail_wrapper.sh`") is revised by the session's own act when a
// later tool call moves the file elsewhere or deletes it, whatever the
// model says about it: the shell's mv, git mv, rm and git rm (Claude
// Code's Bash, Codex's shell calls), Codex's apply_patch "*** Move to:"
// and "*** Delete File:". dropRelocated cuts from the model's kept
// statements each clause said before such a call that places the file at
// its old place (placesOld): a present-tense locative ("is in", "lives
// at", "sits under") before its old folder or its old path, in a sentence
// naming the file, or its old path in a clause of names only. A path is
// read from the folder the old and new paths share (scripts/x.sh moved to
// priv/scripts/x.sh: "scripts/x.sh" is the old place, "priv/scripts/x.sh"
// the new one; oldPlace). A clause that reports the move ("moved",
// "renamed", "deleted": undoCue), a past-tense "was in", the old path
// named in passing with something said of the file (still true where the
// file went), the file's name alone and what is said after the call are
// left alone. A later turn's moves reach an earlier turn through
// LaterTexts (movedLaterText), in batch ingest and live capture alike.
//
// A shell command's words are read without running a shell: quotes and
// escapes, "cd DIR" before the command in the same call (and Codex's
// workdir) for relative paths; a command with a glob, a variable or a
// here-document is skipped from that word on. A file moved back to its
// old path, or written there again, later in the turn, is not moved.

// movedOff names mechanisms of dropRelocated switched off ("all", "path",
// "dir", "later"), for measuring each one alone.
var movedOff = map[string]bool{}

// relocation is a file (or folder) a tool call moved or deleted.
type relocation struct {
	from, to string // cleaned paths; to is "" for a delete
	step     int    // the turn's step of the call; past the last step for a later turn's
	call     string // what the call did, for the reason
}

// turnRelocations returns the moves and deletions the tool calls of a
// turn made, in order, without those a later call of the turn undid (the
// file moved back, or written at its old path again); patches are the
// turn's parsed patches (turnPatches).
func turnRelocations(t Turn, patches [][]*patch) []relocation {
	var out []relocation
	var writes []string // each written path, in order with out
	var writeAt []int   // len(out) when each write was made
	for i, s := range t.Steps {
		if s.Error {
			continue
		}
		for j, c := range s.Calls {
			if callFailed(t, i, j) {
				continue
			}
			rs, p := callFiles(c, patchAt(patches, i, j))
			for _, r := range rs {
				r.step = i
				out = append(out, r)
			}
			if p != "" {
				writes, writeAt = append(writes, p), append(writeAt, len(out))
			}
		}
	}
	kept := out[:0:0]
	for k, r := range out {
		back := false
		for _, l := range out[k+1:] {
			if l.to != "" && samePath(l.to, r.from) {
				back = true
			}
		}
		for w, p := range writes {
			if writeAt[w] > k && samePath(p, r.from) {
				back = true
			}
		}
		if !back {
			kept = append(kept, r)
		}
	}
	return kept
}

// samePath reports whether two cleaned paths name one file: equal, or one
// the other's tail at a folder boundary (an absolute path and the same
// path written relative to the project).
func samePath(a, b string) bool {
	return a == b || strings.HasSuffix(a, "/"+b) || strings.HasSuffix(b, "/"+a)
}

// callFiles returns the moves and deletions one tool call makes (a
// patch's "*** Move to:" and "*** Delete File:", a shell command's mv,
// git mv, rm and git rm) and the file it creates ("" for none: a Write
// call, or a patch's first "*** Add File:"), cleaned; p is the call's
// patch (callPatch).
func callFiles(c memory.ToolCall, p *patch) (rs []relocation, written string) {
	switch {
	case c.Name == "Write":
		if path, ok := quickPath(c.Input); ok {
			written = cleanPath(path, "")
		}
	case p != nil:
		written = p.added()
	}
	if p != nil {
		return p.relocations(), written
	}
	if !strings.Contains(c.Input, "mv ") && !strings.Contains(c.Input, "rm ") {
		return nil, written // most calls: no need to decode the input
	}
	cmd, dir := shellCommand(c)
	if cmd == "" {
		return nil, written
	}
	return shellRelocations(cmd, dir), written
}

// shellInput is the input of a shell tool call: Claude Code's Bash
// ("command"), Codex's shell ("command" as argv, "workdir"), its
// shell_command and exec_command ("command" or "cmd" as a string).
type shellInput struct {
	Command any    `json:"command"`
	Cmd     any    `json:"cmd"`
	Workdir string `json:"workdir"`
	Cwd     string `json:"cwd"`
}

// shellCommand returns the command line of a shell tool call and the
// folder it runs in when the call names one; "" when the call runs no
// shell command.
func shellCommand(c memory.ToolCall) (cmd, dir string) {
	var in shellInput
	if json.Unmarshal([]byte(c.Input), &in) != nil {
		return "", ""
	}
	v := in.Command
	if v == nil {
		v = in.Cmd
	}
	switch x := v.(type) {
	case string:
		cmd = x
	case []any:
		var argv []string
		for _, a := range x {
			s, ok := a.(string)
			if !ok {
				return "", ""
			}
			argv = append(argv, s)
		}
		// ["bash", "-lc", "script"]: the script; else the argv itself.
		if len(argv) == 3 && (argv[1] == "-lc" || argv[1] == "-c") {
			cmd = argv[2]
		} else {
			cmd = strings.Join(argv, " ")
		}
	}
	if in.Workdir != "" {
		dir = in.Workdir
	} else {
		dir = in.Cwd
	}
	return cmd, dir
}

// cleanPath returns p resolved against dir when it is relative and dir is
// known, cleaned, without a leading "./"; "" for no path.
func cleanPath(p, dir string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if dir != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") {
		p = path.Join(dir, p)
	}
	p = path.Clean(p)
	if p == "." || p == "/" {
		return ""
	}
	return strings.TrimPrefix(p, "./")
}

// shellSep separates the commands of a command line.
var shellSep = regexp.MustCompile(`&&|\|\||[;|&\n]`)

// shellRelocations reads the moves and deletions of a command line run in
// dir ("" when unknown).
func shellRelocations(line, dir string) []relocation {
	var out []relocation
	for _, seg := range shellSep.Split(line, -1) {
		name, paths, cached, ok := shellSegment(seg)
		if !ok {
			break
		}
		switch name {
		case "cd":
			if len(paths) == 1 {
				dir = cleanPath(paths[0], dir)
			}
		case "mv", "git mv":
			if len(paths) < 2 {
				continue
			}
			dest := paths[len(paths)-1]
			srcs := paths[:len(paths)-1]
			for _, s := range srcs {
				to := dest
				if len(srcs) > 1 || strings.HasSuffix(dest, "/") || (path.Ext(s) != "" && path.Ext(dest) == "") {
					to = path.Join(dest, path.Base(s))
				}
				out = append(out, relocation{from: cleanPath(s, dir), to: cleanPath(to, dir), call: preview(strings.TrimSpace(seg))})
			}
		case "rm", "git rm":
			if cached {
				continue
			}
			for _, s := range paths {
				out = append(out, relocation{from: cleanPath(s, dir), call: preview(strings.TrimSpace(seg))})
			}
		}
	}
	return out
}

// shellSegment reads one command of a command line (shellSep) as
// shellRelocations does: its name ("git mv" for git's), its paths and
// whether it says --cached; name is "" for an empty command or one with a
// glob or a variable (which files is unknown). ok is false when nothing
// from it on is read: a here-document (the lines after it are its text),
// an unclosed quote.
func shellSegment(seg string) (name string, paths []string, cached, ok bool) {
	if strings.Contains(seg, "<<") {
		return "", nil, false, false
	}
	words, ok := shellWords(seg)
	if !ok {
		return "", nil, false, false
	}
	for len(words) > 0 && (strings.Contains(words[0], "=") || words[0] == "sudo" || words[0] == "command") {
		words = words[1:] // VAR=value, sudo
	}
	if len(words) == 0 {
		return "", nil, false, true
	}
	name, args := words[0], words[1:]
	if words[0] == "git" && len(words) > 1 {
		name, args = "git "+words[1], words[2:]
	}
	for _, a := range args {
		switch {
		case a == "--cached":
			cached = true
		case strings.HasPrefix(a, "-"):
		case strings.ContainsAny(a, "*?[]{}$`"):
			paths = nil
			name = "" // a glob or a variable: which files is unknown
		default:
			paths = append(paths, a)
		}
	}
	return name, paths, cached, true
}

// shellFileCommands are the commands shellRelocations reads: those that
// move or delete a file, and cd (the folder relative paths are read in).
var shellFileCommands = map[string]bool{"cd": true, "mv": true, "git mv": true, "rm": true, "git rm": true}

// slimShellCall returns what a slimmed turn keeps of a shell call that
// moves or deletes a file (movedCall): its command line cut to the
// commands shellRelocations reads (shellFileCommands, up to where it
// stops reading), each as it was, with the folder it runs in, so that it
// reads as the same moves and deletions with the same descriptions; the
// call whole when the cut one would not read the same (rs: what the call
// reads as).
func slimShellCall(c memory.ToolCall, rs []relocation) memory.ToolCall {
	if slimOff["shell"] {
		return c
	}
	cmd, dir := shellCommand(c)
	var kept []string
	for _, seg := range shellSep.Split(cmd, -1) {
		name, _, _, ok := shellSegment(seg)
		if !ok {
			break
		}
		if shellFileCommands[name] {
			kept = append(kept, seg)
		}
	}
	in, err := json.Marshal(shellInput{Command: strings.Join(kept, "\n"), Workdir: dir})
	if err != nil {
		return c
	}
	k := memory.ToolCall{ID: c.ID, Name: c.Name, Input: string(in)}
	if p := callPatch(k); p != nil {
		return c // read as a patch now
	}
	if got, _ := callFiles(k, nil); !slices.Equal(got, rs) {
		return c
	}
	return k
}

// shellWords splits one command into its words as a shell would without
// expanding anything: quotes and backslash escapes; ok is false for an
// unclosed quote.
func shellWords(s string) (words []string, ok bool) {
	var b strings.Builder
	in := false // a word is open
	var quote byte
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				b.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			in = true
		case ch == ' ' || ch == '\t' || ch == '\r':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(ch)
			in = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if in {
		words = append(words, b.String())
	}
	return words, true
}

// movedLaterText renders a turn's moves and deletions for LaterTexts (a
// LaterMoved text: Distill reads no sentences from it), one "from\tto"
// line each (to empty for a delete); "" when there are none.
// patches are the turn's parsed patches (turnPatches).
func movedLaterText(t Turn, patches [][]*patch) string {
	rs := turnRelocations(t, patches)
	if len(rs) == 0 {
		return ""
	}
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(r.from + "\t" + r.to + "\n")
	}
	return b.String()
}

// laterRelocations reads the moves and deletions of later turns
// (movedLaterText), each placed after every step of the turn (step).
func laterRelocations(later []LaterText, step int) []relocation {
	var out []relocation
	for _, l := range later {
		if l.From != LaterMoved {
			continue
		}
		for _, line := range strings.Split(l.Text, "\n") {
			from, to, ok := strings.Cut(line, "\t")
			if !ok || from == "" {
				continue
			}
			call := "a later turn deletes " + from
			if to != "" {
				call = "a later turn moves " + from + " to " + to
			}
			out = append(out, relocation{from: from, to: to, step: step, call: call})
		}
	}
	return out
}

// movedCall returns what a slimmed turn keeps of a call that moves or
// deletes a file or writes one (slim); ok is false for any other. p is
// the call's patch (callPatch). Of a Write only the path is kept; of a
// patch only its files' headers that move, delete or add one (what
// relocations and added read) and the settings it removes
// (removalSections), not the files' lines.
func movedCall(c memory.ToolCall, p *patch) (keep memory.ToolCall, ok bool) {
	rs, w := callFiles(c, p)
	if len(rs) == 0 && w == "" {
		return memory.ToolCall{}, false
	}
	switch {
	case c.Name == "Write": // only its path is read
		c.Input = `{"file_path":` + jsonString(quickPathOrEmpty(c.Input)) + `}`
	case p != nil && !slimOff["patch"]:
		return slimPatchCall(c, p.headers()+removalSections(p))
	case p == nil && len(rs) > 0:
		return slimShellCall(c, rs), true
	}
	return c, true
}

// quickPathOrEmpty is quickPath's path, "" when absent.
func quickPathOrEmpty(input string) string {
	p, _ := quickPath(input)
	return p
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// locative is a present-tense statement of where something is, before
// the folder it names (a code span or a bare path).
var locative = regexp.MustCompile("(?i)\\b(?:is|are|lives?|sits?|resides?|stays?|located|stored|kept|placed|belongs?)\\s+(?:(?:still|now|currently|only|already|right)\\s+)?(?:in|at|under|inside|within)\\s+(?:the\\s+)?(`[^`]+`|[\\w.~/-]*/[\\w.~/-]*|[\\w.-]+/)")

// moveClauseBreak ends a clause of a sentence: a semicolon, a dash between
// spaces, a comma before "and", or a contrasting conjunction.
var moveClauseBreak = regexp.MustCompile(`;\s|\s[-–—]+\s|,\s+and\s|,?\s+\b(?:but|while|whereas|although|though)\b\s`)

// clauses splits a sentence into its clauses (moveClauseBreak), never inside
// a code span; each clause is returned with the break that ends it.
func clauses(s string) []string {
	masked := []byte(s)
	for _, m := range backtick.FindAllStringIndex(s, -1) {
		for i := m[0]; i < m[1]; i++ {
			masked[i] = 'x'
		}
	}
	var out []string
	start := 0
	for _, m := range moveClauseBreak.FindAllStringIndex(string(masked), -1) {
		out = append(out, s[start:m[1]])
		start = m[1]
	}
	return append(out, s[start:])
}

// pathWord is a path as a sentence writes it, in a code span or bare.
var pathWord = regexp.MustCompile("[\\w.~@+-]*(?:/[\\w.@+-]+)+")

// placesOld reports whether a clause places r's file at its old path,
// in a sentence (lowercased) naming the file: a present-tense locative
// before its old folder or its old path ("is in `scripts/`", "lives at
// `scripts/x.sh`"), or, in a clause that is only names (a list item), its
// old path. A path the clause names in passing, with something said of
// the file, places nothing: what is said stays true where the file went.
func placesOld(clause, sentence string, r relocation) bool {
	base := path.Base(r.from)
	if !strings.Contains(sentence, strings.ToLower(base)) {
		return false
	}
	if !movedOff["path"] && namesOnlyLine(clause) {
		for _, p := range pathWord.FindAllString(clause, -1) {
			if p = cleanPath(strings.Trim(p, ".,;:"), ""); path.Base(p) == base && oldPlace(p, r.from, r.to) {
				return true
			}
		}
	}
	if movedOff["dir"] {
		return false
	}
	to := ""
	if r.to != "" {
		to = path.Dir(r.to)
	}
	for _, m := range locative.FindAllStringSubmatch(clause, -1) {
		d := cleanPath(strings.Trim(m[1], "`\"'"), "")
		if d == "" {
			continue
		}
		if path.Base(d) == base && oldPlace(d, r.from, r.to) {
			return true
		}
		// A folder the file moved deeper into still holds it.
		if from := path.Dir(r.from); oldPlace(d, from, to) && !strings.HasPrefix(to, from+"/") {
			return true
		}
	}
	return false
}

// oldPlace reports whether p, a path as a sentence writes it, names from
// and not to: from ends with p, and when to ends with it too, p holds the
// whole part of from that differs from to (read from their common
// folder, as a path is read from the project's root). "scripts/x.sh"
// names /r/scripts/x.sh moved to /r/priv/scripts/x.sh; it names the new
// place of /r/priv/scripts/x.sh moved to /r/scripts/x.sh.
func oldPlace(p, from, to string) bool {
	if !(from == p || strings.HasSuffix(from, "/"+p)) {
		return false
	}
	if to == "" || to == from || !(to == p || strings.HasSuffix(to, "/"+p)) {
		return to != from
	}
	common := 0
	for i := 0; i < len(from) && i < len(to) && from[i] == to[i]; i++ {
		if from[i] == '/' {
			common = i + 1
		}
	}
	return len(p) >= len(from)-common
}

// dropRelocated cuts from the model's kept statements each clause a later
// tool call of the session revised by moving or deleting the file it
// places (see the top of this file). later holds the later turns' texts.
// It reports whether the turn's own tool calls move or delete a file
// (what an earlier turn said of its old place is then revised), read
// from the moves it parsed.
func dropRelocated(t Turn, cands []Candidate, later []LaterText, patches [][]*patch) (moves bool) {
	if movedOff["all"] {
		return false
	}
	rs := turnRelocations(t, patches)
	moves = len(rs) > 0 && !movedOff["later"]
	if !movedOff["later"] {
		rs = append(rs, laterRelocations(later, len(t.Steps))...)
	}
	if len(rs) == 0 {
		return moves
	}
	stepSents := map[int][]string{}
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.Origin == OriginInstruction || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		if _, ok := stepSents[c.step]; !ok {
			stepSents[c.step] = stepSentences(t.Steps[c.step].Text)
		}
		var repl [][3]string // each sentence, what is left of it and what was cut
		why := ""
		for _, st := range stepSents[c.step] {
			if !holdsSentence(c.Text, st) || undoCue.MatchString(lower(st)) {
				continue
			}
			ls := lower(st)
			cl := clauses(st)
			cut := make([]bool, len(cl))
			hit := false
			for _, r := range rs {
				if r.step < c.step {
					continue // moved before the statement was said
				}
				for k, x := range cl {
					if !cut[k] && placesOld(x, ls, r) {
						cut[k], hit = true, true
						if why == "" {
							why = r.call
						}
					}
				}
			}
			if !hit {
				continue
			}
			var b, gone strings.Builder
			for k, x := range cl {
				if !cut[k] {
					b.WriteString(x)
				} else {
					gone.WriteString(x)
				}
			}
			repl = append(repl, [3]string{st, capitalFirst(strings.TrimSpace(b.String())), strings.TrimSpace(gone.String())})
		}
		if len(repl) > 0 {
			replaceSentences(c, repl, "revised later: "+preview(why))
		}
	}
	return moves
}

// capitalFirst returns s with its first letter upper-cased.
func capitalFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 || !unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// replaceSentences is cutSentences with each sentence replaced by what is
// left of it (repl's triples: the sentence, what is left of it, the
// clauses cut; a sentence left with less than two words is cut whole).
// A rest opening with a pronoun whose referent was cut gets the cut
// clause's subject back, or is cut whole (mendClause); a sentence after
// one cut whole is mended as cutSentences does (mendDangling).
// A candidate left with something records the clauses or sentences cut,
// with reason, in its cuts.
func replaceSentences(c *Candidate, repl [][3]string, reason string) {
	text := c.Text
	var cut, gone []string
	for _, p := range repl {
		s, with := p[0], mendClause(p[1], p[2])
		if with == "" || wordCount(with) < 2 {
			cut = append(cut, s)
			gone = append(gone, s)
			continue
		}
		text = replaceSentence(text, s, with)
		gone = append(gone, p[2])
	}
	rewrites, more := mendDangling(text, cut)
	for _, r := range rewrites {
		text = replaceSentence(text, r[0], r[1])
	}
	cut = append(cut, more...)
	gone = append(gone, more...)
	text, ok := cutLeaves(text, cut)
	if !ok {
		c.Keep, c.Reason = false, reason
		return
	}
	for _, g := range gone {
		if g = strings.TrimSpace(g); g != "" {
			c.cuts = append(c.cuts, cutPiece{text: g, reason: reason})
		}
	}
	c.Text = text
	c.subject = subjectOf(text)
}
