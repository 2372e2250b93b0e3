package ingest

import (
	"regexp"
	"strings"
)

// A user's message often carries material the user did not write for the
// agent as a rule: a document, a spec, a table, a reference list another
// tool produced, pasted whole into the prompt. Its sentences are the
// turn's context (the agent's answer says what of it matters to the
// project); its "should", "must" and "I want" are the document's voice,
// not the user's instruction. Pasted material is told by its form, not by
// its words: rows of a table (cells split by tabs or pipes), markdown
// headings, numbered section labels ("2.3 Before Region"), bold field
// labels ("**Status**: Draft"). A message with a few of these is pasted
// material: none of its sentences becomes a user preference, though a
// line of a record or a statement naming the project's files and names
// may still stand as a project fact, and a table's rows are never
// statements at all.

// pipeRow is a markdown table row: cells between pipes.
var pipeRow = regexp.MustCompile(`^\s*\|.*\|.*\|\s*$`)

// sectionNumber is a line opening with a numbered section label of two
// levels or more ("1.2 After Print", "12.4 After Slicing").
var sectionNumber = regexp.MustCompile(`^\d{1,2}(?:\.\d{1,2})+\.?\s+\S`)

// boldLabel is a bold field label ("**Status**: Draft", "- **FR-001**: The
// app MUST ..."), anywhere on a line: a flattened document keeps them.
var boldLabel = regexp.MustCompile(`\*\*[^*\n]{1,40}\*\*:`)

// minPasteMarks is how many marks of a document's form (table rows,
// headings, numbered section labels, bold labels) make a user's message
// pasted material: one or two happen in a hand-typed message ("## Bug"),
// three make a document.
const minPasteMarks = 3

// tableRow reports whether a line is a row of a pasted table: cells
// split by tabs (prose typed for a reader has no tab between two words),
// or a markdown row between pipes.
func tableRow(line string) bool {
	if pipeRow.MatchString(line) {
		return true
	}
	n := 0
	for _, c := range strings.Split(line, "\t") {
		if strings.TrimSpace(c) != "" {
			n++
		}
	}
	return n >= 2
}

// pastedMaterial reports whether the prose of a user's message is a
// document pasted into it (see minPasteMarks).
func pastedMaterial(prose string) bool {
	n := 0
	for _, l := range strings.Split(prose, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case tableRow(l), mdHeading.MatchString(t), sectionNumber.MatchString(t):
			n++
		default:
			n += len(boldLabel.FindAllStringIndex(t, -1))
		}
		if n >= minPasteMarks {
			return true
		}
	}
	return false
}
