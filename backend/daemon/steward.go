package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
)

// StewardDir, in the data dir, holds the steward's undo journal and ledger.
const StewardDir = "steward"

// keptPlans is how many recent plans the daemon keeps for apply.
const keptPlans = 8

// plans keeps the recent plans by id, so an apply carries out exactly the
// plan the user saw.
type plans struct {
	mu    sync.Mutex
	order []string
	byID  map[string]*steward.Plan
	last  *steward.Plan // the scheduled sweep's latest plan
}

func (p *plans) add(pl *steward.Plan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = map[string]*steward.Plan{}
	}
	p.byID[pl.ID] = pl
	p.order = append(p.order, pl.ID)
	for len(p.order) > keptPlans {
		delete(p.byID, p.order[0])
		p.order = p.order[1:]
	}
}

func (p *plans) get(id string) (*steward.Plan, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl, ok := p.byID[id]
	return pl, ok
}

func (d *Daemon) openSteward() {
	cfg := d.cfg.Steward
	if cfg.MergeSimilarity == 0 {
		cfg.MergeSimilarity = steward.DefaultMergeSimilarity(d.emb.Model())
	}
	d.steward = steward.New(d.store, cfg, steward.Options{
		Dir: filepath.Join(d.cfg.DataDir, StewardDir), Clock: d.clock, Logger: d.log, Embedder: d.emb})
	d.clockCheck.observe(d.clock.Now()) // the first sweep compares with now
}

// StewardPlan makes a dry-run plan and keeps it for StewardApply.
func (d *Daemon) StewardPlan(ctx context.Context, o steward.PlanOptions) (*steward.Plan, error) {
	for _, op := range o.Ops {
		if !slices.Contains(config.StewardOps, op) {
			return nil, fmt.Errorf("%w: unknown operation %q", memory.ErrInvalid, op)
		}
	}
	if o.All && o.Project != "" {
		return nil, fmt.Errorf("%w: --all and --project exclude each other", memory.ErrInvalid)
	}
	pl, err := d.steward.Plan(ctx, o)
	if err != nil {
		return nil, err
	}
	d.plans.add(pl)
	d.publishSteward("planned", pl, nil, false, nil)
	return pl, nil
}

// StewardApply applies a kept plan.
func (d *Daemon) StewardApply(ctx context.Context, req httpapi.ApplyRequest) (steward.Result, error) {
	pl, ok := d.plans.get(req.PlanID)
	if !ok {
		return steward.Result{}, fmt.Errorf("%w: no plan %q: plans are kept for the last %d runs; plan again", memory.ErrNotFound, req.PlanID, keptPlans)
	}
	for _, op := range req.Ops {
		if !slices.Contains(config.StewardOps, op) {
			return steward.Result{}, fmt.Errorf("%w: unknown operation %q", memory.ErrInvalid, op)
		}
	}
	res, err := d.steward.Apply(ctx, pl, req.Ops)
	if err == nil {
		d.publishSteward("applied", nil, &res, false, nil)
		d.publishRun(res)
	}
	return res, err
}

// StewardUndo reverts an applied run: req.RunID, or the last one.
func (d *Daemon) StewardUndo(ctx context.Context, req httpapi.UndoRequest) (steward.Result, error) {
	res, err := d.steward.UndoRun(ctx, req.RunID)
	if err == nil {
		d.publishSteward("undone", nil, &res, false, nil)
	}
	return res, err
}

// StewardRuns lists the applied runs that can be undone, newest first.
func (d *Daemon) StewardRuns(ctx context.Context) ([]steward.Run, error) {
	return d.steward.Runs()
}

// Trash lists the steward's trash.
func (d *Daemon) Trash(ctx context.Context) ([]store.TrashedMemory, error) {
	return d.steward.Trash(ctx)
}

// Restore brings memories back from the trash.
func (d *Daemon) Restore(ctx context.Context, ids []string) error {
	if len(ids) == 0 || len(ids) > 1000 {
		return fmt.Errorf("%w: restore 1..1000 ids", memory.ErrInvalid)
	}
	if err := d.indexLag(d.steward.Restore(ctx, ids...)); err != nil {
		return err
	}
	d.publishMemory(httpapi.MemoryRestored, ids, nil)
	return nil
}

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
		every := time.Duration(d.live.Load().Steward.Every)
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
	pl, err := d.StewardPlan(ctx, steward.PlanOptions{})
	if err != nil {
		return err
	}
	d.plans.mu.Lock()
	d.plans.last = pl
	d.plans.mu.Unlock()
	if held {
		d.log.Info("steward sweep planned only: holding after a clock jump", "for", left.Round(time.Second))
		return nil
	}
	var auto []string
	for _, op := range d.live.Load().Steward.AutoApply {
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
