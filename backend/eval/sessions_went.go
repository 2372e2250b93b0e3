package eval

import (
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
)

// maxWent bounds the fates a "went:" line lists (the first ones, in the
// order the session's decisions met them).
const maxWent = 3

// sessionTrail is what a session's ingest decided, kept for the dump's
// "went:" lines (SessionsOptions.Dump): the decisions of its turns in
// order, the full text of every statement distillation found in them
// (the decisions hold each cut to a preview) and the exchanges read.
type sessionTrail struct {
	decisions []memory.Decision
	said      []string // ingest.Distill's candidates' texts, spaces normalised
	exs       []memory.Exchange
}

// note adds the decisions one request of exchanges got: its turns are cut
// and distilled again as the feed's ingest cut them (ingest.GroupTurns,
// each turn knowing the rest of the request), for the full text of each
// statement a decision lists.
func (st *sessionTrail) note(exs []memory.Exchange, decs []memory.Decision) {
	st.decisions = append(st.decisions, decs...)
	turns := ingest.GroupTurns(exs)
	later := ingest.NewLater(turns)
	for i, t := range turns {
		for _, c := range ingest.Distill(t, later.After(i, t.SessionID)) {
			st.said = append(st.said, memory.NormalizeSpace(c.Text))
		}
	}
}

// wentState is how a memory a kept statement was stored as stands at the
// end of the run.
type wentState func(id string) string

// went says where the text of a fact no memory covers went: each
// statement of the session's decisions that held every key group, with
// what became of it ("dropped: narration (turn 4)", "cut: said in an
// earlier turn (turn 6)", "kept (turn 2), its memory superseded since");
// with none, the statement that held the most groups, or that no
// captured text (the user's and the model's words) held them all. state
// tells how a kept statement's memory stands ("" when it is one of the
// session's live memories).
func (st *sessionTrail) went(f Fact, state wentState) string {
	var fates []string        // distinct, in order
	times := map[string]int{} // how many statements met each
	best, bestFate := 0, ""
	for _, d := range st.decisions {
		for _, cv := range d.Candidates {
			n := groupsIn(strings.ToLower(st.fullText(cv, f.Keys)), f.Keys)
			switch {
			case n == len(f.Keys):
				fate := fateOf(d, cv, state, true)
				if times[fate]++; times[fate] == 1 {
					fates = append(fates, fate)
				}
			case n > best:
				best, bestFate = n, fateOf(d, cv, state, false)
			}
		}
	}
	if len(fates) > 0 {
		shown := fates[:min(len(fates), maxWent)]
		for i, fate := range shown {
			if n := times[fate]; n > 1 {
				shown[i] = fmt.Sprintf("%s x%d", fate, n)
			}
		}
		out := strings.Join(shown, "; ")
		if len(fates) > maxWent {
			out += fmt.Sprintf("; +%d more", len(fates)-maxWent)
		}
		return out
	}
	var said, tools []string
	for _, ex := range st.exs {
		said = append(said, ex.User, ex.Assistant, ex.Summary)
		for _, a := range ex.Answers {
			said = append(said, a.Question+" "+a.Answer)
		}
		for _, c := range ex.ToolCalls {
			tools = append(tools, c.Input)
		}
		for _, r := range ex.ToolResults {
			tools = append(tools, r.Content)
		}
	}
	closest := ""
	if bestFate != "" {
		closest = fmt.Sprintf(" (closest, %d of %d key groups: %s)", best, len(f.Keys), bestFate)
	}
	switch {
	case anyCovers(lowerTexts(said), f.Keys):
		return "no one statement held every key" + closest
	case anyCovers(lowerTexts(tools), f.Keys):
		return "only in tool calls or their output" + closest
	}
	return "not in any one captured text" + closest
}

// fullText is the statement a decision lists as cv, whole: cv's text when
// it was not cut to a preview, else the statement distillation found that
// begins with it (of those, the one holding the most of keys); the
// preview when none does (a redacted text).
func (st *sessionTrail) fullText(cv memory.CandidateVerdict, keys [][]string) string {
	head, cut := strings.CutSuffix(cv.Text, "…")
	if !cut {
		return cv.Text
	}
	head = strings.TrimSpace(head)
	full, most := cv.Text, -1
	for _, s := range st.said {
		if !strings.HasPrefix(s, head) {
			continue
		}
		if n := groupsIn(strings.ToLower(s), keys); n > most {
			full, most = s, n
		}
	}
	return full
}

// fateOf says what became of a statement of a decision: cut out of a kept
// one, dropped with its class (and reason, when it says more), or kept and
// how its memory stands; whole says the statement held every key group (a
// live memory of it that covers no fact lacks a key now).
func fateOf(d memory.Decision, cv memory.CandidateVerdict, state wentState, whole bool) string {
	at := d.TurnLabel()
	if at == "" {
		at = "no turn"
	}
	switch {
	case cv.Cut:
		return fmt.Sprintf("cut: %s (%s)", oneLine(cv.Reason, 80), at)
	case !cv.Kept:
		why := cv.Class
		if cv.Reason != "" && cv.Reason != cv.Class {
			why += ", " + oneLine(cv.Reason, 80)
		}
		return fmt.Sprintf("dropped: %s (%s)", why, at)
	case cv.MemoryID == "":
		return fmt.Sprintf("kept (%s), stored as no memory: %s", at, oneLine(d.Reason, 80))
	}
	if s := state(cv.MemoryID); s != "" {
		return fmt.Sprintf("kept (%s), %s", at, s)
	}
	if !whole {
		return fmt.Sprintf("kept (%s)", at)
	}
	return fmt.Sprintf("kept (%s), but its memory lacks a key now", at)
}

// groupsIn counts the key groups an alternative of which the lower-cased
// text contains.
func groupsIn(lower string, keys [][]string) int {
	n := 0
	for _, g := range keys {
		if coversLower(lower, [][]string{g}) {
			n++
		}
	}
	return n
}

// memoryState is the wentState of a run: how a memory stands at the end
// against the session's live memories.
func memoryState(final map[string]memory.Memory, live map[string]bool) wentState {
	return func(id string) string {
		m, ok := final[id]
		switch {
		case !ok:
			return "its memory deleted or trashed since"
		case m.Superseded():
			return "its memory superseded since"
		case !live[id]:
			return "into a memory of an earlier session (its text unchanged)"
		}
		return ""
	}
}
