package steward

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// journal is the undo journal of one applied run (Options.Dir/runs/, see
// journals.go), written durably before the run's batch: the full record of
// every memory the run touches as it was before (embedding included), the
// UpdatedAt it has after, and the ledger entries the run replaced.
type journal struct {
	Version int `json:"version"`
	// Run describes the run for Runs; its fields come ahead of the records
	// (Memories is len(Records)), so Runs stops reading there.
	Run
	Records []journalRecord `json:"records"`
	Ledger  []ledgerEntry   `json:"ledger,omitempty"`
}

// journalVersion is the journal format written: 2 journals a record's
// embedding only when the run changed its text (1 always did; both are
// read).
const journalVersion = 2

// journalRecord is one touched memory.
type journalRecord struct {
	// Before is the record before the run, without its embedding;
	// Embedding is that embedding packed (little-endian float32, base64 in
	// JSON: exact and compact) when the run changed the text (version 1:
	// always), else empty: the record or the trash keeps it.
	Before    memory.Memory `json:"before"`
	Embedding []byte        `json:"embedding,omitempty"`
	// After is the record the run wrote, without its embedding; nil when
	// the run trashed the memory.
	After   *memory.Memory `json:"after,omitempty"`
	Trashed bool           `json:"trashed,omitempty"`
}

// ledgerEntry is a ledger value a run replaced: Had false means none.
type ledgerEntry struct {
	Op  string    `json:"op"`
	ID  string    `json:"id"`
	Had bool      `json:"had,omitempty"`
	At  time.Time `json:"at,omitzero"`
}

func pack(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func unpack(b []byte) []float32 {
	if len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func withoutEmbedding(m memory.Memory) memory.Memory {
	m.Embedding = nil
	return m
}

// later returns now, or just after prev when the clock has not passed it,
// so a write is always told apart from the version it replaces.
func later(now, prev time.Time) time.Time {
	now = now.UTC()
	if !now.After(prev) {
		return prev.Add(time.Microsecond).UTC()
	}
	return now
}

// prepared is a run ready to be written.
type prepared struct {
	batch   store.Batch
	journal journal
	applied []Action
	skipped []Skip
	ledger  []ledgerEntry // rate-limited actions applied: op, id
}

// Apply carries out the plan's actions of the operations ops (empty: all),
// after checking each against the store as it is now: an action whose
// memory changed since the plan (UpdatedAt differs), is gone, or to which
// the operation no longer applies is skipped and reported, never applied
// blindly. Actions on one memory are re-run in sweep order on its current
// record, so applying a subset of operations gives what that subset does.
//
// Safety: the undo journal (the full before-records) is written and
// fsync'd first, then every change is one store.Apply batch (one bbolt
// transaction: all or nothing, even under kill -9); deleted memories go to
// the trash, never away. The batch's preconditions catch a write racing
// the apply; those actions are dropped and the rest retried.
func (s *Steward) Apply(ctx context.Context, plan *Plan, ops []string) (Result, error) {
	return s.apply(ctx, plan, ops, false)
}

// ApplyScheduled is Apply for a scheduled sweep: its run is listed as
// the schedule's (Run.Scheduled), not a user's.
func (s *Steward) ApplyScheduled(ctx context.Context, plan *Plan, ops []string) (Result, error) {
	return s.apply(ctx, plan, ops, true)
}

func (s *Steward) apply(ctx context.Context, plan *Plan, ops []string, scheduled bool) (Result, error) {
	var res Result
	if plan == nil {
		return res, fmt.Errorf("steward apply: %w", &memory.ValidationError{Problems: []string{"no plan"}})
	}
	if s.opts.Dir == "" {
		return res, fmt.Errorf("steward apply: %w", &memory.ValidationError{Problems: []string{"no steward directory for the undo journal"}})
	}
	sel, err := checkOps(ops)
	if err != nil {
		return res, fmt.Errorf("steward apply: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkJournals(ctx)
	now := s.clock.Now().UTC()
	led, err := loadLedger(s.opts.Dir)
	if err != nil {
		return res, fmt.Errorf("steward apply: %w", err)
	}
	runID := newRunID(now)
	excluded := map[string]string{}
	for attempt := 0; ; attempt++ {
		pr, err := s.prepare(ctx, plan, sel, excluded, led, now)
		if err != nil {
			return res, fmt.Errorf("steward apply: %w", err)
		}
		res = Result{RunID: runID, PlanID: plan.ID, At: now, Applied: pr.applied, Skipped: pr.skipped, Counts: map[string]int{}}
		for _, a := range pr.applied {
			res.Counts[a.Op]++
		}
		res.Trashed = len(pr.batch.Trash)
		if len(pr.batch.Put) == 0 && len(pr.batch.Trash) == 0 {
			return res, nil // nothing to do, nothing to journal
		}
		pr.journal.RunID, pr.journal.PlanID, pr.journal.At = runID, plan.ID, now
		pr.journal.Counts, pr.journal.Memories = res.Counts, len(pr.journal.Records)
		pr.journal.Scheduled = scheduled
		pr.journal.Ops = nil
		for _, op := range sel {
			if res.Counts[op] > 0 {
				pr.journal.Ops = append(pr.journal.Ops, op)
			}
		}
		for _, le := range pr.ledger {
			t, had := led.get(le.Op, le.ID)
			pr.journal.Ledger = append(pr.journal.Ledger, ledgerEntry{Op: le.Op, ID: le.ID, Had: had, At: t})
		}
		restore, err := s.writeJournal(&pr.journal)
		if err != nil {
			return res, fmt.Errorf("steward apply: %w", err)
		}
		if s.beforeWrite != nil {
			s.beforeWrite()
		}
		err = s.st.Apply(ctx, pr.batch)
		var ce *store.ConflictError
		if errors.As(err, &ce) && len(ce.Changed) > 0 && attempt < 3 {
			restore()
			for _, id := range ce.Changed {
				excluded[id] = "changed while the run was being applied"
			}
			continue
		}
		if errors.Is(err, memory.ErrModelMismatch) && attempt < 3 {
			// A re-embedding switched the store's model since the records
			// were read: a merge survivor would carry the old model's
			// vector. Read them again, with their new vectors.
			restore()
			continue
		}
		if err != nil && !errors.Is(err, store.ErrIndexPending) {
			restore()
			return res, fmt.Errorf("steward apply: %w", err)
		}
		if err != nil {
			s.log.Warn("steward run stored; the text index catches up later", "run", runID, "err", err)
		}
		s.pruneJournals()
		for _, le := range pr.ledger {
			led.set(le.Op, le.ID, now)
		}
		if err := led.save(s.opts.Dir, now, s.opts.MinInterval); err != nil {
			s.log.Warn("steward ledger not saved: rate-limited operations may repeat early", "err", err)
		}
		s.log.Info("steward run applied", "run", runID, "plan", plan.ID, "counts", res.Counts, "trashed", res.Trashed, "skipped", len(res.Skipped))
		return res, nil
	}
}

// prepare re-checks the plan's selected actions against the store and
// builds the batch, the journal and the report.
func (s *Steward) prepare(ctx context.Context, plan *Plan, sel []string, excluded map[string]string, led *ledger, now time.Time) (*prepared, error) {
	pr := &prepared{batch: store.Batch{IfUpdatedAt: map[string]time.Time{}}, journal: journal{Version: journalVersion}}
	var order []string
	groups := map[string][]Action{}
	var need []string
	for _, a := range plan.Actions {
		if !slices.Contains(sel, a.Op) {
			continue
		}
		if _, ok := groups[a.ID]; !ok {
			order = append(order, a.ID)
			need = append(need, a.ID)
		}
		groups[a.ID] = append(groups[a.ID], a)
		need = append(need, a.MergedIDs...)
	}
	if len(order) == 0 {
		return pr, nil
	}
	// Merges first: a plan made for a subset of operations (PlanOptions.Apply
	// without merge) also lists actions on a merge's loser; applied with
	// the merge, the loser goes into its survivor and its own actions are
	// skipped, rather than the merge for them.
	slices.SortStableFunc(order, func(a, b string) int {
		return boolOrder(groups[b][0].Op == OpMerge) - boolOrder(groups[a][0].Op == OpMerge)
	})
	cur, err := s.st.GetMany(ctx, need)
	if err != nil {
		return nil, err
	}
	e := &env{now: now, cfg: s.cfg, ledger: led, interval: s.opts.MinInterval}
	used := map[string]bool{}
	skipAll := func(acts []Action, why string) {
		for _, a := range acts {
			pr.skipped = append(pr.skipped, Skip{Op: a.Op, ID: a.ID, Reason: why})
		}
	}
	for _, id := range order {
		acts := groups[id]
		m, ok := cur[id]
		switch {
		case !ok:
			skipAll(acts, "no longer in the store")
			continue
		case excluded[id] != "":
			skipAll(acts, excluded[id])
			continue
		case used[id]:
			skipAll(acts, "already part of another action of this run")
			continue
		case !m.UpdatedAt.Equal(acts[0].Before.UpdatedAt):
			skipAll(acts, fmt.Sprintf("changed since the plan (updated_at %s, the plan saw %s)",
				m.UpdatedAt.Format(time.RFC3339Nano), acts[0].Before.UpdatedAt.Format(time.RFC3339Nano)))
			continue
		}
		w := m
		trash, trashReason := false, ""
		var applied []Action
		var losers []memory.Memory
		for _, a := range acts {
			if trash {
				pr.skipped = append(pr.skipped, Skip{Op: a.Op, ID: id, Reason: "the memory goes to the trash"})
				continue
			}
			if a.Op == OpMerge {
				l, why := s.checkLoser(a, cur, excluded, used)
				if why == "" && !mergeable(&w, &l, now, true) {
					why = "the two memories are no longer mergeable"
				}
				var r mergeResult
				if why == "" {
					r = merge(&w, &l)
					if r.refused != "" {
						why = r.refused
					} else if r.survivor.ID != w.ID {
						why = "the survivor would now be the other memory: plan again"
					}
				}
				if why != "" {
					pr.skipped = append(pr.skipped, Skip{Op: a.Op, ID: id, Reason: why})
					continue
				}
				a.Before, a.MergedBefore = snapshot(&w, true), []Snapshot{snapshot(&l, true)}
				w = r.merged
				a.After, a.KeptText = snapshot(&w, true), w.Text
				applied = append(applied, a)
				losers = append(losers, l)
				continue
			}
			before := w
			changed, tr, reason := e.run(a.Op, &w)
			if !changed {
				pr.skipped = append(pr.skipped, Skip{Op: a.Op, ID: id, Reason: "no longer applies"})
				continue
			}
			a.Before, a.After, a.Reason = snapshot(&before, false), snapshot(&w, false), reason
			a.After.Trashed = tr
			applied = append(applied, a)
			if tr {
				trash, trashReason = true, a.Op+": "+reason
			}
			if rateLimited[a.Op] {
				pr.ledger = append(pr.ledger, ledgerEntry{Op: a.Op, ID: id})
			}
		}
		if len(applied) == 0 {
			continue
		}
		used[id] = true
		pr.applied = append(pr.applied, applied...)
		pr.batch.IfUpdatedAt[id] = m.UpdatedAt
		// The embedding is journaled only when the run changes the text:
		// otherwise the record keeps it, and a trashed one keeps it in the
		// trash (a decay run over a large store writes a quarter of the
		// journal it would with every vector).
		jr := journalRecord{Before: withoutEmbedding(m)}
		if trash {
			jr.Trashed = true
			pr.batch.Trash = append(pr.batch.Trash, store.TrashRequest{ID: id, Reason: trashReason})
		} else {
			w.UpdatedAt = later(now, m.UpdatedAt)
			after := withoutEmbedding(w)
			jr.After = &after
			if w.Text != m.Text {
				jr.Embedding = pack(m.Embedding)
			}
			pr.batch.Put = append(pr.batch.Put, w)
		}
		pr.journal.Records = append(pr.journal.Records, jr)
		for _, l := range losers {
			used[l.ID] = true
			pr.batch.IfUpdatedAt[l.ID] = l.UpdatedAt
			pr.batch.Trash = append(pr.batch.Trash, store.TrashRequest{ID: l.ID, Reason: "merged into " + id})
			pr.journal.Records = append(pr.journal.Records, journalRecord{Before: withoutEmbedding(l), Trashed: true})
		}
	}
	return pr, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkLoser returns the current record of a merge action's loser, or why
// the merge cannot go ahead.
func (s *Steward) checkLoser(a Action, cur map[string]memory.Memory, excluded map[string]string, used map[string]bool) (memory.Memory, string) {
	if len(a.MergedIDs) != 1 || len(a.MergedBefore) != 1 {
		return memory.Memory{}, "malformed merge action"
	}
	lid := a.MergedIDs[0]
	l, ok := cur[lid]
	switch {
	case !ok:
		return l, "the merged memory " + lid + " is no longer in the store"
	case excluded[lid] != "":
		return l, "the merged memory " + lid + ": " + excluded[lid]
	case used[lid]:
		return l, "the merged memory " + lid + " is already part of another action of this run"
	case !l.UpdatedAt.Equal(a.MergedBefore[0].UpdatedAt):
		return l, "the merged memory " + lid + " changed since the plan"
	}
	return l, ""
}

// Undo reverts the last applied run (see UndoRun).
func (s *Steward) Undo(ctx context.Context) (Result, error) {
	return s.UndoRun(ctx, "")
}

// UndoRun reverts the applied run runID ("" for the newest) in one
// store.Apply batch and then removes its journal (an undo is not undone).
// The journals of the last JournalDepth runs are kept (Runs lists them), so
// undoing again reverts the run before, and a run the user applied stays
// undoable after scheduled runs; undoing a run that later runs changed
// keeps their changes, as below. A memory the run changed and nothing
// changed since gets its record back exactly as it was, every field
// (UpdatedAt included) and the embedding; a memory the run trashed comes
// back from the trash exactly as it was. A memory changed after the run (a
// recall's access count, an edit) is rebased: the run's changes are reverted field by field where
// the field still holds the run's value, counters lose what the run added
// and keep what came later, and it is reported in Counts["rebased"]. A
// trashed memory purged since, or one deleted since, cannot come back and
// is reported in Skipped. With no recorded run, UndoRun returns
// ErrNothingToUndo; with a runID it does not keep, memory.ErrNotFound.
func (s *Steward) UndoRun(ctx context.Context, runID string) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkJournals(ctx)
	j, ref, err := s.readJournal(runID)
	if err != nil {
		return Result{}, fmt.Errorf("steward undo: %w", err)
	}
	now := s.clock.Now().UTC()
	for attempt := 0; ; attempt++ {
		res := Result{RunID: j.RunID, PlanID: j.PlanID, At: now, Counts: map[string]int{}}
		ids := make([]string, 0, len(j.Records))
		var trashedIDs []string
		for _, r := range j.Records {
			ids = append(ids, r.Before.ID)
			if r.Trashed {
				trashedIDs = append(trashedIDs, r.Before.ID)
			}
		}
		cur, err := s.st.GetMany(ctx, ids)
		if err != nil {
			return res, fmt.Errorf("steward undo: %w", err)
		}
		inTrash, err := s.st.TrashGet(ctx, trashedIDs)
		if err != nil {
			return res, fmt.Errorf("steward undo: %w", err)
		}
		b := store.Batch{IfUpdatedAt: map[string]time.Time{}}
		var stale []int // b.Put entries journaled with a vector of another model
		info := s.st.Info()
		for _, r := range j.Records {
			id := r.Before.ID
			before := r.Before
			before.Embedding = unpack(r.Embedding)
			c, live := cur[id]
			if before.Embedding == nil && live && c.Text == before.Text {
				// Not journaled: the run kept the text, and so the vector.
				before.Embedding, before.EmbeddingModel = c.Embedding, c.EmbeddingModel
			}
			if r.Trashed {
				switch {
				case inTrash[id].Memory.ID != "":
					b.Restore = append(b.Restore, id)
					res.Counts["restored"]++
				case live && c.UpdatedAt.Equal(before.UpdatedAt):
					res.Skipped = append(res.Skipped, Skip{ID: id, Reason: "not in the trash: live as before the run"})
				case live:
					res.Skipped = append(res.Skipped, Skip{ID: id, Reason: "restored from the trash and changed since: left as it is"})
				default:
					res.Skipped = append(res.Skipped, Skip{ID: id, Reason: "purged from the trash: cannot be restored"})
				}
				continue
			}
			switch {
			case !live:
				res.Skipped = append(res.Skipped, Skip{ID: id, Reason: "no longer in the store (deleted or trashed since the run)"})
				continue
			case r.After != nil && c.UpdatedAt.Equal(r.After.UpdatedAt):
				if before.EmbeddingModel != info.Model || len(before.Embedding) != info.Dim {
					stale = append(stale, len(b.Put))
				}
				b.Put = append(b.Put, before)
				res.Counts["reverted"]++
			case c.UpdatedAt.Equal(before.UpdatedAt):
				res.Skipped = append(res.Skipped, Skip{ID: id, Reason: "already as before the run"})
				continue
			case r.After != nil:
				b.Put = append(b.Put, rebase(before, *r.After, c, now))
				res.Counts["rebased"]++
			default:
				continue
			}
			b.IfUpdatedAt[id] = c.UpdatedAt
		}
		err = s.reembedUndo(ctx, &b, stale)
		if err == nil {
			err = s.st.Apply(ctx, b)
		}
		var ce *store.ConflictError
		if errors.As(err, &ce) && len(ce.Changed) > 0 && attempt < 3 {
			continue // something was written meanwhile: read again
		}
		if errors.Is(err, memory.ErrModelMismatch) && s.opts.Embedder != nil && attempt < 3 {
			continue // the store switched models meanwhile: embed again
		}
		if err != nil && !errors.Is(err, store.ErrIndexPending) {
			return res, fmt.Errorf("steward undo of run %s: %w", j.RunID, err)
		}
		if lerr := s.restoreLedger(j, now); lerr != nil {
			s.log.Warn("steward ledger not restored by the undo", "err", lerr)
		}
		if err := os.Remove(ref.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("steward undo: remove the journal: %w", err)
		}
		_ = syncDir(filepath.Dir(ref.path))
		s.log.Info("steward run undone", "run", j.RunID, "counts", res.Counts, "skipped", len(res.Skipped))
		return res, nil
	}
}

// restoreLedger puts back the ledger entries j's run replaced.
func (s *Steward) restoreLedger(j *journal, now time.Time) error {
	led, err := loadLedger(s.opts.Dir)
	if err != nil {
		return err
	}
	for _, le := range j.Ledger {
		if le.Had {
			led.set(le.Op, le.ID, le.At)
		} else {
			led.unset(le.Op, le.ID)
		}
	}
	return led.save(s.opts.Dir, now, s.opts.MinInterval)
}

// rebase reverts a run's changes (before -> after) on cur, a record
// changed since the run: each field the run set and that still holds the
// run's value goes back; counters lose what the run added and keep what
// came later; hits added later stay.
func rebase(before, after, cur memory.Memory, now time.Time) memory.Memory {
	r := cur
	if cur.Importance == after.Importance {
		r.Importance = before.Importance
	}
	if cur.CooldownUntil.Equal(after.CooldownUntil) {
		r.CooldownUntil = before.CooldownUntil
	}
	if cur.Text == after.Text && before.Text != after.Text {
		r.Text, r.Embedding, r.EmbeddingModel = before.Text, before.Embedding, before.EmbeddingModel
	}
	r.AccessCount = max(0, before.AccessCount+cur.AccessCount-after.AccessCount)
	r.ReinforcedCount = max(0, before.ReinforcedCount+cur.ReinforcedCount-after.ReinforcedCount)
	r.FeedbackN = max(0, before.FeedbackN+cur.FeedbackN-after.FeedbackN)
	r.FeedbackSum = before.FeedbackSum + cur.FeedbackSum - after.FeedbackSum
	var last time.Time
	for _, h := range after.Hits {
		if h.After(last) {
			last = h
		}
	}
	hits := slices.Clone(before.Hits)
	for _, h := range cur.Hits {
		if h.After(last) {
			hits = append(hits, h)
		}
	}
	r.Hits = memory.MergeHits(hits, nil)
	if cur.LastAccessed.Equal(after.LastAccessed) {
		r.LastAccessed = before.LastAccessed
	}
	if cur.LastReinforcedAt.Equal(after.LastReinforcedAt) {
		r.LastReinforcedAt = before.LastReinforcedAt
	}
	r.UpdatedAt = later(now, cur.UpdatedAt)
	return r
}

// reembedUndo gives an undo's records whose vectors are of a model the
// store has left since the run (a re-embedding in between) vectors of the
// store's model: the texts of b.Put[stale] and of the restored records
// trashed with another model's vectors, embedded with opts.Embedder. A
// reverted record is then as before the run but for its vector. Without an
// embedder it does nothing and the store refuses the old vectors.
func (s *Steward) reembedUndo(ctx context.Context, b *store.Batch, stale []int) error {
	emb := s.opts.Embedder
	if emb == nil {
		return nil
	}
	vecs, err := s.st.TrashEmbeddings(ctx, emb, b.Restore)
	if err != nil {
		return fmt.Errorf("steward undo: %w", err)
	}
	b.RestoreEmbeddings = vecs
	if len(stale) == 0 {
		return nil
	}
	ms := make([]memory.Memory, len(stale))
	for i, k := range stale {
		ms[i] = b.Put[k]
	}
	if err := store.EmbedInto(ctx, emb, ms); err != nil {
		return fmt.Errorf("steward undo: embed records journaled with another model: %w", err)
	}
	for i, k := range stale {
		b.Put[k] = ms[i]
	}
	return nil
}
