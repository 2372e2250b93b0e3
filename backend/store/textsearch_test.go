package store

import (
	"context"
	"fmt"

	"github.com/memtray/memtray/backend/memory"
)

// TextSearch returns up to n memories matching f ranked by BM25 against
// the free text q (analysed like the stored texts, each term at weight 1),
// best first. Only the tests need it: search builds its own weighted terms
// for TextSearchTerms.
func (s *Store) TextSearch(ctx context.Context, q string, n int, f Filter) ([]Scored, error) {
	if !memory.ValidUTF8(q) {
		return nil, fmt.Errorf("text search: %w", &memory.ValidationError{Problems: []string{"query is not valid UTF-8"}})
	}
	var terms []Term
	for _, t := range s.Analyze(q) {
		terms = append(terms, Term{Text: t, Boost: 1})
	}
	return s.TextSearchTerms(ctx, terms, n, f)
}
