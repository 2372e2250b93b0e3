package ingest

import (
	"context"
	"fmt"

	"github.com/memtray/memtray/backend/memory"
)

// Headless sessions (claude -p, the Agent SDK, codex exec) form memories
// only when they reach HeadlessMinUserTurns user turns, and then from every
// turn, the first ones included: a session that grows later (claude -p
// --continue, codex exec resume) loses nothing. Whether a session reaches
// the count is known only later, so the pipeline cannot decide a turn of a
// younger session on its own. ProcessSession lets the caller say what it
// knows of the session (SessionState); a turn of a session still under the
// count that has not ended is held: the stages stop at the headless stage,
// nothing is stored or rejected, and the caller keeps the turn to run it
// again once the session reaches the count or ends (package daemon holds
// them on disk). Process treats every exchange as all there is of its
// session: such a turn is rejected at once.

// SessionState is what the caller knows of an exchange's session beyond the
// exchange itself.
type SessionState struct {
	// UserTurns is the most user turns the session is known to have
	// reached; the exchange's own count is used when it is larger.
	UserTurns int
	// Ended says the session is over (a complete transcript, its idle time
	// passed): a headless turn under the count is rejected, not held.
	Ended bool
	// Revisions, when set, is what the caller's batch request read of
	// its later texts' revising sentences, shared by its turns (nil: each
	// turn reads them anew). It changes nothing a turn keeps.
	Revisions *Revisions
}

// ProcessSession runs ex through the pipeline like Process, knowing st of
// its session. When the headless stage holds the exchange (a headless
// session, under the count, not ended, with a session id) held is true,
// dec carries the stages run so far and the hold's reason, nothing is
// stored, and kept is the exchange as the stages saw it — injected blocks
// stripped and secrets masked, in the texts and in tool calls and results —
// for the caller to keep and run again.
func (p *Pipeline) ProcessSession(ctx context.Context, ex memory.Exchange, st SessionState) (dec memory.Decision, kept memory.Exchange, held bool, err error) {
	if err := Validate(ex); err != nil {
		return memory.Decision{}, memory.Exchange{}, false, err
	}
	if st.UserTurns < 0 {
		return memory.Decision{}, memory.Exchange{}, false, &memory.ValidationError{Problems: []string{"session user turns must not be negative"}}
	}
	r := p.newRun(ex, false, "")
	r.session = st
	if err := p.runStages(ctx, r); err != nil {
		return r.dec, memory.Exchange{}, false, err
	}
	if !r.held {
		return r.dec, memory.Exchange{}, false, nil
	}
	kept = ex
	kept.User, kept.Assistant = r.user, r.reply
	kept.ToolCalls, kept.ToolResults = nil, nil
	for _, c := range ex.ToolCalls {
		c.Input, _ = redactText(c.Input)
		kept.ToolCalls = append(kept.ToolCalls, c)
	}
	for _, t := range ex.ToolResults {
		t.Content, _ = redactText(t.Content)
		kept.ToolResults = append(kept.ToolResults, t)
	}
	return r.dec, kept, true, nil
}

// Reject is the Decision of an exchange rejected at stage without running
// the pipeline: a held turn dropped to keep the hold within its bounds.
func (p *Pipeline) Reject(ex memory.Exchange, stage, reason string) memory.Decision {
	r := p.newRun(ex, false, "")
	r.reject(stage, reason)
	r.dec.Preview = preview(ex.Assistant)
	return r.dec
}

// hold stops the stages on a headless exchange whose session may still
// reach the count.
func (r *run) hold(reason string) {
	r.dec.Stage, r.dec.Reason, r.held, r.decided = StageHeadless, reason, true, true
}

// HoldFullReason is the reason a held turn dropped to keep the hold within
// its bounds is rejected with.
func HoldFullReason(perSession, total int) string {
	return fmt.Sprintf("headless hold full (at most %d turns a session, %d in all): the oldest held turn was dropped undecided", perSession, total)
}
