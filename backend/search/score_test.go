package search

import (
	"math"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

func TestAntiSticky(t *testing.T) {
	cases := []struct {
		access, reinforced int
		want               float64
	}{
		{0, 0, 1},
		{4, 0, 1},           // below 5 accesses: never damped
		{5, 0, 0.95 * 0.95}, // 5/1 - 3 = 2
		{12, 4, 1},          // 12/4 - 3 = 0
		{20, 2, math.Pow(0.95, 7)},
		{1000, 0, math.Pow(0.95, 30)}, // capped at 30
		{1000, 1000, 1},
	}
	for _, c := range cases {
		if got := AntiSticky(c.access, c.reinforced); !near(got, c.want) {
			t.Errorf("AntiSticky(%d, %d) = %v, want %v", c.access, c.reinforced, got, c.want)
		}
	}
}

func TestComposite(t *testing.T) {
	cfg := config.Default().Search
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	base := func() memory.Memory {
		return memory.Memory{ID: "m", Text: "x", Kind: memory.KindFact, KindOrigin: memory.KindGiven, Type: memory.TypeProject,
			Project: "p", Importance: 0.5, CreatedAt: now}
	}
	cases := []struct {
		name   string
		mod    func(*memory.Memory)
		sig    Signals
		check  func(b memory.ScoreBreakdown) bool
		expect float64 // composite
	}{
		{"plain", nil, Signals{Relevance: 1}, nil, 0.5},
		{"relevance scales", nil, Signals{Relevance: 0.4}, nil, 0.2},
		{"project decay 10 days", func(m *memory.Memory) { m.CreatedAt = now.Add(-10 * day) },
			Signals{Relevance: 1}, nil, 0.5 * math.Exp(-0.01*10)},
		{"user decay 100 days", func(m *memory.Memory) { m.Type = memory.TypeUser; m.CreatedAt = now.Add(-100 * day) },
			Signals{Relevance: 1}, nil, 0.5 * math.Exp(-0.0005*100)},
		{"reinforcement refreshes age", func(m *memory.Memory) {
			m.CreatedAt = now.Add(-100 * day)
			m.LastReinforcedAt = now.Add(-1 * day)
		}, Signals{Relevance: 1}, nil, 0.5 * math.Exp(-0.01)},
		{"future created_at does not boost", func(m *memory.Memory) { m.CreatedAt = now.Add(day) }, Signals{Relevance: 1}, nil, 0.5},
		{"pinned does not decay", func(m *memory.Memory) { m.Pinned = true; m.CreatedAt = now.Add(-1000 * day) }, Signals{Relevance: 1}, nil, 0.5},
		{"access capped at 10", func(m *memory.Memory) { m.AccessCount = 50; m.ReinforcedCount = 50 },
			Signals{Relevance: 1}, nil, 0.5 * 2},
		{"access 3", func(m *memory.Memory) { m.AccessCount = 3 }, Signals{Relevance: 1}, nil, 0.5 * 1.3},
		{"sticky", func(m *memory.Memory) { m.AccessCount = 10 }, Signals{Relevance: 1}, nil,
			0.5 * 2 * math.Pow(0.95, 7)},
		{"decision", func(m *memory.Memory) { m.Kind = memory.KindDecision }, Signals{Relevance: 1}, nil, 0.75},
		{"invariant", func(m *memory.Memory) { m.Kind = memory.KindInvariant }, Signals{Relevance: 1}, nil, 0.65},
		{"judged decision", func(m *memory.Memory) { m.Kind, m.KindOrigin = memory.KindDecision, memory.KindJudged }, Signals{Relevance: 1}, nil, 0.75},
		{"cued convention", func(m *memory.Memory) { m.Kind, m.KindOrigin = memory.KindConvention, memory.KindCued }, Signals{Relevance: 1}, nil, 0.65},
		{"guessed decision: no boost", func(m *memory.Memory) { m.Kind, m.KindOrigin = memory.KindDecision, memory.KindGuessed },
			Signals{Relevance: 1}, nil, 0.5},
		{"old captured decision: no boost", func(m *memory.Memory) {
			m.Kind, m.KindOrigin, m.Source = memory.KindDecision, "", memory.SourceCapture
		}, Signals{Relevance: 1}, nil, 0.5},
		{"old MCP decision: boost", func(m *memory.Memory) { m.Kind, m.KindOrigin, m.Source = memory.KindDecision, "", memory.SourceMCP },
			Signals{Relevance: 1}, nil, 0.75},
		{"project boost", nil, Signals{Relevance: 1, Project: "p"}, nil, 1.25},
		{"other project", nil, Signals{Relevance: 1, Project: "q"}, nil, 0.5},
		{"symbol surface: demoted, no project boost", func(m *memory.Memory) { m.Surface = memory.SurfaceSymbol },
			Signals{Relevance: 1, Project: "p"}, nil, 0.1},
		{"symbol kind too", func(m *memory.Memory) { m.Kind = memory.KindSymbol },
			Signals{Relevance: 1, Project: "p"}, nil, 0.1},
		{"feedback +1", func(m *memory.Memory) { m.FeedbackSum, m.FeedbackN = 2, 2 }, Signals{Relevance: 1}, nil, 0.65},
		{"feedback -0.5", func(m *memory.Memory) { m.FeedbackSum, m.FeedbackN = -1, 2 }, Signals{Relevance: 1}, nil, 0.5 * 0.85},
		{"feedback clamped", func(m *memory.Memory) { m.FeedbackSum, m.FeedbackN = 9, 1 }, Signals{Relevance: 1}, nil, 0.65},
		{"one keyword hit: no boost", nil, Signals{Relevance: 1, KeywordHits: 1}, nil, 0.5},
		{"three keyword hits", nil, Signals{Relevance: 1, KeywordHits: 3}, nil, 0.5 * 1.4},
		{"NaN relevance is 0", nil, Signals{Relevance: math.NaN()}, nil, 0},
		{"ranks copied", nil, Signals{Relevance: 1, VectorRank: 3, TextRank: 7},
			func(b memory.ScoreBreakdown) bool { return b.VectorRank == 3 && b.TextRank == 7 }, 0.5},
		{"all together", func(m *memory.Memory) {
			m.Kind = memory.KindDecision
			m.Importance = 0.8
			m.CreatedAt = now.Add(-5 * day)
			m.AccessCount = 2
			m.FeedbackSum, m.FeedbackN = 1, 2
		}, Signals{Relevance: 0.9, Project: "p", KeywordHits: 2}, nil,
			0.9 * 0.8 * math.Exp(-0.05) * 1.2 * 1 * 1.5 * 1 * 2.5 * 1.15 * 1.2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := base()
			if c.mod != nil {
				c.mod(&m)
			}
			c.sig.Now = now
			b := Composite(&m, c.sig, cfg)
			if !near(b.Composite, c.expect) {
				t.Errorf("composite = %v, want %v (%+v)", b.Composite, c.expect, b)
			}
			prod := b.Relevance * b.Importance * b.Recency * b.Access * b.AntiSticky * b.KindBoost *
				b.Surface * b.ProjectBoost * b.Feedback * b.Keyword
			if !near(prod, b.Composite) {
				t.Errorf("breakdown factors multiply to %v, composite %v", prod, b.Composite)
			}
			if c.check != nil && !c.check(b) {
				t.Errorf("breakdown %+v", b)
			}
		})
	}
}
