package ingest

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// Instruction files. The file a coding agent reads as its standing
// instructions (CLAUDE.md, AGENTS.md, Aider's CONVENTIONS.md, Cursor's
// .cursor/rules/*.mdc...) holds, by construction, the project's
// conventions: the prose an edit of the turn adds to one is a candidate
// statement of origin OriginInstruction and kind convention, whatever the
// model said about it. Edits are read from:
//
//   - Claude Code's Edit, MultiEdit and Write tool calls (file_path,
//     old_string/new_string, edits, content);
//   - Codex's apply_patch (a call whose arguments hold "*** Begin Patch");
//   - Aider's SEARCH/REPLACE blocks in the model's text (the file name on
//     the line before "<<<<<<< SEARCH", inside or before the fence);
//   - Cursor's fenced blocks whose info string carries the path
//     ("```markdown:.cursor/rules/x.mdc", "```diff:AGENTS.md"), in the text
//     or in an edit's result (SpecStory), and a path-less "```diff" edit
//     whose response names exactly one instruction file (instrNamedDiff).
//
// Each rule the edit's new text shows is a statement: the lines the edit
// adds (new_string lines not in old_string, REPLACE lines not in SEARCH, a
// diff's "+" lines) and, since a rule of the file after the edit is a
// convention whether the edit wrote, moved or only kept it (keptRule,
// ruleInstrWhole), the rest of its new text, but for a nested item shown
// without its parent and a rule cut at the edit's end. Each list item
// (with its continuation lines and nested items) or paragraph is one
// statement, prefixed with the file's name and the heading or lead-in
// ("When writing Markdown files:") it sits under; headings, code, tables
// and front matter are not statements. A rule an earlier edit of the turn
// showed is read once; the store's dedup meets one an earlier turn
// stored. A line that a later edit of the session removes revises the
// statement it is in (Reason "revised later"). Aider's blocks count when
// Aider applied them, also beside a block of the same answer that failed
// (aiderBlockApplied).

// OriginInstruction is the Origin of a statement an edit added to an
// agent-instruction file (InstructionFile).
const OriginInstruction = "instruction-file"

// ClassInstruction is the Class of a statement added to an instruction file.
const ClassInstruction = "instruction"

// instrBaseNames are the instruction files' names wherever they sit.
var instrBaseNames = map[string]bool{
	"claude.md": true, "claude.local.md": true, "agents.md": true, "agents.override.md": true,
	"agent.md": true, "gemini.md": true, "conventions.md": true, ".cursorrules": true,
	".windsurfrules": true, ".clinerules": true, ".goosehints": true, "copilot-instructions.md": true,
}

// instrDirs are the folders whose markdown files are instruction files
// (rules directories).
var instrDirs = []string{".cursor/rules/", ".claude/rules/", ".windsurf/rules/", ".clinerules/",
	".github/instructions/", ".kiro/steering/", ".amazonq/rules/", ".continue/rules/", ".junie/", ".roo/rules"}

// InstructionFile reports whether a path names an agent-instruction file:
// CLAUDE.md, AGENTS.md, GEMINI.md, CONVENTIONS.md (Aider), .cursorrules,
// .windsurfrules, .clinerules, .github/copilot-instructions.md, a Cursor
// rule (*.mdc) or a markdown file of a rules directory (.cursor/rules,
// .claude/rules, .windsurf/rules, .clinerules, .github/instructions,
// .kiro/steering, .amazonq/rules, .continue/rules, .junie, .roo/rules*).
func InstructionFile(p string) bool {
	p = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/"))
	base := path.Base(p)
	if instrBaseNames[base] || strings.HasSuffix(base, ".mdc") {
		return true
	}
	if !strings.HasSuffix(base, ".md") {
		return false
	}
	for _, d := range instrDirs {
		if strings.HasPrefix(p, d) || strings.Contains(p, "/"+d) {
			return true
		}
	}
	return false
}

// instrEdit is one edit of an instruction file: its lines before and
// after (only the edited region when the edit says no more).
type instrEdit struct {
	file          string
	before, after []string
	whole         bool // after is the whole file (a write of it, not an edit of a part)
}

// added reports, for each line of after, whether the edit added it (its
// normalised text was not among the lines before).
func (e instrEdit) added() []bool {
	was := map[string]bool{}
	for _, l := range e.before {
		was[normLine(l)] = true
	}
	out := make([]bool, len(e.after))
	for i, l := range e.after {
		n := normLine(l)
		out[i] = n != "" && !was[n]
	}
	return out
}

// removed returns the normalised lines the edit took out.
func (e instrEdit) removed() []string {
	now := map[string]bool{}
	for _, l := range e.after {
		now[normLine(l)] = true
	}
	var out []string
	for _, l := range e.before {
		if n := normLine(l); n != "" && !now[n] {
			out = append(out, n)
		}
	}
	return out
}

// listMarker opens a list item: its indentation, marker and text.
var listMarker = regexp.MustCompile(`^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(.*)$`)

// normLine is a line as compared between an edit's before and after: no
// list marker, no emphasis, spaces collapsed, lowercased, no closing
// punctuation (a period added to a line adds no statement).
func normLine(l string) string {
	if m := listMarker.FindStringSubmatch(l); m != nil {
		l = m[2]
	}
	l = strings.NewReplacer("**", "", "__", "").Replace(l)
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(l), " ")), ".;:,!")
}

// callEdits returns the instruction-file edits a tool call makes, read
// from its patch (callPatch: an apply_patch, or a file-editing call read
// as one by editPatch).
func callEdits(p *patch) []instrEdit {
	if p == nil {
		return nil
	}
	return p.instrEdits()
}

// quickPath reads the "file_path" (else "path") string of a tool call's
// JSON input without decoding the rest; ok is false when it is absent or
// escaped.
func quickPath(input string) (string, bool) {
	for _, key := range []string{`"file_path":"`, `"path":"`} {
		i := strings.Index(input, key)
		if i < 0 {
			continue
		}
		rest := input[i+len(key):]
		j := strings.IndexByte(rest, '"')
		if j < 0 || strings.IndexByte(rest[:j], '\\') >= 0 {
			return "", false
		}
		return rest[:j], true
	}
	return "", false
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
}

// patchText finds the patch in a call's JSON arguments: the string value
// that holds "*** Begin Patch" (Codex's apply_patch input, or an argument
// of its shell command).
func patchText(input string) string {
	var v any
	if json.Unmarshal([]byte(input), &v) != nil {
		return input
	}
	var find func(any) string
	find = func(v any) string {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "*** Begin Patch") {
				return x
			}
		case []any:
			for _, e := range x {
				if s := find(e); s != "" {
					return s
				}
			}
		case map[string]any:
			for _, e := range x {
				if s := find(e); s != "" {
					return s
				}
			}
		}
		return ""
	}
	return find(v)
}

// fencedBlock is a top-level fenced block of markdown: its info string
// and its lines (nested fences included).
type fencedBlock struct {
	info  string
	lines []string
}

// fenceOpen reads a fence line: its character, run length, indentation
// and info string.
var fenceOpen = regexp.MustCompile("^(\\s*)(`{3,}|~{3,})(.*)$")

// fenceLine returns a line's fenceOpen match when it is a fence line, nil
// when it is not ("```x``` is ..." is inline code).
func fenceLine(l string) []string {
	m := fenceOpen.FindStringSubmatch(l)
	if m != nil && m[2][0] == '`' && strings.Contains(m[3], "`") {
		return nil
	}
	return m
}

// fencedBlocks returns the top-level fenced blocks of text, their fences
// followed by fenceStep: the fence lines of nested blocks are lines of
// the block they are in.
func fencedBlocks(text string) []fencedBlock {
	var out []fencedBlock
	var open []fenceLevel
	for _, l := range splitLines(text) {
		m := fenceLine(l)
		if m == nil {
			if len(open) > 0 {
				out[len(out)-1].lines = append(out[len(out)-1].lines, l)
			}
			continue
		}
		was := len(open)
		open = fenceStep(open, m)
		switch {
		case was == 0:
			out = append(out, fencedBlock{info: strings.TrimSpace(m[3])})
		case len(open) > 0:
			out[len(out)-1].lines = append(out[len(out)-1].lines, l)
		}
	}
	return out
}

// aiderSearch, aiderDivider and aiderReplace are the lines of Aider's
// SEARCH/REPLACE blocks.
var (
	aiderSearch  = regexp.MustCompile(`^<{5,9} SEARCH\s*$`)
	aiderDivider = regexp.MustCompile(`^={5,9}\s*$`)
	aiderReplace = regexp.MustCompile(`^>{5,9} REPLACE\s*$`)
)

// searchReplaceEdits reads the SEARCH/REPLACE blocks of a text (Aider's
// edit format, searchReplacePatch) into the edits of instruction files
// they make.
func searchReplaceEdits(text string) []instrEdit {
	return searchReplacePatch(text).instrEdits()
}

// searchReplacePatch reads the SEARCH/REPLACE blocks of a text (Aider's
// edit format) as a patch: an update of its file per block, the SEARCH
// lines before it and the REPLACE lines after; the file is named on the
// last line before "<<<<<<< SEARCH" that is neither blank nor a fence
// line. A block whose divider never comes is none.
func searchReplacePatch(text string) *patch {
	lines := splitLines(text)
	p := &patch{}
	for i := 0; i < len(lines); i++ {
		if !aiderSearch.MatchString(lines[i]) {
			continue
		}
		file := ""
		for k := i - 1; k >= 0 && k >= i-3; k-- {
			t := strings.TrimSpace(lines[k])
			if t == "" || fenceOpen.MatchString(t) {
				continue
			}
			file = strings.Trim(t, "`*: ")
			break
		}
		f := patchFile{op: patchUpdate, path: file}
		j, state := i+1, 0
		for ; j < len(lines); j++ {
			l := lines[j]
			if state == 0 && aiderDivider.MatchString(l) {
				state = 1
				continue
			}
			if state == 1 && aiderReplace.MatchString(l) {
				break
			}
			if state == 0 {
				f.before = append(f.before, l)
			} else {
				f.after = append(f.after, l)
			}
		}
		i = j
		if state == 1 {
			p.files = append(p.files, f)
		}
	}
	return p
}

// fencePathEdits reads Cursor's fenced edits: a block whose info string
// carries the path ("markdown:CLAUDE.md", "diff:.cursor/rules/a.mdc") of
// an instruction file; a path-less "diff" block when named, the only
// instruction file the text of its response names (instrNamedDiff).
func fencePathEdits(text string, named func() string) []instrEdit {
	var out []instrEdit
	for _, b := range fencedBlocks(text) {
		lang, file := fenceTarget(b)
		if file == "" && lang == "diff" && !instrOff["named-diff"] {
			file = named() // read only when a path-less diff needs it
		}
		if !InstructionFile(file) {
			continue
		}
		if lang == "diff" || lang == "patch" {
			if e := diffEdit(file, b.lines); len(e.after)+len(e.before) > 0 {
				out = append(out, e)
			}
			continue
		}
		out = append(out, instrEdit{file: file, after: b.lines})
	}
	return out
}

// fenceTarget returns a fenced block's language and the path its info
// string carries after a colon ("" for none), as fencePathEdits reads
// them: the language lowered, both trimmed.
func fenceTarget(b fencedBlock) (lang, file string) {
	lang, file, ok := strings.Cut(b.info, ":")
	if !ok {
		file = ""
	}
	return strings.ToLower(strings.TrimSpace(lang)), strings.TrimSpace(file)
}

// mayFenceEdit reports whether fencePathEdits may read an edit of an
// instruction file from text, whatever names its path-less diffs: a
// fenced block whose info string carries an instruction file's path, or
// a path-less diff.
func mayFenceEdit(text string) bool {
	if !strings.Contains(text, "```") && !strings.Contains(text, "~~~") {
		return false // no fence at all (fenceOpen)
	}
	for _, b := range fencedBlocks(text) {
		if lang, file := fenceTarget(b); InstructionFile(file) || file == "" && lang == "diff" {
			return true
		}
	}
	return false
}

// diffEdit reads the lines of a unified diff's hunk: "+" lines are after
// it, "-" lines before, the rest (" " or bare context) both.
func diffEdit(file string, lines []string) instrEdit {
	e := instrEdit{file: file}
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"), strings.HasPrefix(l, "@@"):
		case strings.HasPrefix(l, "+"):
			e.after = append(e.after, l[1:])
		case strings.HasPrefix(l, "-"):
			e.before = append(e.before, l[1:])
		default:
			l = strings.TrimPrefix(l, " ")
			e.before = append(e.before, l)
			e.after = append(e.after, l)
		}
	}
	return e
}

// fileToken is a file name as prose writes it.
var fileToken = regexp.MustCompile("[A-Za-z0-9_./@~\\\\-]*[A-Za-z0-9_-]\\.(?:md|mdc|cursorrules|windsurfrules|clinerules)\\b|\\.(?:cursorrules|windsurfrules|clinerules|goosehints)\\b")

// namedInstrFile returns the instruction file a text names when it names
// exactly one (a path-less diff after "Let me update the x.mdc rule:" is
// an edit of it), else "".
func namedInstrFile(text string) string {
	prose, _ := splitFences(text)
	found := ""
	for _, f := range fileToken.FindAllString(prose, -1) {
		if !InstructionFile(f) {
			continue
		}
		if found != "" && path.Base(found) != path.Base(f) {
			return ""
		}
		found = f
	}
	return found
}

// instrOff turns off one mechanism of instruction-file reading, by name,
// for ablation in tests and measurements ("all", "named-diff",
// "removal", "context", "file", "applied", "gone", "failed"); empty in
// production.
var instrOff = map[string]bool{}

// stepEdits returns the instruction-file edits of the turn's steps, in
// order, each with the index of its step; patches are the turn's parsed
// patches (turnPatches).
func stepEdits(t Turn, patches [][]*patch) (edits []instrEdit, steps []int) {
	if instrOff["all"] {
		return nil, nil
	}
	// What names the file of a path-less diff: the text of the latest step
	// with text; for an edit's result (SpecStory's "Edit", which comes with
	// the next response, or with the same one when its section ends
	// there), the text before the call it answers, the calls and results
	// paired in order.
	var callTexts []string
	named := ""
	for _, s := range t.Steps {
		if strings.TrimSpace(s.Text) != "" {
			named = s.Text
		}
		for _, c := range s.Calls {
			if c.Name == "Edit" {
				callTexts = append(callTexts, named)
			}
		}
	}
	named = ""
	results := 0
	for i, s := range t.Steps {
		if s.Error {
			continue
		}
		var es []instrEdit
		if strings.TrimSpace(s.Text) != "" {
			named = s.Text
		}
		for j := range s.Calls {
			if !callFailed(t, i, j) {
				es = append(es, callEdits(patchAt(patches, i, j))...)
			}
		}
		textEdits := mayNameInstr(s.Text)
		if textEdits && strings.Contains(s.Text, "SEARCH") {
			for _, e := range searchReplaceEdits(s.Text) {
				if instrOff["applied"] || aiderBlockApplied(t, i, e) {
					es = append(es, e)
				}
			}
		}
		if textEdits && (strings.Contains(s.Text, "```") || strings.Contains(s.Text, "~~~")) {
			es = append(es, fencePathEdits(s.Text, func() string { return namedInstrFile(named) })...)
		}
		for _, r := range s.Results {
			if r.Name != "Edit" {
				continue
			}
			by := named
			if results < len(callTexts) {
				by = callTexts[results]
			}
			results++
			if !r.IsError {
				es = append(es, fencePathEdits(r.Content, func() string { return namedInstrFile(by) })...)
			}
		}
		for _, e := range es {
			edits = append(edits, e)
			steps = append(steps, i)
		}
	}
	return edits, steps
}

// instrNameParts are what every name of an instruction file holds, in
// lower case, one of (InstructionFile): a ".md" (".mdc" too) or a "rules"
// or "hints" (.cursorrules, .goosehints).
var instrNameParts = []string{".md", "rules", "hints"}

// mayNameInstr reports whether a text may name an instruction file: a
// quick test before a text is parsed for edits, since later texts are read
// again for every earlier turn. It ignores case, as InstructionFile does
// ("AGENTS.MD", ".CURSORRULES"), without lowering the text. A text with an
// edit of a path-less diff names its file too (namedInstrFile).
func mayNameInstr(text string) bool {
	for i := range len(text) {
		for _, p := range instrNameParts {
			if (text[i]|0x20) == p[0] && i+len(p) <= len(text) && strings.EqualFold(text[i:i+len(p)], p) {
				return true
			}
		}
	}
	return false
}

// laterRemovals returns the lines that later texts of the session (as
// LaterTexts gives them) remove from instruction files, by file base name.
func laterRemovals(later []LaterText) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, lt := range later {
		if lt.From != LaterInstrRemoved && !lt.words() {
			continue // moves and removed settings edit no instruction file
		}
		l := lt.Text
		if !mayNameInstr(l) {
			continue
		}
		var es []instrEdit
		if strings.Contains(l, "SEARCH") {
			es = append(es, searchReplaceEdits(l)...)
		}
		if strings.Contains(l, "```") || strings.Contains(l, "~~~") {
			es = append(es, fencePathEdits(l, func() string { return namedInstrFile(l) })...)
		}
		for _, e := range es {
			addRemovals(out, e)
		}
	}
	return out
}

// instrKey is the key removals are kept under: the file's base name,
// lowercased (an edit names the file by a path, or by its name alone).
func instrKey(file string) string {
	return strings.ToLower(instrName(file))
}

// instrName is the base name of an instruction file, whatever its
// separators.
func instrName(file string) string {
	return path.Base(strings.ReplaceAll(file, `\`, "/"))
}

func addRemovals(m map[string]map[string]bool, e instrEdit) {
	b := instrKey(e.file)
	for _, r := range e.removed() {
		if m[b] == nil {
			m[b] = map[string]bool{}
		}
		m[b][r] = true
	}
}

// instrLaterText renders what the edits of tool calls in a turn remove
// from instruction files as a fenced diff naming the file, for LaterTexts
// (a LaterInstrRemoved text: Distill reads no sentences from it, only the
// lines it removes, as laterRemovals reads the fenced edits of any text):
// a later turn's removal then revises an earlier turn's statement in
// batch ingest and live capture alike. Texts already carry the fenced
// edits of Aider and Cursor. A call that failed removed nothing and a
// step that failed made no call (callFailed, as stepEdits reads them).
// patches are the turn's parsed patches (turnPatches).
func instrLaterText(t Turn, patches [][]*patch) string {
	var b strings.Builder
	for i, s := range t.Steps {
		if s.Error && !instrOff["failed"] {
			continue
		}
		for j := range s.Calls {
			if callFailed(t, i, j) && !instrOff["failed"] {
				continue // it removed nothing (stepEdits leaves it out too)
			}
			for _, e := range callEdits(patchAt(patches, i, j)) {
				rm := e.removed()
				if len(rm) == 0 {
					continue
				}
				b.WriteString("```diff:" + e.file + "\n")
				for _, r := range rm {
					b.WriteString("-" + r + "\n")
				}
				b.WriteString("```\n")
			}
		}
	}
	return b.String()
}

// instrStatement is one statement of an edit's new text: its text, the
// normalised lines it was read from, and whether the edit added one of
// them (else the edit only kept or moved it: instrWhole).
type instrStatement struct {
	text  string
	rule  string // text without the file's name and the lead-in it sits under
	lines []string
	added bool
}

// frontMatterKey is a line of a rule file's front matter.
var frontMatterKey = regexp.MustCompile(`^[a-zA-Z_][\w-]*:\s*`)

// instrStatements reads the statements an edit adds (see the package
// comment above): one per list item or paragraph holding an added line.
func instrStatements(e instrEdit) []instrStatement {
	added := e.added()
	lines := e.after
	// Front matter of a rule file ("---", "description: ...", "---").
	start := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for k := 1; k < len(lines); k++ {
			if strings.TrimSpace(lines[k]) == "---" {
				start = k + 1
				break
			}
			if !frontMatterKey.MatchString(lines[k]) && strings.TrimSpace(lines[k]) != "" {
				break
			}
		}
	}
	type part struct {
		text  string
		added bool
		line  string
	}
	type unit struct {
		head     []part // the item's or paragraph's own lines
		children [][]part
		indent   int
		item     bool
		ctx      string // the heading or lead-in it sits under
		end      int    // the index in lines of its last line
	}
	var units []*unit
	var cur *unit
	var child *[]part
	ctx := ""
	var fence []fenceLevel
	for i := start; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		if m := fenceLine(l); m != nil {
			fence = fenceStep(fence, m)
			continue
		}
		if len(fence) > 0 {
			continue // code or an example
		}
		switch {
		case t == "":
			if cur != nil && !cur.item {
				cur = nil
			}
			child = nil
			continue
		case strings.HasPrefix(t, "#"):
			ctx = strings.TrimSpace(strings.TrimLeft(t, "#"))
			cur, child = nil, nil
			continue
		case tableRow(t) || t == "---" || t == "***" || strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">"):
			cur, child = nil, nil
			continue
		}
		p := part{text: t, added: added[i], line: normLine(l)}
		if m := listMarker.FindStringSubmatch(l); m != nil {
			p.text = strings.TrimSpace(m[2])
			ind := len(strings.ReplaceAll(m[1], "\t", "    "))
			if cur != nil && cur.item && ind > cur.indent {
				cur.children = append(cur.children, []part{p})
				child = &cur.children[len(cur.children)-1]
				cur.end = i
				continue
			}
			cur = &unit{head: []part{p}, indent: ind, item: true, ctx: ctx, end: i}
			units = append(units, cur)
			child = nil
			continue
		}
		if cur != nil && (cur.item || !lineEnds(cur.head[len(cur.head)-1].text)) {
			if child != nil {
				*child = append(*child, p)
			} else {
				cur.head = append(cur.head, p)
			}
			cur.end = i
			continue
		}
		// A paragraph's line that follows a complete one starts a
		// statement of its own: rule files often write one rule a line.
		cur = &unit{head: []part{p}, ctx: ctx, end: i}
		units = append(units, cur)
	}
	// A lead-in paragraph ("When writing Markdown files:") is the context
	// of the items after it, not a statement of its own.
	for k := 0; k+1 < len(units); k++ {
		u := units[k]
		if !u.item && len(u.head) == 1 && strings.HasSuffix(u.head[0].text, ":") && units[k+1].item {
			lead := strings.TrimSuffix(u.head[0].text, ":")
			for j := k + 1; j < len(units) && units[j].item && units[j].ctx == u.ctx; j++ {
				units[j].ctx = lead
			}
			u.head = nil
		}
	}
	topIndent := -1 // the indentation of the edit's outermost list items
	for _, u := range units {
		if u.item && len(u.head) > 0 && (topIndent < 0 || u.indent < topIndent) {
			topIndent = u.indent
		}
	}
	file := instrName(e.file)
	var out []instrStatement
	for _, u := range units {
		if len(u.head) == 0 {
			continue
		}
		headAdded := false
		var texts, src []string
		for _, p := range u.head {
			headAdded = headAdded || p.added
			texts = append(texts, p.text)
			src = append(src, p.line)
		}
		any := headAdded
		for _, c := range u.children {
			ca := false
			for _, p := range c {
				ca = ca || p.added
			}
			if !headAdded && !ca {
				continue
			}
			any = true
			for _, p := range c {
				texts = append(texts, p.text)
				src = append(src, p.line)
			}
		}
		if !any && (!keptRule(u.item, u.indent, topIndent) || u.end == len(lines)-1 && !lineEnds(lines[u.end])) {
			// a rule the edit kept whose text runs to where the edit's
			// stops, no sentence ended ("... that need to capture
			// `this`" without its next line "from the lexical scope."):
			// the edit shows it in part
			continue
		}
		if !any {
			for _, c := range u.children { // a rule the edit kept is read whole
				for _, p := range c {
					texts = append(texts, p.text)
					src = append(src, p.line)
				}
			}
		}
		body := strings.TrimSpace(exampleTail.ReplaceAllString(cleanInstr(strings.Join(texts, " ")), ""))
		if body == "" || proseWords(body) < 3 || codeLike(body) && !strings.Contains(body, "`") {
			continue
		}
		if strings.HasSuffix(body, ":") {
			body = strings.TrimSuffix(body, ":") + "." // its example or code is not part of it
		} else if !strings.ContainsAny(body[len(body)-1:], ".!?;)`\"'") {
			body += "."
		}
		prefix := file + ": "
		if instrOff["file"] {
			prefix = ""
		}
		if u.ctx != "" && runeLen(u.ctx) <= maxContextRunes && !instrOff["context"] {
			prefix += strings.TrimSuffix(cleanInstr(u.ctx), ":") + ": "
		}
		for _, piece := range packSentences(splitLong(body)) {
			out = append(out, instrStatement{text: prefix + piece, rule: piece, lines: src, added: any})
		}
	}
	return out
}

// ruleInstrWhole names, for ablate (junk.go), the reading of the rules an
// edit of an instruction file keeps or moves, not only those it adds.
const ruleInstrWhole = "instrwhole"

// keptRule reports whether a unit of an edit's new text that holds no
// added line is a statement all the same (instrWhole): every rule of the
// file after the edit is a convention of the project, also one the edit
// only kept as context or moved ("reorder the lists"). A nested item
// whose parent the edit's text does not show (an item indented deeper
// than the text's outermost items, topIndent) is a part of a rule, not
// one: it is read only when the edit adds to it, under what it adds.
func keptRule(item bool, indent, topIndent int) bool {
	if !ruleOn(ruleInstrWhole) {
		return false
	}
	return !item || indent <= topIndent
}

// maxContextRunes bounds the heading or lead-in a statement is prefixed
// with: a longer one is a sentence, not a name for the section.
const maxContextRunes = 80

// splitLong returns a statement's sentences when it is longer than
// maxCandidateRunes, else the statement.
func splitLong(s string) []string {
	if runeLen(s) <= maxCandidateRunes {
		return []string{s}
	}
	var out []string
	for _, st := range sentences(s) {
		if t := strings.TrimSpace(st.text); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// exampleTail is the lead-in of an example left at the end of a
// statement whose example (code) is not part of it.
var exampleTail = regexp.MustCompile(`(?i)(?:^|\s)(?:for example|for instance|e\.g\.|example|examples|like this|such as)\s*:$`)

// emphasis is markdown emphasis around words.
var emphasis = regexp.MustCompile(`\*\*|__|~~`)

// cleanInstr removes markdown emphasis and emoji-like symbols from an
// instruction line, keeping code spans.
func cleanInstr(s string) string {
	s = emphasis.ReplaceAllString(s, "")
	s = strings.Map(func(r rune) rune {
		if r >= 0x2600 && r <= 0x27BF || r >= 0x1F300 || r == 0xFE0F {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// fenceLevel is an open fenced block: its fence's character and length.
type fenceLevel struct {
	ch byte
	n  int
}

// fenceStep opens or closes a fence level on a fence line (fenceLine's
// match): with none open, or with an info string, it opens one (a block
// nested in the open one); a bare fence closes the innermost open block
// of its character with a run at most as long, and those nested in it.
func fenceStep(open []fenceLevel, m []string) []fenceLevel {
	ch, n, info := m[2][0], len(m[2]), strings.TrimSpace(m[3])
	if len(open) == 0 || info != "" {
		return append(open, fenceLevel{ch, n})
	}
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].ch == ch && n >= open[i].n {
			return open[:i]
		}
	}
	return open
}

// instructionCandidates returns the candidates the turn's edits of
// instruction files (edits, made in steps: stepEdits) add, each positioned
// at its step (stepPos), dropping (Keep false, "revised later") a
// statement whose line a later edit of the turn, or of a later turn
// (later), removes.
func instructionCandidates(edits []instrEdit, steps []int, later []LaterText, stepPos []int) []Candidate {
	if len(edits) == 0 {
		return nil
	}
	var rmLater map[string]map[string]bool
	if !instrOff["removal"] {
		rmLater = laterRemovals(later)
	}
	var out []Candidate
	stated := map[string]bool{} // the lines of the statements read so far from the turn's edits
	for k, e := range edits {
		rm := map[string]bool{}
		if !instrOff["removal"] {
			after := map[string]map[string]bool{}
			for _, f := range edits[k+1:] {
				addRemovals(after, f)
			}
			b := instrKey(e.file)
			for l := range after[b] {
				rm[l] = true
			}
			for l := range rmLater[b] {
				rm[l] = true
			}
		}
		for _, st := range instrStatements(e) {
			if !st.added && allStated(st.lines, stated) {
				continue // a rule an earlier edit of the turn showed already
			}
			for _, l := range st.lines {
				stated[l] = true
			}
			text, _ := redactText(st.text)
			c := newCandidate(text, OriginInstruction, ClassInstruction, true, "")
			c.Kind, c.Type = memory.KindConvention, memory.TypeProject
			if ruleOn(ruleInstrSubject) {
				rule, _ := redactText(st.rule)
				c.subject = subjectOf(rule)
			}
			c.step = steps[k]
			c.pos = stepPos[steps[k]]
			for _, l := range st.lines {
				if rm[l] {
					c.Keep, c.Reason = false, "revised later: a later edit removes "+preview(l)
					break
				}
			}
			out = append(out, c)
		}
	}
	return out
}

// ruleInstrSubject names, for ablate (junk.go), the reading of an
// instruction statement's subject from its rule alone. Every rule of a
// section carries the same "FILE: lead-in:" prefix (which tells where the
// rule sits, and stays in the memory's text); counted in the subject, its
// words made short rules of one section look like restatements of one
// another (mayRestate: "Avoid using await in loops." restated by "Avoid
// using the generic `Function` type."). A rule restates another when its
// own words do; namesAll still reads the whole text, so a rule of another
// file restates none.
const ruleInstrSubject = "instrsubject"

// allStated reports whether every line of a statement is in stated.
func allStated(lines []string, stated map[string]bool) bool {
	for _, l := range lines {
		if !stated[l] {
			return false
		}
	}
	return true
}

// insertByPos inserts the instruction-file candidates into cands, each
// before the first candidate said after it; cands is returned unchanged
// when there are none.
func insertByPos(cands, instr []Candidate) []Candidate {
	if len(instr) == 0 {
		return cands
	}
	out := make([]Candidate, 0, len(cands)+len(instr))
	k := 0
	for _, c := range cands {
		for k < len(instr) && instr[k].pos < c.pos {
			out = append(out, instr[k])
			k++
		}
		out = append(out, c)
	}
	return append(out, instr[k:]...)
}

// instrCall returns what a slimmed turn keeps of a call (slim) that edits
// an instruction file: the whole call; ok is false for the rest. p is the
// call's patch (callPatch).
func instrCall(c memory.ToolCall, p *patch) (keep memory.ToolCall, ok bool) {
	if len(callEdits(p)) > 0 {
		return c, true
	}
	return memory.ToolCall{}, false
}

// bareEditCall returns what a slimmed turn keeps of an "Edit" call that
// nothing else keeps (slimCalls): the call without its input, since
// stepEdits pairs SpecStory's edit results with their calls by order; ok
// is false for any other call.
func bareEditCall(c memory.ToolCall) (keep memory.ToolCall, ok bool) {
	if c.Name == "Edit" {
		return memory.ToolCall{ID: c.ID, Name: c.Name}, true
	}
	return memory.ToolCall{}, false
}

// editResults returns the results of edits (SpecStory's and Claude
// Code's "Edit"), which a slimmed turn keeps, each paired by order with
// the call it answers (stepEdits): of a successful one, its content when
// a fenced block of it may be read as an edit of an instruction file
// (mayFenceEdit: a fenced edit may name its file only in the text of the
// response that made it), else none (Claude Code's `cat -n` snippet of
// the file edited, which nothing reads); of one that failed only what
// stepEdits reads (its name, call and error).
func editResults(rs []memory.ToolResult) []memory.ToolResult {
	var out []memory.ToolResult
	for _, r := range rs {
		switch {
		case r.Name != "Edit":
		case !r.IsError && (slimOff["results"] || mayFenceEdit(r.Content)):
			out = append(out, r)
		case !r.IsError:
			out = append(out, memory.ToolResult{ToolUseID: r.ToolUseID, Name: r.Name})
		case !slimOff["failed"]:
			out = append(out, memory.ToolResult{ToolUseID: r.ToolUseID, Name: r.Name, IsError: true})
		}
	}
	return out
}

// removesInstr reports whether a turn's edits of instruction files
// (stepEdits) remove a line, or write a whole file (instrrevise.go): what
// an earlier turn added from it is then revised.
func removesInstr(edits []instrEdit) bool {
	for _, e := range edits {
		if len(e.removed()) > 0 || e.whole && ruleOn(ruleInstrRevise) {
			return true
		}
	}
	return false
}

// stepResults returns the tool results of step i and of the step after
// it: a call's result comes with the next response, or with the same one
// when the turn ends there.
func stepResults(t Turn, i int) []memory.ToolResult {
	out := t.Steps[i].Results
	if i+1 < len(t.Steps) {
		out = append(out[:len(out):len(out)], t.Steps[i+1].Results...)
	}
	return out
}

// callResult returns the result of call j of step i of t, and whether
// the turn holds one. A call with an id (Claude Code's tool_use_id,
// Codex's call_id) is answered by the result of that id in any step from
// its own on: parallel calls' results may come responses after the call
// (several calls, then their results). A call without one (SpecStory's)
// is answered by its place: the k-th call of its name in its step by the
// k-th result of that name without an id among those that come with the
// next response, or with the same one when the turn ends there
// (stepResults).
func callResult(t Turn, i, j int) (memory.ToolResult, bool) {
	c := t.Steps[i].Calls[j]
	if c.ID != "" {
		for _, s := range t.Steps[i:] {
			for _, r := range s.Results {
				if r.ToolUseID == c.ID {
					return r, true
				}
			}
		}
		return memory.ToolResult{}, false
	}
	k := 0 // the calls of its name before it in its step
	for _, o := range t.Steps[i].Calls[:j] {
		if o.ID == "" && o.Name == c.Name {
			k++
		}
	}
	for _, r := range stepResults(t, i) {
		if r.ToolUseID != "" || r.Name != c.Name {
			continue
		}
		if k == 0 {
			return r, true
		}
		k--
	}
	return memory.ToolResult{}, false
}

// callFailed reports whether the result of call j of step i is an error
// (the edit was refused or did not apply).
func callFailed(t Turn, i, j int) bool {
	r, ok := callResult(t, i, j)
	return ok && r.IsError
}

// awaitedCalls returns the ids of the calls of t whose results t does not
// hold (callResult), in order.
func awaitedCalls(t Turn) []string {
	var out []string
	for i, s := range t.Steps {
		for j, c := range s.Calls {
			if c.ID == "" {
				continue // no result is awaited by id
			}
			if _, ok := callResult(t, i, j); !ok {
				out = append(out, c.ID)
			}
		}
	}
	return out
}

// aiderApplied reports whether Aider applied the SEARCH/REPLACE edits of
// file made in step i and the file was still there after: its output
// after them says "Applied edit to" the file, and not, after that, that
// the file is gone ("<path>: file not found error"). An edit the user
// declined ("Skipping edits to"), or whose SEARCH text did not match, was
// not applied.
func aiderApplied(t Turn, i int, file string) bool {
	return aiderEditApplied(t, i, instrEdit{file: file}, false)
}

// aiderBlockApplied is aiderApplied for one SEARCH/REPLACE block of step
// i, e: also applied when Aider says the response's other blocks were
// (aiderPartly) and e is not one of those it quotes as failed.
func aiderBlockApplied(t Turn, i int, e instrEdit) bool {
	return aiderEditApplied(t, i, e, ruleOn(ruleAiderPartly))
}

// ruleAiderPartly names, for ablate (junk.go), the reading of the blocks
// Aider applied when others of the same response failed to match.
const ruleAiderPartly = "aiderpartly"

// aiderPartlyMark is the line Aider writes after the blocks of a response
// that failed to match when it applied the others ("# The other 1
// SEARCH/REPLACE block were applied successfully."): it then writes no
// "Applied edit to" line, though the file was edited and committed.
var aiderPartlyMark = regexp.MustCompile(`(?m)^# The other \d+ SEARCH/REPLACE blocks? were applied successfully`)

// aiderFailed reports whether an Aider output that says some blocks
// failed quotes e among them ("## SearchReplaceNoExactMatch: ... lines
// in FILE", then the block): its SEARCH and REPLACE lines are e's.
func aiderFailed(output string, e instrEdit) bool {
	for _, f := range searchReplacePatch(output).files {
		if sameLines(f.before, e.before) && sameLines(f.after, e.after) {
			return true
		}
	}
	return false
}

// sameLines reports whether two runs of lines are the same but for
// trailing spaces (which Aider's markdown history adds or drops).
func sameLines(a, b []string) bool {
	return slices.EqualFunc(a, b, func(x, y string) bool {
		return strings.TrimRight(x, " \t\r") == strings.TrimRight(y, " \t\r")
	})
}

// aiderOutput returns what Aider printed right after the response of step
// i (transcript.ParseAider): the results of the next response, or, for
// the turn's last response, its own results but the first when it has
// more than one (the first then is the output after the response before).
// stepResults reads both for "Applied edit to", which names its file; an
// output that names no file (aiderPartlyMark) must be the step's own.
func aiderOutput(t Turn, i int) []memory.ToolResult {
	switch rs := t.Steps[i].Results; {
	case i+1 < len(t.Steps):
		return t.Steps[i+1].Results
	case i > 0 && len(rs) > 0:
		return rs[1:]
	default:
		return rs
	}
}

// aiderEditApplied is aiderApplied for e.file; with partly, a result that
// says the response's other blocks were applied (aiderPartlyMark) and
// does not quote e as failed applied e too.
func aiderEditApplied(t Turn, i int, e instrEdit, partly bool) bool {
	file := e.file
	slash := func(p string) string { return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")) }
	want := slash(file)
	base := path.Base(want)
	applied := false
	if partly {
		for _, r := range aiderOutput(t, i) {
			if aiderPartlyMark.MatchString(r.Content) && !aiderFailed(r.Content, e) {
				applied = true
			}
		}
	}
	for _, r := range stepResults(t, i) {
		for _, l := range strings.Split(r.Content, "\n") {
			l = strings.TrimSpace(l)
			if f, ok := strings.CutPrefix(l, "Applied edit to "); ok && path.Base(slash(f)) == base {
				applied = true
			}
			if f, ok := strings.CutSuffix(l, ": file not found error"); ok && !instrOff["gone"] {
				if g := slash(f); g == want || strings.HasSuffix(g, "/"+want) {
					applied = false
				}
			}
		}
	}
	return applied
}

// lineEnds reports whether a line of a paragraph ends a sentence (or an
// emphasised line), so the next line starts another statement.
func lineEnds(t string) bool {
	t = strings.TrimSpace(t)
	return t != "" && strings.ContainsAny(t[len(t)-1:], ".!?*:")
}
