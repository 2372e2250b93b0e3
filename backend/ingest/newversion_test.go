package ingest

import (
	"strings"
	"testing"
)

// TestReplacedAnew: a later "replace X with this version" gives X anew
// and undoes nothing said of X; a replacement by another thing, or a
// sentence that also removes, still undoes.
func TestReplacedAnew(t *testing.T) {
	stmt := "The `render_total()` helper in `billing/invoice.py` rounds each line before it sums them, so totals drift by a cent."
	tests := []struct {
		name   string
		later  string
		undone bool
	}{
		{"with these updated versions", "Please replace the existing `render_total()` helper in `billing/invoice.py` with these updated versions.", false},
		{"with the one provided above", "Replace the existing `render_total()` helper in `billing/invoice.py` with the one provided above.", false},
		{"with a colon, the code follows", "Replace the existing `render_total()` helper in `billing/invoice.py` with:", false},
		{"with another thing", "Replace `render_total()` in `billing/invoice.py` with `sum_then_round()`.", true},
		{"a new version and a removal", "Replace `render_total()` in `billing/invoice.py` with this version and remove `round_line()`.", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check := func(want bool) {
				t.Helper()
				kept := keptTexts("why do the invoice totals drift?", []string{stmt}, []string{tt.later})
				if got := !anyHas(kept, "rounds each line"); got != want {
					t.Fatalf("undone = %v, want %v (kept %q)", got, want, kept)
				}
			}
			check(tt.undone)
			if !tt.undone {
				withAblated(t, ruleNewVersion, func() { check(true) })
			}
		})
	}
}

// TestSaysEach: a later statement naming every token of an earlier one
// restates it only when it says each of its sentences again, and names
// the messages it quotes.
func TestSaysEach(t *testing.T) {
	tests := []struct {
		name     string
		earlier  string
		later    string
		rule     string // the rule that tells them apart, "" when they restate
		restates bool
	}{
		{
			name:     "the same change said again",
			earlier:  "The `Ledger` class now rounds in `total()` and `subtotal()`.",
			later:    "Updated `Ledger`: `total()` and `subtotal()` now round half up before summing.",
			restates: true,
		},
		{
			name:    "the same names, something else said of them",
			earlier: "We should keep the docstrings. This version of the `Ledger` class adds tracing to the `total()` and `subtotal()` methods while keeping every docstring.",
			later:   "The main change is `Ledger.summary()`, called instead of the separate `total()` and `subtotal()` methods; this version of the `Ledger` class is otherwise unchanged.",
			rule:    ruleRestateEach,
		},
		{
			name:    "an intro, its content in what follows",
			earlier: "Add this line to the `Ledger` class just before `total()` builds each row:",
			later:   "After reading the importer, the `Ledger` class builds each row in `total()`, one per invoice line, and never rounds them.",
			rule:    ruleRestateEach,
		},
		{
			name:    "another quoted error",
			earlier: "The new error \"invoice id is missing\" suggests the `Ledger` rows are read before the header row exists.",
			later:   "The error \"Required amount column not found\" comes from reading the `Ledger` rows; it suggests the header row is not where the reader expects it.",
			rule:    ruleRestateQuoted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := Candidate{Text: tt.earlier, Origin: OriginFinal, Keep: true, subject: subjectOf(tt.earlier)}
			b := Candidate{Text: tt.later, Origin: OriginFinal, Keep: true, subject: subjectOf(tt.later)}
			restated := func() bool {
				cands := []Candidate{a, b}
				dropRestated(cands)
				return !cands[0].Keep && strings.HasPrefix(cands[0].Reason, "restated later")
			}
			if got := restated(); got != (tt.rule == "") {
				t.Fatalf("restated = %v, want %v", got, tt.rule == "")
			}
			if tt.rule != "" {
				withAblated(t, tt.rule, func() {
					if !restated() {
						t.Fatal("with the rule off the later statement should restate the earlier")
					}
				})
			}
		})
	}
}
