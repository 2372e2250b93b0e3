package memory

import (
	"context"
	"time"
	"unicode/utf8"
)

// Embedder turns texts into vectors. Implementations are safe for concurrent use.
type Embedder interface {
	// Model names the model and its version, e.g. "builtin-hash-v1" or
	// "ollama:nomic-embed-text". A store refuses vectors of another model.
	Model() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one L2-normalised vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Clock tells the time; tests pass a fixed one.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// FixedClock always returns T; for tests and evaluations.
type FixedClock struct{ T time.Time }

// Now returns c.T.
func (c FixedClock) Now() time.Time { return c.T }

// ValidUTF8 reports whether s is valid UTF-8 without NUL bytes.
func ValidUTF8(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return false
		}
	}
	return true
}

// QueryEmbedder is implemented by embedders whose model embeds a search
// query differently from the documents it should find, such as
// nomic-embed-text with its "search_query: " and "search_document: "
// prefixes. Search uses EmbedQuery for queries when it is there; Embed
// stays the way documents are embedded.
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Segment is one part of a segmented embedder's vectors (see
// SegmentedEmbedder).
type Segment struct {
	// Name says what the part measures, e.g. "lexical" or "semantic".
	Name string
	// Dim is the part's length; a vector's parts follow each other in order.
	Dim int
	// Weight is the part's RRF list weight in a hybrid search, relative to
	// BM25's 1 (config search.vector_weight scales every part).
	Weight float64
}

// SegmentedEmbedder is implemented by embedders whose vectors concatenate
// parts that are each normalised on their own, with fixed shares of the
// norm (the built-in embedder: lexical features and word vectors). Search
// ranks the memories by each part separately and fuses the lists, so one
// stored vector serves as several retrievers; whole-vector cosines (dedup,
// MMR, floors) mix the parts by their shares.
type SegmentedEmbedder interface {
	Segments() []Segment
}
