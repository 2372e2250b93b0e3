package ingest

import (
	"regexp"
	"slices"
	"strings"
)

// What may revise or supersede a statement, read by the form of the
// sentence that would, not by any project's words. A correction says that
// something said before is not so: "actually", "it turns out", "not X but
// Y", the same predicate negated on the same subject (revisionCue and
// dropRevised find those). What cannot revise, whatever cue word it holds:
//
//   - a guess ("This should resolve the error by renaming the columns
//     that actually exist", "The issue might be ...": hedged) and a
//     question: neither says that anything is so (reviserGuess,
//     reviserQuestion; a plan or narration was left out already,
//     actionOnly);
//   - a confirmation: a correction whose cue stands alone ("Instead, we
//     only added the `limit` flag but kept the old parser") replaces what
//     was expected with the clause it governs; an earlier statement that
//     names everything that clause names, said with the same polarity,
//     states what the correction says is so (confirmsStatement);
//   - "actually" inside a clause a wh-word opens ("counts how many rows
//     actually exist", "whether the test actually ran") restricts that
//     clause, it corrects nothing (embeddedActually);
//   - across turns and within one, a later statement supersedes an
//     earlier as its restatement only when it is at least as certain: a
//     plan, a question or a guess never supersedes a finding or a change
//     (asCertain).
//
// Each rule has a name that ablate can turn off.

// Names of the rules of this file, as ablate lists them.
const (
	ruleReviserGuess    = "revise-guess"
	ruleReviserQuestion = "revise-question"
	ruleReviserPlan     = "revise-plan"
	ruleConfirms        = "revise-confirm"
	ruleEmbeddedActual  = "revise-embedded"
	ruleAsCertain       = "supersede-certain"
	ruleSeeAhead        = "seeahead"
	ruleShownReport     = "shown-report"
	ruleReviseCut       = "revise-cut"
)

// cannotRevise reports whether a sentence, by its form, revises nothing:
// a guess (guessing), a question, or a plan opening with an order
// (planLead: "Fix the false positive ... e.g. return a string instead of
// a tuple" says what to try, not what is). The user's correction by an
// order ("no, use `pnpm` instead") opens with no verb of planLead.
func cannotRevise(st string) bool {
	if ruleOn(ruleReviserQuestion) && strings.HasSuffix(strings.TrimRight(st, " *_`)\"'"), "?") {
		return true
	}
	ls := lower(st)
	if ruleOn(ruleReviserPlan) && planLead.MatchString(strings.TrimLeft(ls, "*_#> ")) {
		return true
	}
	return ruleOn(ruleReviserGuess) && guessing(ls)
}

// guessing reports whether a lowercased sentence hedges what it says
// ("might be", "probably", "I think") or predicts what a change should do
// ("This should resolve ..."): hedged less the attribution of a cause to
// a tool's bug ("Resolved the Dialyzer false positive by ..."), which
// names a cause, it does not hedge the sentence's own claim.
func guessing(ls string) bool {
	return predictCue.MatchString(ls) || (hedgeCue.MatchString(ls) && !adviceHedge.MatchString(ls))
}

// negation marks a clause that negates its predicate.
var negation = regexp.MustCompile(`\b(?:not|no|never|none|nothing|without|cannot)\b|n't\b`)

// affirmedClauses returns the clauses a revising sentence's lone cue
// governs ("Instead, we only added X" and, in "Instead, we added X but
// kept Y", both clauses beside it), lowercased, each with whether it is
// negated: what the correction says is so instead. A cue inside a clause
// of its own words ("X is actually Y", "Y instead of X") governs no other
// clause: it is nil then.
func affirmedClauses(text string) (clauses []string) {
	text = quoteFold.Replace(text)
	lt := lower(text)
	var spans [][2]int
	start := 0
	for _, c := range cueClauseBreak.FindAllStringIndex(lt, -1) {
		spans = append(spans, [2]int{start, c[0]})
		start = c[1]
	}
	spans = append(spans, [2]int{start, len(lt)})
	for i, c := range spans {
		cl := lt[c[0]:c[1]]
		if !correcting(cl) || len(withoutCue(subjectOf(text[c[0]:c[1]]))) > 0 {
			continue
		}
		// the cue stands alone: the clauses after it, to the sentence's
		// end, say what is so instead
		for _, n := range spans[i+1:] {
			if s := strings.TrimSpace(lt[n[0]:n[1]]); s != "" {
				clauses = append(clauses, s)
			}
		}
	}
	return clauses
}

// confirmsStatement reports whether a revising sentence (its affirmed
// clauses, affirmedClauses) confirms a statement rather than corrects it:
// some clause names load-bearing tokens (namedTokens) and the statement
// names them all, and the clause and the statement's sentence naming them
// agree in polarity (both negated or neither). "Instead, we only added
// the `limit` flag" confirms "Added a `limit` flag to the list command";
// it corrects "The list command has no `limit` flag".
func confirmsStatement(affirmed []string, stmt string) bool {
	if !ruleOn(ruleConfirms) {
		return false
	}
	for _, cl := range affirmed {
		tokens := namedTokens(cl)
		if len(tokens) == 0 {
			continue
		}
		neg := negation.MatchString(cl)
		for _, s := range sentences(stmt) {
			ls := lower(s.text)
			if namesAll(ls, tokens) && negation.MatchString(ls) == neg {
				return true
			}
		}
	}
	return false
}

// whActually is "actually" inside a clause a wh-word opens, with no
// clause break between them: "how many columns actually exist",
// "whether the hook actually ran", "which actually exist". A
// pseudo-cleft ("what actually broke was ...") does correct: "what" is
// left out.
var whActually = regexp.MustCompile(`\b(?:how (?:many|much|often)|whether|which|who|whom)\b[^,;:()]*?\bactually$`)

// embeddedActually reports whether the cue at lt[m[0]:m[1]] is an
// "actually" that restricts a wh-clause (whActually), not a correction.
func embeddedActually(lt string, start int, m []int) bool {
	if !ruleOn(ruleEmbeddedActual) || lt[m[0]:m[1]] != "actually" {
		return false
	}
	return whActually.MatchString(lt[start:m[1]])
}

// Certainty of a statement, by the form of its first sentence (a list's
// lead governs its items): what it says is so (certainStates), a guess,
// or what is to be done or asked (certainNone).
const (
	certainNone = iota
	certainGuess
	certainStates
)

// planLead opens a sentence with an order: a bare verb of work, after any
// list mark or emphasis. "Add a section documenting X", "Verify that the
// template uses X" say what is to be done, not what is.
var planLead = regexp.MustCompile(`^(?:add|remove|delete|create|update|fix|make|run|write|implement|change|rename|move|review|check|build|deploy|push|commit|test|refactor|document|extend|wire|generate|install|include|convert|replace|clean|try|ensure|verify|validate|confirm|investigate|consider|migrate|rewrite|restore|revert|retry|provide)\b`)

// certainty returns how certain a statement is (certainNone, certainGuess,
// certainStates), read on its first sentence.
func certainty(text string) int {
	ss := sentences(text)
	if len(ss) == 0 {
		return certainStates
	}
	st := strings.TrimLeft(ss[0].text, "*_#> ")
	ls := lower(st)
	switch {
	case strings.HasSuffix(strings.TrimRight(st, " *_`)\"'"), "?"), planLead.MatchString(ls):
		return certainNone
	case guessing(ls):
		return certainGuess
	}
	return certainStates
}

// asCertain reports whether a later statement b is at least as certain as
// the earlier a (certainty): only then may it supersede a as its
// restatement. A plan ("Add a section documenting the `--repo` option")
// or a guess ("The issue might be in how `prefix()` is used") that names
// everything a finding or a change named says less than it: what is to
// be done, or what may be so.
// The user's words, an instruction file's and what the user taught are
// orders and rules, not findings: the test is between the model's own.
func asCertain(a, b Candidate) bool {
	if !ruleOn(ruleAsCertain) || !modelsOwn(a) || !modelsOwn(b) {
		return true
	}
	return certainty(b.Text) >= certainty(a.Text)
}

// modelsOwn reports whether a statement is the model's own: not the
// user's words, an instruction file's, or what the user taught.
func modelsOwn(c Candidate) bool {
	return c.Origin != OriginUser && c.Origin != OriginInstruction && !c.taught
}

// offers reports whether a lowercased sentence offers or suggests more
// work (offer), not counting "I can see that ...", "we can tell ...",
// which say what the writer finds (seeAhead).
func offers(ls string) bool {
	return offer.MatchString(ls) && (!ruleOn(ruleSeeAhead) || !seeAhead.MatchString(ls))
}

// shownReport opens a user's report that shows what they got: "This is
// what I got: ...", "here's the output I get", "that's the error I see".
var shownReport = regexp.MustCompile(`^(?:(?:ok(?:ay)?|so|but|and|now|hmm|well|also)\b[\s,.;:!—–-]*)*(?:this|that|here)(?:'s| is) (?:what|the (?:output|error|result|log|trace|message|response)s?)(?: that)? (?:i|we)(?:'m| am| are|'re)? (?:still |just |now |also )?(?:get|got|getting|see|saw|seeing|have|had)\b`)

// reportsShown reports whether a user's lowercased sentence is a report
// of what they got (userReport, shownReport).
func reportsShown(ls string) bool {
	return userReport.MatchString(ls) || (ruleOn(ruleShownReport) && shownReport.MatchString(ls))
}

// negatedAfter returns the indexes of the clauses of lt (spans, as
// cueFocus splits them) after the i-th that are negated (negation): what
// a lone cue before them says is not so. It is nil with ruleConfirms off.
func negatedAfter(lt string, clauses [][2]int, i int) []int {
	if !ruleOn(ruleConfirms) {
		return nil
	}
	var out []int
	for k := i + 1; k < len(clauses); k++ {
		if negation.MatchString(lt[clauses[k][0]:clauses[k][1]]) {
			out = append(out, k)
		}
	}
	return out
}

// revisedSentences returns the sentences of a statement of several that a
// correction revises: those naming a token of what it corrects (focus,
// cueFocus) that it does not confirm (sayso.confirms). It is nil when
// the statement is one sentence, or when none or all of them are: then
// the correction revises the statement as a whole, unless confirmed
// says that some sentence named the focus and it confirms every such
// sentence ("There's still an issue with the tests. It's trying to use
// the wrong workdir.", both confirmed by "The tests are still failing").
// A packed statement ("Update the parser to keep comments. Add a
// `--strict` flag.") whose one sentence a later sentence corrects keeps
// the others.
func revisedSentences(text string, focus map[string]bool, so sayso) (cut []string, confirmed bool) {
	if !ruleOn(ruleReviseCut) {
		return nil, false
	}
	ss := sentences(text)
	if len(ss) < 2 {
		return nil, false
	}
	named := 0
	for _, s := range ss {
		st := strings.TrimSpace(s.text)
		if overlap(subjectOf(st), focus) == 0 {
			continue
		}
		named++
		if !so.confirms(st) {
			cut = append(cut, st)
		}
	}
	if len(cut) == len(ss) {
		return nil, false
	}
	return cut, named > 0 && len(cut) == 0 && ruleOn(ruleConfirmEach)
}

// Names of the rules below, as ablate lists them.
const (
	ruleConcede  = "revise-concede"
	rulePersist  = "revise-persist"
	ruleNegated  = "revise-negated"
	ruleObjWords = "revise-object-words"
	ruleSameFix  = "revise-same-fix"
	// ruleObjectCode: an "instead of X" object ends at a clause break
	// outside a code span (clauseBreakOutsideCode).
	ruleObjectCode = "revise-object-code"
	// ruleConfirmEach: a packed statement whose every sentence about
	// the focus is confirmed is confirmed (revisedSentences).
	ruleConfirmEach = "revise-confirm-each"
)

// Beyond a lone cue's clauses (affirmedClauses), a correction says what
// is so in three more forms, and an earlier statement saying the same
// is confirmed by it, not corrected:
//
//   - a concession: "despite X" grants X ("Despite some remaining
//     failures in the `GitService` tests, the core works" does not
//     correct "The `GitService` tests are still failing"): X is so, with
//     its polarity (concededClauses, ruleConcede);
//   - a negated "actually": "The fixture doesn't actually contain any
//     `agent_id` fields" says what is not so; a statement that says it is
//     not ("No `agent_id` at top level") agrees (negatedActual,
//     ruleNegated);
//   - a problem that goes on: "The tests are still failing" (a
//     persistence cue, persistOnly) corrects a statement that the
//     problem was fixed, not one that reports the problem
//     (reportsProblem, rulePersist).
//
// And an "instead of X" fix revises only a statement that says X: by
// one of X's load-bearing tokens, or, when X names none, by X's words in
// their order (saysObjectAsWritten, ruleObjWords); a statement that
// states the same replacement ("use `a()` instead of `b()`") is
// confirmed (sameReplacement, ruleSameFix).

// sayso is what a revising sentence says is so, read by form: the
// clauses of its lone cue (affirmedClauses, read by confirmsStatement),
// the clauses it grants or negates (held, read by agrees), whether its
// every cue is a problem going on (persist), and the replacements of
// its "instead of" cues (replaced).
type sayso struct {
	affirmed []string
	held     []string
	persist  bool
	replaced []replacement
}

// replacement is one "Y instead of X" of a revising sentence: the
// load-bearing tokens of Y, lowercased (the sentence before the cue).
type replacement struct {
	by []string
}

// whatIsSo reads what a revising sentence says is so (sayso).
func whatIsSo(text string) sayso {
	s := sayso{affirmed: affirmedClauses(text), persist: persistOnly(text)}
	folded := quoteFold.Replace(text)
	lt := lower(folded)
	for _, m := range correctingCues(lt) {
		start, end := clauseStart(lt, m[0]), cueClauseEnd(lt, m[1])
		cue := lt[m[0]:m[1]]
		switch {
		case cue == "despite" && ruleOn(ruleConcede):
			if cl := strings.TrimSpace(folded[m[1]:end]); cl != "" {
				s.held = append(s.held, cl)
			}
		case strings.HasSuffix(cue, "actually") && ruleOn(ruleNegated):
			if negation.MatchString(lt[start:end]) {
				s.held = append(s.held, strings.TrimSpace(folded[start:end]))
			}
		case cue == "instead" && ruleOn(ruleSameFix) && strings.HasPrefix(lt[m[1]:], " of "):
			// what replaces: the sentence up to the cue (a code span's
			// brackets may split its clause)
			if by := namedTokens(folded[:m[0]]); len(by) > 0 {
				s.replaced = append(s.replaced, replacement{by})
			}
		}
	}
	return s
}

// confirms reports whether a statement (or one sentence of it) says what
// the revising sentence says is so, by any of the forms of sayso.
func (s sayso) confirms(stmt string) bool {
	if confirmsStatement(s.affirmed, stmt) {
		return true
	}
	for _, cl := range s.held {
		if agrees(cl, stmt) {
			return true
		}
	}
	for _, r := range s.replaced {
		if sameReplacement(r, stmt) {
			return true
		}
	}
	return s.persist && ruleOn(rulePersist) && reportsProblem(stmt)
}

// agrees reports whether a statement says what a clause says, with its
// polarity: it names a load-bearing token of the clause (namedTokens),
// and every clause of it naming one (split as cueClauseBreak splits) is
// negated as the clause is, or not as it is not. "The fixture may not
// contain `agent_id` references" agrees with "the fixture doesn't
// actually contain any `agent_id` fields"; "The fixture contains
// `agent_id` in the JSON, but the parser might not expose it" does not:
// its clause naming `agent_id` affirms.
func agrees(clause, stmt string) bool {
	tokens := namedTokens(clause)
	if len(tokens) == 0 {
		return false
	}
	neg := negation.MatchString(lower(clause))
	ls := lower(quoteFold.Replace(stmt))
	named := false
	start := 0
	cut := append(cueClauseBreak.FindAllStringIndex(ls, -1), []int{len(ls), len(ls)})
	for _, b := range cut {
		cl := ls[start:b[0]]
		start = b[1]
		if !slices.ContainsFunc(tokens, func(t string) bool { return strings.Contains(cl, t) }) {
			continue
		}
		if negation.MatchString(cl) != neg {
			return false
		}
		named = true
	}
	return named
}

// persistCue is a revision cue telling that a problem goes on ("still
// failing", "still broken", "the error persists"), as revisionCue spells
// them.
var persistCue = regexp.MustCompile(`^(?:still (?:fail\w*|broken|there|persist\w*|show\w*|happen\w*)|\w+s? (?:still |also |now )?persist(?:s|ed)?)$`)

// persistOnly reports whether every correcting cue of a sentence is a
// problem going on (persistCue): such a sentence says the problem is
// still so, and corrects only a statement that it was fixed.
func persistOnly(text string) bool {
	lt := lower(quoteFold.Replace(text))
	ms := correctingCues(lt)
	if len(ms) == 0 {
		return false
	}
	for _, m := range ms {
		if !persistCue.MatchString(lt[m[0]:m[1]]) {
			return false
		}
	}
	return true
}

// problemReport names a problem in a statement: problemWord, an error's
// or an exception's type ("TypeError") or a mismatch.
var problemReport = regexp.MustCompile(`\b(?:\w*errors?|\w*exceptions?|mismatch\w*)\b`)

// fixClaim says a problem is gone: fixed, resolved, passing, working
// ("we need to fix the test" is a plan, not a claim).
var fixClaim = regexp.MustCompile(`\b(?:fixed|resolved|solved|pass(?:es|ed|ing)|works|working|succeed(?:s|ed)|no longer|gone)\b`)

// causeClaim names a cause: "because", "due to", "comes from", "so the
// export misses ...", "the issue is that", "this suggests". A statement
// giving a problem's cause is a diagnosis, and a problem that goes on
// after its fix says the diagnosis was wrong.
var causeClaim = regexp.MustCompile(`\b(?:because|due to|caused by|comes? from|result(?:s|ed)? from|so (?:the|that|a|it|we)|(?:issue|problem|cause|reason|culprit) (?:is|was) (?:that|in|the)|suggests?|means)\b`)

// reportsProblem reports whether a statement reports a problem
// (problemWord, problemReport) without a fix (fixClaim) or a cause
// (causeClaim): "There's still an issue with the `GitService` tests" is
// what "The `GitService` tests are still failing" says again; "The
// linting issues have been fixed" and "The failure comes from the
// backoff" are what it corrects.
func reportsProblem(stmt string) bool {
	ls := lower(quoteFold.Replace(stmt))
	return (problemWord.MatchString(ls) || problemReport.MatchString(ls)) && !fixClaim.MatchString(ls) && !causeClaim.MatchString(ls)
}

// sameReplacement reports whether a statement states a replacement r
// itself: it names every token of what replaces (r.by), all before an
// "instead of" of its own. "Update the template to use
// `cell.formatted_value()` instead of separate calls" states what "The
// main change is the use of `cell.formatted_value()` instead of separate
// calls" states.
func sameReplacement(r replacement, stmt string) bool {
	ls := lower(quoteFold.Replace(stmt))
	at := strings.Index(ls, "instead of ")
	return at > 0 && namesAll(ls[:at], r.by)
}

// cueObjectWords returns the words of an "instead of X" object that say what X is:
// four letters or more, not a stop word.
func cueObjectWords(obj string) []string {
	var out []string
	for _, w := range wordTok.FindAllString(obj, -1) {
		if w = lower(w); len(w) >= 4 && !stopWords[w] && !cueWord(w) {
			out = append(out, stem(w))
		}
	}
	return out
}

// saysObjectAsWritten reports whether a statement says one of a
// reviser's "instead of X" objects (objs, as written) the way X says it:
// by one of X's load-bearing tokens, or, when X names none (only
// common words: "at module import time"), by X's words in their order,
// each within objectReach words of the one before ("imports at module
// import time", not "import errors when importing UI modules"; "embeds
// every font file in each page" says "embedding them in each page"). A
// nil objs restricts nothing.
func saysObjectAsWritten(stmt string, objs []string) bool {
	if objs == nil || !ruleOn(ruleObjWords) {
		return true
	}
	ls := lower(quoteFold.Replace(stmt))
	var words []string
	for _, w := range wordTok.FindAllString(ls, -1) {
		words = append(words, stem(w))
	}
	for _, o := range objs {
		if tokens := namedTokens(o); len(tokens) > 0 {
			if slices.ContainsFunc(tokens, func(t string) bool { return strings.Contains(ls, t) }) {
				return true
			}
			continue
		}
		if inOrder(words, cueObjectWords(o)) {
			return true
		}
	}
	return false
}

// objectReach is how far apart, in words, the words of an "instead of
// X" object may stand in a statement that says X (inOrder).
const objectReach = 6

// inOrder reports whether words holds want in order, each within
// objectReach words of the one before (sameWord); an empty want is held.
func inOrder(words, want []string) bool {
	if len(want) == 0 {
		return true
	}
	for i, w := range words {
		if !sameWord(w, want[0]) {
			continue
		}
		k, last := 1, i
		for j := i + 1; j < len(words) && k < len(want) && j-last <= objectReach; j++ {
			if sameWord(words[j], want[k]) {
				k, last = k+1, j
			}
		}
		if k == len(want) {
			return true
		}
	}
	return false
}
