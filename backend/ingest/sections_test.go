package ingest

import "testing"

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
