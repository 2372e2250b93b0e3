package embed

import (
	"context"
	"sync/atomic"

	"github.com/memtray/memtray/backend/memory"
)

// Swappable stands for an embedder that can be replaced while it is in use,
// e.g. when a running daemon switches its store to another model: every
// component holds the Swappable, and Swap changes the model for all of them
// at once. It is safe for concurrent use.
//
// A call that embeds and then asks for the model could see two models when
// a Swap falls between them. A writer that labels vectors with their model
// must therefore take a Snapshot, embed with it and label with its Model;
// the store then refuses vectors of a model it no longer uses
// (memory.ErrModelMismatch), and the writer embeds again.
type Swappable struct {
	cur atomic.Pointer[swapState]
}

// swapState is one generation of a Swappable.
type swapState struct {
	emb memory.Embedder
	gen uint64
}

// NewSwappable returns a Swappable standing for e (not nil).
func NewSwappable(e memory.Embedder) *Swappable {
	s := &Swappable{}
	s.cur.Store(&swapState{emb: e, gen: 1})
	return s
}

// Current is the embedder the Swappable stands for now.
func (s *Swappable) Current() memory.Embedder { return s.cur.Load().emb }

// Generation increases with every Swap: a caller that saw it change during
// a call knows the model changed under it.
func (s *Swappable) Generation() uint64 { return s.cur.Load().gen }

// Swap replaces the embedder (not nil) and returns the one it replaced.
func (s *Swappable) Swap(e memory.Embedder) memory.Embedder {
	for {
		old := s.cur.Load()
		if s.cur.CompareAndSwap(old, &swapState{emb: e, gen: old.gen + 1}) {
			return old.emb
		}
	}
}

// Model is the current embedder's model.
func (s *Swappable) Model() string { return s.Current().Model() }

// Dim is the current embedder's dimension.
func (s *Swappable) Dim() int { return s.Current().Dim() }

// Embed embeds with the current embedder.
func (s *Swappable) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return s.Current().Embed(ctx, texts)
}

// EmbedQuery embeds a search query with the current embedder: through its
// EmbedQuery when it has one, else like a document.
func (s *Swappable) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	e := s.Current()
	if qe, ok := e.(memory.QueryEmbedder); ok {
		return qe.EmbedQuery(ctx, text)
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// Unwrap returns the current embedder, so what looks for a capability of
// the embedder behind a wrapper (search's token weights and segments) finds
// the current one's.
func (s *Swappable) Unwrap() memory.Embedder { return s.Current() }

// Snapshot returns the embedder e stands for right now: a Swappable's
// current embedder (followed through nested Swappables), else e itself.
// Embed with the snapshot and label the vectors with its Model, so vectors
// and label belong together while the model may be switched.
func Snapshot(e memory.Embedder) memory.Embedder {
	for {
		s, ok := e.(*Swappable)
		if !ok {
			return e
		}
		e = s.Current()
	}
}
