package ingest

import (
	"regexp"
	"strings"
)

// negationCue is a preference cue of prefUser that is a negation: an
// order when it opens its clause ("Don't commit until I say so") or
// follows the user or the agent ("you don't need to ...", "we never push
// to main"), a statement of what a thing does when a third-person noun
// phrase is its subject ("the totals don't show up").
var negationCue = regexp.MustCompile(`^(?:never|don't|do not|dont)\b`)

// clauseBreak ends the clause before a cue: punctuation or a coordinating
// word; what follows it up to the cue is the cue's subject, if any.
var clauseBreak = regexp.MustCompile(`[,;:()\[\]—–!?]|\s-\s|\b(?:and|but|or|so|because|though|although)\b`)

// orderSubject is what may stand before a negation in an order or in the
// user's own standing want: nothing, the user or the agent as subject,
// a filler or adverb ("please", "just", "generally"), a word of the order
// ("then", "also").
var orderSubject = regexp.MustCompile(`^(?:(?:i|we|you|u|let's|lets|please|pls|just|also|then|now|again|ok(?:ay)?|yes|no|really|still|ever|even|simply|\w+ly)\s+)*$`)

// conditionLead opens a condition or an adverbial before an order ("if
// the linter complains don't ...", "in the test suite never ..."): the
// noun phrase in it is no subject of the negation.
var conditionLead = regexp.MustCompile(`^(?:when|whenever|if|once|until|unless|before|after|while|as|in|on|at|for|during|inside|within|outside|across|from|throughout|with|without|by|under|over|between|per)\b`)

// statedNegation reports whether the negation cue starting at i of the
// lowercased sentence ls has a third-person noun phrase as its subject
// ("the values in that column don't show up", "the exporter never writes
// ..."): a statement of what a thing does, not an order or a want.
func statedNegation(ls string, i int) bool {
	before := ls[:i]
	locs := clauseBreak.FindAllStringIndex(before, -1)
	if n := len(locs); n > 0 {
		before = before[locs[n-1][1]:]
		if strings.TrimSpace(before) == "" && coordinator.MatchString(ls[locs[n-1][0]:locs[n-1][1]]) {
			// "some cells turn grey and don't show": the negation
			// shares the subject of the conjunct before it
			start := 0
			if n > 1 {
				start = locs[n-2][1]
			}
			return nounSubject.MatchString(strings.TrimSpace(ls[start:locs[n-1][0]]))
		}
	}
	before = strings.TrimSpace(before)
	if before == "" || conditionLead.MatchString(before) {
		return false
	}
	return !orderSubject.MatchString(before + " ")
}

// coordinator is a clause break that may join two predicates of one
// subject.
var coordinator = regexp.MustCompile(`^(?:and|or)$`)

// nounSubject opens a clause with a third-person subject: a determiner
// of a noun phrase or a third-person pronoun ("the build ...", "some
// cells ...", "it ...").
var nounSubject = regexp.MustCompile(`^(?:the|a|an|this|that|these|those|some|any|all|most|many|several|its|their|his|her|our|my|your|it|they|he|she)\b`)

// prefCue reports whether the lowercased sentence ls has a preference cue
// (prefUser) that is an order or the user's want: a negation said of a
// third-person subject (statedNegation) is a statement and counts for
// none; the sentence may still be a project fact.
func prefCue(ls string) bool {
	for _, loc := range prefUser.FindAllStringIndex(ls, -1) {
		if !negationCue.MatchString(ls[loc[0]:]) || !statedNegation(ls, loc[0]) {
			return true
		}
	}
	return false
}
