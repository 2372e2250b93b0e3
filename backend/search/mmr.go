package search

import "math"

// MMR orders items by greedy Maximal Marginal Relevance and returns the
// indices of the first k picks (all items when k <= 0 or k > len(rel)).
// At each step it picks the item maximising
//
//	lambda x rel'(i) - (1 - lambda) x max over picked j of cos(vecs[i], vecs[j])
//
// where rel' is rel rescaled to 0..1 by min-max over all items (all 1 when
// they are equal), so relevance and cosine similarity share a scale whatever
// the scale of the scores. Ties go to the lower index; an item without a
// vector is similar to nothing. lambda = 1 keeps the relevance order.
// vecs must be as long as rel.
func MMR(rel []float64, vecs [][]float32, lambda float64, k int) []int {
	n := len(rel)
	if k <= 0 || k > n {
		k = n
	}
	if n == 0 {
		return nil
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rel {
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	norm := make([]float64, n)
	for i, r := range rel {
		if hi > lo {
			norm[i] = (r - lo) / (hi - lo)
		} else {
			norm[i] = 1
		}
	}
	inv := make([]float64, n) // 1/|v|, 0 for missing or zero vectors
	for i := range n {
		if i < len(vecs) {
			var s float64
			for _, x := range vecs[i] {
				s += float64(x) * float64(x)
			}
			if s > 0 {
				inv[i] = 1 / math.Sqrt(s)
			}
		}
	}
	maxSim := make([]float64, n) // max similarity to the picked items
	picked := make([]bool, n)
	order := make([]int, 0, k)
	for len(order) < k {
		best, bestScore := -1, math.Inf(-1)
		for i := range n {
			if picked[i] {
				continue
			}
			s := lambda*norm[i] - (1-lambda)*maxSim[i]
			if s > bestScore {
				best, bestScore = i, s
			}
		}
		picked[best] = true
		order = append(order, best)
		if inv[best] == 0 {
			continue
		}
		for i := range n {
			if picked[i] || inv[i] == 0 || len(vecs[i]) != len(vecs[best]) {
				continue
			}
			var dot float64
			for d, x := range vecs[i] {
				dot += float64(x) * float64(vecs[best][d])
			}
			if c := dot * inv[i] * inv[best]; c > maxSim[i] {
				maxSim[i] = c
			}
		}
	}
	return order
}
