package steward

import (
	"math"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

const day = 24 * time.Hour

// Quality is the steward's usage score of m in 0..1:
//
//	log2(hits+1)/log2(maxHits+1) x 0.5^(daysSinceActive/halfLife)
//
// where hits is m's AccessCount (the times recall returned it; the hit
// timestamps are capped at memory.MaxHits and so cannot count), maxHits the
// largest AccessCount in the store, daysSinceActive the days since the
// latest of LastAccessed, LastReinforcedAt and CreatedAt, and halfLife
// cfg.QualityHalfLifeDays. It is 0 when maxHits is 0. Callers should not
// rank by it before Scored says the store has seen enough retrievals.
func Quality(m *memory.Memory, maxHits int, now time.Time, cfg config.Steward) float64 {
	if maxHits <= 0 || m.AccessCount <= 0 {
		return 0
	}
	usage := math.Min(1, math.Log2(float64(m.AccessCount)+1)/math.Log2(float64(maxHits)+1))
	half := cfg.QualityHalfLifeDays
	if !(half > 0) {
		half = 90
	}
	days := math.Max(0, now.Sub(lastActive(m)).Hours()/24)
	return usage * math.Pow(0.5, days/half)
}

// Scored reports whether quality scores mean anything yet: the store has
// seen at least cfg.QualityMinEvents retrieval events (the sum of every
// memory's AccessCount). Before that, every memory scores as "not enough
// data", never as "useless".
func Scored(totalEvents int, cfg config.Steward) bool {
	return totalEvents >= cfg.QualityMinEvents
}

// Stickiness is memory.Stickiness of m with the steward's threshold: how
// much more often m is retrieved than confirmed useful, AccessCount /
// max(ReinforcedCount, 1), or 0 while AccessCount is below
// cfg.StickyMinAccess (too few retrievals to judge).
func Stickiness(m *memory.Memory, cfg config.Steward) float64 {
	return memory.Stickiness(m.AccessCount, m.ReinforcedCount, cfg.StickyMinAccess)
}

// lastActive is the latest of m's last access, last reinforcement and creation.
func lastActive(m *memory.Memory) time.Time {
	t := m.CreatedAt
	if m.LastAccessed.After(t) {
		t = m.LastAccessed
	}
	if m.LastReinforcedAt.After(t) {
		t = m.LastReinforcedAt
	}
	return t
}

// typeConfig returns the thresholds for m's type: cfg.Types[type], else
// cfg.Types["default"], else built-in defaults.
func typeConfig(cfg config.Steward, t memory.Type) config.StewardType {
	if tc, ok := cfg.Types[string(t)]; ok {
		return tc
	}
	if tc, ok := cfg.Types["default"]; ok {
		return tc
	}
	return config.StewardType{StaleDays: 90, DecayFactor: 0.8, DecayFloor: 0.01, PruneImportance: 0.05, PruneAgeDays: 30}
}
