package search

import (
	"math"
	"reflect"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRRF(t *testing.T) {
	const k = 60
	max2 := 2.0 / 61
	cases := []struct {
		name    string
		lists   [][]string
		weights []float64
		k       float64
		depth   int
		want    []Fused
	}{
		{"empty", nil, nil, k, 1, []Fused{}},
		{"one list keeps its order", [][]string{{"a", "b", "c"}}, nil, k, 1, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0 / 62) / (1.0 / 61), []int{2}},
			{"c", (1.0 / 63) / (1.0 / 61), []int{3}},
		}},
		{"agreement beats a single first place", [][]string{{"a", "b"}, {"b", "c"}}, nil, k, 1, []Fused{
			{"b", (1.0/62 + 1.0/61) / max2, []int{2, 1}},
			{"a", (1.0 / 61) / max2, []int{1, 0}},
			{"c", (1.0 / 62) / max2, []int{0, 2}},
		}},
		{"first in both is 1", [][]string{{"x"}, {"x"}}, nil, k, 1, []Fused{{"x", 1, []int{1, 1}}}},
		{"ties break by best rank then id", [][]string{{"b", "a"}, {"a", "b"}}, nil, k, 1, []Fused{
			{"a", (1.0/62 + 1.0/61) / max2, []int{2, 1}},
			{"b", (1.0/62 + 1.0/61) / max2, []int{1, 2}},
		}},
		{"weights", [][]string{{"a"}, {"b"}}, []float64{1, 0.5}, k, 1, []Fused{
			{"a", (1.0 / 61) / (1.5 / 61), []int{1, 0}},
			{"b", (0.5 / 61) / (1.5 / 61), []int{0, 1}},
		}},
		{"zero weight drops a list", [][]string{{"a"}, {"b"}}, []float64{1, 0}, k, 1, []Fused{{"a", 1, []int{1, 0}}}},
		{"repeated id counts once at its best rank", [][]string{{"a", "a", "b"}}, nil, k, 1, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0 / 63) / (1.0 / 61), []int{3}},
		}},
		// depth 3, one list: lo = 1/63, hi = 1/61
		{"rescaled over the depth", [][]string{{"a", "b", "c"}}, nil, k, 3, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0/62 - 1.0/63) / (1.0/61 - 1.0/63), []int{2}},
			{"c", 0, []int{3}},
		}},
		// depth 10, two lists: lo = 1/70, hi = 2/61
		{"rescaled, two lists", [][]string{{"a", "b"}, {"b"}}, nil, k, 10, []Fused{
			{"b", (1.0/62 + 1.0/61 - 1.0/70) / (2.0/61 - 1.0/70), []int{2, 1}},
			{"a", (1.0/61 - 1.0/70) / (2.0/61 - 1.0/70), []int{1, 0}},
		}},
		// depth <= 0: the longest list, here 2: lo = 1/62
		{"depth from the lists", [][]string{{"a", "b"}}, nil, k, 0, []Fused{
			{"a", 1, []int{1}},
			{"b", 0, []int{2}},
		}},
		{"k <= 0 means 60", [][]string{{"a", "b"}}, nil, 0, 1, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0 / 62) / (1.0 / 61), []int{2}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RRF(c.lists, c.weights, c.k, c.depth)
			if len(got) != len(c.want) {
				t.Fatalf("got %d results %+v, want %d", len(got), got, len(c.want))
			}
			for i := range got {
				if got[i].ID != c.want[i].ID || !near(got[i].Score, c.want[i].Score) || !reflect.DeepEqual(got[i].Ranks, c.want[i].Ranks) {
					t.Errorf("result %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}
