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
		want    []Fused
	}{
		{"empty", nil, nil, k, []Fused{}},
		{"one list keeps its order", [][]string{{"a", "b", "c"}}, nil, k, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0 / 62) / (1.0 / 61), []int{2}},
			{"c", (1.0 / 63) / (1.0 / 61), []int{3}},
		}},
		{"agreement beats a single first place", [][]string{{"a", "b"}, {"b", "c"}}, nil, k, []Fused{
			{"b", (1.0/62 + 1.0/61) / max2, []int{2, 1}},
			{"a", (1.0 / 61) / max2, []int{1, 0}},
			{"c", (1.0 / 62) / max2, []int{0, 2}},
		}},
		{"first in both is 1", [][]string{{"x"}, {"x"}}, nil, k, []Fused{{"x", 1, []int{1, 1}}}},
		{"ties break by best rank then id", [][]string{{"b", "a"}, {"a", "b"}}, nil, k, []Fused{
			{"a", (1.0/62 + 1.0/61) / max2, []int{2, 1}},
			{"b", (1.0/62 + 1.0/61) / max2, []int{1, 2}},
		}},
		{"weights", [][]string{{"a"}, {"b"}}, []float64{1, 0.5}, k, []Fused{
			{"a", (1.0 / 61) / (1.5 / 61), []int{1, 0}},
			{"b", (0.5 / 61) / (1.5 / 61), []int{0, 1}},
		}},
		{"zero weight drops a list", [][]string{{"a"}, {"b"}}, []float64{1, 0}, k, []Fused{{"a", 1, []int{1, 0}}}},
		{"repeated id counts once at its best rank", [][]string{{"a", "a", "b"}}, nil, k, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0 / 63) / (1.0 / 61), []int{3}},
		}},
		{"k <= 0 means 60", [][]string{{"a", "b"}}, nil, 0, []Fused{
			{"a", 1, []int{1}},
			{"b", (1.0 / 62) / (1.0 / 61), []int{2}},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RRF(c.lists, c.weights, c.k)
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
