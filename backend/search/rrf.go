package search

import (
	"math"
	"sort"
)

// Fused is one result of RRF.
type Fused struct {
	// ID names the memory.
	ID string
	// Score is the fused score rescaled to 0..1 (see RRF).
	Score float64
	// Ranks holds the 1-based rank of ID in each input list, 0 when absent.
	Ranks []int
}

// RRF fuses ranked lists of ids (best first) with Reciprocal Rank Fusion:
//
//	rrf(d) = sum over lists l containing d of w_l / (k + rank_l(d))
//
// with 1-based ranks. weights may be nil (all 1) or give one weight per list;
// a non-positive weight drops that list. k <= 0 means 60.
//
// The score is rescaled to 0..1 over the range a candidate can have when
// every list is cut at depth:
//
//	score = (rrf - lo) / (hi - lo),  hi = sum_l w_l / (k + 1),  lo = min_l w_l / (k + depth)
//
// so 1 means first in every list and 0 means last in the lightest list
// only, whatever the query. With k = 60 raw RRF is flat (rank 10 of one list
// is 0.87 of rank 1); spread over 0..1, relevance keeps its weight against
// the composite score's other factors (a 1.5 kind boost). depth <= 0 means
// the longest list's length; depth 0 and a single list of one give
// score = rrf / hi. A repeated id in one list counts at its best rank. The
// result is sorted by score, ties broken by the best single rank, then by
// id, so it is deterministic.
func RRF(lists [][]string, weights []float64, k float64, depth int) []Fused {
	if k <= 0 {
		k = 60
	}
	w := func(l int) float64 {
		if weights == nil || l >= len(weights) {
			return 1
		}
		return weights[l]
	}
	if depth <= 0 {
		for _, l := range lists {
			depth = max(depth, len(l))
		}
	}
	var hi float64
	lo := math.Inf(1)
	for l := range lists {
		if w(l) > 0 {
			hi += w(l) / (k + 1)
			lo = math.Min(lo, w(l)/(k+float64(max(depth, 1))))
		}
	}
	if depth <= 1 || lo >= hi {
		lo = 0
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
		if hi > lo {
			f.Score = math.Max(0, math.Min(1, (f.Score-lo)/(hi-lo)))
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
