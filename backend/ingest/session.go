package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Corrections across turns. A turn distilled in batch (memtray ingest, an
// ended session) knows what its session said later (ProcessTurn's later)
// and drops a statement a later turn corrects. A turn captured live is
// decided before its session's later turns exist, so the pipeline
// remembers, per session, what each recent turn stored (the memory ids
// and their statements' subjects), and when a later turn of the same
// session says something with a revision cue about one of them (the test
// Distill applies to later texts: dropRevised, positions approximated),
// that memory is revised:
//
//   - superseded by the revising statement when the turn kept that
//     statement as a memory of its own (the old one stays in the store as
//     history, hidden from recall, as any superseded memory);
//   - otherwise moved to the trash with the reason (restorable from it).
//
// Either way the turn's Decision lists the revised memory as a candidate
// of origin OriginEarlier with the reason, so the feed shows it. Only
// memories the earlier turn created are remembered: one it merely
// reinforced (a duplicate of an older memory) is left alone.

// OriginEarlier is the Origin of a Decision's candidate that stands for a
// memory an earlier turn of the session stored and this turn revised.
const OriginEarlier = "earlier-turn"

// Bounds of the per-session memory of stored statements: the sessions
// remembered (least recently seen forgotten first) and the statements per
// session (oldest forgotten first).
const (
	maxRecentSessions   = 512
	maxRecentStatements = 128
)

// storedStatement is a memory a turn of a session stored.
type storedStatement struct {
	id      string
	text    string
	turn    int
	subject map[string]bool
	// pos is where the statement was said, counted in sentences from the
	// session's first remembered turn (as Distill counts positions).
	pos int
}

// recentSession is what the recent turns of one session stored.
type recentSession struct {
	stmts []storedStatement
	seen  uint64 // recentTurns.tick when last used
	// next is the position the session's next turn begins at.
	next int
}

// recentTurns is the pipeline's bounded LRU of sessions and what their
// recent turns stored. The zero value is ready to use.
type recentTurns struct {
	mu       sync.Mutex
	tick     uint64
	sessions map[string]*recentSession
}

// statements returns a copy of what the session's recent turns stored,
// and the position the next turn begins at.
func (r *recentTurns) statements(session string) ([]storedStatement, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[session]
	if s == nil {
		return nil, 0
	}
	r.tick++
	s.seen = r.tick
	return append([]storedStatement(nil), s.stmts...), s.next
}

// advance moves a remembered session's next turn n positions on.
func (r *recentTurns) advance(session string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sessions[session]; s != nil {
		s.next += n
	}
}

// forget drops the statements with the given memory ids of a session.
func (r *recentTurns) forget(session string, ids map[string]bool) {
	if len(ids) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.sessions[session]; s != nil {
		out := s.stmts[:0]
		for _, st := range s.stmts {
			if !ids[st.id] {
				out = append(out, st)
			}
		}
		s.stmts = out
	}
}

// add records statements a turn of the session stored.
func (r *recentTurns) add(session string, stmts []storedStatement) {
	if len(stmts) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions == nil {
		r.sessions = map[string]*recentSession{}
	}
	s := r.sessions[session]
	if s == nil {
		if len(r.sessions) >= maxRecentSessions {
			oldest, at := "", uint64(0)
			for id, o := range r.sessions {
				if oldest == "" || o.seen < at {
					oldest, at = id, o.seen
				}
			}
			delete(r.sessions, oldest)
		}
		s = &recentSession{}
		r.sessions[session] = s
	}
	r.tick++
	s.seen = r.tick
	s.stmts = append(s.stmts, stmts...)
	if over := len(s.stmts) - maxRecentStatements; over > 0 {
		s.stmts = append([]storedStatement(nil), s.stmts[over:]...)
	}
}

// revisingSentences returns the sentences of a turn (the user's and the
// model's) that carry a revision cue, and those that undo something
// (undoOf, every one a later turn's to the turns before it), each with
// its position in the turn counted as Distill counts the sentences of
// later texts.
func revisingSentences(t Turn) (revs []posSentence, undos []undo, n int) {
	for _, text := range append(append([]string(nil), t.User...), stepTexts(t)...) {
		for _, s := range sentences(text) {
			if st := strings.TrimSpace(s.text); st != "" {
				ps := posSentence{text: st, pos: n}
				if revisionCue.MatchString(lower(st)) {
					revs = append(revs, ps)
				}
				if u, ok := undoOf(ps, true); ok && !evidenceOff["undone"] {
					undos = append(undos, u)
				}
			}
			n++
		}
	}
	return revs, undos, n
}

// turnLength is how many positions Distill counts in a turn: one for
// each statement of the user, each sentence of the model and each step.
func turnLength(t Turn) int {
	n := 0
	for _, u := range t.User {
		n += len(userCandidates(u))
	}
	for _, s := range t.Steps {
		if !s.Error && strings.TrimSpace(s.Text) != "" {
			n += len(sentences(s.Text)) + 1
		}
	}
	return n
}

// errSkipRevision aborts a store update whose memory changed meanwhile.
var errSkipRevision = errors.New("memory changed meanwhile")

// reviseEarlier runs once ProcessTurn has decided a turn (deferred, with
// the Decision and error it returns): it revises what earlier turns of the
// session stored and this turn corrects, then remembers what this turn
// stored. cands are the turn's candidates, listed in *dec from base on. A
// turn of an ended session (a complete transcript: the caller gave
// ProcessTurn every later text) needs neither.
func (p *Pipeline) reviseEarlier(ctx context.Context, t Turn, st SessionState, cands []Candidate, base int, dec *memory.Decision, errp *error) {
	if *errp != nil || st.Ended || t.SessionID == "" || base+len(cands) > len(dec.Candidates) {
		return
	}
	earlier, start := p.recent.statements(t.SessionID)
	if err := p.revise(ctx, t, earlier, start, cands, base, dec); err != nil {
		*errp = fmt.Errorf("ingest: revise earlier turns of session %s: %w", t.SessionID, err)
		return
	}
	if err := p.rememberTurn(ctx, t, start, cands, base, dec); err != nil {
		*errp = fmt.Errorf("ingest: remember the memories of turn %d of session %s: %w", t.Turn, t.SessionID, err)
		return
	}
	p.recent.advance(t.SessionID, turnLength(t))
}

// revise supersedes or trashes the memories of earlier turns that a
// sentence of this turn corrects or undoes.
// The revision test is dropRevised's: the sentence shares two subject
// tokens with the memory, or one long one and is said at most
// revisionReach positions after it. The undo test is dropUndone's
// (undoneIn): the memory is revised when what the turn undoes leaves
// nothing worth keeping of it (cutLeaves), as batch ingest drops it.
func (p *Pipeline) revise(ctx context.Context, t Turn, earlier []storedStatement, start int, cands []Candidate, base int, dec *memory.Decision) error {
	if len(earlier) == 0 {
		return nil
	}
	revs, undos, _ := revisingSentences(t)
	if len(revs) == 0 && len(undos) == 0 {
		return nil
	}
	done := map[string]bool{}
	n := 0
	apply := func(e storedStatement, s string, subj map[string]bool) error {
		done[e.id] = true
		cv, ok, err := p.reviseOne(ctx, t, e, s, p.revisingMemory(s, subj, cands, base, dec, e.id))
		if err != nil {
			return err
		}
		if ok {
			dec.Candidates = append(dec.Candidates, cv)
			n++
		}
		return nil
	}
	for _, rs := range revs {
		s, subj := rs.text, subjectOf(rs.text)
		for _, e := range earlier {
			if done[e.id] || strings.Contains(s, e.text) || strings.Contains(e.text, s) {
				continue
			}
			if k, long := overlapLong(e.subject, subj); k < 2 && (!long || start+rs.pos-e.pos > revisionReach) {
				continue
			}
			if err := apply(e, s, subj); err != nil {
				return err
			}
		}
	}
	for i := range undos {
		undos[i].pos += start
	}
	for _, e := range earlier {
		if done[e.id] || len(undos) == 0 {
			continue
		}
		cut, why := undoneIn(e.text, stepSentences(e.text), e.pos, undos)
		if len(cut) == 0 {
			continue
		}
		if _, left := cutLeaves(e.text, cut); left {
			continue // batch keeps the rest of it; left as it is
		}
		if err := apply(e, why, subjectOf(why)); err != nil {
			return err
		}
	}
	p.recent.forget(t.SessionID, done)
	if n > 0 {
		dec.Reason += fmt.Sprintf("; revised %d memories of earlier turns", n)
	}
	return nil
}

// revisingMemory returns the memory this turn stored the revising
// sentence s as ("" when the turn did not keep it).
func (p *Pipeline) revisingMemory(s string, subj map[string]bool, cands []Candidate, base int, dec *memory.Decision, old string) string {
	core := strings.TrimSpace(strings.TrimLeft(ackLead.ReplaceAllString(s, ""), " ,.:;!—–-"))
	best, bestN := "", 1
	for i, c := range cands {
		cv := dec.Candidates[base+i]
		if !cv.Kept || cv.MemoryID == "" || cv.MemoryID == old {
			continue
		}
		if strings.Contains(c.Text, core) {
			return cv.MemoryID
		}
		if k := overlap(c.subject, subj); k > bestN {
			best, bestN = cv.MemoryID, k
		}
	}
	return best
}

// reviseOne revises one earlier memory e that sentence s corrects:
// superseded by next when the turn stored s as next, trashed otherwise. ok
// is false when the memory is gone or superseded already.
func (p *Pipeline) reviseOne(ctx context.Context, t Turn, e storedStatement, s, next string) (cv memory.CandidateVerdict, ok bool, err error) {
	cv = memory.CandidateVerdict{Text: preview(e.text), Origin: OriginEarlier, Class: ClassFinding, MemoryID: e.id}
	why := fmt.Sprintf("revised in turn %d: %s", t.Turn, preview(s))
	if next != "" {
		now := p.clock.Now()
		_, err := p.store.Update(ctx, e.id, func(m *memory.Memory) error {
			if m.SupersededBy != "" {
				return errSkipRevision
			}
			m.SupersededBy, m.UpdatedAt = next, now
			return nil
		})
		switch {
		case errors.Is(err, errSkipRevision), errors.Is(err, memory.ErrNotFound):
			return cv, false, nil
		case err != nil:
			return cv, false, fmt.Errorf("mark %s superseded: %w", e.id, err)
		}
		_, err = p.store.Update(ctx, next, func(m *memory.Memory) error {
			if m.Supersedes != "" {
				return errSkipRevision
			}
			m.Supersedes = e.id
			return nil
		})
		if err != nil && !errors.Is(err, errSkipRevision) && !errors.Is(err, memory.ErrNotFound) {
			return cv, false, fmt.Errorf("link %s to the memory it supersedes: %w", next, err)
		}
		cv.Reason = why + "; superseded by " + next
		return cv, true, nil
	}
	err = p.store.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: e.id,
		Reason: fmt.Sprintf("revised in a later turn of session %s: %s", t.SessionID, preview(s))}}})
	if err != nil {
		if m, gerr := p.store.GetMany(ctx, []string{e.id}); gerr == nil && len(m) == 0 {
			return cv, false, nil // deleted meanwhile
		}
		return cv, false, fmt.Errorf("trash %s: %w", e.id, err)
	}
	cv.Reason = why + "; moved to the trash (restore it from there)"
	return cv, true, nil
}

// rememberTurn records the memories this turn created (not those it only
// reinforced), for later turns of the session to revise.
func (p *Pipeline) rememberTurn(ctx context.Context, t Turn, start int, cands []Candidate, base int, dec *memory.Decision) error {
	var ids []string
	pos := map[string]int{}
	for i, c := range cands {
		cv := dec.Candidates[base+i]
		if _, dup := pos[cv.MemoryID]; cv.Kept && cv.MemoryID != "" && c.Origin != OriginUser && !dup {
			ids = append(ids, cv.MemoryID)
			pos[cv.MemoryID] = start + c.pos
		}
	}
	if len(ids) == 0 {
		return nil
	}
	ms, err := p.store.GetMany(ctx, ids)
	if err != nil {
		return err
	}
	var out []storedStatement
	for _, id := range ids {
		m, ok := ms[id]
		if !ok || m.ReinforcedCount > 0 || m.Superseded() {
			continue
		}
		out = append(out, storedStatement{id: id, text: m.Text, turn: t.Turn, subject: subjectOf(m.Text), pos: pos[id]})
	}
	p.recent.add(t.SessionID, out)
	return nil
}
