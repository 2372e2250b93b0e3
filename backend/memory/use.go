package memory

import (
	"slices"
	"time"
)

// AbsorbUse adds to m what the memory o gathered from its use, when m
// takes o's place (a merge, or a statement of o's stored into m): its
// accesses, reinforcements and ratings are added, the higher importance
// and the later access and reinforcement times kept. Hits are left to the
// caller (MergeHits): callers differ on an o without hits.
func (m *Memory) AbsorbUse(o Memory) {
	m.AccessCount += o.AccessCount
	m.ReinforcedCount += o.ReinforcedCount
	m.FeedbackSum += o.FeedbackSum
	m.FeedbackN += o.FeedbackN
	m.Importance = max(m.Importance, o.Importance)
	if o.LastAccessed.After(m.LastAccessed) {
		m.LastAccessed = o.LastAccessed
	}
	if o.LastReinforcedAt.After(m.LastReinforcedAt) {
		m.LastReinforcedAt = o.LastReinforcedAt
	}
}

// MergeHits is the union of two hit lists, sorted, the newest MaxHits
// kept; nil when both are empty.
func MergeHits(a, b []time.Time) []time.Time {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, func(x, y time.Time) int { return x.Compare(y) })
	out = slices.CompactFunc(out, func(x, y time.Time) bool { return x.Equal(y) })
	if len(out) > MaxHits {
		out = out[len(out)-MaxHits:]
	}
	return out
}
