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
// session created that a standing memory of a later turn restates (turns:
// the session's recent turns, the newest last), by the first that does
// (the turns in order, each turn's memories by text), records it in the
// restating turn's restated (the memory that restates → those it
// superseded) and lists it in *dec as a candidate of origin
// OriginEarlier.
//
// Only the pairs with a member not weighed yet (recentTurn.untested: the
// newest turn's memories, those a later distillation of an earlier turn
// stored, those a revision let stand again) are tested: every other pair
// was tested when its newer member came, and what stood then and stands
// now did not restate (else one of them would not stand), so testing it
// again finds nothing. Only the memories of the pairs whose texts restate
// are read from the store, to see whether they still stand. The untested
// marks are cleared.
func (p *Pipeline) supersedeRestated(ctx context.Context, t Turn, turns []recentTurn, dec *memory.Decision) error {
	type restater struct {
		c        Candidate
		f        keptFrom
		id       string
		turn     int // index in turns
		untested bool
	}
	untested := map[string]bool{}
	for i := range turns {
		for id := range turns[i].untested {
			untested[id] = true
		}
		turns[i].untested = nil
	}
	if len(untested) == 0 {
		return nil
	}
	var later []restater
	for i, e := range turns {
		for _, text := range slices.Sorted(maps.Keys(e.kept)) {
			if id := e.kept[text]; id != "" {
				f := e.from[text]
				if f.subject == nil {
					f.subject = subjectOf(text)
				}
				later = append(later, restater{c: storedCandidate(text, f), f: f, id: id, turn: i, untested: untested[id]})
			}
		}
	}
	if len(later) < 2 || later[len(later)-1].turn == 0 {
		return nil // nothing to restate, or no memory after the first turn's
	}
	var fresh []int // the untested memories, in order
	for k, b := range later {
		if b.untested {
			fresh = append(fresh, k)
		}
	}
	// A kept text's tokens and lowercased form are read once, then kept
	// with the turn (keptFrom) for the later turns' tests.
	keep := func(r *restater) {
		if e := &turns[r.turn]; e.from != nil {
			e.own()
			e.from[r.c.Text] = r.f
		}
	}
	// The pairs whose texts restate (restaters: by the earlier member, the
	// later ones in order), and the memories they hold (ids).
	restaters := map[int][]int{}
	var ids []string
	for k := range later {
		a := &later[k]
		if a.turn == len(turns)-1 {
			break // the newest turn's memories restate; nothing restates them yet
		}
		test := func(j int) {
			b := &later[j]
			if b.turn <= a.turn || b.id == a.id || !mayRestate(a.c, b.c) || !sameVoice(a.c, b.c) {
				return
			}
			if a.f.tokens == nil {
				a.f.tokens = namedTokens(a.c.Text)
				keep(a)
			}
			if b.f.lowered == "" {
				b.f.lowered = lower(b.c.Text)
				keep(b)
			}
			if namesAll(b.f.lowered, a.f.tokens) && statesRules(a.c.Text, b.c.Text) && asCertain(a.c, b.c) && saysEach(a.c.Text, b.f.lowered, b.c.subject) {
				restaters[k] = append(restaters[k], j)
				ids = append(ids, b.id)
			}
		}
		if a.untested {
			for j := k + 1; j < len(later); j++ {
				test(j)
			}
		} else {
			for _, j := range fresh {
				if j > k {
					test(j)
				}
			}
		}
		if len(restaters[k]) > 0 {
			ids = append(ids, a.id)
		}
	}
	if len(restaters) == 0 {
		return nil
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
	for k := range later {
		a := later[k]
		if len(restaters[k]) == 0 || !stands(a.id) {
			continue
		}
		for _, j := range restaters[k] {
			b := later[j]
			if !stands(b.id) {
				continue
			}
			ok, err := p.supersede(ctx, a.id, b.id)
			if err != nil {
				return err
			}
			gone[a.id] = true
			if ok {
				e := &turns[b.turn]
				e.own()
				e.restated[b.id] = append(e.restated[b.id], a.id)
				dec.Candidates = append(dec.Candidates, memory.CandidateVerdict{Text: preview(a.c.Text), Origin: OriginEarlier, Class: a.c.Class, MemoryID: a.id,
					Reason: fmt.Sprintf("restated in %s: %s; superseded by %s", turns[b.turn].turn.number(), preview(b.c.Text), b.id)})
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

// unrestate lets the memories id, a memory of turn e, superseded as
// restatements (e.restated) stand again: id, revised, no longer says what
// they said. They are marked untested: the restatement test weighs them
// again with what their session said after them.
func (p *Pipeline) unrestate(ctx context.Context, id string, e *recentTurn) error {
	e.own()
	for _, old := range e.restated[id] {
		e.markUntested(old)
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
	delete(e.restated, id)
	return nil
}

// sameVoice reports whether a later turn's memory b may restate an
// earlier turn's memory a by whose words they are: the user's words stand
// until the user says them again, and what the user taught
// (Candidate.taught) until the model restates what the user taught again.
// The model's narration of a later turn ("`bd show spotter-4te` revealed
// an epic") or an instruction file names what the user said ("Run `bd
// show <id>` to see the issue details") without being the user's word
// for it: superseding the user's memory by it would lose its type and its
// cue. Within a turn (dropRestated) the model's answer reads the user's
// words of the same turn, and mayRestate alone decides.
func sameVoice(a, b Candidate) bool {
	return (a.Origin != OriginUser || b.Origin == OriginUser) && (!a.taught || b.taught)
}

// storedCandidate is a kept statement of a turn, stored as text, as the
// restatement test reads it.
func storedCandidate(text string, f keptFrom) Candidate {
	if f.subject == nil {
		f.subject = subjectOf(text)
	}
	return Candidate{Text: text, Origin: f.origin, Class: f.class, Keep: true, taught: f.taught, subject: f.subject}
}

// markUntested marks the memory id for the next restatement test
// (supersedeRestated).
func (e *recentTurn) markUntested(id string) {
	e.own()
	if e.untested == nil {
		e.untested = map[string]bool{}
	}
	e.untested[id] = true
}
