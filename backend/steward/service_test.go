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
