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

// A user also pastes what a tool printed: a compiler's errors, a linter's
// report, a test runner's failures, a stack trace, with "fix these:" above
// it. Its "should be handled", "must be used" and "perhaps you want to"
// are the tool's voice, not the user's rule, and its lines are no
// statement of the project either: what the session learns from them is
// what the agent finds. Such output is told by its form: a location
// ("--> src/db.rs:16:5", "app.ts(3,7): error", "main.go:12:2: ..."), a
// source line in a gutter ("16 | use x;", "   |"), a caret line under it
// ("^^^^", "^~~~"), a diagnostic code ("error[E0308]:"), a runner's own
// lines ("--- FAIL:", pytest's "E   " lines, its "____ test ____"
// headers). Two of these make the message carry pasted output (minOutputMarks); then the
// label lines of the diagnostics ("= note: ...", "help: ...", "warning:
// ...", "Error: ...") and the indented lines that continue an output line
// are output too. A line of these forms alone (one mark) is still output;
// the user's own words around the paste are read as usual.

// outputMark is a line that only a tool prints: a diagnostic's location,
// a source line in a gutter, a caret line, a diagnostic code, a test
// runner's or a stack trace's line.
var outputMark = regexp.MustCompile(`^\s*(?:` +
	`-->\s*\S|` + // rustc's location arrow
	`::: \S|` + // rustc's location of a note in another file
	`[\w./\\~@+-]+\.\w+(?::\d+){1,2}:\s|` + // file:line[:col]: (gcc, clang, go, mypy, javac)
	`[\w./\\~@+-]+\.\w+\(\d+,\d+\):\s|` + // file(line,col): (tsc, msbuild)
	`\d+\s+\|(?:\s|$)|` + // a numbered source line in a gutter
	`\|(?:\s*$|\s+[\^~_|/-])|` + // an empty gutter, or one holding carets or a span's bar
	`~*\^[\^~]*\s*$|` + // a caret line (a user's "^ this one" is prose)
	`(?:error|warning)\[[A-Za-z]*\d+\]:|` + // a diagnostic code (rustc)
	`\d+:\d+\s+(?:error|warning)\s|` + // line:col severity (eslint's stylish)
	`--- (?:FAIL|PASS|SKIP):|=== (?:RUN|PAUSE|CONT)\s|` + // go test
	`E {2,}\S|_{3,} \S.* _{3,}$|(?:_ ){8,}|` + // pytest's failure lines, test headers and separators
	`at (?:[\w.$<>\[\] ]+ \()?[\w./\\@~:-]+:\d+:\d+\)?$|` + // a JavaScript stack frame
	`File ".*", line \d+|Traceback \(most recent call last\):` + // Python
	`)`)

// outputLabel is a diagnostic's label line: lowercase as compilers print
// it ("= note:", "help:", "warning:"), or a thrown error's
// ("Error: ...", "TypeError: ..."). A user's "Note: ..." is their own
// words; in a message carrying pasted output (minOutputMarks) these are
// the tool's.
var outputLabel = regexp.MustCompile(`^\s*(?:= )?(?:(?:error|warning|note|help|hint|info)(?:\[[\w-]+\])?:|(?:[A-Z]\w*)?Error:)\s`)

// minOutputMarks is how many lines of output form (outputMark) make a
// user's message carry pasted tool output: one could be a location typed
// in prose, two are a tool's report.
const minOutputMarks = 2

// pastedOutput marks which of a user's message's lines are pasted tool
// output (see outputMark): each line of output form, and, when the message
// carries at least minOutputMarks of them, the diagnostics' label lines
// (outputLabel) and the indented lines that continue an output line in
// its paragraph.
func pastedOutput(lines []string) []bool {
	out := make([]bool, len(lines))
	n := 0
	for i, l := range lines {
		if outputMark.MatchString(l) {
			out[i] = true
			n++
		}
	}
	if n < minOutputMarks {
		return out
	}
	for i, l := range lines {
		switch {
		case out[i] || strings.TrimSpace(l) == "":
		case outputLabel.MatchString(l):
			out[i] = true
		case i > 0 && out[i-1] && indented(l):
			out[i] = true // continues the output line above it
		}
	}
	return out
}

// indented reports whether a line opens with white space.
func indented(line string) bool {
	return line != "" && (line[0] == ' ' || line[0] == '\t')
}
