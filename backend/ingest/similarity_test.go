package ingest

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestSetSimilarity: the thresholds set after New (a model switch's
// calibration) decide dedup; unset, the config's do, and an unset config
// value means the built-in model's.
func TestSetSimilarity(t *testing.T) {
	const stored = "The billing worker retries a failed Stripe webhook three times with a one minute backoff before it gives up."
	const next = "The billing worker retries failed Stripe webhooks up to three times, one minute apart, then gives up."
	for _, tt := range []struct {
		name      string
		configDup float64
		setDup    float64
		want      memory.Verdict
	}{
		// The two texts' cosine is 0.90 with the built-in model.
		{"unset: the built-in 0.92", 0, 0, memory.VerdictStored},
		{"config", 0.85, 0, memory.VerdictMerged},
		{"set after New, lower", 0.95, 0.85, memory.VerdictMerged},
		{"set after New, higher", 0.85, 0.95, memory.VerdictStored},
		{"set 0 keeps the config's", 0.85, -1, memory.VerdictMerged},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			emb := embed.NewBuiltin()
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim()})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			cfg := config.Default().Ingest
			cfg.DuplicateSimilarity = tt.configDup
			p, err := New(Options{Config: cfg, Embedder: emb, Store: st})
			if err != nil {
				t.Fatal(err)
			}
			if tt.setDup != 0 {
				p.SetSimilarity(max(tt.setDup, 0), 0)
			}
			var dec memory.Decision
			for _, text := range []string{stored, next} {
				if dec, err = p.Remember(ctx, memory.Memory{Text: text, Project: "p", Kind: memory.KindFact}); err != nil {
					t.Fatal(err)
				}
			}
			if dec.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s (%s)", dec.Verdict, tt.want, dec.Reason)
			}
		})
	}
}
