package eval

import (
	"regexp"
	"strings"
)

// A trap's keys are written the way a wrong statement would say it; a
// plain substring test (coversLower) also finds them in correct
// statements that happen to hold the words: "priv/scripts/tail_wrapper.sh"
// holds the trap's "scripts/tail_wrapper.sh", "no surrealdb ... embedded"
// holds "surrealdb" and "embedded". trapCoversLower reads the keys the way
// the labels mean them: a path is a whole path, a number a whole number,
// and a mention that says the thing is absent ("no X", "without X", "not
// X", "X doesn't exist") does not assert it. Facts keep the substring
// test: their keys are stems ("propagator" for "propagators").

// negLead ends a text with a negation of what follows it: "no", "without"
// or "nor" and at most two more words, or "not"/"never" and at most one,
// all in one clause.
var negLead = regexp.MustCompile(`(?:\b(?:no|without|nor)(?:\s+[^\s,;:.()]+){0,2}|\b(?:not|never)(?:\s+[^\s,;:.()]+)?)\s+[(\x60"']?$`)

// negTail opens a text that says what came before it does not exist.
var negTail = regexp.MustCompile(`^[^\s,;]*\s+(?:doesn't|does not|didn't|did not|don't|do not)\s+exist\b`)

// pathChar is a character that continues a path or an identifier.
func pathChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '/' || c == '.' || c == '-'
}

// digit reports whether c is an ASCII digit.
func digit(c byte) bool { return c >= '0' && c <= '9' }

// trapCoversLower is coversLower for a trap: every key group needs an
// alternative that occurs asserted (trapMention) in the lower-cased text.
func trapCoversLower(lower string, keys [][]string) bool {
	if len(keys) == 0 {
		return false
	}
	for _, g := range keys {
		ok := false
		for _, alt := range g {
			if trapMention(lower, strings.ToLower(alt)) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// trapMention reports whether alt occurs in lower as the label means it:
// a path alternative (one holding a slash) as a whole path, not inside a
// longer one; a number as a whole number; and not negated (negLead before
// it, negTail after it).
func trapMention(lower, alt string) bool {
	if alt == "" {
		return false
	}
	isPath := strings.Contains(alt, "/")
	isNum := digit(alt[0]) || digit(alt[len(alt)-1])
	for from := 0; from <= len(lower)-len(alt); {
		i := strings.Index(lower[from:], alt)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(alt)
		from = i + 1
		if isPath && (i > 0 && pathChar(lower[i-1]) || j < len(lower) && pathChar(lower[j]) && lower[j] != '.' && lower[j] != '-') {
			continue // inside a longer path
		}
		if isNum && (digit(alt[0]) && i > 0 && (digit(lower[i-1]) || lower[i-1] == '.') || digit(alt[len(alt)-1]) && j < len(lower) && digit(lower[j])) {
			continue // inside a longer number
		}
		if negLead.MatchString(lower[max(0, i-60):i]) || negTail.MatchString(lower[j:min(len(lower), j+40)]) {
			continue // said to be absent
		}
		return true
	}
	return false
}

// trapsKeptSubstring is trapsKept with the plain substring test of the
// facts (coversLower): the ruler before trapCoversLower, reported next to
// it so a change of ruler is never read as a change of the pipeline.
func trapsKeptSubstring(traps []Trap, texts []string) (kept int) {
	lower := lowerTexts(texts)
	for _, tr := range traps {
		if anyCovers(lower, tr.Keys) {
			kept++
		}
	}
	return kept
}
