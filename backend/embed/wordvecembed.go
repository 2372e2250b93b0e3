package embed

import (
	"context"
	"fmt"
	"math"

	"github.com/memtray/memtray/backend/embed/wordvec"
	"github.com/memtray/memtray/backend/memory"
)

// BuiltinModel names the built-in embedder's output (see Builtin). The
// version suffix changes whenever the vectors it produces change.
const BuiltinModel = "builtin-wordvec-v1"

// WordvecDim is the length of the shipped word vectors (wordvec.Builtin).
const WordvecDim = 300

// SemanticDim is the length of Builtin's semantic part: the word vectors'
// dimensions plus one coordinate that holds the part's norm when a text has
// no known word.
const SemanticDim = WordvecDim + 1

// BuiltinDim is the length of the built-in embedder's vectors.
const BuiltinDim = LexicalDim + SemanticDim

// semanticShare is the semantic part's share of a Builtin vector's squared
// norm: whole-vector cosines (dedup, MMR, floors) are
// (1-share) x lexical cosine + share x semantic cosine.
const semanticShare = 0.5

// RRF list weights of Builtin's parts (memory.Segment.Weight), BM25's
// being 1. Chosen on ../shared/eval/recall-dev.json; see docs/benchmarks.md
// (Retrieval).
const (
	lexicalListWeight  = 0.25
	semanticListWeight = 0.25
)

// Builtin is memtray's default offline embedder. Its vector is two parts,
// each L2-normalised and scaled to a fixed share of the norm:
//
//   - lexical (LexicalDim): the hashing features of Lexical, good at exact
//     identifiers, near-duplicates and inflections;
//   - semantic (SemanticDim): a SIF sentence vector over memtray's own word
//     vectors (wordvec.Builtin, trained by `make model` from permissively
//     licensed documentation and WordNet glosses), so "bill" meets
//     "invoice" and "stickers" meets "labels". A text with no known word
//     puts the part's norm on its last coordinate instead, which no query
//     vector uses.
//
// Search ranks each part as its own list (memory.SegmentedEmbedder). The
// word vectors ship inside the binary and load on first use (see
// BenchmarkBuiltinFirstEmbed). It needs no network, is deterministic and is
// safe for concurrent use.
type Builtin struct {
	lex *Lexical
}

// NewBuiltin returns the built-in embedder.
func NewBuiltin() *Builtin { return &Builtin{lex: NewLexical()} }

// Model returns BuiltinModel.
func (b *Builtin) Model() string { return BuiltinModel }

// Dim returns BuiltinDim.
func (b *Builtin) Dim() int { return BuiltinDim }

// Segments returns the lexical and semantic parts with their RRF weights.
func (b *Builtin) Segments() []memory.Segment {
	return []memory.Segment{
		{Name: "lexical", Dim: LexicalDim, Weight: lexicalListWeight},
		{Name: "semantic", Dim: SemanticDim, Weight: semanticListWeight},
	}
}

// wordModel returns the shipped word vectors, checking their shape.
func wordModel() (*wordvec.Model, error) {
	m, err := wordvec.Builtin()
	if err != nil {
		return nil, err
	}
	if m.Dim() != WordvecDim {
		return nil, fmt.Errorf("built-in word vectors have %d dimensions, want %d", m.Dim(), WordvecDim)
	}
	return m, nil
}

// Embed returns one vector per text (see Builtin). Invalid UTF-8 is an
// error.
func (b *Builtin) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	m, err := wordModel()
	if err != nil {
		return nil, fmt.Errorf("builtin embed: %w", err)
	}
	lex, err := b.lex.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		lex[i] = join(lex[i], m.Sentence(t), true)
	}
	return lex, nil
}

// EmbedOne embeds a single text; a convenience for callers and tests. It
// panics if the shipped word vectors do not load (a broken build).
func (b *Builtin) EmbedOne(text string) []float32 {
	m, err := wordModel()
	if err != nil {
		panic(err)
	}
	return join(b.lex.EmbedOne(text), m.Sentence(text), true)
}

// EmbedWeighted embeds a query with a weight per token for the lexical part
// (see Lexical.EmbedWeighted); the semantic part has its own SIF weights.
// A query with no known word gets a zero semantic part (no norm on the
// last coordinate), so it matches no memory by meaning and search skips
// that list.
func (b *Builtin) EmbedWeighted(ctx context.Context, text string, weight func(token string) float64) ([]float32, error) {
	m, err := wordModel()
	if err != nil {
		return nil, fmt.Errorf("builtin embed: %w", err)
	}
	lex, err := b.lex.EmbedWeighted(ctx, text, weight) // checks ctx and UTF-8
	if err != nil {
		return nil, err
	}
	return join(lex, m.Sentence(text), false), nil
}

// join concatenates a lexical vector and a SIF vector (each unit or zero)
// into a Builtin vector; flag puts a zero SIF part's norm on the last
// coordinate (documents).
func join(lex, sif []float32, flag bool) []float32 {
	out := make([]float32, BuiltinDim)
	a, b := float32(math.Sqrt(1-semanticShare)), float32(math.Sqrt(semanticShare))
	for i, x := range lex {
		out[i] = a * x
	}
	sem := out[LexicalDim:]
	var norm float32
	for i, x := range sif {
		sem[i] = b * x
		norm += x * x
	}
	if norm == 0 && flag {
		sem[WordvecDim] = b
	}
	return out
}
