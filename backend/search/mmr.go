package search

import "math"

// Pick is one item MMR picked, in the order picked.
type Pick struct {
	// Index is the item's index in the input.
	Index int
	// Penalty is what MMR took off the item's relevance for resembling an
	// item picked before it, in the relevance's own units:
	//
	//	(1 - lambda) / lambda x (max rel - min rel) x max cos(item, picked)
	//
	// so rel - Penalty orders the picks as MMR picked them (never
	// increasing). It is 0 for the first pick, for an item resembling
	// nothing picked, and when lambda is 0 (pure diversity, which no
	// relevance-scale number expresses).
	Penalty float64
	// SimilarTo is the index of the item picked before it that it
	// resembles most, -1 when it resembles none.
	SimilarTo int
}

// MMR orders items by greedy Maximal Marginal Relevance and returns the
// indices of the first k picks (all items when k <= 0 or k > len(rel)).
// See MMRPicks.
func MMR(rel []float64, vecs [][]float32, lambda float64, k int) []int {
	picks := MMRPicks(rel, vecs, lambda, k)
	if picks == nil {
		return nil
	}
	order := make([]int, len(picks))
	for i, p := range picks {
		order[i] = p.Index
	}
	return order
}

// MMRPicks orders items by greedy Maximal Marginal Relevance and returns
// the first k picks (all items when k <= 0 or k > len(rel)) with the
// penalty each one took. At each step it picks the item maximising
//
//	lambda x rel'(i) - (1 - lambda) x max over picked j of cos(vecs[i], vecs[j])
//
// where rel' is rel rescaled to 0..1 by min-max over all items (all 1 when
// they are equal), so relevance and cosine similarity share a scale whatever
// the scale of the scores. Ties go to the lower index; an item without a
// vector is similar to nothing. lambda = 1 keeps the relevance order.
// vecs must be as long as rel.
func MMRPicks(rel []float64, vecs [][]float32, lambda float64, k int) []Pick {
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
	// scale turns a similarity into relevance units (see Pick.Penalty).
	var scale float64
	if lambda > 0 && hi > lo {
		scale = (1 - lambda) / lambda * (hi - lo)
	}
	maxSim := make([]float64, n) // max similarity to the picked items
	simTo := make([]int, n)      // the picked item maxSim is to, -1 for none
	for i := range simTo {
		simTo[i] = -1
	}
	picked := make([]bool, n)
	picks := make([]Pick, 0, k)
	for len(picks) < k {
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
		p := Pick{Index: best, SimilarTo: -1}
		if maxSim[best] > 0 {
			p.Penalty, p.SimilarTo = scale*maxSim[best], simTo[best]
		}
		picks = append(picks, p)
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
				maxSim[i], simTo[i] = c, best
			}
		}
	}
	return picks
}
