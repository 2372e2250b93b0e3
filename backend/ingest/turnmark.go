package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// A turn is run again when its capture path retries it (a store error,
// the embedder gone, a kill: the transcript tailer's cursor, the proxy's
// live turn on disk, the headless hold stay before the turn until it is
// decided) or reads it twice. ProcessTurn makes that idempotent with turn
// marks in the store (store.TurnMark): the turn's statements are marked
// pending before any is placed, each placement records its memory and
// outcome, and the turn is marked decided once all are placed. A second
// run skips the statements marked (they are not reinforced as their own
// duplicates), and a turn marked whole is skipped entirely (StageReplay).
//
// The marks ride in the transactions of the writes they record
// (turnWrite; store.Insert.Marks, store.UpdateMarked): the pending marks
// in the first placement's, each outcome mark in its placement's, the
// decided mark in the last placement's. A placement that writes nothing
// (an earlier run's, an older version repeated) has its outcome written
// with the next write, or alone after the last. So a turn of one stored
// statement is one transaction (the memory and all its marks) where it
// was three (pending marks, memory, outcome and decided marks), and a
// placement on disk without its mark cannot happen: a pending mark the
// store still holds (Atomic) means its statement was not placed, and it
// is placed as usual. Pending marks of older stores, written in their own
// transaction before the placement, may or may not have been placed:
// resolvePending decides them.

// StageReplay names the decision of a turn decided already: nothing is
// stored, reinforced or revised again; the verdict is skipped-duplicate
// (rejected for a turn the first run rejected), the memories the first
// run's. Callers do not record it again.
const StageReplay = "replay"

// turnKey names t for its marks: the session, the turn's number, the
// user's words and the first response (its text and tools), as the
// capture paths deliver the same turn again. "" (no marks) for a turn of
// no session: a sessionless exchange repeated is a real repetition.
func turnKey(t Turn) string {
	if t.SessionID == "" {
		return ""
	}
	h := sha256.New()
	field := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	field(t.SessionID)
	field(t.Project)
	field(strconv.Itoa(t.Turn))
	for _, u := range t.User {
		field(u)
	}
	if len(t.Steps) > 0 {
		field(t.Steps[0].Text)
		for _, c := range t.Steps[0].Calls {
			field(c.Name)
		}
	}
	return "t1:" + hex.EncodeToString(h.Sum(nil)[:16])
}

// replayed returns the decision of a turn marked decided: skipped as a
// duplicate at StageReplay, naming the first run's memories and verdict;
// a turn the first run rejected (markRejected) is rejected again at
// StageReplay, so that a second run's counts say what the first did (no
// duplicate was avoided).
func replayed(r *run, marks map[string]store.TurnMark) memory.Decision {
	whole := marks[""]
	dec := r.dec
	dec.Verdict = memory.VerdictDuplicate
	if whole.Outcome == string(memory.VerdictRejected) {
		dec.Verdict = memory.VerdictRejected
	}
	dec.Stage = StageReplay
	dec.Reason = "this turn was decided (" + whole.Outcome + ") at " + whole.At.UTC().Format("2006-01-02 15:04:05") + ": nothing stored or reinforced again"
	seen := map[string]bool{}
	for h, m := range marks {
		if h != "" && m.MemoryID != "" && !seen[m.MemoryID] {
			seen[m.MemoryID] = true
			dec.MemoryIDs = append(dec.MemoryIDs, m.MemoryID)
		}
	}
	return dec
}

// turnWrite is what the writes placing a turn's statements record with
// them (storeCandidates): the marks owed and the statement being placed.
// Its methods do nothing on a nil turnWrite (a run outside a turn).
type turnWrite struct {
	key string
	// owed are the marks not on disk yet: the turn's pending marks until
	// its first write, the outcomes of placements that wrote nothing.
	owed []store.TurnMark
	// hash is the statement being placed; last says it is the turn's
	// last (its write also marks the turn decided); best is the strongest
	// outcome of the statements placed before it.
	hash string
	last bool
	best outcome
	// wrote says the statement's placement wrote (its outcome with it);
	// decided that the turn's decided mark is on disk.
	wrote, decided bool
}

// marks returns the marks a write that places the current statement as
// out in memory id carries: those owed, the statement's outcome and, for
// the last statement, the turn decided with its verdict.
func (w *turnWrite) marks(out outcome, id string) []store.TurnMark {
	if w == nil {
		return nil
	}
	ms := append(slices.Clip(w.owed), store.TurnMark{Turn: w.key, Hash: w.hash, Outcome: outcomeOf(out), MemoryID: id})
	if w.last {
		ms = append(ms, store.TurnMark{Turn: w.key, Outcome: outcomeOf(min(w.best, out))})
	}
	return ms
}

// written notes that a write carrying marks is on disk.
func (w *turnWrite) written() {
	if w == nil {
		return
	}
	w.owed, w.wrote = nil, true
	if w.last {
		w.decided = true
	}
}

// A turn that stores nothing is decided too: its statements were dropped
// by distillation, the content score or the turn judge, all of which read
// the turn and what its session said before it. Unmarked, it was run
// again by a second ingest of the same history (before exp-reingest, only
// a turn that placed a statement was marked decided) and decided anew
// with less than the first run knew: the turns before it were replayed,
// and a replayed turn leaves nothing in the session's record of what it
// said (held.go), so a line the first run dropped as said in an earlier
// turn was kept and stored (or updated a memory) the second time.
// markRejected marks such a turn decided. A headless turn rejected under
// the count is not: its session may reach the count later (claude -p
// --continue) and then each of its turns is stored (headless.go).

// rejectedStages are the stages whose rejection of a turn is decided by
// the turn's own words and its session's earlier turns.
var rejectedStages = map[string]bool{StageDistill: true, StageContent: true, StageJudge: true}

// markRejected marks the turn of key decided when dec rejected it at one
// of rejectedStages: a second run replays it (StageReplay) instead of
// deciding it again.
func (p *Pipeline) markRejected(ctx context.Context, key string, dec memory.Decision) error {
	if key == "" || dec.Verdict != memory.VerdictRejected || !rejectedStages[dec.Stage] {
		return nil
	}
	err := p.store.MarkTurn(context.WithoutCancel(ctx), []store.TurnMark{{Turn: key, Outcome: string(dec.Verdict)}})
	if err != nil {
		return fmt.Errorf("ingest: mark a rejected turn decided: %w", err)
	}
	return nil
}

// outcomeOf names o as a verdict for a mark.
func outcomeOf(o outcome) string {
	return string(verdicts[o])
}

// markedOutcome reads a mark's outcome back (duplicate when unknown).
func markedOutcome(s string) outcome {
	for o, v := range verdicts {
		if string(v) == s {
			return o
		}
	}
	return outDuplicate
}

// resolvePending decides a statement marked pending (not Atomic: by the
// older code, which wrote the outcome after the placement) by a run cut
// short (a kill between the mark and the outcome): when a live memory of
// the turn's project holds its text, the run placed it, or it was stored before and the run may or may
// not have reinforced it; either way it is not placed again (at worst one
// reinforcement is lost, never counted twice). ok is false when no memory
// holds it: it is placed as usual.
func (p *Pipeline) resolvePending(ctx context.Context, text, project string, mk store.TurnMark) (outcome, string, bool, error) {
	m, ok, err := p.store.FindByHash(ctx, memory.ContentHash(text), project)
	if err != nil {
		return 0, "", false, fmt.Errorf("find a statement an earlier run marked: %w", err)
	}
	if !ok || m.Superseded() {
		return 0, "", false, nil
	}
	if !m.CreatedAt.Before(mk.At) {
		return outCreated, m.ID, true, nil
	}
	return outDuplicate, m.ID, true, nil
}

// A replayed turn is remembered as a run of it would have remembered it.
// Nothing of it is stored again, but the session's later turns are
// distilled against what its earlier turns said (held.go) and revise
// what they kept (reviseEarlier): a history that grew since it was
// ingested (a session file read half written, a daemon restarted in the
// middle of a session) has its first turns replayed, and its new turns
// must read them as one whole ingest reads them. Without it a list line
// a replayed turn had said was kept by a new turn and stored.

// replayMemoryOutcomes are the outcomes of a mark whose memory its turn
// wrote (a new memory, a new version, a merge): a run of the turn
// remembers such a memory as the turn's own (rememberTurn), not one it
// only reinforced.
var replayMemoryOutcomes = map[string]bool{
	string(memory.VerdictStored):  true,
	string(memory.VerdictUpdated): true,
	string(memory.VerdictMerged):  true,
}

// rememberReplayed remembers a turn decided already (marks, of its key)
// in its session's recent turns, as reviseEarlier would have after a run
// of it: distilled with what the session said before it and every later
// text the caller knows (later), its kept statements, what it said, its
// statements a later turn may update. A kept statement is the turn's
// memory when its mark says the turn wrote it and the memory is live and
// holds its text; nothing is weighed for restatement (its run did that).
// A turn the session remembers already (live capture reading it again:
// it is no newer than the session's newest turn) is left as it is.
//
// A turn of an ended session (batch ingest: later is every text the
// session said after it) is also settled against that distillation
// (settleReplayed): its run may have known fewer of its session's later
// turns (a history that grew since it was ingested), and what a later
// turn corrects, restates or undoes of it is revised as one whole ingest
// would have dropped it. The verdicts of what it revised or stored are
// appended to *dec.
func (p *Pipeline) rememberReplayed(ctx context.Context, t Turn, later []LaterText, marks map[string]store.TurnMark, ended bool, dec *memory.Decision) error {
	if t.SessionID == "" || replayOff {
		return nil
	}
	earlier := p.recent.turns(t.SessionID)
	if n := len(earlier); n > 0 && earlier[n-1].turn.Turn >= t.Turn {
		return nil
	}
	t.held = p.recent.held(t.SessionID)
	cands, _, pending := distill(t, later)
	rt := recentTurn{kept: map[string]string{}, from: map[string]keptFrom{}, restated: map[string][]string{}}
	rt.setTurn(t)
	rt.setSaid(t)
	rt.pending = pending
	stored, err := p.replayedMemories(ctx, marks)
	if err != nil {
		return fmt.Errorf("ingest: remember replayed %s of session %s: %w", t.number(), t.SessionID, err)
	}
	if ended && !settleReplayOff {
		if err := p.settleReplayed(ctx, t, &rt, stored, marks, cands, dec); err != nil {
			return fmt.Errorf("ingest: settle replayed %s of session %s: %w", t.number(), t.SessionID, err)
		}
		p.recent.set(t.SessionID, append(earlier, rt))
		return nil
	}
	for _, c := range cands {
		if !c.Keep {
			continue
		}
		rt.kept[c.Text] = stored[c.Text]
		rt.from[c.Text] = keptFrom{origin: c.Origin, class: c.Class, taught: c.taught, subject: c.subject}
	}
	p.recent.set(t.SessionID, append(earlier, rt))
	return nil
}

// replayedMemories returns the memories a replayed turn's run wrote and
// that still hold what it wrote, by text: each mark of a statement whose
// outcome says the turn wrote its memory (replayMemoryOutcomes), when
// that memory is live and its text is the statement's (its hash).
func (p *Pipeline) replayedMemories(ctx context.Context, marks map[string]store.TurnMark) (map[string]string, error) {
	var ids []string
	for h, mk := range marks {
		if h != "" && mk.MemoryID != "" && replayMemoryOutcomes[mk.Outcome] {
			ids = append(ids, mk.MemoryID)
		}
	}
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	ms, err := p.store.GetMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	for h, mk := range marks {
		if m, ok := ms[mk.MemoryID]; ok && h != "" && replayMemoryOutcomes[mk.Outcome] && !m.Superseded() && memory.ContentHash(m.Text) == h {
			out[m.Text] = mk.MemoryID
		}
	}
	return out, nil
}

// A turn of an ended session replayed by a later ingest was decided by a
// run that may have known less of its session than this one: the session
// file grew since (read half written, then whole). One whole ingest
// distils each turn knowing every later text of the session (LaterTexts)
// and drops what a later turn corrects, restates or undoes before it is
// stored; batch ingest never distils an ended session's turn again
// (reviseEarlier), so the grown history kept the first run's forms — 8
// texts of one whole ingest missing and 12 others kept on the shared
// SpecStory files at 1368516. settleReplayed distils the replayed turn
// knowing the whole session and settles what its run stored against that
// (settle, as live capture settles a turn a later one revises).

// settleReplayed sets e (the replayed turn t, remembered) to what its run
// kept — the memories it wrote that still hold their text (stored), and
// as no memory of its own each statement kept now whose mark says the run
// placed it — and settles that against now, its distillation knowing the
// whole session (settle). A statement kept now that a live memory of the
// project holds already (an earlier settling stored it; the content score
// dropped it the first time and an equal memory exists) is kept as no
// memory of its own: nothing is reinforced. A second ingest of the same
// history distils each turn as its first run did, and changes nothing.
func (p *Pipeline) settleReplayed(ctx context.Context, t Turn, e *recentTurn, stored map[string]string, marks map[string]store.TurnMark, now []Candidate, dec *memory.Decision) error {
	for text, id := range stored {
		e.kept[text] = id
	}
	for _, c := range now {
		if !c.Keep {
			continue
		}
		e.from[c.Text] = keptFrom{origin: c.Origin, class: c.Class, taught: c.taught, subject: c.subject}
		if _, ok := e.kept[c.Text]; ok {
			continue
		}
		if _, ok := marks[memory.ContentHash(c.Text)]; ok {
			e.kept[c.Text] = ""
			continue
		}
		m, ok, err := p.store.FindByHash(ctx, memory.ContentHash(c.Text), t.Project)
		if err != nil {
			return fmt.Errorf("find a statement kept now: %w", err)
		}
		if ok && !m.Superseded() {
			e.kept[c.Text] = ""
		}
	}
	var sd memory.Decision
	n, err := p.settle(ctx, t, e, nil, now, nil, 0, &sd)
	if err != nil {
		return err
	}
	// settle names the revising turn; here it is the whole session.
	whole := strings.NewReplacer("knowing "+t.number(), "knowing its whole session", "revised in "+t.number(), "revised later in its session")
	for _, cv := range sd.Candidates {
		cv.Reason = whole.Replace(cv.Reason)
		dec.Candidates = append(dec.Candidates, cv)
	}
	if n > 0 {
		dec.Reason += fmt.Sprintf("; revised %d of its memories, distilled again knowing the whole session", n)
	}
	return nil
}

// settleReplayOff switches settleReplayed off (a replayed turn of an
// ended session is remembered, not settled, as before exp-grown2), for
// tests and ablations that measure it.
var settleReplayOff = false

// replayOff switches rememberReplayed off (a replayed turn leaves nothing
// in its session's recent turns, as before exp-regrow), for tests that
// measure it.
var replayOff = false

// ResumeTurn reads a turn of a live session that an earlier process
// decided (its turn marks) into the session's recent turns, as a replay
// of it does (rememberReplayed), deciding nothing: a daemon restarted in
// the middle of a session reads the turns before its saved cursor again
// (tail.Options.Resume), so that the session's next turns hold and
// revise against them as an uninterrupted capture's do. A turn with no
// decided mark (never decided, or held) is left alone; nothing is
// stored, revised or recorded.
func (p *Pipeline) ResumeTurn(ctx context.Context, t Turn) error {
	_, err := p.ResumeTurns(ctx, []Turn{t})
	return err
}

// ResumeTurns is ResumeTurn of each of turns, in order (a session file's
// turns before its saved cursor), reading only those its session's next
// turns can reach: it returns how many it read. A session keeps the
// turns whose later text fits maxLaterBytes (recentTurns.set: the last
// window) and the oldest of those was distilled with what the turns
// before it said, within the window before it (Turn.held, as the
// session's record held it then): so a session's remembered turns end
// the same when only those two windows are read again, walking back from
// the last turn (resumeFrom), as when every turn is. A long session's
// restart costs at most about twice maxLaterBytes of text, whatever its
// length (BenchmarkRestartThenTurn, backend/daemon).
func (p *Pipeline) ResumeTurns(ctx context.Context, turns []Turn) (int, error) {
	type decided struct {
		t     Turn
		marks map[string]store.TurnMark
	}
	var all []decided
	sizes := map[string][]int{} // per session, what LaterTexts reads of each decided turn
	for _, t := range turns {
		t, _, _ = cleanTurn(t, nil)
		key := turnKey(t)
		if key == "" || t.SessionID == "" {
			continue
		}
		marks, err := p.store.TurnMarks(ctx, key)
		if err != nil {
			return 0, fmt.Errorf("ingest: %w", err)
		}
		if _, ok := marks[""]; !ok {
			continue
		}
		all = append(all, decided{t, marks})
		sizes[t.SessionID] = append(sizes[t.SessionID], textsSize(laterOf(t)))
	}
	from := map[string]int{}
	for id, sz := range sizes {
		from[id] = resumeFrom(sz)
	}
	seen, n := map[string]int{}, 0
	for _, d := range all {
		i := seen[d.t.SessionID]
		seen[d.t.SessionID]++
		if i < from[d.t.SessionID] {
			continue
		}
		var dec memory.Decision
		if err := p.rememberReplayed(ctx, d.t, nil, d.marks, false, &dec); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// resumeFrom returns the first of a session's decided turns (sizes: what
// LaterTexts reads of each, in order) a resume reads again: the oldest
// turn the session keeps after the last one (oldestKept), and before it
// the turns it kept when that one came (the window its Turn.held was
// read from). With resumeBoundOff, 0: every turn.
func resumeFrom(sizes []int) int {
	if resumeBoundOff {
		return 0
	}
	size := func(i int) int { return sizes[i] }
	o := oldestKept(len(sizes), size)
	return oldestKept(o, size)
}

// resumeBoundOff switches the bound of ResumeTurns off (every decided
// turn read again, as at 7034821), for tests that measure it.
var resumeBoundOff = false
