package ingest

import (
	"regexp"
	"strings"
)

// A cut (cutSentences, replaceSentences) takes a revised, guessed,
// offered or undone sentence or clause out of a statement it keeps. What
// is left may open with a pronoun whose referent was in the piece cut
// ("The retry helper lives in `tools/`, and it backs off exponentially"
// left as "It backs off exponentially"): a memory about nothing.
// mendDangling puts the cut piece's subject back in place of "it" or
// "they" when the piece opens with one that can be found reliably, and
// cuts the dangling rest too when it cannot, or when the rest opens with
// a bare demonstrative ("That means"), which stands for the claim cut.
// The subject is what the piece is about, not what it claimed of it, so
// putting it back restates nothing the cut took out.

// barePronoun is pronounLead narrowed to a sentence whose subject is only
// a pronoun: "it" or "they" as whole words ("Iterating" opens with none),
// or a demonstrative standing alone before an auxiliary or an adverb
// ("This is", "That means") or before a verb of its own (demonstrativeVerb:
// "This creates", "That leveraged"), not one before a noun ("This editor
// is"), which names its own subject. Group 1 is what precedes the
// pronoun (connectives), group 2 the pronoun with its contraction.
var barePronoun = regexp.MustCompile(`(?i)^(` + leadWords + `)(it(?:'s)?\b|they(?:'re)?\b|(?:this|that|these|those)(?:'s)?(?:\s+(?:is|are|was|were|will|would|can|could|should|may|might|must|means|meant|has|have|had|does|did|also|only|just|now|then|still|always|never|not)\b)|` + demonstrativeVerb + `)`)

// demonstrativeVerb is a demonstrative followed by a lowercase word in the
// shape of a verb it is the subject of, itself followed by what may follow
// a verb (an article or a determiner, a pronoun, a preposition or a
// conjunction, a code span, a name, a number, punctuation, the end).
// "This" and "that" take a verb in -s (not -ss, -us, -is, -as, -os: "this
// class", "that status", "this alias") or in -ed (not -eed: "this
// feed"); "these" and "those" only one in -ed, since their verb in the
// present has the shape of a plural noun ("these files"). A noun in that
// shape ("This settings file") is told apart by what follows it: another
// word of the noun phrase, not what follows a verb.
const demonstrativeVerb = `(?:this|that)\s+(?-i:[a-z]+[^aiosu\s]s)\b(?-i:` + afterVerb + `)|(?:this|that|these|those)\s+(?-i:[a-z]+[^e\s]ed)\b(?-i:` + afterVerb + `)`

// afterVerb is what may follow a verb and not a noun ("creates the",
// "leverages `x`", "fails.", "uses it", "moved to"), matched on case:
// a capital opens a name.
const afterVerb = `\s*$|\s*[.,;:!?/)]|\s+(?:[` + "`" + `"'(\d]|[A-Z]|(?:a|an|the|this|that|these|those|its|their|our|your|my|his|her|each|every|all|any|some|no|both|it|them|us|you|me|him|one|to|in|on|for|with|from|into|onto|by|as|at|of|up|out|off|over|through|across|because|when|if|since|so|and|but|or|only|also|once|before|after|without|until|unless|whether|how|what|why|where|which|who|whatever|everything|nothing|something|anything|[a-z]+ly)\b)`

// subjectVerb ends a sentence's subject noun phrase: a copula, an
// auxiliary or a verb that places or describes what the subject names.
var subjectVerb = regexp.MustCompile(`\s(?:is|are|was|were|isn't|aren't|wasn't|weren't|lives|live|sits|sit|lies|lie|stays|stay|has|have|holds|hold|uses|use|runs|run|keeps|keep|reads|read|writes|write|calls|call|returns|return|will|would|can|could|should|must|does|do|did|doesn't|don't)\s`)

// leadConnective is a connective or an interjection opening a sentence,
// before its subject.
var leadConnective = regexp.MustCompile(`(?i)^(?:(?:so|but|and|also|then|wait|oh|hmm|no|ok|okay|well|ah|actually|now)[,.:;!]?\s+)+`)

// nameLead opens a noun phrase with a name: a code span, a path or a
// dotted name, or a capitalised identifier (CamelCase, an acronym).
var nameLead = regexp.MustCompile("^(?:`|[\\w.~@+-]*/[\\w.@+-]|[A-Za-z_][\\w-]*\\.[A-Za-z_]\\w*\\b|[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*[A-Z0-9]|[A-Z]{2,}\\b)")

// maxSubjectWords bounds a subject noun phrase put back in place of a
// pronoun: a longer lead is a clause, not a name.
const maxSubjectWords = 6

// cutSubject returns the subject noun phrase a cut sentence or clause
// opens with, when it can be found reliably: the words before its first
// verb (subjectVerb), connectives cut off, at most maxSubjectWords, that
// open with a name (nameLead) or with "the"; "" otherwise (a pronoun, an
// adverb, a clause, nothing found).
func cutSubject(piece string) string {
	p := strings.TrimSpace(piece)
	p = p[len(leadConnective.FindString(p)):]
	loc := subjectVerb.FindStringIndex(p)
	if loc == nil {
		return ""
	}
	np := strings.TrimRight(strings.TrimSpace(p[:loc[0]]), ",;:")
	n := wordCount(np)
	if n == 0 || n > maxSubjectWords || barePronoun.MatchString(np+" is") || strings.ContainsAny(np, ",;:()") {
		return ""
	}
	if !strings.HasPrefix(lower(np), "the ") && !nameLead.MatchString(np) {
		return ""
	}
	if strings.HasPrefix(np, "The ") {
		np = "the" + np[3:] // capitalised again where it opens the sentence
	}
	return np
}

// withSubject returns a sentence opening with "it" or "they" with the
// pronoun replaced by subject ("It's" by "subject is"), and whether it
// did. A bare demonstrative ("That means ...") stands for the whole claim
// cut, not for its subject, and is left as it is (false).
func withSubject(st, subject string) (string, bool) {
	m := barePronoun.FindStringSubmatchIndex(st)
	if m == nil || subject == "" {
		return st, false
	}
	pron := lower(st[m[4]:m[5]])
	if !strings.HasPrefix(pron, "it") && !strings.HasPrefix(pron, "they") {
		return st, false // "That means": the whole claim cut, not its subject
	}
	var rep string
	switch {
	case strings.HasSuffix(pron, "'s"):
		rep = subject + " is"
	case strings.HasSuffix(pron, "'re"):
		rep = subject + " are"
	default:
		first := strings.Fields(pron)[0]
		rep = subject + st[m[4]+len(first):m[5]]
	}
	return capitalFirst(st[:m[4]] + rep + st[m[5]:]), true
}

// mendDangling returns the rewrites and the further cuts that keep what
// is left of text, once the sentences cut are taken out, from opening a
// sentence with a pronoun whose referent was cut: each sentence opening
// with a bare pronoun right after one cut whole gets the cut sentence's
// subject (cutSubject) in place of the pronoun when it has one (a pair:
// the sentence, its rewrite), and is cut too when it has none, unless it
// is the correction itself (selfCorrection, or a sentence that corrects,
// correcting: "That was wrong: X"), which says what stands. A pronoun
// sentence whose cue corrects nothing ("It still shows the icons", "If it
// still fails, ...") is about what was cut and goes with it.
func mendDangling(text string, cut []string) (rewrites [][2]string, more []string) {
	gone := map[string]bool{}
	for _, s := range cut {
		gone[strings.TrimSpace(s)] = true
	}
	ss := sentences(text)
	for k := 1; k < len(ss); k++ {
		prev, st := strings.TrimSpace(ss[k-1].text), strings.TrimSpace(ss[k].text)
		if !gone[prev] || gone[st] || !barePronoun.MatchString(st) {
			continue
		}
		if with, ok := withSubject(st, cutSubject(prev)); ok {
			rewrites = append(rewrites, [2]string{st, with})
			continue
		}
		if selfCorrection(prev, st) || correctsFor("raw-mend", lower(st)) {
			continue // the correction itself ("That was wrong: X"): what stands
		}
		gone[st] = true // about what was cut, and naming nothing else
		more = append(more, st)
	}
	return rewrites, more
}

// mendClause returns what is left of a sentence once a clause is cut out
// of it (rest) when it opens with a bare pronoun whose referent was in
// the clause cut (gone): the pronoun replaced by the clause's subject
// (cutSubject), or "" (the sentence is cut whole) when it has none.
func mendClause(rest, gone string) string {
	if !barePronoun.MatchString(rest) {
		return rest
	}
	with, _ := withSubject(rest, cutSubject(gone))
	if with == rest {
		return ""
	}
	return with
}

// withContext returns a kept sentence that opens with a bare pronoun
// ("They will use `function*` syntax") joined after the sentence before
// it in the same response (before), which distillation did not keep,
// when that sentence names something the pronoun can stand for
// (namesThing), corrects nothing (correcting, selfCorrection: a cue in a
// conditional clause or a state that goes on and is no problem corrects
// nothing and names what it names as any sentence does) and
// offers nothing ("If you want, we can add ...": an offer is no fact):
// read alone in a recall, the pronoun means nothing. Putting only
// before's subject (cutSubject) in place of the pronoun was measured too
// and fires on no statement of the dev sets: a sentence before a pronoun
// seldom opens with a name ("These new functions will be named `X`").
// The sentence joined goes through every later guard (revised, undone,
// offered, unsettled) with the statement. Any other sentence is returned
// as it is. (A sentence that corrects is refused before selfCorrection
// reads it, so its sentence before, which it would need for
// an "instead of" cue's object, is not needed: only an emphatic
// correction, "It IS tracked", is left for it.)
func withContext(st, before string) string {
	lb := lower(before)
	if before == "" || !barePronoun.MatchString(st) || !namesThing(before) || correctsFor("raw-context", lb) || selfCorrection("", before) || offers(lb) {
		return st
	}
	return before + " " + st
}
