package steward

import (
	"math"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestQuality(t *testing.T) {
	cfg := defaults()
	cases := []struct {
		name    string
		m       memory.Memory
		maxHits int
		want    float64
	}{
		{"no hits anywhere", memory.Memory{CreatedAt: now}, 0, 0},
		{"never retrieved", memory.Memory{CreatedAt: now}, 10, 0},
		{"most retrieved, active now", memory.Memory{AccessCount: 15, LastAccessed: now, CreatedAt: daysAgo(400)}, 15, 1},
		{"most retrieved, one half life idle", memory.Memory{AccessCount: 15, LastAccessed: daysAgo(90), CreatedAt: daysAgo(400)}, 15, 0.5},
		{"log usage", memory.Memory{AccessCount: 3, LastAccessed: now}, 15, 0.5}, // log2(4)/log2(16)
		{"reinforcement counts as activity", memory.Memory{AccessCount: 3, LastAccessed: daysAgo(300), LastReinforcedAt: daysAgo(180)}, 15, 0.5 * 0.25},
		{"creation counts as activity", memory.Memory{AccessCount: 3, CreatedAt: daysAgo(90)}, 15, 0.25},
	}
	for _, c := range cases {
		if got := Quality(&c.m, c.maxHits, now, cfg); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: Quality = %v, want %v", c.name, got, c.want)
		}
	}
	if Scored(49, cfg) || !Scored(50, cfg) {
		t.Error("Scored must switch on at quality_min_events (50)")
	}
}

func TestStickiness(t *testing.T) {
	cfg := defaults()
	for _, c := range []struct {
		access, reinforced int
		want               float64
	}{{4, 0, 0}, {5, 0, 5}, {10, 2, 5}, {20, 0, 20}, {9, 9, 1}} {
		m := memory.Memory{AccessCount: c.access, ReinforcedCount: c.reinforced}
		if got := Stickiness(&m, cfg); got != c.want {
			t.Errorf("Stickiness(%d, %d) = %v, want %v", c.access, c.reinforced, got, c.want)
		}
	}
}
