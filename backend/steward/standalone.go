package steward

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// replyOpener matches a text that opens as a reply in a conversation
// ("Yes, ...", "Right, ...", "Sure — ...", "No: ..."): words that answer
// something said before, followed by punctuation. "No longer ..." or
// "Sure enough ..." do not match (no punctuation after the word).
var replyOpener = regexp.MustCompile(`(?i)^\s*((?:yes|yeah|yep|yup|no|nope|right|sure|ok|okay|exactly|correct|indeed|agreed|true|absolutely|definitely|got it|makes sense|good (?:point|catch|question)|great|perfect|thanks|thank you|well|so|also|ah|oh|hmm|same here|that's right|that is right)(?:\s*[,:;!.—–]|\s+-\s))`)

// sentenceEnd splits a text into sentences for pronounsUnanchored.
var sentenceEnd = regexp.MustCompile(`[.!?:;]\s+|\n+`)

// pronouns are the words that need an antecedent to be understood.
var pronouns = map[string]bool{"it": true, "its": true, "this": true, "these": true, "those": true, "they": true,
	"them": true, "their": true, "he": true, "she": true, "him": true, "his": true, "her": true, "that": true}

// standaloneTraits are what makes a text read as a reply in a conversation
// rather than a statement that stands on its own: a conversational opener,
// a question, pronouns with nothing before them to refer to.
type standaloneTraits struct {
	opener     string // the reply opener ("Yes,"), "" if none
	question   bool
	unanchored int // pronouns among the first three words of a sentence
	length     int // characters, white space folded
}

func traitsOf(text string) standaloneTraits {
	t := strings.TrimSpace(text)
	var tr standaloneTraits
	if m := replyOpener.FindStringSubmatch(t); m != nil {
		tr.opener = strings.TrimSpace(m[1])
	}
	tr.question = strings.HasSuffix(t, "?")
	tr.unanchored = pronounsUnanchored(t)
	tr.length = utf8.RuneCountInString(strings.Join(strings.Fields(t), " "))
	return tr
}

// pronounsUnanchored counts the pronouns among the first three words of
// each sentence of text (after a reply opener): there, nothing in the
// sentence precedes them to refer to ("It fails because ...", "They moved
// this to ..."), so they point at what was said before the text. A
// heuristic: "This repo ..." counts too, the same for both texts compared.
func pronounsUnanchored(text string) int {
	if m := replyOpener.FindStringIndex(text); m != nil {
		text = text[m[1]:]
	}
	n := 0
	for _, s := range sentenceEnd.Split(text, -1) {
		words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
		for i, w := range words {
			if i == 3 {
				break
			}
			if pronouns[strings.ToLower(w)] {
				n++
			}
		}
	}
	return n
}

// compareStandalone says which of a and b reads better as a standalone
// statement: < 0 for a, > 0 for b, 0 when neither does by these rules, in
// order: no conversational reply opener, not a question, fewer pronouns
// without an antecedent, shorter. why explains the choice, about the text
// chosen.
func compareStandalone(a, b string) (cmp int, why string) {
	ta, tb := traitsOf(a), traitsOf(b)
	pick := func(aBetter bool, format string, args ...any) (int, string) {
		if aBetter {
			return -1, fmt.Sprintf(format, args...)
		}
		return 1, fmt.Sprintf(format, args...)
	}
	switch {
	case (ta.opener == "") != (tb.opener == ""):
		return pick(ta.opener == "", "it reads as a standalone statement (the other opens with the conversational reply %q)", ta.opener+tb.opener)
	case ta.question != tb.question:
		return pick(!ta.question, "it reads as a standalone statement (the other is a question)")
	case ta.unanchored != tb.unanchored:
		few, many := min(ta.unanchored, tb.unanchored), max(ta.unanchored, tb.unanchored)
		return pick(ta.unanchored < tb.unanchored, "it reads as a standalone statement (%d pronouns without an antecedent vs %d)", few, many)
	case ta.length != tb.length:
		short, long := min(ta.length, tb.length), max(ta.length, tb.length)
		return pick(ta.length < tb.length, "as standalone as the other and shorter (%d vs %d characters)", short, long)
	}
	return 0, ""
}
