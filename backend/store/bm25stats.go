package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/memtray/memtray/backend/memory"
)

// bm25Cache holds the text index's BM25 statistics for the last index
// snapshot they were counted on.
type bm25Cache struct {
	mu     sync.Mutex
	snap   index.IndexReader // compared by identity only
	tokens int               // s.tokens they were counted with
	names  int               // s.names they were counted with
	stats  *search.BM25Stats
}

// bm25Stats returns the BM25 statistics TextSearchTerms gives bleve: the
// number of documents and, per field, the count bleve divides by it for
// the field's average length.
//
// Left to itself, bleve takes the sum of the term dictionaries of the
// index's segments: for the text field, the number of distinct terms per
// document rather than the mean number of tokens per document that BM25's
// length normalisation is defined with. Vocabulary grows slower than the
// documents, so in a large store that average falls towards a few terms,
// a memory's length over it grows with the store and long memories are
// pushed down further the more there are; and since a term in three
// segments counts three times, it also depends on how the index happens to
// be split into segments, which its background merges change from run to
// run (LoCoMo's hybrid R@5 .553 or .554). The text field's count here is
// the tokens of every memory's text (what bleve records as a document's
// field length), kept up to date on every write (setEntry, dropEntry) and
// with the index's watermark (countIndexTokens), so the average is the
// true mean length, whatever the layout. The keyword fields, which only filter, are
// counted on the merged dictionary, each term once. The count is kept
// until the snapshot (a write or a merge) or the tokens change. Called
// with s.textMu held for reading (or s.wmu, at Open).
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
	// A write indexes its text before it publishes its entry, which
	// counts its tokens (publish.go): a snapshot can be read with the
	// count before the write and after, so the count is part of the key.
	tokens, names := s.textTokens()
	c := &s.bm25
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stats != nil && c.snap == r && c.tokens == tokens && c.names == names {
		return c.stats, nil
	}
	docs, err := r.DocCount()
	if err != nil {
		return nil, fmt.Errorf("bm25 statistics: %w", err)
	}
	// The names field: the count of its terms, kept as the text's
	// tokens are (setEntry, dropEntry), so that its average length is
	// the true mean as the text field's is. Counting them here, by
	// walking the field's postings, cost the first search after every
	// write 73 ms at 10k memories and 2.7 s at 100k (BenchmarkBM25Stats;
	// docs/benchmarks.md, exp-rank3).
	card := map[string]int{fieldText: tokens, fieldNames: names}
	// Every indexed field: a filter's term query on project, kind or
	// source needs its statistics too (bleve fails without them).
	for _, field := range []string{fieldProject, fieldKind, fieldSource} {
		if card[field], err = distinctTerms(r, field); err != nil {
			return nil, fmt.Errorf("bm25 statistics: %w", err)
		}
	}
	// bleve merges the clauses of an unscored disjunction (a filter of
	// several kinds) into one term reader on the field "*"; it scores
	// nothing, but its searcher wants statistics all the same.
	card["*"] = card[fieldText]
	c.snap, c.tokens, c.names = r, tokens, names
	c.stats = &search.BM25Stats{DocCount: float64(docs), FieldCardinality: card}
	return c.stats, nil
}

// textTokens is the number of tokens of every memory's text and the
// number of terms of every memory's names field: bleve's average field
// length (this over the documents, rounded up) is then the mean length
// BM25 is defined with.
func (s *Store) textTokens() (tokens, names int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tokens, s.names
}

// setEntry sets the entry of id and keeps s.tokens, the tokens of every
// entry's text, up to date: a text that did not change keeps its count
// uncounted. Called with s.mu held.
func (s *Store) setEntry(id string, e *entry) {
	old := s.entries[id]
	if old != nil && old.lower == e.lower {
		e.tokens = old.tokens
	} else {
		if old != nil {
			s.tokens -= old.tokenCount()
		}
		e.tokens = textLength(e.lower)
		s.tokens += int(e.tokens)
	}
	if old != nil {
		s.names -= int(old.names)
	}
	s.names += int(e.names)
	s.entries[id] = e
}

// dropEntry removes the entry of id and its tokens from s.tokens. Called
// with s.mu held.
func (s *Store) dropEntry(id string) {
	if old := s.entries[id]; old != nil {
		s.tokens -= old.tokenCount()
		s.names -= int(old.names)
		delete(s.entries, id)
	}
}

// tokenCount is the number of tokens of the entry's text, counted now if
// it was loaded at Open.
func (e *entry) tokenCount() int {
	if e.tokens >= 0 {
		return int(e.tokens)
	}
	return int(textLength(e.lower))
}

// countIndexTokens sets s.tokens, at Open, to the tokens of every text the
// index holds: the count the last Close kept with the watermark; when the
// index was just built or repaired, or the count is missing or kept at
// another watermark (writes after it without a clean Close, or by a
// version that keeps none), the texts are counted in the index: the sum
// of the frequencies of every posting of every term, which reads the
// index rather than tokenizing every text again.
func (s *Store) countIndexTokens(ctx context.Context, fresh bool) error {
	if !fresh && s.repaired == 0 {
		v, err := s.text.GetInternal([]byte(internalTokens))
		if err != nil {
			return fmt.Errorf("count text tokens: %w", err)
		}
		w, err := s.text.GetInternal([]byte(internalWatermark))
		if err != nil {
			return fmt.Errorf("count text tokens: %w", err)
		}
		if len(v) == 16 && len(w) == 8 && getU64(v[:8]) == getU64(w) {
			s.mu.Lock()
			s.tokens = int(getU64(v[8:]))
			s.mu.Unlock()
			return nil
		}
	}
	ai, err := s.text.Advanced()
	if err != nil {
		return fmt.Errorf("count text tokens: %w", err)
	}
	r, err := ai.Reader()
	if err != nil {
		return fmt.Errorf("count text tokens: %w", err)
	}
	defer r.Close()
	n, err := fieldTokens(ctx, r, fieldText)
	if err != nil {
		return fmt.Errorf("count text tokens: %w", err)
	}
	s.mu.Lock()
	s.tokens = n
	s.mu.Unlock()
	return nil
}

// tokensKey is the value of internalTokens: the watermark and the
// tokens of every text, 8 bytes each. Called with s.wmu held (flushText).
func (s *Store) tokensKey() []byte {
	tokens, _ := s.textTokens()
	return append(u64(s.seq), u64(uint64(max(tokens, 0)))...)
}

// countNames sets s.names, at Open, to the names of every entry's text,
// each counted when its record was decoded (listFieldsOf).
func (s *Store) countNames() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = 0
	for _, e := range s.entries {
		s.names += int(e.names)
	}
}

// nameLength is the number of terms the names field makes of text: its
// names (memory.NameTerms), split as namesAnalyzer splits them, at
// every Unicode space (none is expected inside a name).
func nameLength(text string) int32 {
	n := 0
	for _, name := range memory.NameTerms(text) {
		n += len(strings.FieldsFunc(name, unicode.IsSpace))
	}
	return int32(min(n, math.MaxInt32))
}

// fieldTokens sums the frequencies of every posting of field.
func fieldTokens(ctx context.Context, r index.IndexReader, field string) (int, error) {
	fd, err := r.FieldDict(field)
	if err != nil {
		return 0, err
	}
	defer fd.Close()
	n := 0
	var d index.TermFieldDoc
	for {
		e, err := fd.Next()
		if err != nil || e == nil {
			return n, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		tfr, err := r.TermFieldReader(ctx, []byte(e.Term), field, true, false, false)
		if err != nil {
			return 0, err
		}
		for {
			p, err := tfr.Next(d.Reset())
			if err != nil {
				_ = tfr.Close()
				return 0, err
			}
			if p == nil {
				break
			}
			n += int(p.Freq)
		}
		if err := tfr.Close(); err != nil {
			return 0, err
		}
	}
}

// textLength is the number of tokens the text index makes of text, the
// field length bleve records for a document: the English analyzer's
// tokens, stop words removed (stemming changes none). Lowercased text
// (an entry's) gives the same count: the analyzer lowercases first thing
// after splitting words, and case does not move a word's boundaries.
func textLength(text string) int32 {
	ts, err := textAnalyzer().AnalyzeText(en.AnalyzerName, []byte(text))
	if err != nil {
		return 0
	}
	return int32(min(len(ts), math.MaxInt32))
}

// textAnalyzer is a text mapping used only to analyse text outside a
// store (the analyzers are safe for concurrent use).
var textAnalyzer = sync.OnceValue(newTextMapping)

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
