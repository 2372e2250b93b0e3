package steward

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// A scheduled sweep applies only some operations (config auto_apply: not
// merge). Its plan still proposes the merge, but the operations it applies
// are judged on the state they leave: the survivor on its own record (not
// snoozed for the accesses of the memory it would absorb, which the
// scheduled apply would skip every hour as "no longer applies"), and the
// memory it would absorb on its own (judged at all). Applying every
// operation judges them on the merged record as before.
func TestScheduledPlanJudgesWhatIsApplied(t *testing.T) {
	dup := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	recs := []rec{
		// Each alone: stickiness 6 (> 5: decay_unreinforced), 6 accesses
		// (< 10: no snooze). Merged: 12 accesses, stickiness 12: snoozed.
		// The loser comes first in the store.
		{id: "dup", text: dup + ".", typ: memory.TypeProject, importance: 0.6, access: 6, created: 30, accessed: 1},
		{id: "keep", text: dup + " via scripts/deploy.sh", typ: memory.TypeProject, importance: 0.6, access: 6, reinforced: 1, created: 30, accessed: 1},
	}
	auto := defaults().AutoApply
	tests := []struct {
		name        string
		apply       []string // the plan's Apply and the ops applied (nil: all)
		applyAll    bool     // the whole plan applied (a person applying the schedule's plan)
		wantApplied map[string]int
		wantSkipped int
		wantLive    map[string]float64 // importance of each live memory after
		wantSnoozed []string
		wantNext    map[string]int // what the next sweep applies
	}{
		{"auto_apply (the daemon's default)", auto, false,
			map[string]int{OpDecayUnreinforced: 2}, 0,
			map[string]float64{"keep": 0.6 * 0.9, "dup": 0.6 * 0.9}, nil, map[string]int{}},
		{"every operation (dream --apply)", nil, false,
			map[string]int{OpMerge: 1, OpDecayUnreinforced: 1, OpSnoozeSticky: 1}, 0,
			map[string]float64{"keep": 0.6 * 0.9}, []string{"keep"}, map[string]int{}},
		// The merge goes ahead; the loser's own decay is skipped (it is in
		// the trash); the snooze of the merged record waits for the next plan.
		{"the schedule's plan applied whole", auto, true,
			map[string]int{OpMerge: 1, OpDecayUnreinforced: 1}, 1,
			map[string]float64{"keep": 0.6 * 0.9}, nil, map[string]int{OpSnoozeSticky: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			st, sw := fixture(t, defaults(), recs...)
			v := NewService(sw, ServiceOptions{})
			pl, err := v.StewardPlan(ctx, PlanOptions{Apply: tt.apply})
			if err != nil {
				t.Fatal(err)
			}
			if pl.Counts[OpMerge] != 1 {
				t.Fatalf("the plan proposes no merge: %v", pl.Counts)
			}
			var ops []string // as the daemon's sweep picks them
			for _, op := range tt.apply {
				if pl.Counts[op] > 0 {
					ops = append(ops, op)
				}
			}
			if tt.apply == nil || tt.applyAll {
				ops = nil
			}
			res, err := sw.ApplyScheduled(ctx, pl, ops)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Skipped) != tt.wantSkipped {
				t.Errorf("skipped %+v, want %d", res.Skipped, tt.wantSkipped)
			}
			if !maps.Equal(res.Counts, tt.wantApplied) {
				t.Errorf("applied %v, want %v", res.Counts, tt.wantApplied)
			}
			live, _ := everything(t, st)
			if len(live) != len(tt.wantLive) {
				t.Errorf("%d live memories, want %d", len(live), len(tt.wantLive))
			}
			for id, imp := range tt.wantLive {
				if m, ok := live[id]; !ok || !near(m.Importance, imp) {
					t.Errorf("%s: live %v importance %.3f, want %.3f", id, ok, m.Importance, imp)
				}
			}
			for id, m := range live {
				if m.Snoozed(now) != slices.Contains(tt.wantSnoozed, id) {
					t.Errorf("%s snoozed %v", id, m.Snoozed(now))
				}
			}
			// The next sweep (the same hour: the decays are rate-limited)
			// skips nothing.
			pl, err = v.StewardPlan(ctx, PlanOptions{Apply: tt.apply})
			if err != nil {
				t.Fatal(err)
			}
			if res, err = sw.ApplyScheduled(ctx, pl, tt.apply); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(res.Counts, tt.wantNext) || len(res.Skipped) != 0 {
				t.Errorf("the next sweep applied %v and skipped %+v; want %v", res.Counts, res.Skipped, tt.wantNext)
			}
			// The runs undo to the records as they were.
			for range 1 + min(len(tt.wantNext), 1) {
				if _, err := sw.Undo(ctx); err != nil {
					t.Fatal(err)
				}
			}
			back, tr := everything(t, st)
			if len(back) != len(recs) || len(tr) != 0 {
				t.Errorf("after the undo: %d live, %d in the trash", len(back), len(tr))
			}
			for id, m := range back {
				if !near(m.Importance, 0.6) || m.Snoozed(now) {
					t.Errorf("after the undo %s has importance %.3f, snoozed %v", id, m.Importance, m.Snoozed(now))
				}
			}
		})
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
