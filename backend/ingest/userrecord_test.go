package ingest

import "testing"

// TestUserCandidatesRecordLines: the lines of a record the user pastes
// (a stack decision, an environment) are the user's facts; log and error
// lines with a label are not.
func TestUserCandidatesRecordLines(t *testing.T) {
	cases := []struct {
		text string
		keep bool
	}{
		{"Data layer: PostgreSQL on the managed host by default, with Drizzle for migrations.", true},
		{"Observability: hosted analytics by default; add error tracking when the product matures.", true},
		{"Motion / Animations: a spring library for page transitions, enter/exit and micro-interactions.", true},
		{"Branching (REQUIRED): trunk-based, short feature branches merged after review and CI.", true},
		{"E   ImportError: cannot import name 'init_workspace' from 'app.scaffold' in the runner.", false},
		{"Error: Failed to create deployment (status: 404) with build version 5fc7f99.", false},
		{"Warning: unused import in the database module of the api crate today.", false},
		{"Fix: add the missing import to the module and rebuild the whole thing.", false}, // a request for the turn
	}
	for _, tc := range cases {
		kept := false
		for _, c := range userCandidates(tc.text) {
			kept = kept || c.Keep
		}
		if kept != tc.keep {
			t.Errorf("userCandidates(%q) kept %v; want %v", tc.text, kept, tc.keep)
		}
	}
}
