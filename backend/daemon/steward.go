package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// StewardDir, in the data dir, holds the steward's undo journal and ledger.
const StewardDir = "steward"

func (d *Daemon) openSteward() {
	cfg := d.cfg.Steward
	if cfg.MergeSimilarity == 0 {
		cfg.MergeSimilarity = steward.DefaultMergeSimilarity(d.emb.Model())
	}
	d.steward = steward.New(d.store, cfg, steward.Options{
		Dir: filepath.Join(d.cfg.DataDir, StewardDir), Clock: d.clock, Logger: d.log, Embedder: d.emb})
	d.clockCheck.observe(d.clock.Now()) // the first sweep compares with now
	d.stewardSvc = steward.NewService(d.steward, steward.ServiceOptions{
		Announce: func(op string, pl *steward.Plan, res *steward.Result) {
			d.publishSteward(op, pl, res, false, nil)
			if op == "applied" {
				d.publishRun(*res)
			}
		},
		Restored: func(r store.Restored) {
			d.publishMemory(httpapi.MemoryRestored, r.IDs, nil)
			// A conflict copy's restore is an edit of the memory it is a
			// copy of: announced as that memory's, not the copy's id.
			d.publishMemory(httpapi.MemoryUpdated, r.Edited, nil)
			// A memory marked as noise and restored stops teaching the
			// scorer to reject its like; the restore itself succeeded.
			if _, err := d.feed.Restored(context.Background(), r.IDs); err != nil {
				d.log.Warn("restore: the noise model still holds a restored memory's text", "err", err)
			}
		},
		IndexLag: d.indexLag,
	})
}

// Steward is the steward as the API uses it: plans kept for apply, runs,
// undo, the trash.
func (d *Daemon) Steward() *steward.Service { return d.stewardSvc }

// runSteward sweeps on the configured schedule until ctx ends: a plan of
// every operation, of which only the auto-applied ones are applied (the
// others wait in the plan for the user), then a purge of the expired trash.
// The first sweep runs a minute after start, so a start stays quick.
func (d *Daemon) runSteward(ctx context.Context) {
	// steward.every may change at runtime (PUT /api/config): read it at
	// every turn; while it is 0 the sweep waits.
	t := time.NewTimer(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		every := time.Duration(d.settings.Live().Steward.Every)
		if every <= 0 {
			t.Reset(time.Minute)
			continue
		}
		err := d.sweep(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("steward sweep failed", "err", err)
			d.publishSteward("failed", nil, nil, true, err)
		}
		if ctx.Err() == nil {
			o := &sweepOutcome{At: d.clock.Now()}
			if err != nil {
				o.Err = err.Error()
			}
			d.lastSweep.Store(o)
		}
		t.Reset(every)
	}
}

// sweep runs one scheduled sweep. After a clock jump (clock.go) it only
// plans, until the clock has run steadily again.
func (d *Daemon) sweep(ctx context.Context) error {
	if j := d.clockCheck.observe(d.clock.Now()); j != 0 {
		d.log.Warn("clock jump since the last steward sweep: the sweep applies nothing and empties no trash until the clock runs steadily",
			"jump", j.Round(time.Second), "hold", clockHold)
	}
	held, _, _, left := d.clockCheck.held()
	// Every operation is planned (the window shows the merges and prunes
	// waiting for the user), but the ones applied by themselves are judged
	// on the state the applied ones leave (PlanOptions.Apply).
	autoApply := d.settings.Live().Steward.AutoApply
	pl, err := d.stewardSvc.StewardPlan(ctx, steward.PlanOptions{Apply: autoApply})
	if err != nil {
		return err
	}
	pl = d.teamSweepPlan(ctx, pl) // team memories: only the team's steward (team.go)
	if held {
		d.log.Info("steward sweep planned only: holding after a clock jump", "for", left.Round(time.Second))
		return nil
	}
	var auto []string
	for _, op := range autoApply {
		if pl.Counts[op] > 0 {
			auto = append(auto, op)
		}
	}
	if len(auto) > 0 {
		res, err := d.steward.ApplyScheduled(ctx, pl, auto)
		if err != nil {
			return fmt.Errorf("apply %v: %w", auto, err)
		}
		d.log.Info("steward applied", "ops", auto, "counts", res.Counts, "skipped", len(res.Skipped))
		d.publishSteward("applied", nil, &res, true, nil)
		d.publishRun(res)
	}
	if n, err := d.steward.PurgeTrash(ctx); err != nil {
		return fmt.Errorf("purge trash: %w", err)
	} else if n > 0 {
		d.log.Info("steward purged expired trash", "memories", n)
	}
	return nil
}

// sweepOutcome is how the last scheduled sweep ended.
type sweepOutcome struct {
	At  time.Time
	Err string
}
