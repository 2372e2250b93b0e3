package memory

import "math"

// Cosine is the cosine similarity of two embeddings: 0 when either is
// empty or all zero, or when their lengths differ (vectors of two models),
// and 0 when either has a NaN or Inf component (a damaged stored vector):
// a NaN score compares false with every other and would make any ranking
// by it undefined.
func Cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	c := dot / math.Sqrt(na*nb)
	if math.IsNaN(c) || math.IsInf(c, 0) {
		return 0
	}
	return c
}
