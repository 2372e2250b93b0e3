package tidy

import (
	"bytes"
	"regexp"
	"strings"
	"unicode"
)

// Where a terminal marker was found.
const (
	WhereH1       = "h1"        // the first "# " heading outside code fences
	WhereLastLine = "last line" // the last non-empty line of the file
)

// MaxMarkerLine is the longest H1 or last line that is checked for a marker.
const MaxMarkerLine = 4096

// Marker is a terminal marker found in a plan.
type Marker struct {
	// Phrase is the marker as written in the file, e.g. "— Done".
	Phrase string `json:"phrase"`
	// Where is WhereH1 or WhereLastLine.
	Where string `json:"where"`
	// Line is the whole line the marker is in, trimmed.
	Line string `json:"line"`
}

var (
	// prefixed: a dash separator ("--", "—" or "–") or "✅", then optional
	// spaces, emphasis or more separators, then complete/completed/done/finalized.
	prefixed = regexp.MustCompile(`(?i)(?:--|[—–]|✅)[\s*_~\-—–✅\x{FE0F}]*\b(?:complete|completed|done|finali[sz]ed)\b`)
	// phrases: the three "no ... " phrases, any case and spacing.
	phrases = regexp.MustCompile(`(?i)\bno\s+(?:further\s+planning|code\s+changes|plan\s+needed)\b`)
	// bare: the two words that count on their own, in a status position only.
	bare = regexp.MustCompile(`(?i)\b(?:completed|finali[sz]ed)\b`)
	// taskItem: a markdown task-list item ("- [x] ...", "1. [ ] ...").
	taskItem = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+\[[ xX]\]`)
)

// negations: a bare word right after one of these is not terminal
// ("not completed", "not yet finalized", "to be finalized").
var negations = map[string]bool{
	"not": true, "never": true, "yet": true, "almost": true, "nearly": true,
	"partially": true, "partly": true, "be": true, "being": true, "no": true,
}

// DetectMarker looks for a terminal marker in a plan's two restricted
// positions: the H1 line (the first line outside a code fence that starts
// with "# " after at most three spaces) and the last non-empty line. The H1
// is checked first. The last line does not count when it is a task-list item
// ("- [x] …") or a table row ("| … |"): those are progress notes.
//
// Within such a line, these match (case-insensitively, as whole words):
//   - a separator "--", "—" (em dash), "–" (en dash) or "✅", then Complete,
//     Completed, Done or Finalized/Finalised: "-- Done", "— Complete", "✅ Done";
//   - "No further planning", "No code changes", "No plan needed";
//   - "COMPLETED" or "finalized"/"finalised" on its own, in a status position:
//     written in capitals, or the line's last word (only punctuation, emphasis
//     or emoji after it), or a label (followed by ":", "]" or ")"). So
//     "# Auth — COMPLETED", "Status: completed", "[Completed] auth" match and
//     "# Track completed orders" does not. A negation right before it
//     (not, never, yet, almost, nearly, partially, partly, be, being, no, or a
//     word ending in n't) cancels it: "not finalized", "to be completed".
//
// "Done" or "Complete" anywhere else, and any marker in the body, never count;
// neither does a line longer than MaxMarkerLine bytes (no heading or status
// line is that long, and it keeps the scan of a huge line cheap).
// It returns nil when there is no marker.
func DetectMarker(content []byte) *Marker {
	h1, last := planLines(content)
	if h1 != "" {
		if p := findMarker(h1); p != "" {
			return &Marker{Phrase: p, Where: WhereH1, Line: h1}
		}
	}
	if last != "" && last != h1 && !taskItem.MatchString(last) && !strings.HasPrefix(last, "|") {
		if p := findMarker(last); p != "" {
			return &Marker{Phrase: p, Where: WhereLastLine, Line: last}
		}
	}
	return nil
}

// planLines returns the H1 line and the last non-empty line, both trimmed.
func planLines(content []byte) (h1, last string) {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	fenced := false
	for len(content) > 0 {
		var line []byte
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			line, content = content, nil
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			continue
		}
		s := string(trimmed)
		last = s
		if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
			fenced = !fenced
			continue
		}
		if h1 == "" && !fenced && isH1(string(line)) {
			h1 = s
		}
	}
	return h1, last
}

func isH1(line string) bool {
	line = strings.TrimRight(line, "\r")
	for i := 0; i < 3 && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return (strings.HasPrefix(line, "# ") || strings.HasPrefix(line, "#\t")) && strings.TrimSpace(line[1:]) != ""
}

// findMarker returns the earliest marker in line, or "".
func findMarker(line string) string {
	if len(line) > MaxMarkerLine {
		return ""
	}
	best, at := "", len(line)+1
	for _, re := range []*regexp.Regexp{prefixed, phrases} {
		if loc := re.FindStringIndex(line); loc != nil && loc[0] < at {
			best, at = line[loc[0]:loc[1]], loc[0]
		}
	}
	for _, loc := range bare.FindAllStringIndex(line, -1) {
		if loc[0] < at && statusWord(line, loc[0], loc[1]) {
			best, at = line[loc[0]:loc[1]], loc[0]
			break
		}
	}
	return best
}

// statusWord reports whether the bare word line[s:e] is in a status position.
func statusWord(line string, s, e int) bool {
	if negated(line[:s]) {
		return false
	}
	word := line[s:e]
	if word == strings.ToUpper(word) {
		return true
	}
	rest := line[e:]
	if strings.IndexFunc(rest, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return true // the line's last word
	}
	t := strings.TrimLeft(rest, " \t*_`")
	return t != "" && strings.ContainsRune(":])", rune(t[0]))
}

// negated reports whether the last word of before is a negation.
func negated(before string) bool {
	if len(before) > 64 {
		before = before[len(before)-64:] // the last word is all that counts
	}
	words := strings.FieldsFunc(strings.ToLower(before), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	})
	if len(words) == 0 {
		return false
	}
	w := words[len(words)-1]
	return negations[w] || strings.HasSuffix(w, "n't") || strings.HasSuffix(w, "n’t")
}
