package eval

import "math"

// RecallAt is Recall@k: the share of the relevant ids found among the first
// k of ranked, |relevant ∩ ranked[:k]| / |relevant|. It is 0 when relevant
// is empty. Duplicates in ranked count once.
func RecallAt(ranked []string, relevant map[string]bool, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	return float64(hitsAt(ranked, relevant, k)) / float64(len(relevant))
}

// RecallAllAt is LongMemEval's recall_all@k: 1 when every relevant id is
// among the first k of ranked, else 0 (0 when relevant is empty).
func RecallAllAt(ranked []string, relevant map[string]bool, k int) float64 {
	if len(relevant) == 0 || hitsAt(ranked, relevant, k) < len(relevant) {
		return 0
	}
	return 1
}

// ReciprocalRank is 1/r for the rank r (1-based) of the first relevant id in
// ranked, 0 when none is there; MRR is its mean over queries.
func ReciprocalRank(ranked []string, relevant map[string]bool) float64 {
	for i, id := range ranked {
		if relevant[id] {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// NDCGAt is nDCG@k with binary gains: DCG@k / IDCG@k where
// DCG@k = sum over ranks i = 1..k of rel_i / log2(i + 1), rel_i = 1 when the
// id at rank i is relevant (counted once), and IDCG@k is the DCG of the ideal
// ranking, min(k, |relevant|) relevant ids first. It is 0 when relevant is
// empty.
func NDCGAt(ranked []string, relevant map[string]bool, k int) float64 {
	return ndcg(ranked, relevant, k, func(i int) float64 { return 1 / math.Log2(float64(i)+1) })
}

// NDCGAnyAt is LongMemEval's ndcg_any@k: nDCG@k with binary gains and the
// discount of its reference implementation, DCG@k = rel_1 + sum over
// i = 2..k of rel_i / log2(i) (ranks 1 and 2 weigh the same).
func NDCGAnyAt(ranked []string, relevant map[string]bool, k int) float64 {
	return ndcg(ranked, relevant, k, func(i int) float64 {
		if i == 1 {
			return 1
		}
		return 1 / math.Log2(float64(i))
	})
}

func ndcg(ranked []string, relevant map[string]bool, k int, discount func(rank int) float64) float64 {
	if len(relevant) == 0 || k <= 0 {
		return 0
	}
	var dcg, idcg float64
	seen := map[string]bool{}
	for i, id := range ranked {
		if i >= k {
			break
		}
		if relevant[id] && !seen[id] {
			seen[id] = true
			dcg += discount(i + 1)
		}
	}
	for i := 1; i <= min(k, len(relevant)); i++ {
		idcg += discount(i)
	}
	return dcg / idcg
}

func hitsAt(ranked []string, relevant map[string]bool, k int) int {
	n := 0
	seen := map[string]bool{}
	for i, id := range ranked {
		if i >= k {
			break
		}
		if relevant[id] && !seen[id] {
			seen[id] = true
			n++
		}
	}
	return n
}
