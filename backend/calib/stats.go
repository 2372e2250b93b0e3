package calib

import (
	"math"
	"slices"
)

// Distribution names: the cosine classes Calibrate measures.
const (
	// DistNear: a memory and its near duplicate.
	DistNear = "near"
	// DistParaphrase: a memory and its paraphrase.
	DistParaphrase = "paraphrase"
	// DistRelated: a memory and another fact of its topic.
	DistRelated = "related"
	// DistUnrelated: two memories of different topics.
	DistUnrelated = "unrelated"
	// DistHit: a prompt and the memory that answers it.
	DistHit = "hit"
	// DistMiss: a prompt no memory answers and its most similar memory.
	DistMiss = "miss"
)

// Distributions are the order of the summaries in a Result.
var Distributions = []string{DistNear, DistParaphrase, DistRelated, DistUnrelated, DistHit, DistMiss}

// Summary describes one distribution of cosines.
type Summary struct {
	N   int     `json:"n"`
	Min float64 `json:"min"`
	P10 float64 `json:"p10"`
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

// summarize describes xs (sorted in place).
func summarize(xs []float64) Summary {
	slices.Sort(xs)
	if len(xs) == 0 {
		return Summary{}
	}
	return Summary{N: len(xs), Min: xs[0], P10: quantile(xs, 0.1), P50: quantile(xs, 0.5),
		P90: quantile(xs, 0.9), Max: xs[len(xs)-1]}
}

// quantile is the q-quantile of sorted xs, interpolating linearly between
// order statistics (type 7, as R's and NumPy's default), so it moves with
// any increasing affine change of the values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
