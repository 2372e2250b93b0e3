package ingest

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A cut takes a sentence out of a statement by its own span, not by the
// first place its text occurs: a short sentence ("G-code Preview", a list
// item) may also stand inside another sentence of the same statement
// ("Tools → G-code Preview: Open a PDL…"), and cutting there would take
// the other sentence's words and leave the cut one. The packer
// (packSentences) joins a statement's sentences with a space, and a
// sentence never starts or ends inside a word, so a sentence's own span
// is bounded by whitespace or the text's ends; the first such span that
// also opens where a sentence may open (the text's start, after a line
// break, or after a sentence's or a list lead's last mark) is preferred.

// sentenceIndex returns where s stands in text as a sentence of its own
// (bounded by whitespace or the text's ends, preferably where a sentence
// opens: sentenceOpens), or -1 when it does not.
func sentenceIndex(text, s string) int {
	i, _ := sentenceSpan(text, s)
	return i
}

// sentenceSpan returns where s stands in text as a sentence of its own
// (sentenceIndex) and whether a sentence opens there (sentenceOpens).
func sentenceSpan(text, s string) (at int, opens bool) {
	if s == "" {
		return -1, false
	}
	bounded := -1
	for from := 0; from <= len(text)-len(s); {
		k := strings.Index(text[from:], s)
		if k < 0 {
			break
		}
		i := from + k
		from = i + 1
		if !spaceBefore(text, i) || !spaceAfter(text, i+len(s)) {
			continue
		}
		if sentenceOpens(text, i) {
			return i, true
		}
		if bounded < 0 {
			bounded = i
		}
	}
	return bounded, false
}

// holdsSentence reports whether text holds s as a sentence of its own
// (sentenceIndex), not only inside another sentence.
func holdsSentence(text, s string) bool {
	return sentenceIndex(text, s) >= 0
}

// replaceSentence returns text with s replaced by with at s's own span
// (sentenceIndex); a piece that stands nowhere as a sentence of its own
// (a clause, a parenthetical aside) is replaced where it first occurs.
func replaceSentence(text, s, with string) string {
	i := sentenceIndex(text, s)
	if i < 0 {
		return strings.Replace(text, s, with, 1)
	}
	return text[:i] + with + text[i+len(s):]
}

// spaceBefore reports whether position i of text is its start or follows
// whitespace.
func spaceBefore(text string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return unicode.IsSpace(r)
}

// spaceAfter reports whether position i of text is its end or precedes
// whitespace.
func spaceAfter(text string, i int) bool {
	if i >= len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsSpace(r)
}

// sentenceOpens reports whether a sentence may open at position i of
// text (after whitespace): at its start, after a line break, or after a
// mark that ends a sentence or a list's lead (sentences splits there).
func sentenceOpens(text string, i int) bool {
	before := strings.TrimRightFunc(text[:i], unicode.IsSpace)
	if before == "" || strings.ContainsRune(text[len(before):i], '\n') {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune(".!?:;…", r)
}

// holdsPiece reports whether text holds s, a statement or a piece cut
// from one, as the reasons of a revision read it (revisedWhy, droppedWhy,
// updatedWhy, revisingMemory): a whole sentence (s ends with a mark that
// ends one) only as a sentence of its own (holdsSentence), so a short
// statement quoted inside another sentence of the memory is not taken for
// it; a clause, an aside or an unpunctuated list item wherever it occurs,
// as replaceSentence cuts it.
func holdsPiece(text, s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsAny(s[len(s)-1:], ".!?:") {
		return holdsSentence(text, s)
	}
	return strings.Contains(text, s)
}
