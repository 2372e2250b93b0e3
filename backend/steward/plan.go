package steward

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

const (
	// mergeNeighbours is how many nearest neighbours each memory's merge
	// search asks the store for.
	mergeNeighbours = 6
	// mergeChunk is how many memories share one pass over the vector index
	// (store.VectorSearchMany).
	mergeChunk = 64
	// maxRefused bounds Plan.Refused.
	maxRefused = 200
)

// Plan makes a dry run over the whole store (or one project): every
// operation of opts.Ops, in sweep order, memory by memory. It reads the
// store page by page (store.Iterate: a short read transaction per 256
// records, no lock held between pages), so capture and recall go on during
// a sweep; a memory written meanwhile may or may not be seen, and Apply
// skips an action whose memory changed since. Merge candidates come from
// the vector index (the nearest neighbours of each memory, several
// memories per pass), never from comparing all pairs here; each memory
// takes part in at most one merge per plan (a cluster of three merges over
// two sweeps). Only the operations of opts.Apply (all, when empty) change
// the record the operations after them are judged on (PlanOptions.Apply).
//
// The merge scan is incremental when it can be: with Options.Dir set, a
// plan remembers when its merge scan started, the store's write sequence
// number then and the merges it proposed (the ledger); the next plan of
// the same scope, within MinInterval, at the same merge similarity and
// embedding model, searches neighbours only for the memories written
// since (store.ChangedSince: every write counts, an import or a restore
// from the trash too, whatever timestamps the record keeps), and
// re-checks the proposed and refused pairs. A pair of memories both
// unchanged since the last scan was judged then (the search is
// symmetric). PlanOptions.FullMerge, a week without a scan, a new
// similarity threshold or embedding model make it a full scan again.
func (s *Steward) Plan(ctx context.Context, opts PlanOptions) (*Plan, error) {
	ops, err := checkOps(opts.Ops)
	if err != nil {
		return nil, fmt.Errorf("steward plan: %w", err)
	}
	applies, err := appliedOps(ops, opts.Apply)
	if err != nil {
		return nil, fmt.Errorf("steward plan: %w", err)
	}
	if opts.All && opts.Project != "" {
		return nil, fmt.Errorf("steward plan: %w", &memory.ValidationError{Problems: []string{"all (every project) and project exclude each other"}})
	}
	start := time.Now()
	now := s.clock.Now()
	s.mu.Lock()
	s.checkJournals(ctx)
	led, err := loadLedger(s.opts.Dir)
	s.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("steward plan: %w", err)
	}
	p := &Plan{ID: newRunID(now), CreatedAt: now.UTC(), Scope: "store", Project: opts.Project, All: opts.All,
		Ops: ops, Counts: map[string]int{}, Actions: []Action{}}
	switch {
	case opts.All:
		p.Scope = "all"
	case opts.Project != "":
		p.Scope = "project:" + opts.Project
	}
	merges := map[string]*mergeResult{}
	losers := map[string]bool{}
	if slices.Contains(ops, OpMerge) {
		mark, changed, seq, err := s.mergeScope(ctx, led, p.Scope, opts.FullMerge, now)
		if err != nil {
			return nil, fmt.Errorf("steward plan: merge: %w", err)
		}
		if changed != nil {
			p.MergeSince = mark.At
		}
		if err := s.planMerges(ctx, opts, now, p, mark, changed, merges, losers); err != nil {
			return nil, fmt.Errorf("steward plan: merge: %w", err)
		}
		if err := s.saveMergeMark(p.Scope, now, seq, merges, p.Refused); err != nil {
			s.log.Warn("steward merge scan not recorded: the next plan scans in full", "err", err)
		}
	}
	e := &env{now: now, cfg: s.cfg, ledger: led, interval: s.opts.MinInterval}
	var active []time.Time // per action: the memory's last activity, for Quality
	var access []int
	err = s.st.Iterate(ctx, store.Filter{Project: opts.Project, IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		p.Scanned++
		p.Events += m.AccessCount
		p.MaxHits = max(p.MaxHits, m.AccessCount)
		if !eligible(&m) || (losers[m.ID] && applies[OpMerge]) {
			return nil
		}
		base := Action{ID: m.ID, Project: m.Project, Kind: m.Kind, Type: m.Type, Preview: preview(m.Text)}
		w := m
		if r, ok := merges[m.ID]; ok {
			if r.survivor.UpdatedAt.Equal(m.UpdatedAt) {
				a := base
				a.Op, a.Survivor, a.MergedIDs = OpMerge, m.ID, []string{r.loser.ID}
				a.MergedBefore = []Snapshot{snapshot(&r.loser, true)}
				a.Before, a.After = snapshot(&m, true), snapshot(&r.merged, true)
				a.KeptText, a.Similarity, a.Reason = r.merged.Text, r.similarity, r.reason
				p.Actions = append(p.Actions, a)
				active, access = append(active, lastActive(&r.merged)), append(access, r.merged.AccessCount)
				if applies[OpMerge] {
					w = r.merged
				}
			} else {
				delete(merges, m.ID) // changed between the passes: next sweep
			}
		}
		for _, op := range ops {
			if op == OpMerge {
				continue
			}
			after := w
			changed, trash, reason := e.run(op, &after)
			if !changed {
				continue
			}
			a := base
			a.Op, a.Reason = op, reason
			a.Before, a.After = snapshot(&w, false), snapshot(&after, false)
			a.After.Trashed = trash
			p.Actions = append(p.Actions, a)
			active, access = append(active, lastActive(&w)), append(access, w.AccessCount)
			if !applies[op] {
				continue // not to be applied: the next operations judge the memory without it
			}
			w = after
			if trash {
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("steward plan: %w", err)
	}
	p.Scored = Scored(p.Events, s.cfg)
	for i := range p.Actions {
		p.Counts[p.Actions[i].Op]++
		if p.Scored {
			m := memory.Memory{AccessCount: access[i], CreatedAt: active[i]}
			p.Actions[i].Quality = Quality(&m, p.MaxHits, now, s.cfg)
		}
	}
	p.Duration = time.Since(start)
	return p, nil
}

// appliedOps returns the operations of ops whose effects the plan's later
// operations on a memory are judged after: those of apply (each must be
// one of config.StewardOps; one not planned is left out), or every one of
// ops when apply is empty.
func appliedOps(ops, apply []string) (map[string]bool, error) {
	if len(apply) == 0 {
		apply = ops
	} else if _, err := checkOps(apply); err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	set := map[string]bool{}
	for _, op := range apply {
		if slices.Contains(ops, op) {
			set[op] = true
		}
	}
	return set, nil
}

// planMerges finds the merges of the plan: for each memory (page by page,
// mergeChunk at a time) its nearest neighbours at or above the merge
// similarity, the first mergeable one not yet claimed by another merge.
// With changed not nil (an incremental scan), only the memories in it are
// searched, and the pairs mark proposed or refused are checked again.
func (s *Steward) planMerges(ctx context.Context, opts PlanOptions, now time.Time, p *Plan, mark mergeMark, changed map[string]struct{}, merges map[string]*mergeResult, losers map[string]bool) error {
	claimed := map[string]bool{}
	refusedPairs := map[[2]string]bool{}
	df := map[string]int{} // document frequencies read for contentCheck
	thr := s.mergeSimilarity()
	// The merges the last scan proposed: still there, unchanged and mergeable?
	pending := mark.Pending
	if changed != nil && len(pending)+len(mark.Refused) > 0 {
		var ids []string
		for _, pr := range slices.Concat(pending, mark.Refused) {
			ids = append(ids, pr[0], pr[1])
		}
		got, err := s.st.GetMany(ctx, ids)
		if err != nil {
			return err
		}
		for _, pr := range pending {
			a, aok := got[pr[0]]
			b, bok := got[pr[1]]
			if !aok || !bok || claimed[a.ID] || claimed[b.ID] || !mergeable(&a, &b, now, opts.All) ||
				(opts.Project != "" && a.Project != opts.Project) || a.EmbeddingModel != b.EmbeddingModel {
				continue // two models' vectors (a switch since the scan): their cosine means nothing
			}
			sim := memory.Cosine(a.Embedding, b.Embedding)
			if sim < thr {
				continue
			}
			r := merge(&a, &b)
			if err := s.contentCheck(ctx, &r, df); err != nil {
				return err
			}
			if r.refused != "" {
				continue
			}
			r.similarity = sim
			r.reason = mergeReason(&r, thr)
			claimed[a.ID], claimed[b.ID] = true, true
			merges[r.survivor.ID] = &r
			losers[r.loser.ID] = true
		}
		// The pairs the last scan refused: still near-duplicates, still
		// refused? One that is now mergeable (unpinned, woken) merges.
		for _, pr := range mark.Refused {
			a, aok := got[pr[0]]
			b, bok := got[pr[1]]
			if !aok || !bok || claimed[a.ID] || claimed[b.ID] || (opts.Project != "" && a.Project != opts.Project) ||
				a.EmbeddingModel != b.EmbeddingModel {
				continue
			}
			sim := memory.Cosine(a.Embedding, b.Embedding)
			if sim < thr {
				continue
			}
			if !mergeable(&a, &b, now, opts.All) {
				if why := notMergeable(&a, &b, now); why != "" && len(p.Refused) < maxRefused {
					refusedPairs[[2]string{min(a.ID, b.ID), max(a.ID, b.ID)}] = true
					p.Refused = append(p.Refused, refusal(&a, &b, sim, why))
				}
				continue
			}
			r := merge(&a, &b)
			if err := s.contentCheck(ctx, &r, df); err != nil {
				return err
			}
			r.similarity = sim
			if r.refused != "" {
				if len(p.Refused) < maxRefused {
					refusedPairs[[2]string{min(a.ID, b.ID), max(a.ID, b.ID)}] = true
					p.Refused = append(p.Refused, refusal(&r.survivor, &r.loser, sim, r.refused))
				}
				continue
			}
			r.reason = mergeReason(&r, thr)
			claimed[a.ID], claimed[b.ID] = true, true
			merges[r.survivor.ID] = &r
			losers[r.loser.ID] = true
		}
	}
	chunk := make([]memory.Memory, 0, mergeChunk)
	flush := func() error {
		defer func() { chunk = chunk[:0] }()
		groups := map[mergeGroup][]int{}
		var keys []mergeGroup
		for i := range chunk {
			m := &chunk[i]
			if claimed[m.ID] || !eligible(m) || m.Snoozed(now) || isZero(m.Embedding) {
				continue
			}
			if _, ok := changed[m.ID]; changed != nil && !ok {
				continue // not written since the last scan: its pairs were judged then
			}
			p.MergeQueried++
			// One search per project and embedding model: the store
			// refuses vectors of another model than its own (it switched
			// models since the page was read) rather than compare them.
			key := mergeGroup{project: m.Project, model: m.EmbeddingModel}
			if opts.All {
				key.project = ""
			}
			if _, ok := groups[key]; !ok {
				keys = append(keys, key)
			}
			groups[key] = append(groups[key], i)
		}
		for _, key := range keys {
			idx := groups[key]
			vecs := make([][]float32, len(idx))
			for j, i := range idx {
				vecs[j] = chunk[i].Embedding
			}
			// Projects, not Project: a memory of no project merges with
			// the memories of no project, and Project "" is every project.
			f := store.Filter{Projects: []string{key.project}, Model: key.model}
			if opts.All {
				f = store.Filter{Model: key.model}
			}
			res, err := s.st.VectorSearchMany(ctx, vecs, mergeNeighbours, f)
			if err != nil {
				return fmt.Errorf("merge neighbours: %w", err)
			}
			var want []string
			for _, list := range res {
				for _, c := range list {
					if c.Score >= thr && !claimed[c.ID] {
						want = append(want, c.ID)
					}
				}
			}
			if len(want) == 0 {
				continue
			}
			got, err := s.st.GetMany(ctx, want)
			if err != nil {
				return err
			}
			for j, i := range idx {
				m := &chunk[i]
				if claimed[m.ID] {
					continue
				}
				for _, c := range res[j] {
					if c.Score < thr {
						break
					}
					cm, ok := got[c.ID]
					if c.ID == m.ID || claimed[c.ID] || !ok {
						continue
					}
					refuse := func(s, l *memory.Memory, why string) {
						pair := [2]string{min(s.ID, l.ID), max(s.ID, l.ID)}
						if !refusedPairs[pair] && len(p.Refused) < maxRefused {
							refusedPairs[pair] = true
							p.Refused = append(p.Refused, refusal(s, l, c.Score, why))
						}
					}
					if !mergeable(m, &cm, now, opts.All) {
						if why := notMergeable(m, &cm, now); why != "" {
							refuse(m, &cm, why)
						}
						continue
					}
					r := merge(m, &cm)
					if err := s.contentCheck(ctx, &r, df); err != nil {
						return err
					}
					r.similarity = c.Score
					if r.refused != "" {
						refuse(&r.survivor, &r.loser, r.refused)
						continue
					}
					r.reason = mergeReason(&r, thr)
					claimed[m.ID], claimed[cm.ID] = true, true
					merges[r.survivor.ID] = &r
					losers[r.loser.ID] = true
					break
				}
			}
		}
		return nil
	}
	err := s.st.Iterate(ctx, store.Filter{Project: opts.Project}, func(m memory.Memory) error {
		chunk = append(chunk, m)
		if len(chunk) == mergeChunk {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// mergeGroup is the memories of a chunk whose neighbours one vector
// search finds: one project (or all) and one embedding model.
type mergeGroup struct{ project, model string }

// refusal is the Plan.Refused entry of a near-duplicate pair that is not
// merged: both texts (Before and MergedBefore), so the pair can be shown
// side by side, and why.
func refusal(s, l *memory.Memory, sim float64, why string) Action {
	return Action{Op: OpMerge, ID: s.ID, Project: s.Project, Kind: s.Kind, Type: s.Type, Preview: preview(s.Text),
		Survivor: s.ID, MergedIDs: []string{l.ID}, Before: snapshot(s, true), MergedBefore: []Snapshot{snapshot(l, true)},
		Similarity: sim, Reason: why}
}

// The kinds of Plan.Refused entries, as RefusalKind names them.
const (
	RefusedToken   = "would lose a load-bearing token"
	RefusedPinned  = "pinned"
	RefusedSnoozed = "snoozed"
	RefusedTypes   = "types differ"
	RefusedContent = "would lose content"
)

// RefusalKind names the kind of a Plan.Refused entry's reason: one of the
// Refused* constants, or "other" for a reason this version does not know.
func RefusalKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, "merge refused: ") && strings.HasSuffix(reason, " that the kept text lacks"):
		return RefusedToken
	case strings.HasPrefix(reason, "merge refused: after the "):
		return RefusedContent
	case strings.HasPrefix(reason, "not merged: ") && strings.Contains(reason, " is pinned "):
		return RefusedPinned
	case strings.HasPrefix(reason, "not merged: ") && strings.Contains(reason, " is snoozed until "):
		return RefusedSnoozed
	case strings.HasPrefix(reason, "not merged: the types differ "):
		return RefusedTypes
	}
	return "other"
}

// notMergeable says why a near-duplicate pair is not merged when the
// person reading the plan would want to know: one of them is pinned or
// snoozed, or their types differ. "" for the rest (superseded history, no
// embedding), which are not candidates at all.
func notMergeable(a, b *memory.Memory, now time.Time) string {
	for _, m := range []*memory.Memory{a, b} {
		switch {
		case m.Superseded() || len(m.Embedding) == 0:
			return ""
		case m.Pinned:
			return fmt.Sprintf("not merged: %s is pinned (pinned memories are never merged)", m.ID)
		case m.Snoozed(now):
			return fmt.Sprintf("not merged: %s is snoozed until %s", m.ID, m.CooldownUntil.UTC().Format("2006-01-02"))
		}
	}
	if a.Type != b.Type {
		return fmt.Sprintf("not merged: the types differ (%s and %s)", a.Type, b.Type)
	}
	return ""
}

// mergeReason says why r merges as it does: what chose the survivor and
// what chose the kept text, each the rule actually applied.
func mergeReason(r *mergeResult, thr float64) string {
	counts := fmt.Sprintf("reinforced %d vs %d, accessed %d vs %d",
		r.survivor.ReinforcedCount, r.loser.ReinforcedCount, r.survivor.AccessCount, r.loser.AccessCount)
	who := "survivor has more retrieval signal (" + counts + ")"
	if r.tied {
		who = "retrieval signal tied (" + counts + "): survivor is " + r.survivorWhy
	}
	text := "kept the survivor's text"
	if r.keptLoserText {
		text = "kept the merged memory's text"
	}
	if r.opening >= MinSharedOpening {
		text += fmt.Sprintf(" (after the %d words both open with, it holds %.0f%% of what the other says)", r.opening, 100*r.content)
	}
	return fmt.Sprintf("cosine %.3f >= %g: near-duplicates; %s; %s: %s; counts summed", r.similarity, thr, who, text, r.textWhy)
}

// SetMergeSimilarity replaces the merge similarity the steward was made
// with, for the plans made from now on: the daemon sets the default of a
// new embedding model (DefaultMergeSimilarity) when it switches models.
func (s *Steward) SetMergeSimilarity(v float64) {
	s.mergeAt.Store(math.Float64bits(v))
}

// mergeSimilarity is the merge threshold: SetMergeSimilarity's, else the
// configured one (0.88 if unset).
func (s *Steward) mergeSimilarity() float64 {
	if v := s.mergeAt.Load(); v != 0 {
		return math.Float64frombits(v)
	}
	if s.cfg.MergeSimilarity > 0 {
		return s.cfg.MergeSimilarity
	}
	return 0.88
}

// mergeScope decides whether the merge scan of scope is incremental: a
// previous scan of the scope (its mark) within MinInterval, at the same
// merge similarity and embedding model, at a store sequence number the
// store has not gone below (a store replaced since starts again), and no
// full scan asked for. Incremental, it returns the mark and the ids
// written since (not nil); else an empty mark and nil. seq is the store's
// write sequence number now, before the scan reads anything, for the next
// mark: a write during the scan is after it, so the next scan sees it.
func (s *Steward) mergeScope(ctx context.Context, led *ledger, scope string, full bool, now time.Time) (mergeMark, map[string]struct{}, uint64, error) {
	info := s.st.Info()
	mark, ok := led.Merge[scope]
	if !ok || full || mark.Seq == 0 || mark.Model != info.Model || mark.Similarity != s.mergeSimilarity() ||
		now.Sub(mark.At) >= s.opts.MinInterval || now.Before(mark.At) {
		return mergeMark{}, nil, info.Seq, nil
	}
	changed, seq, err := s.st.ChangedSince(ctx, mark.Seq)
	if err != nil {
		return mergeMark{}, nil, 0, err
	}
	if seq < mark.Seq {
		return mergeMark{}, nil, seq, nil
	}
	return mark, changed, seq, nil
}

// saveMergeMark records the merge scan that started at at, when the store's
// write sequence number was seq, with the merges it proposed and the pairs
// it refused.
func (s *Steward) saveMergeMark(scope string, at time.Time, seq uint64, merges map[string]*mergeResult, refused []Action) error {
	if s.opts.Dir == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	led, err := loadLedger(s.opts.Dir)
	if err != nil {
		return err
	}
	mk := mergeMark{At: at.UTC(), Seq: seq, Model: s.st.Info().Model, Similarity: s.mergeSimilarity()}
	for id, r := range merges {
		mk.Pending = append(mk.Pending, [2]string{id, r.loser.ID})
	}
	slices.SortFunc(mk.Pending, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	for _, r := range refused {
		mk.Refused = append(mk.Refused, [2]string{r.ID, r.MergedIDs[0]})
	}
	if led.Merge == nil {
		led.Merge = map[string]mergeMark{}
	}
	led.Merge[scope] = mk
	return led.save(s.opts.Dir, at, s.opts.MinInterval)
}

func isZero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}
