package steward

import (
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestServiceChecks(t *testing.T) {
	ctx := context.Background()
	_, s := fixture(t, defaults(), rec{id: "a", text: "the deploy script lives in tools/deploy.sh", created: 400, accessed: -1})
	tests := []struct {
		name string
		do   func(v *Service) error
		want error
	}{
		{"unknown op in a plan", func(v *Service) error { _, err := v.StewardPlan(ctx, PlanOptions{Ops: []string{"burn"}}); return err }, memory.ErrInvalid},
		{"all and a project", func(v *Service) error {
			_, err := v.StewardPlan(ctx, PlanOptions{All: true, Project: "p"})
			return err
		}, memory.ErrInvalid},
		{"apply of an unknown plan", func(v *Service) error { _, err := v.StewardApply(ctx, ApplyRequest{PlanID: "nope"}); return err }, memory.ErrNotFound},
		{"unknown op in an apply", func(v *Service) error {
			pl, err := v.StewardPlan(ctx, PlanOptions{})
			if err != nil {
				return err
			}
			_, err = v.StewardApply(ctx, ApplyRequest{PlanID: pl.ID, Ops: []string{"burn"}})
			return err
		}, memory.ErrInvalid},
		{"restore of nothing", func(v *Service) error { return v.Restore(ctx, nil) }, memory.ErrInvalid},
		{"restore of too many", func(v *Service) error { return v.Restore(ctx, make([]string, 1001)) }, memory.ErrInvalid},
		{"purge of nothing", func(v *Service) error { _, err := v.PurgeTrash(ctx, PurgeRequest{}); return err }, memory.ErrInvalid},
		{"purge of ids and all", func(v *Service) error {
			_, err := v.PurgeTrash(ctx, PurgeRequest{IDs: []string{"a"}, All: true})
			return err
		}, memory.ErrInvalid},
		{"purge of too many", func(v *Service) error {
			_, err := v.PurgeTrash(ctx, PurgeRequest{IDs: make([]string, 1001)})
			return err
		}, memory.ErrInvalid},
		{"purge of a live memory", func(v *Service) error { _, err := v.PurgeTrash(ctx, PurgeRequest{IDs: []string{"a"}}); return err }, memory.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(NewService(s, ServiceOptions{})); !errors.Is(err, tt.want) {
				t.Errorf("err %v, want %v", err, tt.want)
			}
		})
	}
}

// A plan is kept for apply until KeptPlans newer ones were made; each plan
// and apply is announced.
func TestServiceKeepsPlans(t *testing.T) {
	ctx := context.Background()
	_, s := fixture(t, defaults(), rec{id: "a", text: "the deploy script lives in tools/deploy.sh", created: 400, accessed: -1})
	var ops []string
	v := NewService(s, ServiceOptions{Announce: func(op string, _ *Plan, _ *Result) { ops = append(ops, op) }})
	first, err := v.StewardPlan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last *Plan
	for range KeptPlans {
		if last, err = v.StewardPlan(ctx, PlanOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := v.StewardApply(ctx, ApplyRequest{PlanID: first.ID}); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("apply of a plan %d plans old: %v; want ErrNotFound", KeptPlans, err)
	}
	if _, err := v.StewardApply(ctx, ApplyRequest{PlanID: last.ID}); err != nil {
		t.Errorf("apply of the last plan: %v", err)
	}
	if len(ops) != KeptPlans+2 || ops[0] != "planned" || ops[len(ops)-1] != "applied" {
		t.Errorf("announced %v", ops)
	}
}

// TestServiceAppliesTickedActions: an apply naming actions carries out
// those only; a name that is not one of the plan's actions is refused.
func TestServiceAppliesTickedActions(t *testing.T) {
	ctx := context.Background()
	st, s := fixture(t, defaults(),
		rec{id: "a", text: "the deploy script lives in tools/deploy.sh", created: 400, accessed: -1},
		rec{id: "b", text: "the frontend builds with vite and svelte", created: 400, accessed: -1})
	v := NewService(s, ServiceOptions{})
	pl, err := v.StewardPlan(ctx, PlanOptions{Ops: []string{OpDecayStale}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Actions) != 2 {
		t.Fatalf("plan: %+v", pl.Actions)
	}
	cases := []struct {
		name string
		refs []ActionRef
		want error
	}{
		{"unknown memory", []ActionRef{{Op: OpDecayStale, ID: "zzz"}}, memory.ErrInvalid},
		{"op the memory has no action for", []ActionRef{{Op: OpPrune, ID: "a"}}, memory.ErrInvalid},
		{"too many", make([]ActionRef, maxActionRefs+1), memory.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := v.StewardApply(ctx, ApplyRequest{PlanID: pl.ID, Actions: c.refs}); !errors.Is(err, c.want) {
				t.Errorf("err %v, want %v", err, c.want)
			}
		})
	}
	res, err := v.StewardApply(ctx, ApplyRequest{PlanID: pl.ID, Actions: []ActionRef{{Op: OpDecayStale, ID: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 1 || res.Applied[0].ID != "b" {
		t.Fatalf("applied %+v", res.Applied)
	}
	a, _ := st.Get(ctx, "a")
	b, _ := st.Get(ctx, "b")
	if a.Importance != 0.5 || b.Importance >= 0.5 {
		t.Errorf("importance a %v (untouched 0.5), b %v (decayed)", a.Importance, b.Importance)
	}
}
