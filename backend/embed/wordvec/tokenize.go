package wordvec

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxWordBytes is the longest token kept: longer runs (hashes, base64,
// minified code) are skipped by Tokens, so they never reach the vocabulary.
const MaxWordBytes = 40

// Tokens calls fn with the lowercased word tokens of text, in order, and
// reports a gap (fn("")) where a run of non-token characters contains a
// sentence or line break, so a co-occurrence window does not span it.
//
// Tokenisation matches the built-in lexical embedder (backend/embed,
// forEachToken and splitIdent) so identifiers meet the same words in
// training and at run time: a raw token is a run of letters, digits, '_'
// and identifier joiners (. / - : \ @ #), trimmed of joiners at the ends,
// and split into its parts at joiners, underscores and camelCase
// boundaries ("HTTPServer" -> "http", "server"; "credit_ledger" ->
// "credit", "ledger"). Unlike the lexical embedder nothing is stemmed and no
// stop word is dropped: the vectors learn inflections, and SIF weighting
// discounts frequent words. Parts made only of digits, and parts longer
// than MaxWordBytes, are skipped (they carry no distributional meaning).
// Text is assumed to be valid UTF-8; invalid bytes are treated as
// separators.
func Tokens(text string, fn func(word string)) {
	var runes []rune
	var lower strings.Builder
	i := 0
	gap := false
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenRune(r) || (r == utf8.RuneError && size <= 1) {
			if r == '\n' || r == '.' || r == '!' || r == '?' || r == ';' {
				gap = true
			}
			i += size
			continue
		}
		j := i
		for j < len(text) {
			r2, s2 := utf8.DecodeRuneInString(text[j:])
			if !isTokenRune(r2) || (r2 == utf8.RuneError && s2 <= 1) {
				break
			}
			j += s2
		}
		raw := text[i:j]
		i = j
		// A sentence end written as "word." leaves a trailing joiner.
		endGap := strings.HasSuffix(raw, ".") && (j >= len(text) || text[j] == ' ' || text[j] == '\n')
		raw = strings.TrimFunc(raw, func(r rune) bool { return IsJoiner(r) || r == '_' })
		if raw == "" {
			gap = gap || endGap
			continue
		}
		if gap {
			fn("")
			gap = false
		}
		runes = append(runes[:0], []rune(raw)...)
		SplitIdent(runes, func(part []rune) { emit(part, &lower, fn) })
		gap = gap || endGap
	}
}

// emit lowercases part and passes it on unless it is all digits or too long.
func emit(part []rune, b *strings.Builder, fn func(string)) {
	b.Reset()
	letters := false
	for _, r := range part {
		if !unicode.IsDigit(r) {
			letters = true
		}
		b.WriteRune(unicode.ToLower(r))
		if b.Len() > MaxWordBytes {
			return
		}
	}
	if !letters {
		return
	}
	fn(b.String())
}

// isTokenRune reports whether r belongs inside a raw token (as in
// backend/embed).
func isTokenRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || IsJoiner(r)
}

// isJoiner reports whether r joins the parts of an identifier-like token.
// SplitIdent calls fn with each part of an identifier-like token, in order
// and as they are written: split at joiners (. / - : \ @ #) and underscores,
// and at case changes (fooBar -> foo Bar, HTTPServer -> HTTP Server). The
// built-in embedder and the word-vector tokenizer both split with it, so
// training and runtime see the same parts.
func SplitIdent(runes []rune, fn func(part []rune)) {
	start := 0
	flush := func(end int) {
		if end > start {
			fn(runes[start:end])
		}
		start = end
	}
	for k := 0; k < len(runes); k++ {
		r := runes[k]
		if IsJoiner(r) || r == '_' {
			flush(k)
			start = k + 1
			continue
		}
		if k > start && unicode.IsUpper(r) {
			prev := runes[k-1]
			nextLower := k+1 < len(runes) && unicode.IsLower(runes[k+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush(k)
			}
		}
	}
	flush(len(runes))
}

// IsJoiner reports whether r joins the parts of an identifier or path.
func IsJoiner(r rune) bool {
	return r == '.' || r == '/' || r == '-' || r == ':' || r == '\\' || r == '@' || r == '#'
}
