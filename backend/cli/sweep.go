package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// stewardSweep is the daemon's scheduled sweep for the stickiness
// simulation: plan every operation, apply the auto-applied ones.
func stewardSweep(cfg config.Config) func(ctx context.Context, st *store.Store, now time.Time) error {
	return func(ctx context.Context, st *store.Store, now time.Time) error {
		dir, err := os.MkdirTemp("", "memtray-sweep-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		s := steward.New(st, cfg.Steward, steward.Options{Dir: dir, Clock: memory.FixedClock{T: now}})
		plan, err := s.Plan(ctx, steward.PlanOptions{Ops: cfg.Steward.AutoApply})
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		if len(plan.Actions) == 0 {
			return nil
		}
		_, err = s.Apply(ctx, plan, nil)
		return err
	}
}
