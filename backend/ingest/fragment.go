package ingest

import "strings"

// functionWords are English's closed-class words: pronouns, determiners,
// auxiliaries and modals, conjunctions, prepositions, negations and the
// adverbs that only place or link a clause. A sentence made of them
// alone names nothing (contentless). The classes are closed: the list
// is grammar, not any session's vocabulary.
var functionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`i me my mine we us our ours you your yours he him his she her hers
		it its they them their theirs this that these those one ones someone something anything
		nothing everything all any some none each every both either neither such same other another
		a an the
		am is are was were be been being do does did done doing have has had having
		can could shall should will would may might must ought need dare
		i'm i've i'd i'll we're we've we'd we'll you're you've you'd you'll he's she's it's
		they're they've they'd they'll that's there's here's what's
		isn't aren't wasn't weren't don't doesn't didn't haven't hasn't hadn't can't cannot
		couldn't shouldn't won't wouldn't mustn't mightn't needn't
		and or but nor so yet if then else than because since unless until while though although
		whether as when where why how what which who whom whose
		not no yes ok okay never always ever also too just only even still again already
		now here there very much more most less least quite rather really maybe perhaps
		of in on at by for with without to from into onto about over under up down out off
		through before after above below between against within upon`) {
		functionWords[w] = true
	}
}

// contentless reports whether a sentence holds function words only
// ("If not it should.", "But it does.", "We must, though."): a fragment
// that says something only with the sentence next to it.
func contentless(st string) bool {
	seen := false
	for _, f := range strings.Fields(lower(st)) {
		f = strings.Trim(f, ".,;:!?()\"'`*—–-…")
		f = strings.ReplaceAll(f, "’", "'")
		if f == "" {
			continue
		}
		if !functionWords[f] {
			return false
		}
		seen = true
	}
	return seen
}
