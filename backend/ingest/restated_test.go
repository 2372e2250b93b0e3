package ingest

import "testing"

func TestDropRestated(t *testing.T) {
	tests := []struct {
		name         string
		first, later string
		restated     bool
	}{
		{
			name:     "a later statement naming everything the first named restates it",
			first:    "The vet warnings about shadowed variables come from `ledger/post.go` in `postEntries`.",
			later:    "Summary of the vet warnings: the shadowed variables all come from `ledger/post.go`, in `postEntries` and its helpers.",
			restated: true,
		},
		{
			name:     "a later statement leaving out a name the first gave does not restate it",
			first:    "Most vet warnings about shadowed variables are old ones. The only new warning is `ledger/post.go:41:unreachable` in `postEntries`.",
			later:    "The pre-push hook fails on old warnings only: the vet warnings about shadowed variables are all in `report/sum.go` and `postEntries`, which this change did not touch.",
			restated: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cands := []Candidate{
				newCandidate(tt.first, OriginToolLoop, ClassFinding, true, ""),
				newCandidate(tt.later, OriginToolLoop, ClassFinding, true, ""),
			}
			if n := overlap(cands[0].subject, cands[1].subject); n < 3 {
				t.Fatalf("fixture shares %d subject tokens, want 3 or more", n)
			}
			dropRestated(cands)
			if got := !cands[0].Keep; got != tt.restated {
				t.Fatalf("restated = %v (%q), want %v", got, cands[0].Reason, tt.restated)
			}
			if !cands[1].Keep {
				t.Fatal("the later statement was dropped")
			}
		})
	}
}
