package calib

import (
	"context"
	"fmt"
	"math"

	"github.com/memtray/memtray/backend/memory"
)

// Scaled wraps an embedder and moves its cosines onto another scale: it
// appends the constant Offset to every (unit) vector and renormalises, so
// cos' = (cos + Offset²) / (1 + Offset²), an increasing affine map. With
// Offset² = 1.5 the built-in model's 0..1 lands in 0.6..1, as many
// semantic models score texts. Offset 0 gives the wrapped embedder's
// cosines exactly, under another model name.
type Scaled struct {
	Inner  memory.Embedder
	Offset float64
}

// Compressed is the built-in scale compressed into 0.6..1.
const Compressed = 1.224744871391589 // sqrt(1.5)

// Map is the cosine map Scaled applies.
func (s Scaled) Map(cos float64) float64 {
	k := s.Offset * s.Offset
	return (cos + k) / (1 + k)
}

// Model names the wrapped model and the offset.
func (s Scaled) Model() string { return fmt.Sprintf("test-scaled-%.3f:%s", s.Offset, s.Inner.Model()) }

// Dim is one more than the wrapped embedder's.
func (s Scaled) Dim() int { return s.Inner.Dim() + 1 }

// Embed embeds with the wrapped embedder and moves the vectors.
func (s Scaled) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := s.Inner.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(vs))
	for i, v := range vs {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		n = math.Sqrt(n)
		w := make([]float32, len(v)+1)
		norm := math.Sqrt(1 + s.Offset*s.Offset)
		for j, x := range v {
			w[j] = float32(float64(x) / n / norm)
		}
		w[len(v)] = float32(s.Offset / norm)
		out[i] = w
	}
	return out, nil
}
