package recall

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// OpUsed is the recall log's feedback op of a memory the turn after its
// recall used (Used): an implicit reinforcement, score +1.
const OpUsed = "used"

// usedLookback is how many of a session's newest recalls Used reads to
// find the one that answered a turn's prompt, and usedScan how many of
// the log's newest entries (every session's) it reads at most: a turn is
// captured soon after its prompt's recall (at its Stop hook, or the
// poller's next look), with few other sessions' recalls between, and a
// session that recalled nothing (no hook) must not cost a read of the
// whole log per turn (BenchmarkUsed: 1,000 entries cost about three
// prompt recalls).
const (
	usedLookback = 50
	usedScan     = 250
)

// Turn is what one user turn of a session did, as Used reads it: the
// capture paths (session files, the proxy) build it from the turn they
// store.
type Turn struct {
	// SessionID is the agent session; Prompt the user's words that began
	// the turn (harness blocks are stripped here).
	SessionID string
	Prompt    string
	// UserText is what else the user wrote in the turn (words added while
	// the agent worked, answers to its questions): like the prompt, it
	// never counts as use.
	UserText []string
	// Steps are the model's responses, in order.
	Steps []TurnStep
}

// TurnStep is one model response of a turn.
type TurnStep struct {
	// Wrote is what the model wrote: its text, each call's tool name and
	// arguments.
	Wrote []string
	// Read is what the step read before it wrote: the results of the
	// previous step's calls. A token the turn wrote only after a result
	// showed it came from the result, not the memory.
	Read []string
}

// Used finds the memories the recall that answered t's prompt gave (the
// newest recall of t's session at a user prompt with the same words)
// that t then used: a step of the turn wrote one of the memory's usable
// tokens (UsableTokens) that the user's words of the turn do not hold and
// no earlier result of the turn showed. It records each in that recall's
// log entry as OpUsed, once per recall and memory, and returns the ids it
// recorded now: the caller reinforces those (a turn read again returns
// none). A turn no logged recall answered returns none.
func (s *Service) Used(ctx context.Context, t Turn) ([]string, error) {
	if s.w == nil || t.SessionID == "" || len(t.Steps) == 0 {
		return nil, nil
	}
	prompt := promptKey(t.Prompt)
	if prompt == "" {
		return nil, nil
	}
	if err := s.w.sync(ctx); err != nil {
		return nil, fmt.Errorf("implicit feedback: write the waiting recalls: %w", err)
	}
	es, err := s.o.Log.RecallLog(ctx, store.RecallLogQuery{SessionID: t.SessionID, Limit: usedLookback, Scan: usedScan})
	if err != nil {
		return nil, fmt.Errorf("implicit feedback: read the session's recalls: %w", err)
	}
	var e *store.RecallEntry
	for i := range es { // newest first
		if es[i].Event == search.EventPrompt && promptKey(es[i].Prompt) == prompt {
			e = &es[i]
			break
		}
	}
	if e == nil || len(e.Given) == 0 {
		return nil, nil
	}
	var ids []string
	for _, g := range e.Given {
		done := false
		for _, f := range e.Feedback {
			done = done || (f.ID == g.ID && f.Op == OpUsed)
		}
		if !done {
			ids = append(ids, g.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	mems, err := s.o.Log.GetMany(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("implicit feedback: read the memories given: %w", err)
	}
	user := append([]string{t.Prompt}, t.UserText...)
	var used []string
	for _, id := range ids {
		m, ok := mems[id]
		if ok && usedIn(UsableTokens(m.Text), user, t.Steps) {
			used = append(used, id)
		}
	}
	if len(used) == 0 {
		return nil, nil
	}
	took, err := s.o.Log.AddRecallFeedbackOnce(ctx, e.Seq, used, store.RecallFeedback{Op: OpUsed, Score: 1, At: s.o.Clock.Now()})
	if err != nil {
		return nil, fmt.Errorf("implicit feedback: %w", err)
	}
	return took, nil
}

// promptKey is a prompt as the log and a turn are compared: harness
// blocks stripped, secrets masked, cut as the log cuts it, white space
// collapsed.
func promptKey(p string) string {
	p, _ = redact.Redact(harnesstext.StripAll(p))
	return strings.Join(strings.Fields(clipBytes(p, store.MaxRecallPrompt)), " ")
}

// codeShape is what makes a load-bearing token specific enough to count
// as used when a turn writes it: a path or file name's separator, an
// identifier's underscore or inner capital, a setting's "=", a flag's
// "--", a URL's ":", letters and digits mixed.
var codeShape = regexp.MustCompile(`[/_.=:]|--|[a-z][A-Z]|[A-Za-z][0-9]|[0-9][A-Za-z]`)

// minUsable is the shortest usable token, in bytes.
const minUsable = 4

// UsableTokens returns the load-bearing tokens of a memory's text
// (memory.LoadBearing) that can show the memory was used: at least
// minUsable bytes with a letter and a code shape (a path, a file name, an
// identifier, a setting, a flag, a URL). Words, names written as words
// and bare numbers never count: a turn writes them for its own reasons.
func UsableTokens(text string) []string {
	var out []string
	for tok := range memory.LoadBearing(text) {
		tok = strings.TrimRight(tok, ".,;:")
		if len(tok) < minUsable || !strings.ContainsFunc(tok, isLetter) || !codeShape.MatchString(tok) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

// isLetter reports whether r is an ASCII letter.
func isLetter(r rune) bool { return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') }

// usedIn reports whether a step of steps wrote one of toks that none of
// user holds and no result read up to that step showed.
func usedIn(toks []string, user []string, steps []TurnStep) bool {
	for _, tok := range toks {
		if holdsAny(user, tok) {
			continue
		}
		for i, st := range steps {
			if holdsAny(st.Wrote, tok) {
				shown := false
				for _, prev := range steps[:i+1] {
					shown = shown || holdsAny(prev.Read, tok)
				}
				if !shown {
					return true
				}
				break // the turn learnt it from a result
			}
		}
	}
	return false
}

// holdsAny reports whether one of texts holds tok (memory.HoldsToken).
func holdsAny(texts []string, tok string) bool {
	for _, t := range texts {
		if memory.HoldsToken(t, tok) {
			return true
		}
	}
	return false
}
