package steward

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// KeptPlans is how many recent plans a Service keeps for apply.
const KeptPlans = 8

// ApplyRequest asks a Service to apply a kept plan: all of its operations,
// or only Ops; and of those, all of the plan's actions or only Actions.
type ApplyRequest struct {
	PlanID string   `json:"plan_id"`
	Ops    []string `json:"ops,omitempty"`
	// Actions, when not empty, names the plan's actions to apply (the
	// rows a person ticked); each must be one of the plan's.
	Actions []ActionRef `json:"actions,omitempty"`
}

// ActionRef names one action of a plan: its operation and its memory (a
// merge's survivor).
type ActionRef struct {
	Op string `json:"op"`
	ID string `json:"id"`
}

// maxActionRefs bounds ApplyRequest.Actions.
const maxActionRefs = 100000

// UndoRequest asks a Service to undo a run; an empty one undoes the last.
type UndoRequest struct {
	// RunID names the run to undo (Runs lists them); empty is the last one.
	RunID string `json:"run_id,omitempty"`
}

// PurgeRequest asks a Service to delete records from the trash for good:
// the records IDs (1..1000 of them), or every record when All is set (and
// IDs is empty).
type PurgeRequest struct {
	IDs []string `json:"ids,omitempty"`
	All bool     `json:"all,omitempty"`
}

// PurgeResult says how many records a PurgeRequest deleted.
type PurgeResult struct {
	Purged int `json:"purged"`
}

// ServiceOptions configures NewService.
type ServiceOptions struct {
	// Announce gets each plan made (op "planned", with the plan), run
	// applied ("applied", with its result) and run undone ("undone");
	// nil: nothing is announced.
	Announce func(op string, pl *Plan, res *Result)
	// Restored gets what a restore did: the ids it brought back from the
	// trash, and the memories conflict copies' edits were applied onto
	// (the copies' ids came back as nothing of their own).
	Restored func(store.Restored)
	// IndexLag turns a write whose text index lags (store.ErrIndexPending)
	// into success, or returns the error; nil: every error fails.
	IndexLag func(error) error
}

// Service is the steward as people and tools use it: plans are dry runs
// kept by id (the last KeptPlans), so an apply carries out exactly the
// plan that was shown; the operations asked for are checked; each plan,
// run, undo and restore is announced. It is safe for concurrent use.
type Service struct {
	s     *Steward
	o     ServiceOptions
	plans plans
}

// NewService returns the service over s.
func NewService(s *Steward, o ServiceOptions) *Service {
	if o.Announce == nil {
		o.Announce = func(string, *Plan, *Result) {}
	}
	if o.Restored == nil {
		o.Restored = func(store.Restored) {}
	}
	if o.IndexLag == nil {
		o.IndexLag = func(err error) error { return err }
	}
	return &Service{s: s, o: o}
}

// StewardPlan makes a dry-run plan and keeps it for StewardApply.
func (v *Service) StewardPlan(ctx context.Context, o PlanOptions) (*Plan, error) {
	if err := knownOps(o.Ops); err != nil {
		return nil, err
	}
	if o.All && o.Project != "" {
		return nil, fmt.Errorf("%w: --all and --project exclude each other", memory.ErrInvalid)
	}
	pl, err := v.s.Plan(ctx, o)
	if err != nil {
		return nil, err
	}
	v.plans.add(pl)
	v.o.Announce("planned", pl, nil)
	return pl, nil
}

// StewardApply applies a kept plan.
func (v *Service) StewardApply(ctx context.Context, req ApplyRequest) (Result, error) {
	pl, ok := v.plans.get(req.PlanID)
	if !ok {
		return Result{}, fmt.Errorf("%w: no plan %q: plans are kept for the last %d runs; plan again", memory.ErrNotFound, req.PlanID, KeptPlans)
	}
	err := knownOps(req.Ops)
	if err != nil {
		return Result{}, err
	}
	if len(req.Actions) > 0 {
		if pl, err = selectActions(pl, req.Actions); err != nil {
			return Result{}, err
		}
	}
	res, err := v.s.Apply(ctx, pl, req.Ops)
	if err == nil {
		v.o.Announce("applied", nil, &res)
	}
	return res, err
}

// StewardUndo reverts an applied run: req.RunID, or the last one.
func (v *Service) StewardUndo(ctx context.Context, req UndoRequest) (Result, error) {
	res, err := v.s.UndoRun(ctx, req.RunID)
	if err == nil {
		v.o.Announce("undone", nil, &res)
	}
	return res, err
}

// StewardRuns lists the applied runs that can be undone, newest first.
func (v *Service) StewardRuns(ctx context.Context) ([]Run, error) {
	return v.s.Runs()
}

// Trash lists the steward's trash.
func (v *Service) Trash(ctx context.Context) ([]store.TrashedMemory, error) {
	return v.s.Trash(ctx)
}

// Restore brings memories back from the trash.
func (v *Service) Restore(ctx context.Context, ids []string) error {
	if len(ids) == 0 || len(ids) > 1000 {
		return fmt.Errorf("%w: restore 1..1000 ids", memory.ErrInvalid)
	}
	r, err := v.s.Restore(ctx, ids...)
	if err := v.o.IndexLag(err); err != nil {
		return err
	}
	v.o.Restored(r)
	return nil
}

// PurgeTrash deletes records from the trash for good (no restore): those
// req.IDs names (an id not in the trash is memory.ErrNotFound, and nothing
// is deleted), or all of them with req.All.
func (v *Service) PurgeTrash(ctx context.Context, req PurgeRequest) (PurgeResult, error) {
	if req.All != (len(req.IDs) == 0) || len(req.IDs) > 1000 {
		return PurgeResult{}, fmt.Errorf("%w: purge 1..1000 ids, or all (not both)", memory.ErrInvalid)
	}
	n, err := v.s.PurgeTrashed(ctx, req.IDs, req.All)
	return PurgeResult{Purged: n}, err
}

// selectActions returns a copy of pl with only the actions refs name; a
// ref that names none of pl's actions is an error.
func selectActions(pl *Plan, refs []ActionRef) (*Plan, error) {
	if len(refs) > maxActionRefs {
		return nil, fmt.Errorf("%w: at most %d actions", memory.ErrInvalid, maxActionRefs)
	}
	want := make(map[ActionRef]bool, len(refs))
	for _, r := range refs {
		want[r] = true
	}
	out := *pl
	out.Actions = nil
	for _, a := range pl.Actions {
		if ref := (ActionRef{Op: a.Op, ID: a.ID}); want[ref] {
			out.Actions = append(out.Actions, a)
			delete(want, ref)
		}
	}
	for _, r := range refs {
		if want[r] {
			return nil, fmt.Errorf("%w: plan %s has no %s action on %q", memory.ErrInvalid, pl.ID, r.Op, r.ID)
		}
	}
	return &out, nil
}

// knownOps checks that every op is one of config.StewardOps.
func knownOps(ops []string) error {
	for _, op := range ops {
		if !slices.Contains(config.StewardOps, op) {
			return fmt.Errorf("%w: unknown operation %q", memory.ErrInvalid, op)
		}
	}
	return nil
}

// plans keeps the recent plans by id, so an apply carries out exactly the
// plan the user saw.
type plans struct {
	mu    sync.Mutex
	order []string
	byID  map[string]*Plan
}

func (p *plans) add(pl *Plan) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byID == nil {
		p.byID = map[string]*Plan{}
	}
	p.byID[pl.ID] = pl
	p.order = append(p.order, pl.ID)
	for len(p.order) > KeptPlans {
		delete(p.byID, p.order[0])
		p.order = p.order[1:]
	}
}

func (p *plans) get(id string) (*Plan, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl, ok := p.byID[id]
	return pl, ok
}
