package ingest

import (
	"regexp"
	"strings"
)

// What a restatement must say. A later statement restates an earlier one
// (dropRestated within a turn, supersedeRestated across turns) when it
// names every load-bearing token of it (namesAll). A session names the
// same few things again and again (its class, its file, its three
// methods), so naming them all says little when the earlier statement
// says something else of them too. Two rules, each read on the earlier
// statement's sentences, each with its ablate name:
//
//   - every sentence must be said again (ruleRestateEach): a sentence
//     naming load-bearing tokens by naming them all, a sentence naming
//     none by sharing one of its subject words. "We should keep the
//     comments. This version of the `Cell` class logs in `render()`" is
//     not restated by "`Cell.render()` now calls `format()`": nothing
//     says the comments again. A sentence ending in a colon announces
//     what follows it (a code block, a list), which the statement does
//     not hold: only a later statement repeating it says it again ("Add
//     this line before `render()` builds the `Cell`:" is not restated by
//     "`render()` builds each `Cell` from one row");
//   - a quoted message is a name (ruleRestateQuoted): "The new error
//     "index out of range" comes from the loader" is about that error;
//     "The error "column not found" comes from the loader" names the
//     loader, not it.

// Names of the rules of this file, as ablate lists them.
const (
	ruleRestateEach   = "restate-each"
	ruleRestateQuoted = "restate-quoted"
)

// quotedMessage is a message in double quotes (after quoteFold) of two
// words or more: an error's text, a title, a log line.
var quotedMessage = regexp.MustCompile(`"([^"\s][^"]*\s[^"]*[^"\s])"`)

// quotedMessages returns the messages in double quotes of a sentence
// (quotedMessage), lowercased.
func quotedMessages(s string) []string {
	var out []string
	for _, m := range quotedMessage.FindAllStringSubmatch(quoteFold.Replace(s), -1) {
		out = append(out, lower(m[1]))
	}
	return out
}

// saysEach reports whether a later statement (lowered, lowercased) says
// again every sentence of an earlier statement's text: each sentence's
// quoted messages (ruleRestateQuoted) and load-bearing tokens are all
// named in it, and a sentence naming neither shares a subject word with
// the later statement's subject (later), when it has any. With ruleRestateEach
// off only the quoted messages are read, of the text as a whole.
func saysEach(text, lowered string, later map[string]bool) bool {
	if ruleOn(ruleRestateQuoted) && !namesAll(lowered, quotedMessages(text)) {
		return false
	}
	if !ruleOn(ruleRestateEach) {
		return true
	}
	for _, s := range sentences(text) {
		st := strings.TrimSpace(s.text)
		if st == "" {
			continue
		}
		if strings.HasSuffix(st, ":") {
			// an intro: what it says follows it ("Add this line before
			// the `Cell` is created in `build()`:"); only its repetition
			// says it again
			if !strings.Contains(lowered, strings.TrimSuffix(lower(st), ":")) {
				return false
			}
			continue
		}
		tokens := namedTokens(st)
		if ruleOn(ruleRestateQuoted) {
			tokens = append(tokens, quotedMessages(st)...)
		}
		if len(tokens) > 0 {
			if !namesAll(lowered, tokens) {
				return false
			}
			continue
		}
		if subj := subjectOf(st); len(subj) > 0 && overlap(subj, later) == 0 {
			return false
		}
	}
	return true
}
