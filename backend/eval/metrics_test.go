package eval

import (
	"math"
	"testing"
)

func set(ids ...string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMetricsHandComputed(t *testing.T) {
	ranked := []string{"x", "a", "y", "b", "z", "w", "v", "u", "t", "s", "c"}
	rel := set("a", "b", "c")
	l2 := math.Log2
	cases := []struct {
		name      string
		got, want float64
	}{
		{"R@1", RecallAt(ranked, rel, 1), 0},
		{"R@2", RecallAt(ranked, rel, 2), 1.0 / 3},
		{"R@5", RecallAt(ranked, rel, 5), 2.0 / 3},
		{"R@10", RecallAt(ranked, rel, 10), 2.0 / 3},
		{"R@11", RecallAt(ranked, rel, 11), 1},
		{"R@100", RecallAt(ranked, rel, 100), 1},
		{"R empty relevant", RecallAt(ranked, set(), 5), 0},
		{"R duplicates count once", RecallAt([]string{"a", "a"}, set("a", "b"), 2), 0.5},
		{"RR", ReciprocalRank(ranked, rel), 0.5},
		{"RR none", ReciprocalRank(ranked, set("q")), 0},
		{"RR first", ReciprocalRank([]string{"a"}, rel), 1},
		// DCG@10 = 1/log2(3) + 1/log2(5); IDCG@10 = 1 + 1/log2(3) + 1/log2(4)
		{"nDCG@10", NDCGAt(ranked, rel, 10), (1/l2(3) + 1/l2(5)) / (1 + 1/l2(3) + 1/l2(4))},
		{"nDCG perfect", NDCGAt([]string{"a", "b", "c"}, rel, 10), 1},
		{"nDCG one relevant at 2", NDCGAt([]string{"x", "a"}, set("a"), 10), 1 / l2(3)},
		{"nDCG empty", NDCGAt(ranked, set(), 10), 0},
		{"recall_all@5 partial", RecallAllAt(ranked, rel, 5), 0},
		{"recall_all@11", RecallAllAt(ranked, rel, 11), 1},
		// LongMemEval discount: rank 1 -> 1, rank i>=2 -> 1/log2(i)
		{"ndcg_any one at 2", NDCGAnyAt([]string{"x", "a"}, set("a"), 10), 1},
		{"ndcg_any one at 3", NDCGAnyAt([]string{"x", "y", "a"}, set("a"), 10), 1 / l2(3)},
		{"ndcg_any two", NDCGAnyAt([]string{"x", "a", "y", "b"}, set("a", "b"), 5), (1 + 1/l2(4)) / 2},
		{"ndcg_any cut at k", NDCGAnyAt([]string{"x", "y", "a"}, set("a"), 2), 0},
	}
	for _, c := range cases {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
