package ingest

import (
	"regexp"
	"strings"
)

// A compaction summary the agent writes into a session (OriginSummary)
// comes in two parts: an analysis, the conversation told again in order
// ("Analysis:", "Let me chronologically analyze the conversation:", then
// numbered steps), and the summary made from it ("Summary:", then its
// sections: the request, the concepts, the files, the errors and fixes).
// The summary restates what the analysis found, each fact under the
// section it belongs to; the analysis is its draft. The analysis's lines
// are dropped with reasonDraft, each shown in the feed; what follows
// "Summary:" is read as before. A summary without the "Summary:" line
// that ends the analysis is read whole: nothing in it is a draft.

// reasonDraft is why a line of a compaction summary's analysis is dropped.
const reasonDraft = "the compaction summary's draft: the summary after it restates it"

// draftOpen and draftClose are the lines that open a compaction summary's
// analysis and end it.
var (
	draftOpen  = regexp.MustCompile(`(?i)^(?:<analysis>|analysis:)$`)
	draftClose = regexp.MustCompile(`(?i)^(?:</analysis>|<summary>|summary:)$`)
)

// summaryDraft returns whether the line after st is read in a compaction
// summary's analysis, given whether st is: the analysis runs from the
// line that opens it to the line that ends it.
func summaryDraft(st string, in bool) bool {
	switch {
	case draftOpen.MatchString(st):
		return true
	case draftClose.MatchString(st):
		return false
	}
	return in
}

// summaryPart returns what a compaction summary's prose says after its
// analysis (after the line that ends it), read once for heldBy, or
// nothing when no line ends an analysis.
func summaryPart(prose string) []heldText {
	lines := strings.Split(prose, "\n")
	for i, l := range lines {
		if draftClose.MatchString(strings.TrimSpace(l)) {
			rest := strings.Join(lines[i+1:], "\n")
			return []heldText{{lowered: lower(rest), subject: subjectOf(rest)}}
		}
	}
	return nil
}
