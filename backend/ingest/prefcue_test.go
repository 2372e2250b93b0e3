package ingest

import (
	"testing"
)

// TestUserStatedNegations: a negation said of a third-person subject is a
// statement of what a thing does, never the user's preference (it may
// still be a project fact); an order without a subject, one said to or by
// "you", "we" or "I", one after a condition or a leading phrase, and one
// joined to an order stay the user's preferences.
func TestUserStatedNegations(t *testing.T) {
	for _, tc := range []struct {
		text string
		pref bool
	}{
		{"The values in the totals column don't show up after the refresh.", false},
		{"The exporter never writes the trailing newline in `report.csv`.", false},
		{"I think it broke because some cells in the sheet turn grey or don't show when the flag is off.", false},
		{"The nightly jobs are slow and never finish before the backup window.", false},
		{"Don't commit anything until I say so.", true},
		{"You don't need to regenerate the fixtures for this.", true},
		{"We never push directly to the main branch.", true},
		{"I don't want emoji in commit messages.", true},
		{"If the linter complains don't silence it with a nolint comment.", true},
		{"In the test suite never call the real payment API.", true},
		{"Please don't add new dependencies without asking.", true},
		{"Run the formatter first and don't push before the checks pass.", true},
		{"I use the system Python and never install packages globally.", true},
		{"The mock server never starts on CI, so always run the e2e tests locally.", true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			pref := false
			for _, c := range userCandidates(tc.text) {
				if c.Keep && c.Class == ClassPreference {
					pref = true
				}
			}
			if pref != tc.pref {
				t.Errorf("userCandidates(%q) = %+v; a user preference %v, want %v", tc.text, userCandidates(tc.text), pref, tc.pref)
			}
		})
	}
}
