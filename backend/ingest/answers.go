package ingest

import (
	"regexp"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// answerCandidates reads one of the user's answers given in the middle of
// a turn: a refusal's words (memory.Answer.Refused) are what the user
// typed in place of a tool's result, read as the user's prompt is
// (userCandidates: a rule or preference is kept, an order for the moment
// is not); an answer to a question is one statement (answerCandidate).
func answerCandidates(a memory.Answer) []Candidate {
	if a.Refused {
		return userCandidates(a.Answer)
	}
	if c, ok := answerCandidate(a); ok {
		return []Candidate{c}
	}
	return nil
}

// answerCandidate reads the user's answer to a question the model asked
// mid-turn as one statement of the user, "Q: <question> A: <answer>": what
// the user chose is the user's decision (which way to go, what to keep,
// what to use), said in the user's own choice of words or options, so it
// is kept as a whole, never split by the prompt's rules (a question is no
// statement there; "fix the issues" would be an order of the moment).
// Its kind is the user's preference (type user, cued; a convention of the
// project when it is about the project's content, ruleType) when what the user
// chose is worded as one (a prompt's preference cue or how-to order:
// "always ...", "use yarn"); otherwise it is a decision of the project,
// guessed (no recall boost: an answer can be about the moment only).
// An answer without a question or without anything chosen gives nothing.
// A go-ahead for the turn's own work is no memory (goAhead): answering
// "Should I commit and push?" is the user's request for the turn, which
// the user's prompt does not keep either, unless what the user chose says
// it stands for later turns ("yes, and always push after a commit"). A
// refusal ("No", "Don't ...") is kept: "don't add the footer" is a rule
// as the user's prompt would have said it.
func answerCandidate(a memory.Answer) (Candidate, bool) {
	q, ans := strings.TrimSpace(stripHarness(a.Question)), strings.TrimSpace(stripHarness(a.Answer))
	if q == "" || ans == "" {
		return Candidate{}, false
	}
	text := shorten(memory.Answer{Question: q, Answer: ans}.Text())
	if ls := lower(ans); goAhead(q) && !refusal.MatchString(ls) && !standing.MatchString(ls) {
		return newCandidate(text, OriginUser, ClassAnswer, false, reasonGoAhead), true
	}
	c := newCandidate(text, OriginUser, ClassAnswer, true, "")
	c.Kind = memory.KindDecision
	if ls := lower(ans); prefCue(ls) || howToRule(ls) {
		c.Kind, c.Type = ruleType([]string{ans}, ans)
	}
	return c, true
}

// refusal opens an answer that declines what the question offered.
var refusal = regexp.MustCompile(`^(?:no|not|never|don't|do not|dont)\b`)

// reasonGoAhead is why an answer that lets the model do the turn's next
// piece of work is dropped.
const reasonGoAhead = "a go-ahead for the turn's work"

// askLeave opens a question in which the model asks leave to act: "Should
// I ...", "Shall we ...", "Do you want me to ...".
var askLeave = regexp.MustCompile(`^(?:should|shall|can|may) (?:i|we) (?:also |now |first |then )?|^(?:do you want|would you like|want) me to (?:also |now |first |then )?`)

// goAhead reports whether a question (its last sentence) asks leave for
// a piece of the turn's work: askLeave followed by a request of the turn
// (taskRequest: "commit", "add", "run", "push"...; not "use", "keep",
// "follow", which say how to work and make the answer a decision).
func goAhead(question string) bool {
	ss := sentences(question)
	if len(ss) == 0 {
		return false
	}
	ls := lower(strings.TrimSpace(ss[len(ss)-1].text))
	loc := askLeave.FindStringIndex(ls)
	return loc != nil && taskRequest(ls[loc[1]:])
}
