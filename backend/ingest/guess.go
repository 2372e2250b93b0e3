package ingest

import (
	"regexp"
	"strings"
)

// A hypothesis is not a finding: "this is probably a caching issue", "I
// suspect the fixture is stale" say what the model has not checked. Until
// this file the pipeline kept such a sentence like any other (nothing in
// classify or sentenceClass reads hedges) unless a later sentence revised
// it. dropUnconfirmed cuts a hedged sentence of the model out of its
// statement unless a later sentence of the same turn says the same thing
// about the same subject without a hedge: the confirmation is the finding.
//
// The window is the turn, not the session: a turn captured live is
// decided when it ends, before its session's later turns exist, and a
// batch `memtray ingest` of the same session must form the same memories
// (TestGuessSameLiveAndBatch). A guess a later turn confirms is not lost:
// the confirming statement is a finding of that later turn, stored there.

// hedgeCue marks a sentence as a guess: a hedge ("probably", "might be",
// "seems like", "I suspect"). A cause put on someone else's bug without
// evidence is one too (attributionCue), and so is what a change should do
// (predictCue). Matched on lowercased text.
var hedgeCue = regexp.MustCompile(`\b(?:probably|most likely|likely|presumably|possibly|perhaps|maybe|might (?:be|have|not|cause)|may (?:be|have) (?:been |caused|due)|could be (?:a|an|the|due|caused|because|related)|seems? (?:like|to)|appears? to|i (?:suspect|think|believe|guess|assume)|my (?:guess|hunch)|not sure|i'm not sure|suspected)\b`)

// attributionCue marks a cause put on a tool's or a library's bug: "a
// known Elixir compiler bug", "a Dialyzer false positive", "an upstream
// bug". The session rarely checks it: hedged reads it as a guess.
var attributionCue = regexp.MustCompile(`\b(?:known (?:[\w-]+ ){0,3}(?:bug|issue|quirk)|(?:compiler|library|upstream|framework|toolchain|linter) (?:bug|issue)|false positive)\b`)

// predictCue marks what a change is expected to do ("This modification
// should ensure ...", "These changes should allow ...", "which should help
// prevent ..."): a prediction nobody has run yet, a guess like a hedged
// cause. Matched on lowercased text.
var predictCue = regexp.MustCompile(`\b(?:this|these|that|it|which)(?: (?:change|changes|modification|modifications|update|updates|fix|fixes|check|version|approach|edit|edits|additional|new|updated))*(?: [\w-]+ly)? should (?:now |also |then )?(?:ensure|allow|help|fix|resolve|work|take care|prevent|make|be able|handle|solve|address)\b`)

// adviceHedge is a hedge on what the user will need to do ("you will
// likely need to edit ..."): advice, not a hypothesis.
var adviceHedge = regexp.MustCompile(`\byou(?:'ll| will| would)? (?:most likely|likely|probably|might|may) (?:also )?(?:need|want|have)\b`)

// hedged reports whether a lowercased sentence is a guess.
func hedged(ls string) bool {
	if attributionCue.MatchString(ls) || predictCue.MatchString(ls) {
		return true
	}
	return hedgeCue.MatchString(ls) && !adviceHedge.MatchString(ls)
}

// dropUnconfirmed cuts from the model's kept statements each hedged
// sentence (hedged) that no later sentence of the turn confirms (sents
// are the turn's sentences only, see Distill): one said after the
// statement, not hedged, correcting nothing (correcting: a cue in a
// conditional clause, "If the cache is still there, ...", or a state that
// goes on and is no problem, "The toolbar still shows the icons", corrects
// nothing and may confirm), sharing two subject tokens
// with it, or one long one within revisionReach, a statement itself (a
// finding or a change, not narration or a plan), and not a sentence of a
// compaction summary (restated, positions in restated): a summary retells
// the session, it checks nothing. A statement left with nothing specific
// is dropped as a guess.
func dropUnconfirmed(cands []Candidate, sents []posSentence, restated map[int]bool) {
	type plain struct {
		posSentence
		subject map[string]bool
		states  int // 0 not classified yet, 1 a statement, -1 not one
	}
	var confirm []plain // the sentences that may confirm: no hedge, no correction
	for _, s := range sents {
		if ls := lower(s.text); !restated[s.pos] && !hedged(ls) && !correctsFor("raw-confirm", ls) {
			confirm = append(confirm, plain{posSentence: s})
		}
	}
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.Origin == OriginJudge {
			continue
		}
		// confirmed reports whether a later sentence states what a guess
		// about subj guesses.
		confirmed := func(subj map[string]bool) bool {
			for k := range confirm {
				p := &confirm[k]
				if p.pos <= c.pos {
					continue
				}
				if p.states == 0 {
					p.states, p.subject = -1, subjectOf(p.text)
					if cl := sentenceClass(strings.TrimSpace(p.text), OriginFinal); cl == ClassFinding || cl == ClassChange {
						p.states = 1
					}
				}
				if p.states < 0 {
					continue // narration, a plan, a question: it states nothing
				}
				if n, long := overlapLong(subj, p.subject); (n >= 2 || (long && p.pos-c.pos <= revisionReach)) && 2*n >= min(len(subj), len(p.subject)) {
					return true
				}
			}
			return false
		}
		var cut []string
		why := ""
		for _, s := range sentences(c.Text) {
			st := strings.TrimSpace(s.text)
			guesses := []string{st}
			if wordCount(st) > maxGuessWords {
				// A list run together, not one claim: only an aside of
				// it that is a guess goes ("... in a rescue block
				// (compiler bug workaround)").
				guesses = hedgedAsides(st)
			} else if !hedged(lower(st)) {
				continue
			}
			for _, g := range guesses {
				if !confirmed(subjectOf(g)) {
					cut = append(cut, g)
					if why == "" {
						why = g
					}
				}
			}
		}
		cutSentences(c, cut, reasonGuess+": "+preview(why))
	}
}

// aside is a parenthetical aside of a sentence.
var aside = regexp.MustCompile(`\([^()]{3,160}\)`)

// hedgedAsides returns the parenthetical asides of st that are guesses
// (hedged).
func hedgedAsides(st string) []string {
	var out []string
	for _, a := range aside.FindAllString(st, -1) {
		if hedged(lower(a)) {
			out = append(out, a)
		}
	}
	return out
}

// maxGuessWords is the most words a hedged sentence has to be read as one
// guess: longer, it is a list run together (items without periods),
// where the hedge is one clause of many.
const maxGuessWords = 40

// reasonGuess is why dropUnconfirmed drops a statement.
const reasonGuess = "unconfirmed guess"
