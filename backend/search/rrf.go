package search

import "sort"

// Fused is one result of RRF.
type Fused struct {
	// ID names the memory.
	ID string
	// Score is the fused score rescaled to 0..1: 1 means first in every list
	// (with the given weights), 0 means in no list.
	Score float64
	// Ranks holds the 1-based rank of ID in each input list, 0 when absent.
	Ranks []int
}

// RRF fuses ranked lists of ids (best first) with Reciprocal Rank Fusion:
//
//	rrf(d) = sum over lists l containing d of w_l / (k + rank_l(d))
//
// with 1-based ranks. weights may be nil (all 1) or give one weight per list;
// a non-positive weight drops that list. The score is rescaled to 0..1 by
// dividing by the best possible sum, sum_l w_l / (k + 1), so it keeps its
// meaning across queries (a memory first in only one of two equal lists gets
// 0.5). k <= 0 means 60. A repeated id in one list counts at its best rank.
// The result is sorted by score, ties broken by the best single rank, then
// by id, so it is deterministic.
func RRF(lists [][]string, weights []float64, k float64) []Fused {
	if k <= 0 {
		k = 60
	}
	w := func(l int) float64 {
		if weights == nil || l >= len(weights) {
			return 1
		}
		return weights[l]
	}
	var maxSum float64
	for l := range lists {
		if w(l) > 0 {
			maxSum += w(l) / (k + 1)
		}
	}
	byID := map[string]*Fused{}
	var order []*Fused
	for l, list := range lists {
		if w(l) <= 0 {
			continue
		}
		for i, id := range list {
			f := byID[id]
			if f == nil {
				f = &Fused{ID: id, Ranks: make([]int, len(lists))}
				byID[id] = f
				order = append(order, f)
			}
			if f.Ranks[l] != 0 {
				continue
			}
			f.Ranks[l] = i + 1
			f.Score += w(l) / (k + float64(i+1))
		}
	}
	out := make([]Fused, len(order))
	for i, f := range order {
		if maxSum > 0 {
			f.Score /= maxSum
		}
		out[i] = *f
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		bi, bj := bestRank(out[i].Ranks), bestRank(out[j].Ranks)
		if bi != bj {
			return bi < bj
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func bestRank(ranks []int) int {
	best := int(^uint(0) >> 1)
	for _, r := range ranks {
		if r > 0 && r < best {
			best = r
		}
	}
	return best
}
