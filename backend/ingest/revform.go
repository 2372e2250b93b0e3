package ingest

import (
	"regexp"
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
// cueFocus) that it does not confirm (confirmsStatement). It is nil when
// the statement is one sentence, or when none or all of them are: then
// the correction revises the statement as a whole. A packed statement
// ("Update the parser to keep comments. Add a `--strict` flag.") whose
// one sentence a later sentence corrects keeps the others.
func revisedSentences(text string, focus map[string]bool, affirmed []string) []string {
	if !ruleOn(ruleReviseCut) {
		return nil
	}
	ss := sentences(text)
	if len(ss) < 2 {
		return nil
	}
	var cut []string
	for _, s := range ss {
		st := strings.TrimSpace(s.text)
		if overlap(subjectOf(st), focus) > 0 && !confirmsStatement(affirmed, st) {
			cut = append(cut, st)
		}
	}
	if len(cut) == len(ss) {
		return nil
	}
	return cut
}
