package ingest

import (
	"cmp"
	"encoding/json"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// Codex's apply_patch format: "*** Begin Patch", then for each file
// "*** Add File: p" and its "+" lines, "*** Update File: p" (then
// "*** Move to: q" for a rename) and its hunks ("@@", then " ", "-" and
// "+" lines), or "*** Delete File: p"; then "*** End Patch".
//
// A patch is also what every agent's file edit is read as, whatever its
// form: Claude Code's Edit (old_string/new_string: an update whose lines
// before and after are those strings), MultiEdit (one update of the file
// per edit), Write (content: an added file) and the text editor tool's
// calls (editPatch), and Aider's SEARCH/REPLACE blocks in the model's
// text (searchReplacePatch: an update per block). A tool call's patch is
// read once (callPatch) for all of its readers: the edits of instruction
// files it makes (instr.go), the files it moves, deletes and creates
// (moved.go) and the settings it removes (glossdiff.go), so that one rule
// reads every agent's edits alike.

// patchOp is what a patch does to one file.
type patchOp uint8

const (
	patchAdd patchOp = iota + 1
	patchUpdate
	patchDelete
)

// patchFile is one file of a patch.
type patchFile struct {
	op     patchOp
	path   string // as its header names it, trimmed
	moveTo string // an update's "*** Move to:", trimmed; "" when it stays
	// before and after are the file's lines its hunks show before and
	// after the patch: "-" and context lines, "+" and context lines (an
	// added file has only after).
	before, after []string
}

// patch is a parsed patch: its files, in order.
type patch struct {
	files []patchFile
}

// turnPatches parses the patch of each tool call of a turn once, for
// stepEdits and turnRelocations alike: [step][call], nil where a call
// holds none.
func turnPatches(t Turn) [][]*patch {
	out := make([][]*patch, len(t.Steps))
	for i, s := range t.Steps {
		for j, c := range s.Calls {
			if pp := callPatch(c); pp != nil {
				if out[i] == nil {
					out[i] = make([]*patch, len(s.Calls))
				}
				out[i][j] = pp
			}
		}
	}
	return out
}

// patchAt returns the patch of call j of step i (nil for none).
func patchAt(patches [][]*patch, i, j int) *patch {
	if i < len(patches) && j < len(patches[i]) {
		return patches[i][j]
	}
	return nil
}

// callPatch returns the patch a tool call holds, parsed; nil when it holds
// none. The patch is the string value of the call's JSON input that holds
// "*** Begin Patch" (patchText: Codex's apply_patch input, or an argument
// of a shell command running it), else the edit a file-editing tool call
// makes (editPatch).
func callPatch(c memory.ToolCall) *patch {
	if !strings.Contains(c.Input, "*** Begin Patch") {
		return editPatch(c)
	}
	return parsePatch(patchText(c.Input))
}

// editInput is the input of a tool call that edits a file (Claude Code's
// Edit, MultiEdit and Write; the text editor tool's).
type editInput struct {
	FilePath  string  `json:"file_path"`
	Path      string  `json:"path"`
	OldString string  `json:"old_string"`
	NewString string  `json:"new_string"`
	Content   *string `json:"content"`
	// The text editor tool's names of the same fields, and its command
	// ("create", "str_replace", "insert", "view"...).
	Command  string  `json:"command"`
	OldStr   string  `json:"old_str"`
	NewStr   string  `json:"new_str"`
	FileText *string `json:"file_text"`
	Edits    []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
}

// editTools are the names of the tool calls editPatch reads.
var editTools = map[string]bool{"Edit": true, "MultiEdit": true, "Write": true, "str_replace_based_edit_tool": true, "str_replace_editor": true}

// editPatch reads a file-editing tool call (editTools) as a patch of its
// file: a MultiEdit's edits, each an update whose lines before and after
// are its old and new strings; an Edit's (or the text editor's
// str_replace or insert) old and new strings, one update; a Write's
// content (the text editor's create), an added file. Nil for any other
// call, one whose input is not such JSON or names no file (or a path on
// more than one line), and one that changes nothing (the text editor's
// view).
func editPatch(c memory.ToolCall) *patch {
	if !editTools[c.Name] || !strings.HasPrefix(strings.TrimSpace(c.Input), "{") {
		return nil
	}
	var in editInput
	if json.Unmarshal([]byte(c.Input), &in) != nil {
		return nil
	}
	file := strings.TrimSpace(cmp.Or(in.FilePath, in.Path))
	if file == "" || strings.ContainsAny(file, "\r\n") {
		return nil // no file, or none a patch's header could name
	}
	old, new := cmp.Or(in.OldString, in.OldStr), cmp.Or(in.NewString, in.NewStr)
	p := &patch{}
	switch {
	case len(in.Edits) > 0:
		for _, e := range in.Edits {
			p.files = append(p.files, patchFile{op: patchUpdate, path: file, before: splitLines(e.OldString), after: splitLines(e.NewString)})
		}
	case old != "" || new != "":
		p.files = append(p.files, patchFile{op: patchUpdate, path: file, before: splitLines(old), after: splitLines(new)})
	case in.Content != nil || in.FileText != nil || c.Name == "Write" || in.Command == "create":
		content := ""
		if in.Content != nil {
			content = *in.Content
		} else if in.FileText != nil {
			content = *in.FileText
		}
		p.files = append(p.files, patchFile{op: patchAdd, path: file, after: splitLines(content)})
	default:
		return nil
	}
	return p
}

// parsePatch reads a patch's text. A line of a file's hunks (after an
// "*** Add File:" or "*** Update File:" header) that opens with "+", "-"
// or a space is one of its lines, whatever follows (a context line may
// read "*** x"); any other line whose text, trimmed, opens with "*** " is
// a header: a file's ("*** Add File:", "*** Update File:", "*** Delete
// File:"), an update's "*** Move to:" (its hunks go on after it), or
// another ("*** End Patch", "*** End of File"), which ends the current
// file's lines. "@@" lines and text outside a file are skipped.
func parsePatch(text string) *patch {
	p := &patch{}
	cur := -1 // the file whose lines are read; -1 for none
	for _, l := range splitLines(text) {
		if cur >= 0 && l != "" && (l[0] == '+' || l[0] == '-' || l[0] == ' ') {
			f := &p.files[cur]
			switch l[0] {
			case '+':
				f.after = append(f.after, l[1:])
			case '-':
				f.before = append(f.before, l[1:])
			default:
				f.before = append(f.before, l[1:])
				f.after = append(f.after, l[1:])
			}
			continue
		}
		h, ok := strings.CutPrefix(strings.TrimSpace(l), "*** ")
		if !ok {
			continue
		}
		name, arg, _ := strings.Cut(h, ":")
		arg = strings.TrimSpace(arg)
		var op patchOp
		switch name {
		case "Add File":
			op = patchAdd
		case "Update File":
			op = patchUpdate
		case "Delete File":
			op = patchDelete
		}
		switch {
		case op != 0:
			p.files = append(p.files, patchFile{op: op, path: arg})
			cur = len(p.files) - 1
			if op == patchDelete {
				cur = -1
			}
		case name == "Move to" && cur >= 0 && p.files[cur].op == patchUpdate:
			p.files[cur].moveTo = arg
		default:
			cur = -1
		}
	}
	return p
}

// instrEdits returns the edits of instruction files the patch makes: each
// added or updated instruction file (under the name it ends with) whose
// hunks show a line after it (added or kept).
func (p *patch) instrEdits() []instrEdit {
	var out []instrEdit
	for _, f := range p.files {
		file := f.path
		if f.moveTo != "" {
			file = f.moveTo
		}
		if f.op != patchDelete && len(f.after) > 0 && InstructionFile(file) {
			out = append(out, instrEdit{file: file, before: f.before, after: f.after, whole: f.op == patchAdd})
		}
	}
	return out
}

// relocations returns the patch's moves ("*** Update File: a" then "***
// Move to: b") and deletions ("*** Delete File: a"; not one whose path
// holds a glob or a variable), cleaned; a path that cleans to nothing
// ("", ".") is no file.
func (p *patch) relocations() []relocation {
	var out []relocation
	for _, f := range p.files {
		from, to := cleanPath(f.path, ""), cleanPath(f.moveTo, "")
		switch {
		case from == "":
		case f.op == patchUpdate && to != "":
			out = append(out, relocation{from: from, to: to, call: "apply_patch moves " + f.path})
		case f.op == patchDelete && !strings.ContainsAny(f.path, "{}$*"):
			out = append(out, relocation{from: from, call: "apply_patch deletes " + f.path})
		}
	}
	return out
}

// headers renders the headers of the files p adds, deletes or moves, in
// order, without their lines: a patch of them reads as the same
// relocations and added file.
func (p *patch) headers() string {
	var b strings.Builder
	for _, f := range p.files {
		switch {
		case f.op == patchAdd:
			b.WriteString("*** Add File: " + f.path + "\n")
		case f.op == patchDelete:
			b.WriteString("*** Delete File: " + f.path + "\n")
		case f.op == patchUpdate && f.moveTo != "":
			b.WriteString("*** Update File: " + f.path + "\n*** Move to: " + f.moveTo + "\n")
		}
	}
	return b.String()
}

// added returns the first file the patch adds, cleaned; "" for none.
func (p *patch) added() string {
	for _, f := range p.files {
		if f.op == patchAdd {
			return cleanPath(f.path, "")
		}
	}
	return ""
}
