package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unsafe"

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
//   - a memory the earlier turn created a piece of which the new
//     distillation drops or cuts for a revision (corrected, undone, moved,
//     restated: revisedWhy) is revised: superseded by the revising
//     statement when the new turn kept that statement as a memory of its
//     own (the old one stays in the store as history, hidden from recall,
//     as any superseded memory); otherwise moved to the trash with the
//     reason (restorable from it);
//   - a memory whose statements are all still kept, packed otherwise (a
//     statement between two of them revised, so they now fit one memory),
//     is no revision: the statement now holding most of it is stored into
//     it, the same memory with its id and history (settle);
//   - a statement the new distillation keeps and the earlier one did not
//     (a memory joined from several statements, one of them now revised:
//     the rest of it) is stored as batch ingest would have stored it.
//
// The turn's Decision lists each revised or re-packed memory as a
// candidate of origin OriginEarlier with the reason, so the feed shows it. Only
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
// all (recentTurn.bytes: a turn's text and what LaterTexts reads of it,
// the calls and results its slimmed form keeps, what it said, read for
// the held test, and its maps; a session's oldest turns beyond
// maxLaterBytes of later text are forgotten as they stop mattering). The
// process-wide memos of sentence classes and revision cues (classmemo.go)
// are not counted: a cache shared by all sessions and by batch ingest,
// each bounded on its own at maxClassMemoBytes.
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
	// later is what LaterTexts reads of it (laterOf of the whole turn,
	// read once when it is remembered: a later turn's distillation of an
	// earlier one reads it again without parsing its patches again); size
	// is its bytes.
	later []LaterText
	size  int
	// callSize is the bytes of the tool calls and results the slimmed
	// turn keeps (slimSize): a moved file's patch is kept whole, beyond
	// what size counts.
	callSize int
	// said is what the model said in it, block by block (saidBlocks): a
	// later turn's list line it holds is dropped (held.go). Once the turn
	// is remembered (recentTurns.set) it is a window of its session's
	// record (recentSession.said, of the session rec) starting at saidAt,
	// of which the first logged entries are in the record; saidSize is the bytes it takes
	// (heldSize), counted toward maxRecentBytes.
	said []heldText
	rec  *recentSession
	// pending are its statements a later turn may still update, from its
	// last distillation (dropUpdated), read by mayUpdate; replaced whole,
	// never written in place.
	pending  []pendingLead
	saidAt   int
	logged   int
	saidSize int
	// shared marks a turn recentTurns.turns handed out: its kept, from,
	// restated and untested maps are the remembered turn's, which other
	// calls read, until own copies them before the first write.
	shared bool
}

// own makes the turn's maps its own before one is written (shared): the
// remembered turn keeps its own until set replaces it, so a call that
// fails half-way, or a concurrent one, sees them as they were.
func (e *recentTurn) own() {
	if !e.shared {
		return
	}
	e.kept, e.from, e.restated, e.untested = maps.Clone(e.kept), maps.Clone(e.from), maps.Clone(e.restated), maps.Clone(e.untested)
	e.shared = false
}

// setSaid sets what the model said in t, read for the held test, and the
// bytes it takes. A turn continued (t holds its steps and more) keeps its
// place in the record: what it said before is a prefix of what it says
// now (saidBlocks reads step by step), and recentTurns.set appends the
// rest.
func (e *recentTurn) setSaid(t Turn) {
	e.said = saidBlocks(t)
	e.saidSize = heldSize(e.said)
}

// setTurn remembers t slimmed (slim), with what LaterTexts reads of it
// (later, laterOf(t)) and its bytes (size), and the bytes of the calls and
// results the slimmed turn keeps (callSize).
func (e *recentTurn) setTurn(t Turn) {
	e.setTurnLater(t, laterOf(t))
}

// setTurnLater is setTurn with what LaterTexts reads of t read already.
func (e *recentTurn) setTurnLater(t Turn, later []LaterText) {
	e.turn, e.later, e.size = slim(t), later, textsSize(later)
	e.callSize = slimSize(e.turn)
}

// bytes returns about what the turn takes in memory, as maxRecentBytes
// counts it: its text (size: the slimmed turn's text is about what
// LaterTexts reads of it, later, which holds the same strings, and a
// LaterText each), the calls and results it keeps (callSize), what it said (saidSize, about three times its text: a
// subject map per block) and its maps (mapsSize). What it was distilled with (turn.held) is a
// window of its session's record, counted with the session
// (recentSession.said).
func (e *recentTurn) bytes() int {
	return e.textBytes() + e.callSize + e.saidSize + e.mapsSize()
}

// textBytes returns the bytes of the turn's text as bytes counts them:
// what LaterTexts reads of it (size) and a LaterText (a string header and
// where it comes from) for each of its later texts.
func (e *recentTurn) textBytes() int {
	return e.size + len(e.later)*laterTextBytes
}

// Bytes of an entry of a recent turn's maps beyond the bytes of its
// strings, as mapsSize counts them: its slot (key and value) twice, for
// the control bytes and the free slots a table keeps (it grows by
// doubling before it is full); a string in a slice, its header.
var (
	keptEntryBytes     = 2 * int(unsafe.Sizeof("")+unsafe.Sizeof(""))
	fromEntryBytes     = 2 * int(unsafe.Sizeof("")+unsafe.Sizeof(keptFrom{}))
	restatedEntryBytes = 2 * int(unsafe.Sizeof("")+unsafe.Sizeof([]string(nil)))
	untestedEntryBytes = 2 * int(unsafe.Sizeof("")+unsafe.Sizeof(false))
	stringBytes        = int(unsafe.Sizeof(""))
	laterTextBytes     = int(unsafe.Sizeof(LaterText{}))
)

// mapsSize returns about the bytes the turn's kept, from, restated and
// untested maps take: their keys and values, a kept statement's subject (as heldSize
// counts a subject map), tokens and lowered text. On a real session (a
// 59-turn Codex session of the dev set, replayed live) they take about
// two thirds of what its text and said take.
func (e *recentTurn) mapsSize() int {
	n := 0
	for k, v := range e.kept {
		n += keptEntryBytes + len(k) + len(v)
	}
	for k, v := range e.from {
		n += fromEntryBytes + len(k) + len(v.origin) + len(v.class) + len(v.lowered)
		if v.subject != nil {
			n += heldMapBytes
		}
		for w := range v.subject {
			n += heldEntryBytes + len(w)
		}
		for _, t := range v.tokens {
			n += stringBytes + len(t)
		}
	}
	for k, v := range e.restated {
		n += restatedEntryBytes + len(k)
		for _, id := range v {
			n += stringBytes + len(id)
		}
	}
	for k := range e.untested {
		n += untestedEntryBytes + len(k)
	}
	for _, p := range e.pending {
		n += pendingBytes + len(p.lead) + len(p.text)
	}
	return n
}

// keptFrom is where a kept statement of a recent turn came from, and its
// subject (Candidate.subject, read only); the restatement test keeps its
// load-bearing tokens (namedTokens) and lowercased text here once it has
// read them (read only too).
type keptFrom struct {
	origin, class string
	taught        bool // the model's restatement of what the user taught (Candidate.taught)
	subject       map[string]bool
	tokens        []string
	lowered       string
}

// recentSession is what the recent turns of one session stored.
type recentSession struct {
	turns []recentTurn
	// said is the session's record of what its turns said (held.go), in
	// order, append-only: each turn's said is a window of it, and what a
	// turn is distilled with (Turn.held) is the window from its oldest
	// recent turn's to the end. saidFrom is the index in the record of
	// said[0]: what no recent turn's held window reaches any more is cut
	// off the front. An entry of said is never written twice (a window of
	// it may be read by a turn being distilled), so a turn whose place is
	// not the record's end has the record copied (recordSaid).
	said     []heldText
	saidFrom int
	size     int    // the bytes of its turns (recentTurn.bytes) and of what its turns' held windows reach before them
	seen     uint64 // recentTurns.tick when last used
}

// held returns the window of the session's record a new turn of it is
// distilled with: what its recent turns said, in order (a slice of the
// record, its capacity cut so that nothing appends into it).
func (r *recentTurns) held(session string) []heldText {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[session]
	if s == nil || len(s.turns) == 0 {
		return nil
	}
	from := s.turns[0].saidAt - s.saidFrom
	if from < 0 || from > len(s.said) {
		return nil
	}
	return s.said[from:len(s.said):len(s.said)]
}

// recordSaid appends what the newest of turns (the session's recent turns,
// as set) said and the record does not hold yet to the session's record,
// and makes each turn's said its window of the record. When the turns are
// not the record's windows in order ending at its end (a session
// forgotten and begun again, or its turns replaced meanwhile), the record
// is rebuilt from what the turns said, in a new array.
func (s *recentSession) recordSaid(turns []recentTurn) {
	if len(turns) == 0 {
		return
	}
	end := s.saidFrom + len(s.said)
	newest := &turns[len(turns)-1]
	at, ok := end, true // at: where the turn i said ends
	for i := len(turns) - 1; i >= 0 && ok; i-- {
		e := &turns[i]
		if e == newest && e.logged == 0 {
			continue // a new turn: it goes at the end
		}
		ok = e.rec == s && e.saidAt >= s.saidFrom && e.saidAt+e.logged == at && (e == newest && e.logged <= len(e.said) || e.logged == len(e.said))
		at = e.saidAt
	}
	if !ok {
		var said []heldText
		for i := range turns {
			said = append(said, turns[i].said...)
		}
		s.said, s.saidFrom = said, end
		at := 0
		for i := range turns {
			e := &turns[i]
			n := len(e.said)
			e.said, e.rec, e.saidAt, e.logged = said[at:at+n:at+n], s, end+at, n
			at += n
		}
		return
	}
	next := end - newest.logged // where the newest turn's said starts
	s.said = append(s.said, newest.said[newest.logged:]...)
	from, to := next-s.saidFrom, next-s.saidFrom+len(newest.said)
	newest.said, newest.rec, newest.saidAt, newest.logged = s.said[from:to:to], s, next, len(newest.said)
}

// trimSaid cuts off the front of the session's record what no recent
// turn's held window reaches (the oldest turn's window starts furthest
// back), and returns the bytes the record takes before the oldest turn's
// own said (heldSize): what forgotten turns said that a recent turn was
// distilled with.
func (s *recentSession) trimSaid() int {
	if len(s.turns) == 0 {
		s.said, s.saidFrom = nil, s.saidFrom+len(s.said)
		return 0
	}
	first := &s.turns[0]
	from := min(max(first.saidAt-len(first.turn.held), s.saidFrom), first.saidAt)
	if from > s.saidFrom && from-s.saidFrom <= len(s.said) {
		s.said, s.saidFrom = s.said[from-s.saidFrom:], from
	}
	return heldSize(s.said[:max(min(first.saidAt-s.saidFrom, len(s.said)), 0)])
}

// recentTurns is the pipeline's bounded LRU of sessions and their recent
// turns. The zero value is ready to use.
type recentTurns struct {
	mu       sync.Mutex
	tick     uint64
	size     int // the bytes of all its sessions, at most maxRecentBytes but for the one in use
	sessions map[string]*recentSession
}

// turns returns a copy of the session's recent turns, their maps shared
// with the remembered turns until written (recentTurn.own): most turns
// of a session are read, not revised, when a new turn comes.
func (r *recentTurns) turns(session string) []recentTurn {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[session]
	if s == nil {
		return nil
	}
	r.tick++
	s.seen = r.tick
	out := slices.Clone(s.turns)
	for i := range out {
		out[i].shared = true
	}
	return out
}

// set replaces the session's recent turns with turns (its earlier ones as
// revised, then the new one), forgetting the oldest ones no later text
// can reach any more, and the least recently seen sessions beyond the
// bounds.
func (r *recentTurns) set(session string, turns []recentTurn) {
	keep := oldestKept(len(turns), func(i int) int { return turns[i].size })
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
	s.recordSaid(turns)
	turns = turns[max(keep, 0):]
	s.turns = turns
	size := s.trimSaid()
	for i := range turns {
		size += turns[i].bytes()
	}
	r.size += size - s.size
	s.size = size
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

// oldestKept returns the index of the oldest of n turns (sizes: what
// LaterTexts reads of turn i, recentTurn.size) a session keeps: the newest
// always, and each one before it while what the session said after it
// fits maxLaterBytes. 0 when n is 0.
func oldestKept(n int, size func(i int) int) int {
	keep := n - 1
	for i, after := n-1, 0; i > 0; i-- {
		after += size(i) // what the session said after turn i-1
		if after > maxLaterBytes {
			break
		}
		keep = i - 1
	}
	return max(keep, 0)
}

// slim returns t without what distilling it again does not read: tool
// calls' inputs and tool results (a file written, a command's output),
// the bulk of a turn; edits of instruction files (instr.go) and their
// results stay. A call whose result says it failed (callFailed) changed
// nothing and is read as nothing (its moves, removals and edits left
// out): slim drops it, as it drops the results callFailed reads.
func slim(t Turn) Turn {
	steps := make([]Step, len(t.Steps))
	for i, s := range t.Steps {
		s.Calls, s.Results = slimCalls(t, i), editResults(s.Results)
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

// slimCalls returns the calls of step i of t a slimmed turn keeps, in
// order: those instrCall keeps, those that move or delete a file or write
// one (movedCall), those whose patch removes a setting (removalCall) and
// any other "Edit" without its input (bareEditCall), each call's patch (an
// apply_patch, or a file-editing call's edit: callPatch) parsed once for
// all. Of a call that failed only an Edit's name stays (instrCall's
// pairing of SpecStory's Edit results).
func slimCalls(t Turn, i int) []memory.ToolCall {
	var out []memory.ToolCall
	for j, c := range t.Steps[i].Calls {
		if callFailed(t, i, j) && !slimOff["failed"] {
			if c.Name == "Edit" {
				out = append(out, memory.ToolCall{ID: c.ID, Name: c.Name})
			}
			continue
		}
		p := callPatch(c)
		if k, ok := instrCall(c, p); ok {
			out = append(out, k)
		} else if k, ok := movedCall(c, p); ok {
			out = append(out, k)
		} else if k, ok := removalCall(c, p); ok {
			out = append(out, k) // glossdiff.go: the settings its patch removes
		} else if k, ok := bareEditCall(c); ok {
			out = append(out, k)
		}
	}
	return out
}

// slimOff names mechanisms of slim switched off ("failed": failed calls
// kept as any other; "patch": a moving patch kept whole; "shell": a
// moving shell call kept whole; "results": an edit's successful result
// kept whole; "count": the calls and results a slimmed turn keeps not
// counted toward maxRecentBytes), for measuring each one alone.
var slimOff = map[string]bool{}

// Bytes of a tool call and of a tool result beyond their strings, as
// slimSize counts them.
var (
	toolCallBytes   = int(unsafe.Sizeof(memory.ToolCall{}))
	toolResultBytes = int(unsafe.Sizeof(memory.ToolResult{}))
)

// slimSize returns the bytes of the tool calls and results a slimmed turn
// keeps (slim): each one's strings and its struct. The turn's texts are
// counted apart (laterSize).
func slimSize(t Turn) int {
	if slimOff["count"] {
		return 0
	}
	n := 0
	for _, s := range t.Steps {
		for _, c := range s.Calls {
			n += toolCallBytes + len(c.ID) + len(c.Name) + len(c.Input)
		}
		for _, r := range s.Results {
			n += toolResultBytes + len(r.ToolUseID) + len(r.Name) + len(r.Content)
		}
	}
	return n
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

// textsSize is the bytes of the later texts' text, as maxLaterBytes
// counts them.
func textsSize(texts []LaterText) int {
	n := 0
	for _, s := range texts {
		n += len(s.Text)
	}
	return n
}

// laterAfter returns what LaterTexts reads of the turns between (recent
// turns of t's session, their later texts read once when remembered),
// then of t (later: laterOf(t)).
func laterAfter(between []recentTurn, t Turn, later []LaterText) []LaterText {
	var g laterGather
	for i := range between {
		if between[i].turn.SessionID != t.SessionID {
			continue
		}
		if !g.add(between[i].later) {
			return g.out
		}
	}
	g.add(later)
	return g.out
}

// revisingSentences returns the sentences of a turn (the user's and the
// model's) that carry a revision cue or, the user's, put one thing in
// another's place (userReplaced), and those that undo something
// (undoOf, every one a later turn's to the turns before it), each with
// its position in the turn counted as Distill counts the sentences of
// later texts.
func revisingSentences(t Turn) (revs []posSentence, undos []undo, n int) {
	users := userTexts(t)
	for i, text := range append(users, stepTexts(t)...) {
		for _, s := range sentences(text) {
			if st := strings.TrimSpace(s.text); st != "" {
				ps := posSentence{text: st, pos: n, user: i < len(users)}
				if correcting(lower(st)) || ps.user && len(userReplaced(st)) > 0 {
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
// read when Distill parsed them); pending are its statements a later turn
// may update (dropUpdated), remembered with it. A turn of an ended session (a complete
// transcript: the caller gave ProcessTurn every later text) needs no
// distilling again; what it restates of the session's earlier turns is
// superseded either way (supersedeRestated).
func (p *Pipeline) reviseEarlier(ctx context.Context, t Turn, st SessionState, cands []Candidate, revises bool, pending []pendingLead, base int, dec *memory.Decision, errp *error) {
	if *errp != nil || t.SessionID == "" || base+len(cands) > len(dec.Candidates) {
		return
	}
	earlier := p.recent.turns(t.SessionID)
	n := 0
	// Only a sentence that revises or undoes something changes what an
	// earlier turn keeps (dropRevised, dropUndone); a turn of an ended
	// session was distilled knowing its later turns already.
	revs, undos, _ := revisingSentences(t)
	later := laterOf(t) // read once, for each earlier turn distilled again and for t remembered
	from, upd := len(earlier), map[int]bool(nil)
	if !st.Ended {
		reach := redistillFrom(earlier, textsSize(later))
		if len(revs) > 0 || len(undos) > 0 || revises {
			from = reach
		} else if upd = mayUpdate(t, earlier, reach); len(upd) > 0 {
			from = reach // update.go: only the turns t may update are distilled again
		}
	}
	rm := newReviserMemo() // the later sentences, read once for every earlier turn
	for i := from; i < len(earlier); i++ {
		if upd != nil && !upd[i] {
			continue
		}
		k, err := p.redistill(ctx, t, later, &earlier[i], earlier[i+1:], cands, base, dec, rm)
		if err != nil {
			*errp = fmt.Errorf("ingest: revise earlier turns of session %s: %w", t.SessionID, err)
			return
		}
		n += k
	}
	if n > 0 {
		dec.Reason += fmt.Sprintf("; revised %d memories of earlier turns", n)
	}
	rt, err := p.rememberTurn(ctx, t, later, cands, base, dec)
	rt.pending = pending
	if err != nil {
		*errp = fmt.Errorf("ingest: remember the memories of turn %d of session %s: %w", t.Turn, t.SessionID, err)
		return
	}
	turns := append(earlier, rt)
	if err := p.supersedeRestated(ctx, t, turns, dec); err != nil {
		*errp = fmt.Errorf("ingest: supersede what turn %d of session %s restates: %w", t.Turn, t.SessionID, err)
		return
	}
	if revises {
		k, err := p.reviseInstrRules(ctx, t, cands, base, dec) // instrrevise.go: rules an edit took out of their file
		if err != nil {
			*errp = fmt.Errorf("ingest: revise the rules turn %d of session %s took out of instruction files: %w", t.Turn, t.SessionID, err)
			return
		}
		if k > 0 {
			dec.Reason += fmt.Sprintf("; revised %d rules of instruction files", k)
		}
	}
	p.recent.set(t.SessionID, turns)
}

// redistill distils the earlier turn e again knowing what its session
// said after it (the turns between, then t, of which LaterTexts reads
// later), revises the memories it created from statements no longer kept,
// and stores the statements kept now and not before. It returns how many
// memories it revised. rm holds the revising sentences the caller's
// distillations read already.
func (p *Pipeline) redistill(ctx context.Context, t Turn, later []LaterText, e *recentTurn, between []recentTurn, cands []Candidate, base int, dec *memory.Decision, rm *reviserMemo) (int, error) {
	now, _, pending := distillWith(e.turn, laterAfter(between, t, later), rm)
	n, err := p.settle(ctx, t, e, between, now, cands, base, dec)
	if err == nil {
		e.pending = pending
	}
	return n, err
}

// settle brings what the earlier turn e stored in line with now, its new
// distillation. A memory it created whose text is no longer kept as it
// is:
//
//   - is revised (revisedWhy: superseded by the revising statement of t's
//     candidates cands, listed in *dec from base on, or trashed) when a
//     piece of its text was dropped or cut for a revision (corrected,
//     undone, moved, restated), with that reason;
//   - is re-packed otherwise: its statements are kept, only joined into
//     other statements now (a statement between them revised, so its
//     neighbours fit one memory). The statement now holding most of its
//     text (heirOf) is stored into it: the same memory, its id and history
//     (reinforcements, accesses, ratings, snooze) kept, its text, vector,
//     kind and type the statement's. A memory whose statement goes
//     where another one's goes too (two joined into one), or to a memory
//     that exists already, is superseded by that memory, which takes its
//     history (absorbHistory). Neither is reported as revised.
//
// With a judge, which chose the turn's memories, a memory nothing revised
// stays as it is. The statements kept now and not before are stored.
// *dec lists each memory revised, each statement stored now and, after
// them, the pieces cut out of it (cutVerdicts), as a turn's own decision
// lists its statements and their cuts. A memory revised while a later
// memory supersedes it as its restatement stays revised: the turns after
// e (between) forget it as restated, so that a revision of its restater
// does not let it stand again (unrestate). It returns how many memories
// it revised.
func (p *Pipeline) settle(ctx context.Context, t Turn, e *recentTurn, between []recentTurn, now []Candidate, cands []Candidate, base int, dec *memory.Decision) (int, error) {
	// again is the reason of a verdict of e's turn distilled again now.
	again := func(what string) string {
		return e.turn.number() + " distilled again knowing " + t.number() + ": " + what
	}
	e.own()
	kept := map[string]bool{}
	var fresh, keptNow []Candidate
	for _, c := range now {
		if !c.Keep {
			continue
		}
		kept[c.Text] = true
		keptNow = append(keptNow, c)
		if _, ok := e.kept[c.Text]; !ok {
			fresh = append(fresh, c)
		}
	}
	judged := p.turnJudge() != nil
	texts := slices.Sorted(maps.Keys(e.kept))
	n := 0
	var repacked []storedStatement // created by e, not kept as they are, not revised
	for _, text := range texts {
		id := e.kept[text]
		if kept[text] {
			continue
		}
		why := revisedWhy(now, text)
		if why == "" && judged {
			continue // the judge's memory, nothing of it revised: it stays
		}
		delete(e.kept, text)
		if id == "" {
			continue
		}
		if why == "" {
			repacked = append(repacked, storedStatement{id: id, text: text})
			continue
		}
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
	if judged {
		// With a judge, the judge chose the turn's memories, not the
		// distiller: what the distiller keeps now is not stored.
		return n, nil
	}
	// Each re-packed memory's heir among the statements kept now, and the
	// memory each fresh statement is stored into (the re-packed one that
	// gives it most of its text).
	heir := make([]int, len(repacked))
	into := map[string]string{}
	share := map[int]int{}
	aside := map[string]bool{}
	repackedText := map[string]string{}
	for i, o := range repacked {
		aside[o.id] = true
		repackedText[o.id] = o.text
		h, k := heirOf(o.text, keptNow)
		heir[i] = h
		if h < 0 {
			continue
		}
		if _, ok := e.kept[keptNow[h].Text]; ok {
			continue // kept by e already (as a memory, or as none: a duplicate), not stored now
		}
		if _, ok := into[keptNow[h].Text]; !ok || k > share[h] {
			into[keptNow[h].Text], share[h] = o.id, k
		}
	}
	var ids []string
	if len(fresh) > 0 {
		var err error
		if ids, err = p.placeReformed(ctx, e.turn, fresh, &repacking{into: into, aside: aside}); err != nil {
			return n, err
		}
	}
	placed := map[string]string{}     // a fresh statement's text → its memory
	var cut []memory.CandidateVerdict // the pieces cut out of what is kept now, after it as in a turn's own decision
	for i, c := range fresh {
		placed[c.Text] = ids[i]
		e.kept[c.Text] = ids[i]
		e.from[c.Text] = keptFrom{origin: c.Origin, class: c.Class, taught: c.taught, subject: c.subject}
		if ids[i] != "" {
			e.markUntested(ids[i])
			reason := again("kept now")
			if old := into[c.Text]; old != "" && old == ids[i] {
				reason = again("its statements re-packed, stored into the same memory")
				if by := updatedWhy(now, repackedText[old]); by != "" {
					reason = again(fmt.Sprintf("a statement of it updated later (%s), the rest stored into the same memory", preview(by)))
				}
			}
			dec.Candidates = append(dec.Candidates, memory.CandidateVerdict{Text: preview(c.Text), Origin: OriginEarlier, Class: c.Class, Kept: true, Kind: c.Kind, MemoryID: ids[i], Reason: reason})
			for _, cv := range cutVerdicts([]Candidate{c}) {
				cv.Origin = OriginEarlier
				cut = append(cut, cv)
			}
		}
	}
	// The re-packed memories not stored into: superseded by the memory
	// that holds their statements now, which takes their history; one
	// whose statements no kept statement holds is trashed, with why.
	for i, o := range repacked {
		h := heir[i]
		next := ""
		if h >= 0 {
			if id, ok := placed[keptNow[h].Text]; ok {
				next = id
			} else {
				next = e.kept[keptNow[h].Text]
			}
		}
		if next == o.id {
			if err := p.unrestate(ctx, o.id, e); err != nil { // what it restated may not be in its text any more
				return n, err
			}
			e.markUntested(o.id)
			continue
		}
		cv := memory.CandidateVerdict{Text: preview(o.text), Origin: OriginEarlier, Class: ClassFinding, MemoryID: o.id}
		if next != "" {
			ok, err := p.carry(ctx, o.id, next)
			if err != nil {
				return n, err
			}
			if !ok {
				continue
			}
			cv.Reason = again(fmt.Sprintf("its statements re-packed; superseded by %s, which holds them now and takes its history", next))
		} else if by := updatedWhy(now, o.text); h < 0 && by != "" {
			// Every statement of it updated later (update.go): superseded
			// by the memory of t stating the update, as a revision is.
			cv, ok, err := p.reviseOne(ctx, t, o, by, p.revisingMemory(by, subjectOf(by), cands, base, dec, o.id))
			if err != nil {
				return n, err
			}
			if !ok {
				continue
			}
			cv.Reason = again(strings.Replace(cv.Reason, "revised in", "updated in", 1))
			dec.Candidates = append(dec.Candidates, cv)
			if err := p.unrestate(ctx, o.id, e); err != nil {
				return n, err
			}
			continue
		} else {
			why := droppedWhy(now, o.text)
			if h >= 0 {
				why = "its statements re-packed into one stored as no memory of its own (a duplicate, or gated)"
			}
			err := p.store.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: o.id,
				Reason: fmt.Sprintf("%s of session %s distilled again knowing %s: no longer kept (%s)", e.turn.number(), t.SessionID, t.number(), why)}}})
			if err != nil {
				if m, gerr := p.store.GetMany(ctx, []string{o.id}); gerr == nil && len(m) == 0 {
					continue // deleted meanwhile
				}
				return n, fmt.Errorf("trash %s: %w", o.id, err)
			}
			cv.Reason = again(fmt.Sprintf("no longer kept (%s); moved to the trash (restore it from there)", why))
		}
		dec.Candidates = append(dec.Candidates, cv)
		if err := p.unrestate(ctx, o.id, e); err != nil {
			return n, err
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
		r.dec.Reason = fmt.Sprintf("continues %s, which holds it already", last.turn.number())
		return true, nil
	}
	ext := last.turn
	ext.Steps = append(slices.Clip(ext.Steps), t.Steps...)
	ext.Exchanges = append(slices.Clip(ext.Exchanges), t.Exchanges...)
	ext.UserTurns = max(ext.UserTurns, t.UserTurns)
	ext.Headless = ext.Headless || t.Headless
	// The calls whose results the turn did not hold were read as made
	// (as batch ingest reads a call without a result); their results
	// come now, and what a failed one was read to make is read again
	// (callFailed): the earlier turns are distilled again knowing it.
	still, failed := awaitedResults(last.turn.awaiting, t)
	ext.awaiting = append(still, t.awaiting...)
	base := len(r.dec.Candidates)
	n := 0
	// The turn's tool calls, the continuation's with them, may revise what
	// the session's earlier turns said (a move, an edit removing an
	// instruction line), as reviseEarlier reads them: distill reports it.
	cands, revises, pending := distill(ext, nil)
	revs, undos, _ := revisingSentences(t)
	later := laterOf(t)
	from, upd := len(earlier)-1, map[int]bool(nil)
	reach := min(from, redistillFrom(earlier, textsSize(later)))
	if len(revs) > 0 || len(undos) > 0 || revises || failed {
		from = reach
	} else if upd = mayUpdate(t, earlier[:len(earlier)-1], reach); len(upd) > 0 {
		from = reach // update.go: only the turns t may update are distilled again
	}
	after := later // what the earlier turns are distilled again knowing, after last's
	if failed {
		// What the failed calls did not make reaches the earlier turns
		// through last's later texts, read again with their results:
		// then the whole extended turn's, t's among them.
		last.setTurn(ext)
		after = nil
	}
	rm := newReviserMemo()
	for i := from; i < len(earlier)-1; i++ {
		if upd != nil && !upd[i] {
			continue
		}
		k, err := p.redistill(ctx, t, after, &earlier[i], earlier[i+1:], nil, base, &r.dec, rm)
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
	last.setTurn(ext)
	last.pending = pending
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
	reason := fmt.Sprintf("continues %s: distilled again with it", ext.number())
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

// awaitedResults reads what a turn's continuation t brings of the
// results of the calls the turn awaited (awaited, its awaiting): the ids
// it brings none for, in order, and whether one it brings is an error
// (the call, read as made, made nothing).
func awaitedResults(awaited []string, t Turn) (still []string, failed bool) {
	for _, id := range awaited {
		answered := false
		for _, s := range t.Steps {
			for _, r := range s.Results {
				if r.ToolUseID == id {
					answered, failed = true, failed || r.IsError
				}
			}
		}
		if !answered {
			still = append(still, id)
		}
	}
	return still, failed
}

// revisionReasons are the reasons distillation drops or cuts a piece of
// a statement for because its session revised it: corrected ("revised
// later": a revision cue, a correction in the same memory, a move, an
// edit removing an instruction line), undone, restated; and the judge's
// refusal of a statement that restates a revised one.
var revisionReasons = []string{"revised later", "undone later", "restated later", "restates a statement revised later"}

// isRevision reports whether a drop or cut reason is a revision's.
func isRevision(reason string) bool {
	return slices.ContainsFunc(revisionReasons, func(r string) bool { return strings.HasPrefix(reason, r) })
}

// revisedWhy is why text, kept before, is revised now: the reasons of the
// statements of it the new distillation dropped for a revision, and of the
// pieces of it that it cut out of a statement it kept the rest of for a
// revision (a sentence a later turn undid or corrected). It is "" when
// nothing of text was revised: its statements are kept, packed otherwise,
// or dropped for another reason.
func revisedWhy(now []Candidate, text string) string {
	var why []string
	for _, c := range now {
		if !c.Keep && isRevision(c.Reason) && holdsPiece(text, c.Text) {
			why = append(why, strings.TrimPrefix(c.Reason, "revised later: "))
		}
		for _, k := range c.cuts {
			if c.Keep && isRevision(k.reason) && holdsPiece(text, k.text) {
				why = append(why, strings.TrimPrefix(k.reason, "revised later: "))
			}
		}
	}
	return strings.Join(why, "; ")
}

// droppedWhy is why text, kept before and not revised, is in no statement
// kept now: the reasons of the statements of it the new distillation
// dropped and of the pieces of it cut.
func droppedWhy(now []Candidate, text string) string {
	var why []string
	for _, c := range now {
		if !c.Keep && c.Reason != "" && holdsPiece(text, c.Text) && !slices.Contains(why, c.Reason) {
			why = append(why, c.Reason)
		}
		for _, k := range c.cuts {
			if k.reason != "" && holdsPiece(text, k.text) && !slices.Contains(why, k.reason) {
				why = append(why, k.reason)
			}
		}
	}
	if len(why) == 0 {
		return "packed into no statement kept now"
	}
	return strings.Join(why, "; ")
}

// heirOf returns the statement of kept that holds most of text, and how
// much: the most of text's word trigrams (shingles) it holds; -1 when
// none holds any. Shingles, not sentences: a statement re-packed may be
// split or joined inside what reads as one sentence (a list without
// stops, a heading run into its items).
func heirOf(text string, kept []Candidate) (int, int) {
	best, most := -1, 0
	own := shingles(text)
	for i, c := range kept {
		have := map[string]bool{}
		for _, g := range shingles(c.Text) {
			have[g] = true
		}
		k := 0
		for _, g := range own {
			if have[g] {
				k++
			}
		}
		if k > most {
			best, most = i, k
		}
	}
	return best, most
}

// shingles returns text's word trigrams in order (the whole text as one
// for a text of fewer than three words).
func shingles(text string) []string {
	w := strings.Fields(text)
	if len(w) < 3 {
		return []string{strings.Join(w, " ")}
	}
	out := make([]string, 0, len(w)-2)
	for i := 0; i+3 <= len(w); i++ {
		out = append(out, w[i]+" "+w[i+1]+" "+w[i+2])
	}
	return out
}

// absorbHistory adds to m what the memory o, whose statements m holds
// now, gathered from its use: its reinforcements, accesses, ratings and
// hits, its importance when higher, its pin, its snooze when longer.
func absorbHistory(m *memory.Memory, o memory.Memory) {
	m.AbsorbUse(o)
	m.Pinned = m.Pinned || o.Pinned
	if len(o.Hits) > 0 {
		m.Hits = memory.MergeHits(m.Hits, o.Hits)
	}
	if o.CooldownUntil.After(m.CooldownUntil) {
		m.CooldownUntil = o.CooldownUntil
	}
}

// carry supersedes the memory old by next, which holds its statements now,
// and gives next old's history (absorbHistory). A memory superseded
// already (restated by a later turn's memory, restatedturns.go) is
// superseded by next instead: its statements are next's now, and it must
// not stand again when the one that restated it is revised (unrestate).
// ok is false when old is gone or superseded by next already.
func (p *Pipeline) carry(ctx context.Context, old, next string) (ok bool, err error) {
	var o memory.Memory
	_, err = p.store.Update(ctx, old, func(m *memory.Memory) error {
		if m.SupersededBy == next {
			return errSkipRevision
		}
		o = *m
		m.SupersededBy, m.UpdatedAt = next, p.clock.Now()
		return nil
	})
	switch {
	case errors.Is(err, errSkipRevision), errors.Is(err, memory.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("mark %s superseded by %s: %w", old, next, err)
	}
	_, err = p.store.Update(ctx, next, func(m *memory.Memory) error {
		if m.Supersedes == "" {
			m.Supersedes = old
		}
		absorbHistory(m, o) // a restatement took none of it (supersedeRestated): it is next's now
		return nil
	})
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		return true, fmt.Errorf("give %s the history of %s: %w", next, old, err)
	}
	return true, nil
}

// placeReformed stores the statements of an earlier turn that its new
// distillation keeps, as ProcessTurn stores a turn's (content gate,
// dedup), outside the turn's marks (the turn is decided), each into the
// memory rp names for it, if any (re-packed: see settle). It returns the
// memory each created, joined or was stored into ("" for one gated out).
func (p *Pipeline) placeReformed(ctx context.Context, e Turn, cands []Candidate, rp *repacking) ([]string, error) {
	r := p.newRun(e.Exchange(), false, "")
	r.repack = rp
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
		if holdsPiece(c.Text, core) {
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
	why := fmt.Sprintf("revised in %s: %s", t.number(), preview(s))
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
// later is what LaterTexts reads of t (laterOf), kept with it.
func (p *Pipeline) rememberTurn(ctx context.Context, t Turn, later []LaterText, cands []Candidate, base int, dec *memory.Decision) (recentTurn, error) {
	rt := recentTurn{kept: map[string]string{}, from: map[string]keptFrom{}, restated: map[string][]string{}}
	rt.setTurnLater(t, later)
	rt.setSaid(t)
	var ids []string
	for i, c := range cands {
		cv := dec.Candidates[base+i]
		if !c.Keep {
			continue
		}
		rt.kept[c.Text] = ""
		rt.from[c.Text] = keptFrom{origin: c.Origin, class: c.Class, taught: c.taught, subject: c.subject}
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
				turns[i].own()
				turns[i].restated[r] = slices.Delete(slices.Clone(olds), k, k+1)
			}
		}
	}
}
