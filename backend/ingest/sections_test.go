package ingest

import (
	"slices"
	"strings"
	"testing"
)

// TestSubHeading: a short title line without sentence punctuation, or a
// bold line, titles the list that follows it; prose, list items and code
// do not.
func TestSubHeading(t *testing.T) {
	tests := []struct {
		line, next string
		want       bool
	}{
		{"Next steps (optional)", "- Add a flag", true},
		{"What I changed", "- The parser keeps comments", true},
		{"**Verification**", "1. Ran the suite", true},
		{"**Commits:**", "- docs: update", true},
		{"Next steps (optional)", "The flag comes later.", false},                            // no list follows
		{"The parser keeps comments.", "- because the formatter needs them", false},          // a sentence
		{"- Commits", "  - docs: update", false},                                             // a list item, read as one
		{"Run `make lint` first", "- then push", false},                                      // code in it
		{"the cache is warm", "- hits: 90%", false},                                          // not capitalised
		{"Changes to the ledger rounding and the invoice export code paths", "- one", false}, // too long for a title
	}
	for _, tc := range tests {
		if got := subHeading(tc.line, tc.next); got != tc.want {
			t.Errorf("subHeading(%q, %q) = %v, want %v", tc.line, tc.next, got, tc.want)
		}
	}
}

// TestSectionTitles: a block that is only a title opens a section for the
// blocks after it, and a title's class is read from its words whatever
// its markup; a one-line sentence or list item opens none.
func TestSectionTitles(t *testing.T) {
	tests := []struct {
		name   string
		blocks []string
		want   string // the skip of the last block's sentences
	}{
		{"title alone in its block", []string{"How to try it", "- Open the billing page and export a CSV"}, ClassPlan},
		{"numbered bold markdown title", []string{"## 7. **Next Steps**", "- Port the exporter to the worker"}, ClassPlan},
		{"bold title with a colon", []string{"**Next steps:**", "- Port the exporter to the worker"}, ClassPlan},
		{"a one-line sentence is no title", []string{"How to try it", "The exporter writes CSV only.", "- Open the billing page"}, ClassPlan},
		{"another title ends the section", []string{"How to try it", "Notes", "- The exporter writes CSV only"}, ""},
		{"a one-line list item is no title", []string{"- Next steps", "- Port the exporter"}, ""},
		{"next anywhere in the title", []string{"What’s next", "- Port the exporter to the worker"}, ClassPlan},
		{"next after other words", []string{"Notes and next steps", "- Port the exporter to the worker"}, ClassPlan},
		{"a closing (optional)", []string{"Schema tweaks (optional)", "- Named pins for the exporter"}, ClassPlan},
		{"Next.js is a name, not what comes next", []string{"Next.js setup", "- `app/layout.tsx` wraps every page"}, ""},
		{"optional inside a title's words is what it describes", []string{"Added optional materials list", "- `schemas/pdl.json` holds the materials array"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			skip := ""
			var last []sectionSentence
			for _, b := range tc.blocks {
				last = sectionSentences(b, &skip)
			}
			if len(last) == 0 {
				t.Fatalf("no sentence in the last block %q", tc.blocks[len(tc.blocks)-1])
			}
			if got := last[len(last)-1].skip; got != tc.want {
				t.Errorf("skip = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSectionDrops: the lines of a section whose title says what the
// section is (the turn's tests) are dropped one by one with the section's
// reason, shown in the feed; the lines of other sections stay.
func TestSectionDrops(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		keep   []string
		drop   []string
		reason string // the reason the dropped lines are shown with
	}{
		{
			name:   "a tests section lists what the tests hold",
			text:   "What changed\n- `billing/invoice.go` rounds totals half-even, because `Ledger.Post` rejects fractions of a cent.\n\nTests\n- `billing/invoice_test.go` checks negative totals and the zero-amount credit note in `Ledger.Post`.\n- `billing/ledger_test.go` exercises `Ledger.Reverse` with three currencies.",
			keep:   []string{"rejects fractions"},
			drop:   []string{"invoice_test.go", "Ledger.Reverse"},
			reason: reasonTestSection,
		},
		{
			name:   "a tests title in bold with a count, set apart by a blank line",
			text:   "The exporter in `reports/export.py` writes UTF-8 with a BOM so that Excel opens it.\n\n**New tests (2)**\n\n- `tests/test_export.py` covers the BOM and the semicolon delimiter of `reports/export.py`.",
			keep:   []string{"so that Excel"},
			drop:   []string{"semicolon delimiter"},
			reason: reasonTestSection,
		},
		{
			name: "a tests section's line that gives a reason stays",
			text: "Tests\n- `tests/test_export.py` must run with `TZ=UTC` because `reports/export.py` stamps local dates.",
			keep: []string{"TZ=UTC"},
		},
		{
			name:   "a recap of earlier work is what the turns that did it said",
			text:   "The exporter in `reports/export.py` writes UTF-8 with a BOM so that Excel opens it.\n\nWhat we've done so far\n- `reports/schedule.py` mails the weekly export to the finance list.\n- The export dialog remembers the last folder in `settings.ini`.",
			keep:   []string{"so that Excel"},
			drop:   []string{"weekly export", "last folder"},
			reason: reasonRecap,
		},
		{
			name:   "a recap named in parentheses",
			text:   "Other capabilities (from earlier updates)\n- `reports/schedule.py` mails the weekly export to the finance list.",
			drop:   []string{"weekly export"},
			reason: reasonRecap,
		},
		{
			name: "a recap's line that gives a reason stays",
			text: "Previously completed\n- `reports/schedule.py` sends at 06:00 UTC because the finance list reads it before standup.",
			keep: []string{"06:00 UTC"},
		},
		{
			name: "a title that only mentions tests is no tests section",
			text: "Docs and tests\n- `docs/export.md` explains the BOM that `reports/export.py` writes for Excel.",
			keep: []string{"docs/export.md"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "add the exporter", tc.text))
			if len(turns) != 1 {
				t.Fatalf("%d turns", len(turns))
			}
			cands := Distill(turns[0], nil)
			for _, want := range tc.keep {
				if !slices.ContainsFunc(cands, func(c Candidate) bool { return c.Keep && strings.Contains(c.Text, want) }) {
					t.Errorf("no kept statement has %q; candidates: %+v", want, cands)
				}
			}
			for _, bad := range tc.drop {
				for _, c := range cands {
					if strings.Contains(c.Text, bad) && (c.Keep || c.Reason != tc.reason) {
						t.Errorf("%q: kept %v, reason %q; want dropped with %q", c.Text, c.Keep, c.Reason, tc.reason)
					}
				}
			}
		})
	}
}
