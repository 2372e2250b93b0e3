package eval

import (
	"context"
	"testing"

	"github.com/memtray/memtray/backend/config"
)

// TestStickinessSimulation runs a small simulation: naive recall lets broad
// memories that answer no query take most injections (the runaway of
// access-boosted recall); the anti-stickiness factor cuts them back without
// lowering the share of relevant injections.
func TestStickinessSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation")
	}
	rep, err := RunStickiness(context.Background(), StickinessOptions{Topics: 200, Broad: 10, Queries: 500, SweepEvery: 100,
		Seed: 3, TempDir: t.TempDir(), Sweep: StewardSweep(config.Default().Steward)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("without: %+v", rep.Without)
	t.Logf("with:    %+v", rep.With)
	if rep.Without.BroadShare < 0.3 {
		t.Errorf("naive recall shows no runaway: broad share %.3f", rep.Without.BroadShare)
	}
	if rep.With.BroadShare >= rep.Without.BroadShare/2 {
		t.Errorf("anti-stickiness left broad share at %.3f (naive %.3f)", rep.With.BroadShare, rep.Without.BroadShare)
	}
	if rep.With.HitRate < rep.Without.HitRate {
		t.Errorf("hit rate fell: %.3f with, %.3f without", rep.With.HitRate, rep.Without.HitRate)
	}
	if rep.With.Top3Share >= 0.10 || rep.With.Top3Share > rep.Without.Top3Share {
		t.Errorf("top-3 share %.3f with, %.3f without: want under 0.10 and no higher than naive", rep.With.Top3Share, rep.Without.Top3Share)
	}
}
