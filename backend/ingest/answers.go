package ingest

import (
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// answerCandidate reads the user's answer to a question the model asked
// mid-turn as one statement of the user, "Q: <question> A: <answer>": what
// the user chose is the user's decision (which way to go, what to keep,
// what to use), said in the user's own choice of words or options, so it
// is kept as a whole, never split by the prompt's rules (a question is no
// statement there; "fix the issues" would be an order of the moment).
// Its kind is the user's preference (type user, cued) when what the user
// chose is worded as one (a prompt's preference cue or how-to order:
// "always ...", "use yarn"); otherwise it is a decision of the project,
// guessed (no recall boost: an answer can be about the moment only).
// An answer without a question or without anything chosen gives nothing.
func answerCandidate(a memory.Answer) (Candidate, bool) {
	q, ans := strings.TrimSpace(stripHarness(a.Question)), strings.TrimSpace(stripHarness(a.Answer))
	if q == "" || ans == "" {
		return Candidate{}, false
	}
	text := shorten(memory.Answer{Question: q, Answer: ans}.Text())
	c := newCandidate(text, OriginUser, ClassAnswer, true, "")
	c.Kind = memory.KindDecision
	if ls := lower(ans); prefUser.MatchString(ls) || howToRule(ls) {
		c.Kind, c.Type = memory.KindPreference, memory.TypeUser
	}
	return c, true
}
