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
