package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Corrections across turns. A turn distilled in batch (memtray ingest, an
// ended session) knows what its session said later (ProcessTurn's later)
// and drops a statement a later turn corrects or undoes, before its
// statements are joined into memories. A turn captured live is decided
// before its session's later turns exist, so the pipeline keeps, per
// session, its recent turns (as Distill saw them) and what each one
// stored; when a later turn of the session that revises or undoes
// something is decided, the kept earlier turns (the newest first, within
// maxRedistillBytes) are distilled again knowing what the session said
// after them, as batch ingest distils them:
//
//   - a memory the earlier turn created from a statement the new
//     distillation no longer keeps (revised, undone, unsettled later) is
//     revised: superseded by the revising statement when the new turn
//     kept that statement as a memory of its own (the old one stays in the
//     store as history, hidden from recall, as any superseded memory);
//     otherwise moved to the trash with the reason (restorable from it);
//   - a statement the new distillation keeps and the earlier one did not
//     (a memory joined from several statements, one of them now revised:
//     the rest of it) is stored as batch ingest would have stored it.
//
// Either way the turn's Decision lists the revised memory as a candidate
// of origin OriginEarlier with the reason, so the feed shows it. Only
// memories the earlier turn created are revised: one it merely reinforced
// (a duplicate of an older memory) is left alone. An earlier turn is kept
// while what its session said after it fits in LaterTexts' bound: beyond
// it, batch ingest does not read further either. Batch ingest keeps a
// session's recent turns too, for what a later turn restates (restatedturns.go).

// OriginEarlier is the Origin of a Decision's candidate that stands for a
// memory an earlier turn of the session stored and this turn revised.
const OriginEarlier = "earlier-turn"

// Bounds of the per-session memory of recent turns: the sessions
// remembered (least recently seen forgotten first) and the bytes kept in
// all (recentTurn.bytes: a turn's text and what it said, read for the held
// test; a session's oldest turns beyond maxLaterBytes of later text are
// forgotten as they stop mattering).
const (
	maxRecentSessions = 512
	maxRecentBytes    = 32 << 20
)

// recentTurn is an earlier turn of a live session.
type recentTurn struct {
	turn Turn // cleaned, as Distill saw it
	// kept are the texts its distillation kept, each with the memory it
	// created ("" when it created none: a duplicate, a gated statement).
	kept map[string]string
	// from holds each kept text's origin and class, for the restatement
	// test (supersedeRestated).
	from map[string]keptFrom
	// restated maps a memory it created to the memories of earlier turns
	// it superseded as restating them (supersedeRestated).
	restated map[string][]string
	// untested are the memories (by id, of this turn or an earlier one)
	// the restatement test has not weighed against the session's other
	// memories yet (supersedeRestated): those the turn created, those a
	// later distillation of it stored, those a revision of one of its
	// memories let stand again (unrestate).
	untested map[string]bool
	size     int // bytes of the texts LaterTexts reads of it
	// said is what the model said in it, block by block (saidBlocks): a
	// later turn's list line it holds is dropped (held.go). saidSize is
	// the bytes it takes (heldSize), counted toward maxRecentBytes.
	said     []heldText
	saidSize int
}

// setSaid sets what the model said in t, read for the held test, and the
// bytes it takes.
func (e *recentTurn) setSaid(t Turn) {
	e.said = saidBlocks(t)
	e.saidSize = heldSize(e.said)
}

// bytes returns about what the turn takes in memory, as maxRecentBytes
// counts it: its text (size: the slimmed turn is about what LaterTexts
// reads of it), what it said (saidSize, about three times its text: a
// subject map per block) and the copy of what the turns before it said it
// was distilled with (turn.held, whose texts and maps are counted with
// the turns that said them).
func (e *recentTurn) bytes() int {
	return e.size + e.saidSize + len(e.turn.held)*heldTextBytes
}

// keptFrom is where a kept statement of a recent turn came from, and its
// subject (Candidate.subject, read only); the restatement test keeps its
// load-bearing tokens (namedTokens) and lowercased text here once it has
// read them (read only too).
type keptFrom struct {
	origin, class string
	subject       map[string]bool
	tokens        []string
	lowered       string
}

// recentSession is what the recent turns of one session stored.
type recentSession struct {
	turns []recentTurn
	size  int    // the bytes of its turns (recentTurn.bytes)
	seen  uint64 // recentTurns.tick when last used
}

// recentTurns is the pipeline's bounded LRU of sessions and their recent
// turns. The zero value is ready to use.
type recentTurns struct {
	mu       sync.Mutex
	tick     uint64
	size     int // the bytes of all its sessions, at most maxRecentBytes but for the one in use
	sessions map[string]*recentSession
}

// turns returns a copy of the session's recent turns.
func (r *recentTurns) turns(session string) []recentTurn {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[session]
	if s == nil {
		return nil
	}
	r.tick++
	s.seen = r.tick
	out := make([]recentTurn, len(s.turns))
	for i, t := range s.turns {
		t.kept, t.from, t.restated, t.untested = maps.Clone(t.kept), maps.Clone(t.from), maps.Clone(t.restated), maps.Clone(t.untested)
		out[i] = t
	}
	return out
}

// set replaces the session's recent turns with turns (its earlier ones as
// revised, then the new one), forgetting the oldest ones no later text
// can reach any more, and the least recently seen sessions beyond the
// bounds.
func (r *recentTurns) set(session string, turns []recentTurn) {
	keep := len(turns) - 1 // the oldest turn kept; the newest always is
	for i, after := len(turns)-1, 0; i > 0; i-- {
		after += turns[i].size // what the session said after turns[i-1]
		if after > maxLaterBytes {
			break
		}
		keep = i - 1
	}
	turns = turns[max(keep, 0):]
	size := 0
	for i := range turns {
		size += turns[i].bytes()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sessions == nil {
		r.sessions = map[string]*recentSession{}
	}
	s := r.sessions[session]
	if s == nil {
		s = &recentSession{}
		r.sessions[session] = s
	}
	r.size += size - s.size
	s.turns, s.size = turns, size
	r.tick++
	s.seen = r.tick
	for len(r.sessions) > maxRecentSessions || (r.size > maxRecentBytes && len(r.sessions) > 1) {
		oldest, at := "", uint64(0)
		for id, o := range r.sessions {
			if id != session && (oldest == "" || o.seen < at) {
				oldest, at = id, o.seen
			}
		}
		r.size -= r.sessions[oldest].size
		delete(r.sessions, oldest)
	}
}

// slim returns t without what distilling it again does not read: tool
// calls' inputs and tool results (a file written, a command's output),
// the bulk of a turn; edits of instruction files (instr.go) and their
// results stay.
func slim(t Turn) Turn {
	steps := make([]Step, len(t.Steps))
	for i, s := range t.Steps {
		s.Calls, s.Results = slimCalls(s.Calls), editResults(s.Results)
		steps[i] = s
	}
	exs := make([]memory.Exchange, len(t.Exchanges))
	for i, ex := range t.Exchanges {
		ex.ToolCalls, ex.ToolResults, ex.Usage = nil, nil, nil
		exs[i] = ex
	}
	t.Steps, t.Exchanges = steps, exs
	return t
}

// slimCalls returns the calls of a step a slimmed turn keeps, in order:
// those instrCalls keeps and those that move or delete a file or write
// one (movedCalls).
func slimCalls(calls []memory.ToolCall) []memory.ToolCall {
	var out []memory.ToolCall
	for _, c := range calls {
		if k := instrCalls([]memory.ToolCall{c}); len(k) > 0 {
			out = append(out, k...)
			continue
		}
		out = append(out, movedCalls([]memory.ToolCall{c})...)
	}
	return out
}

// maxRedistillBytes bounds the text one new turn has distilled again:
// each earlier turn costs its own text and what followed it. Newest turns
// first (the cheapest, and where corrections mostly land); a correction of
// a turn further back than the bound reaches is not applied live.
const maxRedistillBytes = 1 << 20

// redistillFrom returns the first of the earlier turns a new turn of n
// bytes has distilled again, within maxRedistillBytes.
func redistillFrom(earlier []recentTurn, n int) int {
	after, cost := n, 0
	i := len(earlier)
	for i > 0 {
		c := earlier[i-1].size + after
		if cost+c > maxRedistillBytes {
			break
		}
		cost += c
		after += earlier[i-1].size
		i--
	}
	return i
}

// laterSize is how many bytes LaterTexts reads of t.
func laterSize(t Turn) int {
	n := 0
	for _, s := range laterOf(t) {
		n += len(s)
	}
	return n
}

// revisingSentences returns the sentences of a turn (the user's and the
// model's) that carry a revision cue, and those that undo something
// (undoOf, every one a later turn's to the turns before it), each with
// its position in the turn counted as Distill counts the sentences of
// later texts.
func revisingSentences(t Turn) (revs []posSentence, undos []undo, n int) {
	for _, text := range append(userTexts(t), stepTexts(t)...) {
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

// errSkipRevision aborts a store update whose memory changed meanwhile.
var errSkipRevision = errors.New("memory changed meanwhile")

// reviseEarlier runs once ProcessTurn has decided a turn (deferred, with
// the Decision and error it returns): it distils the session's recent
// turns again knowing this one, revises what they stored that is no
// longer kept and stores what is kept now, then remembers this turn.
// cands are the turn's candidates, listed in *dec from base on; revises
// says whether its tool calls revise what earlier turns said (an edit
// removes a line of an instruction file, a call moves or deletes a file:
// read when Distill parsed them). A turn of an ended session (a complete
// transcript: the caller gave ProcessTurn every later text) needs no
// distilling again; what it restates of the session's earlier turns is
// superseded either way (supersedeRestated).
func (p *Pipeline) reviseEarlier(ctx context.Context, t Turn, st SessionState, cands []Candidate, revises bool, base int, dec *memory.Decision, errp *error) {
	if *errp != nil || t.SessionID == "" || base+len(cands) > len(dec.Candidates) {
		return
	}
	earlier := p.recent.turns(t.SessionID)
	n := 0
	// Only a sentence that revises or undoes something changes what an
	// earlier turn keeps (dropRevised, dropUndone); a turn of an ended
	// session was distilled knowing its later turns already.
	revs, undos, _ := revisingSentences(t)
	from := len(earlier)
	if !st.Ended && (len(revs) > 0 || len(undos) > 0 || revises) {
		from = redistillFrom(earlier, laterSize(t))
	}
	for i := from; i < len(earlier); i++ {
		k, err := p.redistill(ctx, t, &earlier[i], earlier[i+1:], cands, base, dec)
		if err != nil {
			*errp = fmt.Errorf("ingest: revise earlier turns of session %s: %w", t.SessionID, err)
			return
		}
		n += k
	}
	if n > 0 {
		dec.Reason += fmt.Sprintf("; revised %d memories of earlier turns", n)
	}
	rt, err := p.rememberTurn(ctx, t, cands, base, dec)
	if err != nil {
		*errp = fmt.Errorf("ingest: remember the memories of turn %d of session %s: %w", t.Turn, t.SessionID, err)
		return
	}
	turns := append(earlier, rt)
	if err := p.supersedeRestated(ctx, t, turns, dec); err != nil {
		*errp = fmt.Errorf("ingest: supersede what turn %d of session %s restates: %w", t.Turn, t.SessionID, err)
		return
	}
	p.recent.set(t.SessionID, turns)
}

// redistill distils the earlier turn e again knowing what its session
// said after it (the turns between, then t), revises the memories it
// created from statements no longer kept, and stores the statements kept
// now and not before. It returns how many memories it revised.
func (p *Pipeline) redistill(ctx context.Context, t Turn, e *recentTurn, between []recentTurn, cands []Candidate, base int, dec *memory.Decision) (int, error) {
	after := make([]Turn, 0, len(between)+1)
	for _, b := range between {
		after = append(after, b.turn)
	}
	return p.settle(ctx, t, e, between, Distill(e.turn, LaterTexts(append(after, t), t.SessionID)), cands, base, dec)
}

// settle brings what the earlier turn e stored in line with now, its new
// distillation: the memories it created from statements no longer kept
// are revised (by t's candidates cands, listed in *dec from base on),
// the statements kept now and not before are stored. *dec lists each
// statement stored now and, after them, the pieces cut out of it
// (cutVerdicts), as a turn's own decision lists its statements and their
// cuts. A memory revised while a later memory supersedes it as its
// restatement stays revised: the turns after e (between) forget it as
// restated, so that a revision of its restater does not let it stand
// again (unrestate). It returns how many memories it revised.
func (p *Pipeline) settle(ctx context.Context, t Turn, e *recentTurn, between []recentTurn, now []Candidate, cands []Candidate, base int, dec *memory.Decision) (int, error) {
	kept := map[string]bool{}
	var fresh []Candidate
	for _, c := range now {
		if !c.Keep {
			continue
		}
		kept[c.Text] = true
		if _, ok := e.kept[c.Text]; !ok {
			fresh = append(fresh, c)
		}
	}
	texts := slices.Sorted(maps.Keys(e.kept))
	n := 0
	for _, text := range texts {
		id := e.kept[text]
		if kept[text] {
			continue
		}
		delete(e.kept, text)
		if id == "" {
			continue
		}
		why := revisedWhy(now, text)
		cv, ok, err := p.reviseOne(ctx, t, storedStatement{id: id, text: text}, why, p.revisingMemory(why, subjectOf(why), cands, base, dec, id))
		if err != nil {
			return n, err
		}
		if !ok {
			forgetRestated(id, between)
			continue
		}
		dec.Candidates = append(dec.Candidates, cv)
		n++
		if err := p.unrestate(ctx, id, e); err != nil {
			return n, err
		}
	}
	if tj, ok := p.judge.(memory.TurnJudge); len(fresh) == 0 || (ok && tj != nil) {
		// With a judge, the judge chose the turn's memories, not the
		// distiller: what the distiller keeps now is not stored.
		return n, nil
	}
	ids, err := p.placeReformed(ctx, e.turn, fresh)
	if err != nil {
		return n, err
	}
	var cut []memory.CandidateVerdict // the pieces cut out of what is kept now, after it as in a turn's own decision
	for i, c := range fresh {
		e.kept[c.Text] = ids[i]
		e.from[c.Text] = keptFrom{origin: c.Origin, class: c.Class, subject: c.subject}
		if ids[i] != "" {
			e.markUntested(ids[i])
			dec.Candidates = append(dec.Candidates, memory.CandidateVerdict{Text: preview(c.Text), Origin: OriginEarlier, Class: c.Class, Kept: true, Kind: c.Kind, MemoryID: ids[i],
				Reason: fmt.Sprintf("turn %d distilled again knowing turn %d: kept now", e.turn.Turn, t.Turn)})
			for _, cv := range cutVerdicts([]Candidate{c}) {
				cv.Origin = OriginEarlier
				cut = append(cut, cv)
			}
		}
	}
	dec.Candidates = append(dec.Candidates, cut...)
	return n, nil
}

// continueTurn takes a turn that goes on the session's newest turn (its
// first response answers tool results or a background task's
// notification, not the user: the session file was read after the turn's
// Stop, then the agent carried on) as batch ingest reads it: part of that
// turn. The turn, extended, is distilled again and what it stored settled
// (settle); the session's earlier turns are revised knowing the rest of
// it. ok is false when the session has no turn to continue (it is then
// decided as a turn of its own).
func (p *Pipeline) continueTurn(ctx context.Context, r *run, t Turn) (ok bool, err error) {
	earlier := p.recent.turns(t.SessionID)
	if len(earlier) == 0 {
		return false, nil
	}
	last := &earlier[len(earlier)-1]
	first := t.Exchanges[0]
	if slices.ContainsFunc(last.turn.Exchanges, func(ex memory.Exchange) bool {
		return ex.Turn == first.Turn && ex.Assistant == first.Assistant && ex.EndedAt.Equal(first.EndedAt)
	}) {
		r.dec.Verdict, r.dec.Stage, r.decided = memory.VerdictDuplicate, StageReplay, true
		r.dec.Reason = fmt.Sprintf("continues turn %d, which holds it already", last.turn.Turn)
		return true, nil
	}
	ext := last.turn
	ext.Steps = append(slices.Clip(ext.Steps), t.Steps...)
	ext.Exchanges = append(slices.Clip(ext.Exchanges), t.Exchanges...)
	ext.UserTurns = max(ext.UserTurns, t.UserTurns)
	ext.Headless = ext.Headless || t.Headless
	base := len(r.dec.Candidates)
	n := 0
	// The turn's tool calls, the continuation's with them, may revise what
	// the session's earlier turns said (a move, an edit removing an
	// instruction line), as reviseEarlier reads them: distill reports it.
	cands, revises := distill(ext, nil)
	revs, undos, _ := revisingSentences(t)
	from := len(earlier) - 1
	if len(revs) > 0 || len(undos) > 0 || revises {
		from = min(from, redistillFrom(earlier, laterSize(t)))
	}
	for i := from; i < len(earlier)-1; i++ {
		k, err := p.redistill(ctx, t, &earlier[i], earlier[i+1:], nil, base, &r.dec)
		if err != nil {
			return true, fmt.Errorf("ingest: revise earlier turns of session %s: %w", t.SessionID, err)
		}
		n += k
	}
	k, err := p.settle(ctx, t, last, nil, cands, nil, base, &r.dec)
	if err != nil {
		return true, fmt.Errorf("ingest: distil turn %d of session %s again with what followed it: %w", ext.Turn, t.SessionID, err)
	}
	n += k
	last.turn, last.size = slim(ext), laterSize(ext)
	last.setSaid(ext)
	if err := p.supersedeRestated(ctx, ext, earlier, &r.dec); err != nil {
		return true, fmt.Errorf("ingest: supersede what turn %d of session %s restates: %w", ext.Turn, t.SessionID, err)
	}
	p.recent.set(t.SessionID, earlier)
	var ids []string
	for _, c := range r.dec.Candidates[base:] {
		if c.Kept && c.MemoryID != "" {
			ids = append(ids, c.MemoryID)
		}
	}
	reason := fmt.Sprintf("continues turn %d: distilled again with it", ext.Turn)
	if n > 0 {
		reason += fmt.Sprintf("; revised %d memories of earlier turns", n)
	}
	if len(ids) == 0 {
		r.reject(StageDistill, reason+"; nothing new kept")
		return true, nil
	}
	r.dec.Verdict, r.dec.Stage, r.dec.Reason, r.decided = memory.VerdictStored, StageStore, reason+fmt.Sprintf("; %d memories kept now", len(ids)), true
	r.dec.MemoryIDs = ids
	return true, nil
}

// revisedWhy is why text, kept before, is not kept now: the reasons of the
// statements of it the new distillation dropped, and of the pieces of it
// that it cut out of a statement it kept the rest of (a sentence a later
// turn undid or corrected).
func revisedWhy(now []Candidate, text string) string {
	var why []string
	for _, c := range now {
		if !c.Keep && c.Reason != "" && strings.Contains(text, c.Text) {
			why = append(why, strings.TrimPrefix(c.Reason, "revised later: "))
		}
		for _, k := range c.cuts {
			if c.Keep && k.reason != "" && strings.Contains(text, k.text) {
				why = append(why, strings.TrimPrefix(k.reason, "revised later: "))
			}
		}
	}
	if len(why) == 0 {
		return "a later turn revised it"
	}
	return strings.Join(why, "; ")
}

// placeReformed stores the statements of an earlier turn that its new
// distillation keeps, as ProcessTurn stores a turn's (content gate,
// dedup), outside the turn's marks (the turn is decided). It returns the
// memory each created or joined ("" for one gated out).
func (p *Pipeline) placeReformed(ctx context.Context, e Turn, cands []Candidate) ([]string, error) {
	r := p.newRun(e.Exchange(), false, "")
	for i := range cands {
		cands[i].idx = len(r.dec.Candidates)
		c := cands[i]
		r.dec.Candidates = append(r.dec.Candidates, memory.CandidateVerdict{Text: preview(c.Text), Origin: c.Origin, Class: c.Class, Kept: true, Kind: c.Kind})
	}
	if err := p.storeCandidates(ctx, r, cands); err != nil {
		return nil, err
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = r.dec.Candidates[c.idx].MemoryID
	}
	return ids, nil
}

// storedStatement is a memory an earlier turn of a session created.
type storedStatement struct {
	id   string
	text string
}

// revisingMemory returns the memory this turn stored the revising
// sentence s as ("" when the turn did not keep it).
func (p *Pipeline) revisingMemory(s string, subj map[string]bool, cands []Candidate, base int, dec *memory.Decision, old string) string {
	core := stripAck(s)
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
		ok, err := p.supersede(ctx, e.id, next)
		if !ok || err != nil {
			return cv, false, err
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

// supersede marks the memory old superseded by next (kept in the store as
// history, hidden from recall) and links next to it. ok is false when old
// is gone or superseded already.
func (p *Pipeline) supersede(ctx context.Context, old, next string) (ok bool, err error) {
	now := p.clock.Now()
	_, err = p.store.Update(ctx, old, func(m *memory.Memory) error {
		if m.SupersededBy != "" {
			return errSkipRevision
		}
		m.SupersededBy, m.UpdatedAt = next, now
		return nil
	})
	switch {
	case errors.Is(err, errSkipRevision), errors.Is(err, memory.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("mark %s superseded: %w", old, err)
	}
	_, err = p.store.Update(ctx, next, func(m *memory.Memory) error {
		if m.Supersedes != "" {
			return errSkipRevision
		}
		m.Supersedes = old
		return nil
	})
	if err != nil && !errors.Is(err, errSkipRevision) && !errors.Is(err, memory.ErrNotFound) {
		return true, fmt.Errorf("link %s to the memory it supersedes: %w", next, err)
	}
	return true, nil
}

// rememberTurn returns what this turn kept, with the memories it created
// (not those it only reinforced), for later turns of the session to
// revise: the user's statements too, whose form can depend on what the
// session says later (a statement of the user the model restated is
// dropped, and kept again when a later turn revises the restatement).
func (p *Pipeline) rememberTurn(ctx context.Context, t Turn, cands []Candidate, base int, dec *memory.Decision) (recentTurn, error) {
	rt := recentTurn{turn: slim(t), kept: map[string]string{}, from: map[string]keptFrom{}, restated: map[string][]string{}, size: laterSize(t)}
	rt.setSaid(t)
	var ids []string
	for i, c := range cands {
		cv := dec.Candidates[base+i]
		if !c.Keep {
			continue
		}
		rt.kept[c.Text] = ""
		rt.from[c.Text] = keptFrom{origin: c.Origin, class: c.Class, subject: c.subject}
		if cv.Kept && cv.MemoryID != "" {
			ids = append(ids, cv.MemoryID)
		}
	}
	if len(ids) == 0 {
		return rt, nil
	}
	ms, err := p.store.GetMany(ctx, ids)
	if err != nil {
		return rt, err
	}
	for i, c := range cands {
		cv := dec.Candidates[base+i]
		m, ok := ms[cv.MemoryID]
		if c.Keep && cv.Kept && ok && m.ReinforcedCount == 0 && !m.Superseded() && m.Text == c.Text {
			rt.kept[c.Text] = cv.MemoryID
			rt.markUntested(cv.MemoryID)
		}
	}
	return rt, nil
}

// forgetRestated removes the memory id from what the memories of turns
// superseded as restating them (recentTurn.restated): id, revised, is not
// to stand again when its restater is revised.
func forgetRestated(id string, turns []recentTurn) {
	for i := range turns {
		for r, olds := range turns[i].restated {
			if k := slices.Index(olds, id); k >= 0 {
				turns[i].restated[r] = slices.Delete(slices.Clone(olds), k, k+1)
			}
		}
	}
}
