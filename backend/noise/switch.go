package noise

import (
	"context"
	"fmt"
	"slices"

	"github.com/memtray/memtray/backend/memory"
)

// Prepared holds the scorer's prototypes embedded with another model, for
// Install: a running daemon prepares them before it switches models and
// installs them right after, so scores never compare vectors of two models
// for longer than the switch itself.
type Prepared struct {
	model            string
	staticQ, staticN [][]float32
	learned          [][]float32
	texts            []string // the learned prototypes' texts
}

// Model is the embedding model the prototypes were embedded with.
func (p *Prepared) Model() string { return p.model }

// Prepare embeds the static prototypes and the newest learned ones with
// emb, without changing the scorer.
func (s *Scorer) Prepare(ctx context.Context, emb memory.Embedder) (*Prepared, error) {
	embedAll := func(texts []string) ([][]float32, error) {
		if len(texts) == 0 {
			return nil, nil
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(texts) {
			return nil, fmt.Errorf("%s returned %d vectors for %d texts", emb.Model(), len(vecs), len(texts))
		}
		return vecs, nil
	}
	p := &Prepared{model: emb.Model()}
	var err error
	if p.staticQ, err = embedAll(s.opts.Quality); err != nil {
		return nil, fmt.Errorf("noise: embed quality prototypes with %s: %w", emb.Model(), err)
	}
	if p.staticN, err = embedAll(s.opts.Noise); err != nil {
		return nil, fmt.Errorf("noise: embed noise prototypes with %s: %w", emb.Model(), err)
	}
	for _, e := range s.buf.Newest(s.opts.Recent) {
		p.texts = append(p.texts, e.Text)
	}
	if p.learned, err = embedAll(p.texts); err != nil {
		return nil, fmt.Errorf("noise: embed learned prototypes with %s: %w", emb.Model(), err)
	}
	return p, nil
}

// Install makes prepared prototypes the scorer's, in one step. The
// scorer's embedder must embed with the prepared model from now on; the
// next rebuild (Learn, Forget, Rebuild) uses it.
func (s *Scorer) Install(p *Prepared) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staticQ, s.staticN = p.staticQ, p.staticN
	m := &model{quality: p.staticQ, learned: len(p.learned), builtAt: s.opts.Clock.Now()}
	m.noise = append(slices.Clip(p.staticN), p.learned...)
	for _, t := range s.opts.Noise {
		m.labels = append(m.labels, "static: "+preview(t))
	}
	for _, t := range p.texts {
		m.labels = append(m.labels, "learned: "+preview(t))
	}
	s.sinceLast = 0
	s.rebuilds++
	s.cur.Store(m)
}
