package ingest

import (
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// Codex's apply_patch format: "*** Begin Patch", then for each file
// "*** Add File: p" and its "+" lines, "*** Update File: p" (then
// "*** Move to: q" for a rename) and its hunks ("@@", then " ", "-" and
// "+" lines), or "*** Delete File: p"; then "*** End Patch". A tool call's
// patch is read once (callPatch) for both of its readers: the edits of
// instruction files it makes (instr.go) and the files it moves, deletes
// and creates (moved.go).

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
// of a shell command running it).
func callPatch(c memory.ToolCall) *patch {
	if !strings.Contains(c.Input, "*** Begin Patch") {
		return nil
	}
	return parsePatch(patchText(c.Input))
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
// hunks add a line.
func (p *patch) instrEdits() []instrEdit {
	var out []instrEdit
	for _, f := range p.files {
		file := f.path
		if f.moveTo != "" {
			file = f.moveTo
		}
		if f.op != patchDelete && len(f.after) > 0 && InstructionFile(file) {
			out = append(out, instrEdit{file: file, before: f.before, after: f.after})
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
