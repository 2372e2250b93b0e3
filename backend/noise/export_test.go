package noise

import (
	"context"
	"fmt"
)

// ScoreText embeds text and scores it. Only the tests need it: the gate
// scores the vector the pipeline has already embedded (ScoreVector).
func (s *Scorer) ScoreText(ctx context.Context, text string) (Score, error) {
	vecs, err := s.embed(ctx, []string{text})
	if err != nil {
		return Score{}, fmt.Errorf("noise: embed: %w", err)
	}
	return s.ScoreVector(vecs[0]), nil
}
