package steward

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// The operations, in the order a sweep runs them (config.StewardOps).
const (
	OpMerge             = "merge"
	OpDecayStale        = "decay_stale"
	OpBoostActive       = "boost_active"
	OpPrune             = "prune"
	OpDecayUnreinforced = "decay_unreinforced"
	OpSnoozeSticky      = "snooze_sticky"
)

// rateLimited are the operations that scale importance: each touches a
// memory at most once per Options.MinInterval (see ledger), so an hourly
// schedule does not compound them.
var rateLimited = map[string]bool{OpDecayStale: true, OpBoostActive: true, OpDecayUnreinforced: true}

// env is what the single-memory operations need besides the memory.
type env struct {
	now      time.Time
	cfg      config.Steward
	ledger   *ledger
	interval time.Duration
}

// eligible reports whether any operation may touch m: pinned and
// superseded memories are never touched.
func eligible(m *memory.Memory) bool { return !m.Pinned && !m.Superseded() }

// run applies the single-memory operation op to w in place. It returns
// whether w changed, whether w is to be trashed (prune), and why.
func (e *env) run(op string, w *memory.Memory) (changed, trash bool, reason string) {
	if !eligible(w) {
		return false, false, ""
	}
	if rateLimited[op] && e.ledger.recent(op, w.ID, e.now, e.interval) {
		return false, false, ""
	}
	tc := typeConfig(e.cfg, w.Type)
	idle := e.now.Sub(lastActive(w))
	idleDays := int(idle / day)
	stick := Stickiness(w, e.cfg)
	switch op {
	case OpDecayStale:
		if idle < time.Duration(tc.StaleDays)*day || w.Importance <= tc.DecayFloor {
			return false, false, ""
		}
		w.Importance = max(w.Importance*tc.DecayFactor, tc.DecayFloor)
		return true, false, fmt.Sprintf("not accessed or reinforced for %d days (stale after %d): importance x%g, floor %g",
			idleDays, tc.StaleDays, tc.DecayFactor, tc.DecayFloor)
	case OpBoostActive:
		if w.AccessCount < e.cfg.BoostMinAccess || w.Importance >= 1 || idle >= time.Duration(tc.StaleDays)*day {
			return false, false, ""
		}
		if stick > e.cfg.UnreinforcedStickiness {
			return false, false, "" // sticky: retrieved, not confirmed; never boosted
		}
		w.Importance = min(1, w.Importance*e.cfg.BoostFactor)
		return true, false, fmt.Sprintf("accessed %d times (>= %d), stickiness %.1f: importance x%g, capped at 1",
			w.AccessCount, e.cfg.BoostMinAccess, stick, e.cfg.BoostFactor)
	case OpPrune:
		age := e.now.Sub(w.CreatedAt)
		if w.Importance >= tc.PruneImportance || age <= time.Duration(tc.PruneAgeDays)*day {
			return false, false, ""
		}
		return true, true, fmt.Sprintf("importance %.3f < %g and %d days old (> %d): to the trash",
			w.Importance, tc.PruneImportance, int(age/day), tc.PruneAgeDays)
	case OpDecayUnreinforced:
		if stick <= e.cfg.UnreinforcedStickiness || w.Importance <= 0 {
			return false, false, ""
		}
		w.Importance *= e.cfg.UnreinforcedFactor
		return true, false, fmt.Sprintf("stickiness %.1f (%d accesses, %d reinforcements) > %g: importance x%g",
			stick, w.AccessCount, w.ReinforcedCount, e.cfg.UnreinforcedStickiness, e.cfg.UnreinforcedFactor)
	case OpSnoozeSticky:
		if w.AccessCount < e.cfg.SnoozeMinAccess || stick <= e.cfg.SnoozeStickiness || w.Snoozed(e.now) {
			return false, false, ""
		}
		// Snoozed before and not retrieved since it came back: it has had
		// no new chance to prove itself, so it is not snoozed again yet.
		if !w.CooldownUntil.IsZero() && !w.LastAccessed.After(w.CooldownUntil) {
			return false, false, ""
		}
		w.CooldownUntil = e.now.Add(time.Duration(e.cfg.SnoozeDays) * day).UTC()
		return true, false, fmt.Sprintf("stickiness %.1f > %g with %d accesses (>= %d): hidden from recall for %d days",
			stick, e.cfg.SnoozeStickiness, w.AccessCount, e.cfg.SnoozeMinAccess, e.cfg.SnoozeDays)
	}
	return false, false, ""
}

// mergeable reports whether a and b may be merged at now: both eligible,
// neither snoozed, same type, and same project unless all.
func mergeable(a, b *memory.Memory, now time.Time, all bool) bool {
	return a.ID != b.ID && eligible(a) && eligible(b) && !a.Snoozed(now) && !b.Snoozed(now) &&
		a.Type == b.Type && (all || a.Project == b.Project) && len(a.Embedding) > 0 && len(b.Embedding) > 0
}

// survivorFirst orders two memories by retrieval signal: reinforced, then
// accessed, then importance, then the newer, then the smaller id.
func survivorFirst(a, b *memory.Memory) bool {
	switch {
	case a.ReinforcedCount != b.ReinforcedCount:
		return a.ReinforcedCount > b.ReinforcedCount
	case a.AccessCount != b.AccessCount:
		return a.AccessCount > b.AccessCount
	case a.Importance != b.Importance:
		return a.Importance > b.Importance
	case !a.CreatedAt.Equal(b.CreatedAt):
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID < b.ID
}

// mergeResult is a planned merge of two memories.
type mergeResult struct {
	survivor, loser memory.Memory
	merged          memory.Memory // the survivor after the merge
	keptLoserText   bool
	refused         string  // non-empty: why the merge is refused
	similarity      float64 // cosine of the two
	reason          string
	// tied: neither has more retrieval signal (reinforced and accessed
	// counts equal); survivorWhy says what chose the survivor then.
	tied        bool
	survivorWhy string
	// textWhy says why the kept text was kept.
	textWhy string
	// opening is the number of words both texts open with, and content
	// the share of the other's rest the kept text's rest holds
	// (contentCheck; 0 when opening is under MinSharedOpening).
	opening int
	content float64
}

// merge merges a and b: the one with more retrieval signal survives and
// the sum of both's counts; it keeps the better text (never a
// concatenation, so the embedding stays the text's own): the one that
// holds every load-bearing token of the other when only one does (a
// token may be written otherwise: memory.HoldsToken), else the one with
// more load-bearing tokens, else the survivor's own. When neither has more
// retrieval signal (reinforced and accessed counts tie, 0/0 included), the
// better text decides the survivor as well: more load-bearing tokens, else
// the one that reads as a standalone statement (compareStandalone), else
// the higher importance, the newer, the smaller id. The merge is refused
// when either text has a load-bearing token the kept text does not hold.
func merge(a, b *memory.Memory) mergeResult {
	s, l := a, b
	if !survivorFirst(a, b) {
		s, l = b, a
	}
	st, lt := memory.LoadBearing(s.Text), memory.LoadBearing(l.Text)
	r := mergeResult{tied: s.ReinforcedCount == l.ReinforcedCount && s.AccessCount == l.AccessCount}
	sAll, lAll := holdsAll(s.Text, st, lt), holdsAll(l.Text, lt, st)
	switch {
	case sAll != lAll:
		// One text holds every token of the other, written the same way
		// or otherwise (memory.HoldsToken): the fuller version.
		r.keptLoserText = lAll
		r.textWhy = "it holds every load-bearing token of the other"
	case len(lt) != len(st):
		r.keptLoserText = len(lt) > len(st)
		r.textWhy = fmt.Sprintf("more load-bearing tokens (%d vs %d)", max(len(st), len(lt)), min(len(st), len(lt)))
	case !r.tied:
		r.textWhy = "the same load-bearing tokens: the survivor's own"
	default:
		cmp, why := compareStandalone(s.Text, l.Text)
		r.keptLoserText, r.textWhy = cmp > 0, why
		if cmp == 0 {
			r.textWhy = "the texts are equally good: the survivor's own"
		}
	}
	if r.tied {
		if r.keptLoserText {
			// No signal decides: the memory with the better text survives,
			// so the record's provenance is its text's.
			s, l, st, lt, r.keptLoserText = l, s, lt, st, false
			r.survivorWhy = "the one with the better text"
		} else {
			r.survivorWhy = tieBreak(s, l)
		}
	}
	r.survivor, r.loser = *s, *l
	kept, keptSet := s, st
	if r.keptLoserText {
		kept, keptSet = l, lt
	}
	var lost []string
	for _, set := range []map[string]bool{st, lt} {
		for tok := range set {
			if !keptSet[tok] && !memory.HoldsToken(kept.Text, tok) && !slices.Contains(lost, tok) {
				lost = append(lost, tok)
			}
		}
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		from := l.ID
		if r.keptLoserText {
			from = s.ID
		}
		r.refused = fmt.Sprintf("merge refused: %s carries %s that the kept text lacks", from, quoteList(lost, 5))
		return r
	}
	m := *s
	m.Text, m.Embedding, m.EmbeddingModel = kept.Text, slices.Clone(kept.Embedding), kept.EmbeddingModel
	m.AbsorbUse(*l)
	m.Hits = memory.MergeHits(s.Hits, l.Hits)
	r.merged = m
	return r
}

// holdsAll reports whether text (whose own tokens are own) holds every
// token of other, written the same way or otherwise (memory.HoldsToken).
func holdsAll(text string, own, other map[string]bool) bool {
	for tok := range other {
		if !own[tok] && !memory.HoldsToken(text, tok) {
			return false
		}
	}
	return true
}

// tieBreak says what makes s survive l when their retrieval signal and
// texts tie (survivorFirst's order after the counts).
func tieBreak(s, l *memory.Memory) string {
	switch {
	case s.Importance != l.Importance:
		return fmt.Sprintf("the more important (%.2f vs %.2f)", s.Importance, l.Importance)
	case !s.CreatedAt.Equal(l.CreatedAt):
		return "the newer"
	}
	return "the first by id"
}

func quoteList(toks []string, n int) string {
	q := make([]string, 0, n)
	for i, t := range toks {
		if i == n {
			q = append(q, fmt.Sprintf("and %d more", len(toks)-n))
			break
		}
		q = append(q, fmt.Sprintf("%q", t))
	}
	return strings.Join(q, ", ")
}
