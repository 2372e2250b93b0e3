package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/memtray/memtray/backend/memory"
)

// Restatements across turns. Within a turn, a statement a later one of
// the turn restates is dropped before anything is stored (dropRestated).
// Across turns the earlier statement is stored already when a later turn
// says it again (a setup step repeated in every answer, a schema
// summarised again): when a memory a turn creates restates a memory an
// earlier turn of its session created (the test dropRestated applies:
// mayRestate, then namesAll of the earlier one's load-bearing tokens),
// the earlier memory is superseded by the later one, the settled version,
// as a revised memory is (reviseOne): kept in the store as history,
// hidden from recall, never deleted. Batch ingest and live capture both
// remember, per session, what the recent turns created (recentTurns), so
// both supersede the same memories. A live turn's memories can still
// change after it is decided (a later turn revises one, the turn goes on
// after its Stop): when a memory that superseded restated ones is revised
// itself, they stand again (unrestate), and the restatement test runs
// again with what stands.

// supersedeRestated supersedes each standing memory an earlier turn of the
// session created that a standing memory of a later turn restates (the
// turns after it in earlier, then created, what turn t created), by the
// first that does (the turns in order, each turn's memories by text),
// records it in the
// restating turn's restated (the memory that restates → those it
// superseded) and lists it in *dec as a candidate of origin
// OriginEarlier. A memory a revision let stand again (unrestate) is
// tested again with what its session said after it.
func (p *Pipeline) supersedeRestated(ctx context.Context, t Turn, earlier []recentTurn, created recentTurn, dec *memory.Decision) error {
	type restater struct {
		c        Candidate
		lowered  string
		id       string
		turn     int // index in turns
		restated map[string][]string
	}
	turns := append(slices.Clip(earlier), created)
	var later []restater
	var ids []string
	for i, e := range turns {
		for _, text := range slices.Sorted(maps.Keys(e.kept)) {
			if id := e.kept[text]; id != "" {
				later = append(later, restater{c: storedCandidate(text, e.from[text]), id: id, turn: i, restated: e.restated})
				ids = append(ids, id)
			}
		}
	}
	if len(later) < 2 || later[len(later)-1].turn == 0 {
		return nil // nothing to restate, or no memory after the first turn's
	}
	// What stands now: a memory superseded (by this test or a revision)
	// or trashed meanwhile neither restates nor is restated.
	ms, err := p.store.GetMany(ctx, ids)
	if err != nil {
		return fmt.Errorf("read the memories of session %s: %w", t.SessionID, err)
	}
	gone := map[string]bool{}
	stands := func(id string) bool {
		m, ok := ms[id]
		return ok && !m.Superseded() && !gone[id]
	}
	n := 0
	for _, a := range later {
		if !stands(a.id) || a.turn == len(turns)-1 {
			continue
		}
		var tokens []string
		for k := range later {
			b := &later[k]
			if b.turn <= a.turn || b.id == a.id || !stands(b.id) || !mayRestate(a.c, b.c) {
				continue
			}
			if tokens == nil {
				tokens = namedTokens(a.c.Text)
			}
			if b.lowered == "" {
				b.lowered = lower(b.c.Text)
			}
			if !namesAll(b.lowered, tokens) {
				continue
			}
			ok, err := p.supersede(ctx, a.id, b.id)
			if err != nil {
				return err
			}
			gone[a.id] = true
			if ok {
				b.restated[b.id] = append(b.restated[b.id], a.id)
				dec.Candidates = append(dec.Candidates, memory.CandidateVerdict{Text: preview(a.c.Text), Origin: OriginEarlier, Class: a.c.Class, MemoryID: a.id,
					Reason: fmt.Sprintf("restated in turn %d: %s; superseded by %s", turns[b.turn].turn.Turn, preview(b.c.Text), b.id)})
				n++
			}
			break
		}
	}
	if n > 0 {
		dec.Reason += fmt.Sprintf("; superseded %d memories of earlier turns it restates", n)
	}
	return nil
}

// unrestate lets the memories id superseded as restatements (restated)
// stand again: id, revised, no longer says what they said.
func (p *Pipeline) unrestate(ctx context.Context, id string, restated map[string][]string) error {
	for _, old := range restated[id] {
		_, err := p.store.Update(ctx, old, func(m *memory.Memory) error {
			if m.SupersededBy != id {
				return errSkipRevision
			}
			m.SupersededBy, m.UpdatedAt = "", p.clock.Now()
			return nil
		})
		if err != nil && !errors.Is(err, errSkipRevision) && !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("let %s, superseded by %s, stand again: %w", old, id, err)
		}
		_, err = p.store.Update(ctx, id, func(m *memory.Memory) error {
			if m.Supersedes != old {
				return errSkipRevision
			}
			m.Supersedes = ""
			return nil
		})
		if err != nil && !errors.Is(err, errSkipRevision) && !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("unlink %s from %s: %w", id, old, err)
		}
	}
	delete(restated, id)
	return nil
}

// storedCandidate is a kept statement of a turn, stored as text, as the
// restatement test reads it.
func storedCandidate(text string, f keptFrom) Candidate {
	if f.subject == nil {
		f.subject = subjectOf(text)
	}
	return Candidate{Text: text, Origin: f.origin, Class: f.class, Keep: true, subject: f.subject}
}
