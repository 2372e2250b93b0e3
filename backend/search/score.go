package search

import (
	"math"
	"slices"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// Signals are the per-query inputs of Composite besides the memory itself.
type Signals struct {
	// Relevance is the rescaled RRF score in 0..1.
	Relevance float64
	// VectorRank and TextRank are the 1-based ranks in each leg, 0 if absent;
	// they are copied into the breakdown for display.
	VectorRank, TextRank int
	// KeywordHits is how many of the query's keywords the memory contains.
	KeywordHits int
	// Project is the caller's current project; "" means none.
	Project string
	// Named are the other projects a scoped prompt names
	// (Result.NamedProjects): the prompt is about them as well, so their
	// memories get the project boost as the current project's do.
	Named []string
	// Now is the time the age is measured at.
	Now time.Time
}

// Composite computes the composite recall score (docs/architecture.md, "A
// prompt recalled") and returns every factor:
//
//	composite = relevance x importance x exp(-lambda_type x age_days)
//	          x (1 + 0.1 min(access, 10)) x antiSticky x kindBoost
//	          x surfaceFactor x projectBoost x (1 + 0.3 feedbackAvg) x keyword
//
// where antiSticky = 1 if access < 5, else
// 0.95^min(max(access/max(reinforced,1) - 3, 0), 30); kindBoost comes from
// cfg.KindBoost (1 for kinds not listed); surfaceFactor is cfg.SymbolFactor
// for symbol memories, else 1; projectBoost is cfg.ProjectBoost when the
// memory belongs to the current project or one the prompt names (Named)
// and is not a symbol, else 1;
// feedbackAvg is clamped to -1..1; keyword = 1 + cfg.KeywordHitBoost per
// keyword hit beyond the first. A kind boost applies only to a memory whose
// kind is certain (memory.Memory.KindCertain): a kind guessed from the
// wording gets none.
//
// The age is measured from the later of created_at and last_reinforced_at
// (a reinforcement refreshes a memory; a mere access does not), never
// negative. Pinned memories and records without created_at do not decay. Types without a configured decay
// rate do not decay.
func Composite(m *memory.Memory, s Signals, cfg config.Search) memory.ScoreBreakdown {
	b := memory.ScoreBreakdown{
		Relevance:  finite(s.Relevance),
		VectorRank: s.VectorRank,
		TextRank:   s.TextRank,
		Importance: finite(m.Importance),
	}
	b.Recency = 1
	if !m.Pinned && !m.CreatedAt.IsZero() {
		from := m.CreatedAt
		if m.LastReinforcedAt.After(from) {
			from = m.LastReinforcedAt
		}
		age := s.Now.Sub(from).Hours() / 24
		if age > 0 {
			b.Recency = math.Exp(-cfg.DecayPerDay[string(m.Type)] * age)
		}
	}
	access := max(m.AccessCount, 0)
	b.Access = 1 + 0.1*float64(min(access, 10))
	b.AntiSticky = 1
	if cfg.AntiSticky {
		b.AntiSticky = AntiSticky(access, m.ReinforcedCount)
	}
	b.KindBoost = 1
	if v, ok := cfg.KindBoost[string(m.Kind)]; ok && m.KindCertain() {
		b.KindBoost = v
	}
	symbol := m.Surface == memory.SurfaceSymbol || m.Kind == memory.KindSymbol
	b.Surface = 1
	if symbol {
		b.Surface = cfg.SymbolFactor
	}
	b.ProjectBoost = 1
	if m.Project != "" && (m.Project == s.Project || slices.Contains(s.Named, m.Project)) && !symbol {
		b.ProjectBoost = cfg.ProjectBoost
	}
	b.Feedback = 1 + cfg.FeedbackWeight*math.Max(-1, math.Min(1, finite(m.FeedbackAvg())))
	b.Keyword = 1 + cfg.KeywordHitBoost*float64(max(s.KeywordHits-1, 0))
	b.Composite = b.Relevance * b.Importance * b.Recency * b.Access * b.AntiSticky *
		b.KindBoost * b.Surface * b.ProjectBoost * b.Feedback * b.Keyword
	return b
}

// antiStickyMinAccess is the access count below which recall does not
// judge a memory's stickiness.
const antiStickyMinAccess = 5

// AntiSticky damps memories that are retrieved far more often than they are
// reinforced: 0.95^min(max(stickiness - 3, 0), 30), where stickiness is
// memory.Stickiness(access, reinforced, 5): access/max(reinforced,1), 0
// (so the factor is 1) while access < 5.
func AntiSticky(access, reinforced int) float64 {
	stick := memory.Stickiness(access, reinforced, antiStickyMinAccess)
	return math.Pow(0.95, math.Min(math.Max(stick-3, 0), 30))
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
