package search

import (
	"github.com/memtray/memtray/backend/store"

	"math"
	"sort"
)

// Keyword is a query term chosen by Keywords, with its IDF.
type Keyword struct {
	Term string  `json:"term"`
	IDF  float64 `json:"idf"`
}

// KeywordFloor is the lowest IDF a keyword may have in a store of n
// memories: max(0.5, 0.15 ln n).
func KeywordFloor(n int) float64 {
	if n < 1 {
		return 0.5
	}
	return math.Max(0.5, 0.15*math.Log(float64(n)))
}

// IDF is the inverse document frequency ln(n/df) used to pick keywords; it
// is 0 for df <= 0 or n <= 0 (a term the store does not hold discriminates
// nothing), and df is capped at n.
func IDF(df, n int) float64 {
	if df <= 0 || n <= 0 {
		return 0
	}
	return math.Log(float64(n) / float64(min(df, n)))
}

// Keywords picks up to maxN distinct terms of terms (already analysed, e.g.
// by the store's analyzer) that discriminate in a store of n memories: each
// term's IDF = ln(n/df[term]) must reach KeywordFloor(n); terms absent from
// the store are skipped. The result is sorted by IDF, highest first, ties in
// the order of first appearance. maxN <= 0 gives nil.
func Keywords(terms []string, df map[string]int, n, maxN int) []Keyword {
	if maxN <= 0 {
		return nil
	}
	floor := KeywordFloor(n)
	seen := map[string]bool{}
	var out []Keyword
	for _, t := range terms {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		if df[t] <= 0 {
			continue
		}
		if idf := IDF(df[t], n); idf >= floor {
			out = append(out, Keyword{t, idf})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].IDF > out[j].IDF })
	if len(out) > maxN {
		out = out[:maxN]
	}
	return out
}

// Coverage is the share of a query's IDF weight that a memory contains:
//
//	sum of idf(t) over distinct query terms t in doc / sum of idf(t) over distinct query terms
//
// with the smoothed BM25 idf(t) = ln(1 + (n - df + 0.5)/(df + 0.5)), so a
// query term the store has never seen weighs the most and counts against
// every memory: a question about something the store does not hold has low
// coverage everywhere. It is 0 when the query has no terms.
func Coverage(query []string, doc map[string]bool, df map[string]int, n int) float64 {
	return ExpandedCoverage(query, doc, df, n, nil)
}

// ExpandedCoverage is Coverage where a query term the memory lacks still
// earns part of its weight through an expansion of it that the memory
// contains (alts: the weighted synonym and hypernym terms of each query
// term): the best such expansion's weight x idf(t).
func ExpandedCoverage(query []string, doc map[string]bool, df map[string]int, n int, alts map[string][]store.Term) float64 {
	var total, got float64
	seen := map[string]bool{}
	for _, t := range query {
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		idf := SmoothIDF(df[t], n)
		total += idf
		if doc[t] {
			got += idf
			continue
		}
		best := 0.0
		for _, a := range alts[t] {
			if doc[a.Text] {
				best = math.Max(best, a.Boost)
			}
		}
		got += best * idf
	}
	if total == 0 {
		return 0
	}
	return got / total
}

// SmoothIDF is the BM25 inverse document frequency
// ln(1 + (n - df + 0.5)/(df + 0.5)): positive, largest for a term the store
// does not hold; df is clamped to 0..n.
func SmoothIDF(df, n int) float64 {
	n = max(n, 0)
	d := float64(min(max(df, 0), n))
	return math.Log(1 + (float64(n)-d+0.5)/(d+0.5))
}
