package ingest

import (
	"regexp"
	"strings"
)

// subHeading reports whether a line titles the list that follows it, the
// way answers without markdown headings open their sections ("What I
// changed", "How to try it", "Next steps (optional)", "**Verification**"):
// a title (titleLine) followed in its block by a list item.
func subHeading(line, next string) bool {
	return listMark.MatchString(next) && titleLine(line)
}

// titleLine reports whether a line has the shape of a title: a short
// capitalised line with no sentence punctuation at its end, or a line of
// bold text; never a list item or code.
func titleLine(line string) bool {
	if line == "" || listMark.MatchString(line) {
		return false
	}
	if strings.HasPrefix(line, "**") && strings.HasSuffix(strings.TrimSuffix(line, ":"), "**") && strings.Count(line, "**") == 2 {
		return true
	}
	if c := line[0]; c < 'A' || c > 'Z' {
		return false
	}
	if strings.ContainsAny(line, "`=") || strings.ContainsAny(line[len(line)-1:], ".,;:!?") {
		return false
	}
	return wordCount(line) <= 6
}

// titleMarkup is what a heading wears around its words: a markdown
// heading's hashes, a section's number, bold ("## 7. **Next Steps**").
var titleMarkup = regexp.MustCompile(`^(?:#{1,6}\s*)?(?:\d{1,2}\.\s*)?(?:\*\*\s*)?`)

// titleWords returns a heading's words without its markup (titleMarkup,
// a closing bold and colon), so a section's class is read from its words
// whatever the markup.
func titleWords(heading string) string {
	w := heading[len(titleMarkup.FindString(heading)):]
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(w), "*: "))
}

// sectionSkip is the class of the section a heading opens: a plan (next
// steps, how to try the change by hand), the turn's tests (sectionTests),
// else none.
func sectionSkip(heading string) string {
	heading = titleWords(heading)
	switch {
	case planHeading.MatchString(heading) || tryHeading.MatchString(heading) || nextHeading.MatchString(heading) || laterTitle.MatchString(heading):
		return ClassPlan
	case testsHeading.MatchString(heading):
		return sectionTests
	case recapHeading.MatchString(heading):
		return sectionRecap
	}
	return ""
}

// A section whose title says it tells earlier work again ("What we've
// done so far", "Other capabilities (from earlier updates)", "Previously
// completed", "Recent additions (already live)") restates what the turns
// that did that work said: their memories hold it. Its lines are dropped
// with reasonRecap, each shown in the feed, unless a line gives a reason
// (causeWord). A compaction summary is left alone: the turns it recaps
// may be gone from the record, and it is all a recap.
const (
	sectionRecap = "recap"
	reasonRecap  = "under a recap of earlier work: the turns that did it said it"
)

// recapHeading marks the words of a title (titleWords) that say its
// section tells earlier work again.
var recapHeading = regexp.MustCompile(`(?i)\b(?:so far|earlier|previous(?:ly)?|recap|already (?:live|done|in place|shipped|implemented|merged|there))\b`)

// A section titled as the turn's tests ("Tests", "New tests", "Test files
// created", "Import smoke tests (2)") lists the test files the turn wrote
// and what they check: the tests hold that, as they hold what an "Added
// tests for ..." line tells (changeLog). Its lines are dropped with
// reasonTestSection, each shown in the feed, unless a line gives a reason
// (causeWord): "the suite needs the shared sandbox because ..." stays.
const (
	sectionTests      = "tests"
	reasonTestSection = "listed under the turn's tests: the tests hold what they check"
)

// testsHeading is the words of a title (titleWords) that names only tests:
// "Tests", "New tests", "Unit tests added", "Test files created (3)".
var testsHeading = regexp.MustCompile(`(?i)^(?:(?:new|added|updated|expanded|more|unit|integration|import|smoke|regression|e2e)\s+)*(?:tests?|test files?|test cases?|test coverage)(?:\s+(?:added|created|updated|written))?(?:\s*\([^)]*\))?$`)

// laterTitle marks a title that puts its section after this turn,
// wherever the words stand in it: "next" ("What's next", "Notes and next
// steps", "Next refinements", not "Next.js") or a closing "(optional)"
// or "(suggested)" ("Schema tweaks (optional next)"). planHeading and
// nextHeading read only a title's opening words.
var laterTitle = regexp.MustCompile(`(?i)\bnext\b(?:[^.]|$)|\((?:optional|suggested)\b[^)]*\)$`)

// tryHeading titles a walkthrough for trying this turn's change by hand
// ("How to try it", "Quick test checklist", "What you should see"): the
// steps of one check, not how the project works.
var tryHeading = regexp.MustCompile(`(?i)^(?:#+\s*|\*\*|\d+\.\s*)?(?:how to try(?: it)?(?: out)?|try it(?: out)?|(?:quick |manual )?(?:smoke )?test(?:ing)? (?:checklist|steps)|(?:quick )?checklist|what you should see)\b`)

// nextHeading titles what could come next, in the words planHeading's
// "next steps" leaves out ("Next options", "Next suggestions", "Next
// improvements (optional)").
var nextHeading = regexp.MustCompile(`(?i)^(?:#+\s*|\*\*|\d+\.\s*)?next (?:options?|suggestions?|step suggestions?|improvements?|ideas?|tasks?)\b`)

// sectionSentence is a sentence of a block and the class of the section
// it is read in (ClassPlan), or "".
type sectionSentence struct {
	sentence
	skip string
}

// sectionSentences splits a block into its sentences, line by line, and
// follows the sections it opens: a section heading (markdown, a numbered
// title, or a subHeading) sets *skip to the class of its section for the
// lines after it, until the next heading, also across blocks. A block's
// first line that is a markdown or numbered heading is not a sentence. A
// block that is only a title (titleLine) opens a section too: answers set
// their titles apart with a blank line ("How to try it", then the list).
func sectionSentences(block string, skip *string) []sectionSentence {
	var out []sectionSentence
	lines := strings.Split(block, "\n")
	var recaps recapItems // recapitem.go: items marked as earlier work
	for i, line := range lines {
		t := strings.TrimSpace(line)
		next := ""
		if i+1 < len(lines) {
			next = strings.TrimSpace(lines[i+1])
		}
		if sectionHeading.MatchString(t) || subHeading(t, next) || (len(lines) == 1 && titleLine(t)) {
			*skip = sectionSkip(t)
			if i == 0 && sectionHeading.MatchString(t) {
				continue
			}
		}
		lineSkip := *skip
		if recaps.next(line) && lineSkip == "" {
			lineSkip = sectionRecap
		}
		for _, s := range sentences(line) {
			out = append(out, sectionSentence{s, lineSkip})
		}
	}
	return out
}
