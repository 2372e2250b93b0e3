package store

import (
	"fmt"
	"math"
	"sync"

	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// bm25Cache holds the text index's BM25 statistics for the last index
// snapshot they were counted on.
type bm25Cache struct {
	mu    sync.Mutex
	snap  index.IndexReader // compared by identity only
	stats *search.BM25Stats
}

// bm25Stats returns the BM25 statistics TextSearchTerms gives bleve: the
// number of documents and the number of distinct terms of the text field.
//
// Left to itself, bleve sums the term dictionaries of the index's segments,
// so a term in three segments counts three times, and its BM25 length
// normalisation (avgDocLength = that sum / documents) depends on how the
// index happens to be split into segments, which its background merges
// change from run to run: the same memories written the same way ranked
// differently from one run to the next (LoCoMo's hybrid R@5 .553 or .554).
// Counted on the merged dictionary, each term once, the statistics are what
// bleve computes for an index of one segment, whatever the layout. The
// count is kept until the snapshot changes (a write or a merge).
func (s *Store) bm25Stats() (*search.BM25Stats, error) {
	ai, err := s.text.Advanced()
	if err != nil {
		return nil, fmt.Errorf("bm25 statistics: %w", err)
	}
	r, err := ai.Reader()
	if err != nil {
		return nil, fmt.Errorf("bm25 statistics: %w", err)
	}
	defer r.Close()
	c := &s.bm25
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stats != nil && c.snap == r {
		return c.stats, nil
	}
	docs, err := r.DocCount()
	if err != nil {
		return nil, fmt.Errorf("bm25 statistics: %w", err)
	}
	card := map[string]int{}
	// Every indexed field: a filter's term query on project, kind or
	// source needs its statistics too (bleve fails without them).
	for _, field := range []string{fieldText, fieldProject, fieldKind, fieldSource} {
		if card[field], err = distinctTerms(r, field); err != nil {
			return nil, fmt.Errorf("bm25 statistics: %w", err)
		}
	}
	// bleve merges the clauses of an unscored disjunction (a filter of
	// several kinds) into one term reader on the field "*"; it scores
	// nothing, but its searcher wants statistics all the same.
	card["*"] = card[fieldText]
	c.snap = r
	c.stats = &search.BM25Stats{DocCount: float64(docs), FieldCardinality: card}
	return c.stats, nil
}

// distinctTerms counts the terms of a field in the merged dictionary of
// every segment, each once.
func distinctTerms(r index.IndexReader, field string) (int, error) {
	fd, err := r.FieldDict(field)
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		e, err := fd.Next()
		if err != nil {
			fd.Close()
			return 0, err
		}
		if e == nil {
			break
		}
		n++
	}
	return n, fd.Close()
}

// roundScore rounds a BM25 score to 9 significant digits. bleve adds a document's
// term scores in an order that depends on the segments' layout, so the same
// document can score a few units in the last place apart from one run to
// the next, enough to swap two documents that tie; rounded, they tie again
// and TextSearchTerms breaks the tie by id.
func roundScore(x float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	e := math.Pow(10, 9-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*e) / e
}
