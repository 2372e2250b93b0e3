package memory

import (
	"math"
	"testing"
)

func TestCosine(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b []float32
		want float64
	}{
		{"same", []float32{1, 2}, []float32{2, 4}, 1},
		{"opposite", []float32{1, 0}, []float32{-3, 0}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 1}, 0},
		{"between", []float32{1, 0}, []float32{1, 1}, 1 / math.Sqrt2},
		{"zero", []float32{0, 0}, []float32{0, 1}, 0},
		{"empty", nil, nil, 0},
		{"lengths differ", []float32{1}, []float32{1, 0}, 0},
		{"NaN", []float32{1, 0}, []float32{float32(math.NaN()), 1}, 0},
		{"NaN in both", []float32{float32(math.NaN()), 0}, []float32{float32(math.NaN()), 1}, 0},
		{"+Inf", []float32{1, 1}, []float32{float32(math.Inf(1)), 1}, 0},
		{"-Inf", []float32{1, 1}, []float32{float32(math.Inf(-1)), 1}, 0},
	} {
		if got := Cosine(tc.a, tc.b); !(math.Abs(got-tc.want) <= 1e-9) { // NaN fails too
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
