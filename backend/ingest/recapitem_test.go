package ingest

import (
	"slices"
	"strings"
	"testing"
)

// TestRecapItem: the list items that mark themselves as earlier work, and
// the lookalikes that say something of their own.
func TestRecapItem(t *testing.T) {
	tests := []struct {
		item      string
		ok, title bool
	}{
		{"Orca and Cura generation (earlier)", true, true},
		{"Export scheduler (from previous step)", true, true},
		{"Orca (existing)", true, true},
		{"pdl-validate: schema + rules (unchanged)", true, true},
		{"Invoice schema updates (already landed)", true, true},
		{"Converted the docs list to links (done earlier).", true, false},
		{"docs/export.md and docs/schedule.md updated earlier", true, false},
		{"Ledger reference expanded earlier (rounding, reversals)", true, false},
		{"Canonical hooks reference and examples previously added", true, false},
		{"Help pages for the exporter already in place", true, false},
		// A mark on a part of a longer item qualifies that part only.
		{"CLI `report gen` now supports `--bundle` for csv, xlsx and ods (already supported pdf)", false, false},
		{"Attempts the native driver; if not available, imports use the stubs added earlier.", false, false},
		{"Tool/filament: tool_change (existing), before_tool_change, after_tool_change", false, false},
		// A correction of earlier work is no recap.
		{"The changes we made earlier were close but not quite right - the cache needs a `sessions` directory.", false, false},
		// No mark.
		{"`reports/schedule.py` mails the weekly export to the finance list.", false, false},
		{"Removed the earlier duplicate block of subparsers.", false, false},
	}
	for _, tc := range tests {
		ok, title := recapItem(tc.item)
		if ok != tc.ok || title != tc.title {
			t.Errorf("recapItem(%q) = %v, %v; want %v, %v", tc.item, ok, title, tc.ok, tc.title)
		}
	}
}

// TestRecapItemDrops: a recap item is dropped as a recap section's line
// is, and so are the lines of a block it titles; the rest of the answer
// stays. Each case fails with the rule off (ablate), so it tests it.
func TestRecapItemDrops(t *testing.T) {
	tests := []struct {
		name string
		text string
		keep []string
		drop []string
	}{
		{
			name: "a title item over its block (Codex sets each top item apart)",
			text: "What I did now\n\n- Scheduler (new)\n  - `reports/schedule.py` mails the weekly export to the finance list at 06:00 UTC.\n\n- Exporter (from previous step)\n  - `reports/export.py` writes UTF-8 with a BOM for Excel.\n  - The export dialog remembers the last folder in `settings.ini`.",
			keep: []string{"weekly export"},
			drop: []string{"with a BOM", "last folder"},
		},
		{
			name: "a statement of work done earlier, alone in its block's list",
			text: "- `reports/schedule.py` mails the weekly export to the finance list at 06:00 UTC.\n- docs/export.md and docs/schedule.md updated earlier with the BOM and delimiter notes",
			keep: []string{"weekly export"},
			drop: []string{"updated earlier"},
		},
		{
			name: "a statement item opening its block titles nothing",
			text: "- `docs/index.md` links every exporter page from the sidebar (done earlier).\n- `reports/schedule.py` mails the weekly export to the finance list at 06:00 UTC.",
			keep: []string{"weekly export"},
			drop: []string{"from the sidebar"},
		},
	}
	distilled := func(text string) []Candidate {
		turns := GroupTurns(sessionOf("s", "add the scheduler", text))
		if len(turns) != 1 {
			t.Fatalf("%d turns", len(turns))
		}
		return Distill(turns[0], nil)
	}
	keptHas := func(cands []Candidate, s string) bool {
		return slices.ContainsFunc(cands, func(c Candidate) bool { return c.Keep && strings.Contains(c.Text, s) })
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on := distilled(tc.text)
			var off []Candidate
			withAblated(t, ruleRecapItem, func() { off = distilled(tc.text) })
			for _, want := range tc.keep {
				if !keptHas(on, want) {
					t.Errorf("no kept statement has %q; candidates: %+v", want, on)
				}
			}
			for _, bad := range tc.drop {
				for _, c := range on {
					if strings.Contains(c.Text, bad) && (c.Keep || c.Reason != reasonRecap) {
						t.Errorf("%q: kept %v, reason %q; want dropped with %q", c.Text, c.Keep, c.Reason, reasonRecap)
					}
				}
				if !keptHas(off, bad) {
					t.Errorf("rule off: %q not kept (the case does not test the rule); candidates: %+v", bad, off)
				}
			}
		})
	}
}
