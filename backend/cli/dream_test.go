package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/steward"
)

// TestPlanPrintsWholeIDs: every ID a steward plan prints is whole, so a
// user can paste it into `memtray get`, `pin` or `trash restore`: at
// 9937c7b the table and the skipped lines cut IDs to 12 characters, which
// no command accepts, and the "not merged" lines mixed cut and whole IDs.
func TestPlanPrintsWholeIDs(t *testing.T) {
	const (
		kept   = "01JDREAMKEEPS0000000000001"
		merged = "01JDREAMMERGED000000000002"
		pruned = "01JDREAMPRUNED000000000003"
		apart  = "01JDREAMAPART0000000000004"
		other  = "01JDREAMOTHER0000000000005"
		skip   = "01JDREAMSKIPPED00000000006"
	)
	plan := &steward.Plan{ID: "plan-1", Scope: "store", Scanned: 6, Counts: map[string]int{"merge": 1, "prune": 1},
		Actions: []steward.Action{
			{Op: steward.OpMerge, ID: kept, Preview: "the worker pool holds 64 slots", MergedIDs: []string{merged}, KeptText: "the worker pool holds 64 slots", Similarity: 0.97, Reason: "near duplicates"},
			{Op: "prune", ID: pruned, Preview: "an old note", Reason: "dormant"},
		},
		Refused: []steward.Action{{Op: steward.OpMerge, ID: apart, MergedIDs: []string{other}, Reason: "their numbers differ"}},
	}
	var b strings.Builder
	printPlan(&b, plan)
	printSkips(&b, []steward.Skip{{Op: "prune", ID: skip, Reason: "pinned since the plan"}})
	out := b.String()
	for _, id := range []string{kept, merged, pruned, apart, other, skip} {
		if !regexp.MustCompile(`\b` + id + `\b`).MatchString(out) {
			t.Errorf("the plan does not print %s whole:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "not merged: "+apart+" and "+other+":") {
		t.Errorf("not-merged line:\n%s", out)
	}
}
