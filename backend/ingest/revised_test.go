package ingest

import (
	"strings"
	"testing"
)

func TestDropRevisedActionOnly(t *testing.T) {
	finding := "The `orders/export.go` writer skips rows whose `shipped_at` is empty, so the nightly export file misses every pending order."
	tests := []struct {
		name    string
		later   string
		revised bool
	}{
		{"a correction of the finding revises it", "Actually the export writer keeps the pending orders; `shipped_at` is empty only in the fixture rows of `orders/export.go`.", true},
		{"the agent's next step holding a cue word does not", "Let me adjust the export test to check what actually lands in the file for `shipped_at` rows.", false},
		{"an offer holding a cue word does not", "If you prefer, we can write the pending orders of `orders/export.go` to a separate file instead.", false},
		{"a change made instead revises it", "Switched the `orders/export.go` writer to keep rows with an empty `shipped_at` instead of skipping them.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "why does the export miss orders?", "Let me read the writer.", finding, tt.later, "Done."))
			var got *Candidate
			cands := Distill(turns[0], nil)
			for i := range cands {
				if strings.Contains(cands[i].Text, "misses every pending order") {
					got = &cands[i]
				}
			}
			if got == nil {
				t.Fatalf("no candidate holds the finding: %+v", cands)
			}
			if revised := strings.HasPrefix(got.Reason, "revised later"); revised != tt.revised {
				t.Fatalf("revised = %v (keep %v, %q), want %v", revised, got.Keep, got.Reason, tt.revised)
			}
		})
	}
}

func TestDropRevisedCueWord(t *testing.T) {
	finding := "The `ledger/import.go` reader buffers each statement file instead of streaming it, so a large bank export needs gigabytes of memory."
	tests := []struct {
		name    string
		later   string
		off     bool
		revised bool
	}{
		{"a correction of the finding revises it", "Actually the `ledger/import.go` reader streams the statement file; the memory goes to the parsed rows.", false, true},
		{"a sentence sharing only the cue word does not", "Turns out the nightly reconciliation job compares totals instead.", false, false},
		{"it did with the cue word counted", "Turns out the nightly reconciliation job compares totals instead.", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revisionOff["cue-word"] = tt.off
			defer delete(revisionOff, "cue-word")
			turns := GroupTurns(sessionOf("s", "why does the import use so much memory?", "Let me read the reader.", finding, tt.later, "Done."))
			var got *Candidate
			cands := Distill(turns[0], nil)
			for i := range cands {
				if strings.Contains(cands[i].Text, "needs gigabytes of memory") {
					got = &cands[i]
				}
			}
			if got == nil {
				t.Fatalf("no candidate holds the finding: %+v", cands)
			}
			if revised := strings.HasPrefix(got.Reason, "revised later"); revised != tt.revised {
				t.Fatalf("revised = %v (keep %v, %q), want %v", revised, got.Keep, got.Reason, tt.revised)
			}
		})
	}
}
