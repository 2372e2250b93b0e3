package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
)

// The headless hold. A headless session (claude -p, the Agent SDK, codex
// exec) forms memories only once it has ingest.headless_min_user_turns user
// turns, and then from all its turns (the pipeline's headless stage). Until
// then its turns that pass the source stage are held: neither stored nor
// rejected, kept on disk under HeadlessHoldDir (secrets masked, as the
// stages saw them) so a restart loses none. They are decided:
//
//   - when the session reaches the count (claude -p --continue, codex exec
//     resume): the held turns run through the pipeline in order, then the
//     new one;
//   - when the session ends under the count: no turn of it for
//     ingest.headless_idle (30 minutes). The held turns are then rejected
//     with the headless reason and shown in the feed. Claude Code's
//     SessionEnd hook is no end here: a print-mode session ends after each
//     `claude -p`, and `--continue` resumes the same session id;
//   - when the hold is full (ingest.headless_hold_turns a session,
//     headless_hold_total in all): the oldest held turn is rejected, with
//     its reason, and counted (holdStats.Dropped).
//
// Decided turns appear in the feed like any other; a held turn appears
// when it is decided.

// HeadlessHoldDir, in the data dir, holds the held turns: one JSON Lines
// file per session, named by a hash of the session id.
const HeadlessHoldDir = "headless"

// maxHoldLine bounds one line of a hold file (a turn is at most 1 MiB of
// text each way, plus 4 MiB of tool calls and results).
const maxHoldLine = 8 << 20

// heldTurn is one line of a hold file: one user turn.
type heldTurn struct {
	// Exchange stands for the turn (ingest.Turn.Exchange: the user's
	// words, the final answer, the session's labels); in files of older
	// versions it is the whole turn.
	Exchange memory.Exchange `json:"exchange"`
	// Exchanges are the turn's exchanges, secrets masked.
	Exchanges []memory.Exchange `json:"exchanges,omitempty"`
	HeldAt    time.Time         `json:"held_at"`
}

// turns returns the held turn as the pipeline takes it.
func (t heldTurn) turns() []ingest.Turn {
	if len(t.Exchanges) == 0 {
		return ingest.GroupTurns([]memory.Exchange{t.Exchange})
	}
	return ingest.GroupTurns(t.Exchanges)
}

// validHeld reports whether t is a held turn of a headless session (the
// session of first, when given).
func validHeld(t heldTurn, first *heldTurn) bool {
	if ingest.Validate(t.Exchange) != nil || t.Exchange.SessionID == "" || !t.Exchange.Headless ||
		(first != nil && t.Exchange.SessionID != first.Exchange.SessionID) {
		return false
	}
	for _, ex := range t.Exchanges {
		if ingest.Validate(ex) != nil || ex.SessionID != t.Exchange.SessionID {
			return false
		}
	}
	return true
}

// holdSession is the held turns of one session, oldest first.
type holdSession struct {
	id    string
	turns []heldTurn
	// last is when the session was last seen (a held turn came in).
	last time.Time
}

// holdStats counts what the hold did since the daemon started.
type holdStats struct {
	Held, Released, Expired, Dropped int
}

// headlessHold keeps the held turns of headless sessions. Its mutex is held
// while a headless exchange is processed, so a session's turns are decided
// in order.
type headlessHold struct {
	mu       sync.Mutex
	dir      string
	sessions map[string]*holdSession
	total    int
	stats    holdStats
}

// openHold reads the hold files left by an earlier run. A line it cannot
// read is skipped (and counted in the returned error, which the caller
// logs); the rest is kept.
func openHold(dataDir string) (*headlessHold, error) {
	h := &headlessHold{dir: filepath.Join(dataDir, HeadlessHoldDir), sessions: map[string]*holdSession{}}
	files, err := readSessionFiles(h.dir, "headless hold", parseHold, func(t heldTurn) string { return t.Exchange.SessionID })
	for id, turns := range files {
		s := &holdSession{id: id, turns: turns}
		for _, t := range turns {
			s.last = maxTime(s.last, t.HeldAt)
		}
		h.sessions[id] = s
		h.total += len(turns)
	}
	return h, err
}

// parseHold reads the lines of a hold file: valid turns of one session,
// and how many lines were not.
func parseHold(data []byte) (turns []heldTurn, bad int) {
	return parseSessionLines(data, validHeld)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// write saves a session's turns (or removes its file when none are left).
func (h *headlessHold) write(s *holdSession) error {
	path := filepath.Join(h.dir, holdFileName(s.id))
	if len(s.turns) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("headless hold: %w", err)
		}
		return nil
	}
	var buf bytes.Buffer
	for _, t := range s.turns {
		line, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("headless hold: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return fmt.Errorf("headless hold: %w", err)
	}
	if err := config.WriteFileAtomic(path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("headless hold: %w", err)
	}
	return nil
}

// process decides a captured exchange as a whole turn of its own.
func (d *Daemon) process(ctx context.Context, ex memory.Exchange) error {
	for _, t := range ingest.GroupTurns([]memory.Exchange{ex}) {
		if err := d.processTurn(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// processTurn runs one ended user turn of a live session (captured by the
// proxy or read from a session file) through the write pipeline with the
// headless hold, and records every decision it makes (the turn's, and
// those of held turns it releases or drops). The session has not ended: a
// headless session ends only by ingest.headless_idle (expireHold). First,
// the memories its prompt's recall gave that the turn used are reinforced
// (noteUse), whatever the pipeline then decides.
func (d *Daemon) processTurn(ctx context.Context, t ingest.Turn) error {
	d.noteUse(ctx, t)
	if !t.Headless || t.SessionID == "" {
		return d.decide(ctx, t, nil, ingest.SessionState{UserTurns: t.UserTurns})
	}
	h := d.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	cfg := d.cfg.Ingest
	s := h.sessions[t.SessionID]
	if s != nil && t.UserTurns >= cfg.HeadlessMinUserTurns {
		// The session reached the count: its held turns first, in order,
		// each knowing what the session said after it.
		if err := d.release(ctx, s, []ingest.Turn{t}, ingest.SessionState{UserTurns: t.UserTurns}, &h.stats.Released); err != nil {
			return err // kept on disk: tried again with the session's next turn
		}
		delete(h.sessions, t.SessionID)
	}
	t = redactTurn(t)
	dec, held, err := d.pipeline.ProcessTurn(ctx, t, nil, ingest.SessionState{})
	err = d.indexLag(err)
	if err == nil && dec.Stage == ingest.StageReplay {
		d.log.Debug("a captured turn decided already came again: skipped", "session", t.SessionID, "turn", t.Turn)
		return nil // counted and in the feed from its first run
	}
	if ctx.Err() == nil && !held {
		d.noteProcessed(dec, err)
	}
	if err != nil {
		return err
	}
	if !held {
		d.decisions.Add(dec, t.Exchange())
		return nil
	}
	if s == nil {
		s = &holdSession{id: t.SessionID}
		h.sessions[t.SessionID] = s
	}
	now := d.clock.Now().UTC()
	s.turns = append(s.turns, heldTurn{Exchange: t.Exchange(), Exchanges: t.Exchanges, HeldAt: now})
	s.last = now
	h.total++
	h.stats.Held++
	d.trimHold(s)
	if err := h.write(s); err != nil {
		d.log.Warn("headless hold not saved: its turns are lost at the next restart", "err", err)
	}
	return nil
}

// release decides the held turns of s in order, knowing st of the session
// and what it said after each (the rest of the hold, then after), counting
// each in *n; each decided turn leaves the hold (on disk too). Under h.mu.
func (d *Daemon) release(ctx context.Context, s *holdSession, after []ingest.Turn, st ingest.SessionState, n *int) error {
	h := d.hold
	for len(s.turns) > 0 {
		var rest []ingest.Turn
		for _, o := range s.turns[1:] {
			rest = append(rest, o.turns()...)
		}
		rest = append(rest, after...)
		for _, t := range s.turns[0].turns() {
			if err := d.decide(ctx, t, ingest.LaterTexts(rest, s.id), st); err != nil {
				return err
			}
		}
		s.turns = s.turns[1:]
		h.total--
		*n++
		if err := h.write(s); err != nil {
			d.log.Warn("headless hold not saved", "err", err)
		}
	}
	return nil
}

// decide runs t through the pipeline knowing what its session said later
// and st, and records the decision.
func (d *Daemon) decide(ctx context.Context, t ingest.Turn, later []ingest.LaterText, st ingest.SessionState) error {
	dec, held, err := d.pipeline.ProcessTurn(ctx, t, later, st)
	err = d.indexLag(err)
	if err == nil && dec.Stage == ingest.StageReplay {
		return nil // counted and in the feed from its first run
	}
	if ctx.Err() == nil {
		d.noteProcessed(dec, err)
	}
	if err != nil {
		return err
	}
	if held { // unreachable for a released turn: st says the session reached the count or ended
		return errors.New("headless hold: a released turn was held again")
	}
	d.decisions.Add(dec, t.Exchange())
	return nil
}

// redactTurn masks secrets in every text of a turn's exchanges, as they
// are kept on disk (the hold, the live turns).
func redactTurn(t ingest.Turn) ingest.Turn {
	exs := make([]memory.Exchange, len(t.Exchanges))
	for i, ex := range t.Exchanges {
		exs[i] = redactExchange(ex)
	}
	out := ingest.GroupTurns(exs)
	if len(out) != 1 {
		t.Exchanges = exs
		return t
	}
	return out[0]
}

// redactExchange masks secrets in the texts, answers, tool calls and
// results of ex.
func redactExchange(ex memory.Exchange) memory.Exchange {
	mask := func(s string) string {
		out, _ := redact.Redact(s)
		return out
	}
	ex.User, ex.Assistant, ex.Summary = mask(ex.User), mask(ex.Assistant), mask(ex.Summary)
	calls := make([]memory.ToolCall, len(ex.ToolCalls))
	for i, c := range ex.ToolCalls {
		c.Input = mask(c.Input)
		calls[i] = c
	}
	results := make([]memory.ToolResult, len(ex.ToolResults))
	for i, r := range ex.ToolResults {
		r.Content = mask(r.Content)
		results[i] = r
	}
	if len(ex.Answers) > 0 {
		answers := make([]memory.Answer, len(ex.Answers))
		for i, a := range ex.Answers {
			a.Question, a.Answer = mask(a.Question), mask(a.Answer)
			answers[i] = a
		}
		ex.Answers = answers
	}
	ex.ToolCalls, ex.ToolResults = calls, results
	if len(calls) == 0 {
		ex.ToolCalls = nil
	}
	if len(results) == 0 {
		ex.ToolResults = nil
	}
	return ex
}

// trimHold drops the oldest held turns, of s and then of every session,
// until the hold is within its bounds. Under h.mu.
func (d *Daemon) trimHold(s *holdSession) {
	h, cfg := d.hold, d.cfg.Ingest
	reason := ingest.HoldFullReason(cfg.HeadlessHoldTurns, cfg.HeadlessHoldTotal)
	drop := func(s *holdSession) {
		t := s.turns[0]
		s.turns = s.turns[1:]
		h.total--
		h.stats.Dropped++
		d.decisions.Add(d.pipeline.Reject(t.Exchange, ingest.StageHeadless, reason), t.Exchange)
		if len(s.turns) == 0 {
			delete(h.sessions, s.id)
		}
	}
	for len(s.turns) > cfg.HeadlessHoldTurns {
		drop(s)
	}
	for h.total > cfg.HeadlessHoldTotal {
		var oldest *holdSession
		for _, o := range h.sessions {
			if oldest == nil || o.turns[0].HeldAt.Before(oldest.turns[0].HeldAt) ||
				(o.turns[0].HeldAt.Equal(oldest.turns[0].HeldAt) && o.id < oldest.id) {
				oldest = o
			}
		}
		drop(oldest)
		if oldest != s {
			if err := h.write(oldest); err != nil {
				d.log.Warn("headless hold not saved", "err", err)
			}
		}
	}
}

// expireHold rejects the held turns of sessions quiet for
// ingest.headless_idle: they ended under the count.
func (d *Daemon) expireHold(ctx context.Context) error {
	h := d.hold
	h.mu.Lock()
	defer h.mu.Unlock()
	idle := time.Duration(d.cfg.Ingest.HeadlessIdle)
	now := d.clock.Now()
	ids := make([]string, 0, len(h.sessions))
	for id, s := range h.sessions {
		if now.Sub(s.last) >= idle {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := h.sessions[id]
		turns := 0
		for _, t := range s.turns {
			turns = max(turns, t.Exchange.UserTurns)
		}
		if err := d.release(ctx, s, nil, ingest.SessionState{UserTurns: turns, Ended: true}, &h.stats.Expired); err != nil {
			return err
		}
		delete(h.sessions, id)
		if err := h.write(s); err != nil {
			return err
		}
	}
	return nil
}

// holdCheck is how often the daemon looks for ended headless sessions: a
// fraction of headless_idle, at most a minute.
func holdCheck(idle time.Duration) time.Duration {
	return min(max(idle/4, 10*time.Millisecond), time.Minute)
}

// runHold decides the held turns of ended sessions until ctx ends.
func (d *Daemon) runHold(ctx context.Context) {
	tick := time.NewTicker(holdCheck(time.Duration(d.cfg.Ingest.HeadlessIdle)))
	defer tick.Stop()
	for {
		if err := d.expireHold(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("could not decide the held turns of ended headless sessions; trying again", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// holdState reports the hold's counters and how many turns it holds.
func (d *Daemon) holdState() (holdStats, int) {
	d.hold.mu.Lock()
	defer d.hold.mu.Unlock()
	return d.hold.stats, d.hold.total
}
