package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// A session ingested when its project could not be told (a history
// copied out of its repository, a Claude Code session naming no working
// directory: before exp-noproj and exp-imports such sessions were of no
// project) and ingested again once it can be has its turns keyed with the
// project now (turnKey holds it), so the first run's marks are not found
// and the turn would be distilled again: every statement the first run
// stored would be stored again under the project (exact and near dedup
// are per project), its memory of no project left beside it. relabelEarlier finds the first
// run instead, by the turn's key without the project (same session, turn,
// user words and first response: the same turn, not a text that happens
// to repeat), and files the memories it stored under the project.

// The first run's marks outlive store.TurnMarkTTL while the memories they
// name are of no project (store: lastingMark), so that a reading months
// later still finds them; once relabelled, the turn is marked under its
// key with the project (a copy of the first run's marks), which answers
// the readings after it, and the first run's marks expire as any.

// errNotRelabelled leaves a memory as it is (relabelEarlier's update).
var errNotRelabelled = errors.New("not relabelled")

// relabelEarlier looks for a run of turn t decided when it had no project
// and, when there is one, gives the memories that run stored or updated
// (its turn marks name them) t's project, if they are still of no
// project and of the source t's exchanges have (a session's: a memory
// merged into, or one a user edited into another source, is left as it
// is), and the project does not hold their text already (heldInProject).
// ok says such a run was found: its decision is returned, a replay naming
// its memories (nothing is stored or reinforced again).
func (p *Pipeline) relabelEarlier(ctx context.Context, r *run, t Turn) (memory.Decision, bool, error) {
	bare := t
	bare.Project = ""
	key := turnKey(bare)
	if key == "" {
		return memory.Decision{}, false, nil
	}
	marks, err := p.store.TurnMarks(ctx, key)
	if err != nil {
		return memory.Decision{}, false, fmt.Errorf("ingest: %w", err)
	}
	if _, ok := marks[""]; !ok {
		return memory.Decision{}, false, nil
	}
	source := r.ex.Source
	if source == "" {
		source = memory.SourceCapture
	}
	moved := 0
	for h, mk := range marks {
		if h == "" || mk.MemoryID == "" || (mk.Outcome != string(memory.VerdictStored) && mk.Outcome != string(memory.VerdictUpdated)) {
			continue
		}
		if held, err := p.heldInProject(ctx, mk.MemoryID, t.Project); err != nil {
			return memory.Decision{}, false, fmt.Errorf("ingest: relabel %s: %w", mk.MemoryID, err)
		} else if held {
			continue
		}
		_, err := p.store.Update(ctx, mk.MemoryID, func(m *memory.Memory) error {
			if m.Project != "" || m.Source != source {
				return errNotRelabelled
			}
			m.Project = t.Project
			return nil
		})
		switch {
		case err == nil:
			moved++
		case errors.Is(err, errNotRelabelled), errors.Is(err, memory.ErrNotFound):
		default:
			return memory.Decision{}, false, fmt.Errorf("ingest: relabel %s: %w", mk.MemoryID, err)
		}
	}
	if err := p.store.MarkTurn(ctx, rekeyed(marks, r.turnKey)); err != nil {
		return memory.Decision{}, false, fmt.Errorf("ingest: mark the turn under its project: %w", err)
	}
	dec := replayed(r, marks)
	dec.Refiled, dec.RefiledUnder = moved, t.Project
	dec.Reason += "; it had no project then: " + strconv.Itoa(moved) + " of its memories filed under " + t.Project
	return dec, true, nil
}

// heldInProject reports whether project holds the text of memory id in a
// live memory of its own (exact-text dedup is per project: a session of
// the project may have said it since): the memory of no project is then
// left as it is rather than filed as a second copy.
func (p *Pipeline) heldInProject(ctx context.Context, id, project string) (bool, error) {
	m, err := p.store.Get(ctx, id)
	if errors.Is(err, memory.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	other, ok, err := p.store.FindByHash(ctx, m.ContentHash, project)
	return ok && !other.Superseded() && other.ID != id, err
}

// rekeyed returns marks as marks of the turn key, in a stable order.
func rekeyed(marks map[string]store.TurnMark, key string) []store.TurnMark {
	out := make([]store.TurnMark, 0, len(marks))
	for _, h := range slices.Sorted(maps.Keys(marks)) {
		mk := marks[h]
		mk.Turn = key
		out = append(out, mk)
	}
	return out
}
