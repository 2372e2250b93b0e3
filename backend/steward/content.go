package steward

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/search"
)

// Two memories that open with the same words (a heading or a template:
// "CONVENTIONS.md: When writing code in TypeScript, try to: ...") are
// close by their vectors because of that opening, whatever each goes on
// to say: items of one list ("avoid await in loops", "throw and return
// early") are not restatements of each other, and a merge, which keeps
// one text, would lose one item. So when two texts share an opening of at
// least MinSharedOpening words, the merge also needs the kept text's rest
// to hold at least MinRestContent of the other's rest: the share of its
// words' weight (each distinct word as the text index analyses it,
// weighted by its rarity in the store: search.Coverage) that the kept
// rest has too. Paraphrases, which share no opening, are judged by their
// vectors and load-bearing tokens alone, as before.
const (
	MinSharedOpening = 3
	MinRestContent   = 0.5
)

// contentCheck refuses r (sets r.refused) when its two texts share an
// opening of MinSharedOpening words or more and the kept text's rest holds
// less than MinRestContent of the other's rest (see MinSharedOpening); it
// notes the opening's length and the share in r. df caches the document
// frequencies the plan has read.
func (s *Steward) contentCheck(ctx context.Context, r *mergeResult, df map[string]int) error {
	if r.refused != "" {
		return nil
	}
	kept, other := r.merged.Text, r.loser.Text
	from := r.loser.ID
	if r.keptLoserText {
		other, from = r.survivor.Text, r.survivor.ID
	}
	keptRest, otherRest, n := splitOpening(kept, other)
	r.opening = n
	if n < MinSharedOpening {
		return nil
	}
	keptTerms := map[string]bool{}
	for _, t := range s.st.Analyze(keptRest) {
		keptTerms[t] = true
	}
	terms := s.st.Analyze(otherRest)
	if len(terms) == 0 {
		r.content = 1
		return nil
	}
	var unknown []string
	for _, t := range terms {
		if _, ok := df[t]; !ok {
			unknown = append(unknown, t)
		}
	}
	if len(unknown) > 0 {
		got, err := s.st.DocFreq(ctx, unknown)
		if err != nil {
			return fmt.Errorf("merge content: %w", err)
		}
		for t, n := range got {
			df[t] = n
		}
	}
	r.content = search.Coverage(terms, keptTerms, df, s.st.Count())
	if r.content < MinRestContent {
		r.refused = fmt.Sprintf("merge refused: after the %d words both open with, the kept text holds %.0f%% of what %s says (its words weighted by rarity), under %.0f%%",
			n, 100*r.content, from, 100*MinRestContent)
	}
	return nil
}

// splitOpening returns what a and b say after the words they both open
// with (compared without letter case and the punctuation around words),
// and how many words that opening has.
func splitOpening(a, b string) (aRest, bRest string, n int) {
	for {
		wa, ra := nextWord(a)
		wb, rb := nextWord(b)
		if wa == "" || wb == "" || !strings.EqualFold(wa, wb) {
			return a, b, n
		}
		a, b, n = ra, rb, n+1
	}
}

// nextWord returns the first word of s (punctuation around it trimmed)
// and the text after it.
func nextWord(s string) (word, rest string) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "", ""
	}
	i := strings.Index(s, f[0]) + len(f[0])
	return strings.TrimFunc(f[0], func(r rune) bool { return unicode.IsPunct(r) }), s[i:]
}
