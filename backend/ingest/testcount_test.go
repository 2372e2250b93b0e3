package ingest

import "testing"

// TestTestCount: a count of tests written after the verb, in parentheses,
// is the state of one run; a sentence that gives a reason with it, or a
// number in parentheses that counts no tests, is no count.
func TestTestCount(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"Kept everything passing (29): includes the ledger rounding test and the CSV export test", true},
		{"Existing tests still pass (36/36).", true},
		{"All tests pass (35)", true},
		{"Full suite remains green (21 passed)", true},
		{"all 157 tests pass", true},
		{"`reports/export.py` writes the header row first (RFC 4180) so that Excel reads the delimiter.", false},
		{"The retry loop passes (3) attempts to `Client.send` before it gives up.", false},
	}
	for _, tc := range tests {
		if got := testCount.MatchString(lower(tc.text)); got != tc.want {
			t.Errorf("testCount(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
	if c := classifySentence("Kept everything passing (29): includes the ledger rounding test and the CSV export test", false); c != ClassStatus {
		t.Errorf("class %q, want %q", c, ClassStatus)
	}
}
