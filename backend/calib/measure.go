package calib

import (
	"context"
	"fmt"
	"math"

	"github.com/memtray/memtray/backend/memory"
)

// batch is how many texts one Embed call gets.
const batch = 32

// Measured holds every cosine of a set's classes for one model, each
// sorted ascending.
type Measured map[string][]float64

// Measure embeds s with emb and returns the cosines of each class (see
// Distributions).
func Measure(ctx context.Context, emb memory.Embedder, s *Set) (Measured, error) {
	var texts []string
	for _, g := range s.Groups {
		texts = append(texts, g.Memory, g.Near, g.Paraphrase, g.Related)
	}
	for _, p := range s.Prompts {
		texts = append(texts, p.Text)
	}
	vecs := make([][]float32, 0, len(texts))
	for i := 0; i < len(texts); i += batch {
		part := texts[i:min(i+batch, len(texts))]
		v, err := emb.Embed(ctx, part)
		if err != nil {
			return nil, fmt.Errorf("calibrate %s: embed: %w", emb.Model(), err)
		}
		if len(v) != len(part) {
			return nil, fmt.Errorf("calibrate %s: embedder returned %d vectors for %d texts", emb.Model(), len(v), len(part))
		}
		vecs = append(vecs, v...)
	}
	for i, v := range vecs {
		if len(v) != emb.Dim() {
			return nil, fmt.Errorf("calibrate %s: vector %d has %d dimensions, want %d", emb.Model(), i, len(v), emb.Dim())
		}
	}
	m := Measured{}
	mem := func(i int) []float32 { return vecs[4*i] }
	index := map[string]int{}
	for i, g := range s.Groups {
		index[g.ID] = i
		m[DistNear] = append(m[DistNear], memory.Cosine(mem(i), vecs[4*i+1]))
		m[DistParaphrase] = append(m[DistParaphrase], memory.Cosine(mem(i), vecs[4*i+2]))
		m[DistRelated] = append(m[DistRelated], memory.Cosine(mem(i), vecs[4*i+3]))
		for j := i + 1; j < len(s.Groups); j++ {
			if s.Groups[j].Topic != g.Topic {
				m[DistUnrelated] = append(m[DistUnrelated], memory.Cosine(mem(i), mem(j)))
			}
		}
	}
	for k, p := range s.Prompts {
		pv := vecs[4*len(s.Groups)+k]
		if p.Relevant != "" {
			m[DistHit] = append(m[DistHit], memory.Cosine(pv, mem(index[p.Relevant])))
			continue
		}
		best := math.Inf(-1)
		for i := range s.Groups {
			best = math.Max(best, memory.Cosine(pv, mem(i)))
		}
		m[DistMiss] = append(m[DistMiss], best)
	}
	for _, xs := range m {
		summarize(xs) // sorts
	}
	return m, nil
}
