package status

import (
	"testing"
	"time"

	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

func TestCaptureSummary(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *httpapi.CaptureState
		want string
	}{
		{"unknown", nil, "unknown"},
		{"off", &httpapi.CaptureState{}, "off (the proxy forwards but keeps nothing)"},
		{"on", &httpapi.CaptureState{Enabled: true}, "on"},
		{"one excluded", &httpapi.CaptureState{Enabled: true, ExcludeProjects: []string{"a"}}, "on (1 project excluded)"},
		{"two excluded", &httpapi.CaptureState{Enabled: true, ExcludeProjects: []string{"a", "b"}}, "on (2 projects excluded)"},
	} {
		if got := captureSummary(tc.in); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestGrowth(t *testing.T) {
	today := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	day := func(y, m, d int) int64 { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400 }
	tests := []struct {
		name    string
		created map[string]map[int64]int
		days    int
		want    map[string][]int // series (project, or "other") -> first and last count
	}{
		{"empty", map[string]map[int64]int{}, 0, map[string][]int{}},
		{"two projects", map[string]map[int64]int{
			"a": {day(2026, 3, 8): 2, day(2026, 3, 10): 1},
			"b": {day(2026, 3, 9): 4},
		}, growthMinDays, map[string][]int{"a": {0, 3}, "b": {0, 4}}},
		{"older than the chart is its baseline", map[string]map[int64]int{
			"a": {day(2024, 1, 1): 5, day(2026, 3, 10): 1},
		}, growthDays, map[string][]int{"a": {5, 6}}},
		{"the rest is other", map[string]map[int64]int{
			"p1": {day(2026, 3, 10): 9}, "p2": {day(2026, 3, 10): 8}, "p3": {day(2026, 3, 10): 7}, "p4": {day(2026, 3, 10): 6},
			"p5": {day(2026, 3, 10): 5}, "p6": {day(2026, 3, 10): 4}, "p7": {day(2026, 3, 10): 3}, "p8": {day(2026, 3, 10): 2},
		}, growthMinDays, map[string][]int{"p1": {0, 9}, "p6": {0, 4}, "other": {0, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counts := map[string]int{}
			for p, days := range tt.created {
				for _, n := range days {
					counts[p] += n
				}
			}
			g := growth(tt.created, sortedCounts(counts), today)
			if len(g.Days) != tt.days || (tt.days > 0 && g.Days[len(g.Days)-1] != "2026-03-10") {
				t.Fatalf("days %v, want %d ending today", g.Days, tt.days)
			}
			got := map[string][]int{}
			for _, s := range g.Series {
				name := s.Project
				if s.Other {
					name = "other"
				}
				if len(s.Counts) != len(g.Days) {
					t.Fatalf("series %s: %d counts for %d days", name, len(s.Counts), len(g.Days))
				}
				got[name] = []int{s.Counts[0], s.Counts[len(s.Counts)-1]}
			}
			for name, w := range tt.want {
				if g := got[name]; len(g) != 2 || g[0] != w[0] || g[1] != w[1] {
					t.Errorf("series %s: first, last %v, want %v (all %v)", name, g, w, got)
				}
			}
			if len(g.Series) > growthSeries+1 {
				t.Errorf("%d series", len(g.Series))
			}
		})
	}
}

func TestFilterBucketsFromCounters(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 30, 0, 0, time.UTC)
	l := feed.NewDecisionLog(1, nil) // the counters count what the ring no longer holds
	for i, at := range []time.Time{now, now.Add(-10 * time.Minute), now.Add(-2 * time.Hour), now.Add(-72 * time.Hour)} {
		v := memory.VerdictStored
		if i == 1 {
			v = memory.VerdictRejected
		}
		l.Add(memory.Decision{ID: string(rune('a' + i)), Verdict: v, Stage: "content", At: at}, memory.Exchange{})
	}
	b := filterBuckets(l, now)
	if len(b) != overviewHours {
		t.Fatalf("%d buckets", len(b))
	}
	last, twoAgo := b[len(b)-1], b[len(b)-3]
	if last.Total != 2 || last.Verdicts["rejected"] != 1 || last.Rejected["content"] != 1 || twoAgo.Total != 1 {
		t.Errorf("last %+v, two hours ago %+v", last, twoAgo)
	}
	total := 0
	for _, x := range b {
		total += x.Total
	}
	if total != 3 {
		t.Errorf("%d decisions in the buckets, want 3 (one is older than 48 h)", total)
	}
}
