package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// A turn is run again when its capture path retries it (a store error,
// the embedder gone, a kill: the transcript tailer's cursor, the proxy's
// live turn on disk, the headless hold stay before the turn until it is
// decided) or reads it twice. ProcessTurn makes that idempotent with turn
// marks in the store (store.TurnMark): before it places a turn's
// statements it marks them pending, after each placement it records the
// memory and outcome, and once the turn is decided it marks the turn. A
// second run skips the statements marked (they are not reinforced as
// their own duplicates), and a turn marked whole is skipped entirely
// (StageReplay).

// StageReplay names the decision of a turn decided already: nothing is
// stored, reinforced or revised again; the verdict is skipped-duplicate,
// the memories the first run's. Callers do not record it again.
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
// duplicate at StageReplay, naming the first run's memories and verdict.
func replayed(r *run, marks map[string]store.TurnMark) memory.Decision {
	whole := marks[""]
	dec := r.dec
	dec.Verdict = memory.VerdictDuplicate
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

// resolvePending decides a statement marked pending by a run cut short
// (a kill between the mark and the outcome): when a live memory holds its
// text, the run placed it, or it was stored before and the run may or may
// not have reinforced it; either way it is not placed again (at worst one
// reinforcement is lost, never counted twice). ok is false when no memory
// holds it: it is placed as usual.
func (p *Pipeline) resolvePending(ctx context.Context, text string, mk store.TurnMark) (outcome, string, bool, error) {
	m, ok, err := p.store.FindByHash(ctx, memory.ContentHash(text))
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
