package search

import (
	"reflect"
	"testing"
)

func TestMMR(t *testing.T) {
	a := []float32{1, 0, 0}
	a2 := []float32{0.99, 0.141, 0} // near-duplicate of a
	b := []float32{0, 1, 0}
	c := []float32{0, 0, 1}
	cases := []struct {
		name   string
		rel    []float64
		vecs   [][]float32
		lambda float64
		k      int
		want   []int
	}{
		{"empty", nil, nil, 0.7, 3, nil},
		{"lambda 1 keeps relevance order", []float64{0.5, 0.9, 0.7}, [][]float32{a, a2, b}, 1, 0, []int{1, 2, 0}},
		{"near-duplicate demoted", []float64{1, 0.95, 0.9, 0.1}, [][]float32{a, a2, b, c}, 0.7, 0, []int{0, 2, 1, 3}},
		// min-max: 0.8 rescales to 0, so the near-duplicate still wins
		{"relevance is min-max rescaled", []float64{1, 0.95, 0.8}, [][]float32{a, a2, b}, 0.7, 0, []int{0, 1, 2}},
		{"distinct items keep order", []float64{1, 0.95, 0.8}, [][]float32{a, b, c}, 0.7, 0, []int{0, 1, 2}},
		{"k limits", []float64{1, 0.95, 0.8}, [][]float32{a, b, c}, 0.7, 2, []int{0, 1}},
		{"equal relevance: ties to lower index", []float64{0.3, 0.3}, [][]float32{a, b}, 0.7, 0, []int{0, 1}},
		{"missing vector is similar to nothing", []float64{1, 0.95, 0.8}, [][]float32{a, nil, a2}, 0.7, 0, []int{0, 1, 2}},
		{"lambda 0: pure diversity after the first", []float64{1, 0.99, 0.1}, [][]float32{a, a2, b}, 0, 0, []int{0, 2, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := MMR(c.rel, c.vecs, c.lambda, c.k); !reflect.DeepEqual(got, c.want) {
				t.Errorf("MMR = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMMRPicksPenalty(t *testing.T) {
	a := []float32{1, 0, 0}
	a2 := []float32{0.99, 0.141, 0} // near-duplicate of a
	b := []float32{0, 1, 0}
	cases := []struct {
		name    string
		rel     []float64
		vecs    [][]float32
		lambda  float64
		want    []int
		similar []int // SimilarTo of each pick
	}{
		{"near-duplicate demoted below a lower score", []float64{1, 0.95, 0.9, 0.1}, [][]float32{a, a2, b, nil}, 0.7, []int{0, 2, 1, 3}, []int{-1, -1, 0, -1}},
		{"distinct items take no penalty", []float64{1, 0.5}, [][]float32{a, b}, 0.7, []int{0, 1}, []int{-1, -1}},
		{"lambda 1 takes nothing off", []float64{1, 0.95}, [][]float32{a, a2}, 1, []int{0, 1}, []int{-1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			picks := MMRPicks(c.rel, c.vecs, c.lambda, 0)
			for i, p := range picks {
				if p.Index != c.want[i] || p.SimilarTo != c.similar[i] {
					t.Errorf("pick %d = %+v, want index %d similar to %d", i, p, c.want[i], c.similar[i])
				}
				if i > 0 {
					prev := picks[i-1]
					if got, before := c.rel[p.Index]-p.Penalty, c.rel[prev.Index]-prev.Penalty; got > before+1e-12 {
						t.Errorf("pick %d ranks by %v, above pick %d's %v", i, got, i-1, before)
					}
				}
				if c.lambda == 1 && p.Penalty != 0 {
					t.Errorf("lambda 1: pick %d penalty %v", i, p.Penalty)
				}
			}
		})
	}
}
