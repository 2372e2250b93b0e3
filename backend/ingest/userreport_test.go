package ingest

import "testing"

// TestUserReports: what a user reports of the turn at hand (what they get
// or see now, what does or does not happen, what the model did, what they
// do not think) is no memory; a preference, a rule or a project fact
// worded close to one still is.
func TestUserReports(t *testing.T) {
	for _, tc := range []struct {
		text string
		kept bool
	}{
		{"i still don't see the parentheses around the numbers for negative cell values", false},
		{"i just get this error, don't see the debug statements in `reshape_data`", false},
		{"it's not opening a new tab after the viewer is created in upload.html", false},
		{"it works now but i want to make the spinner in spinner.js smoother", false},
		{"you only made changes to the comments in @cell.py and not the logic", false},
		{"@dimension.py got this list index out of range error on the second sheet", false},
		{"i don't think self is defined outside of the process_cells function", false},
		{"I have an issue where certain rows in my Excel file aren't being displayed by table.py", false},
		{"It works now, but always run `make lint` before you push to the release branch.", true},
		{"Don't add the co-authored-by footer to commit messages in this repository.", true},
		{"I don't want the tests in `e2e/` to hit the real payment provider.", true},
		{"The staging database is PostgreSQL 15 on port 5433, configured in `deploy/staging.env`.", true},
		{"We use yarn in this repo, never npm.", true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			cands := userCandidates(tc.text)
			kept := len(cands) == 1 && cands[0].Keep
			if kept != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; kept %v, want %v", tc.text, cands, kept, tc.kept)
			}
		})
	}
}

// TestUserPronounOrders: an order whose whole object is a pronoun is about
// the turn's thing; one naming its object is a rule.
func TestUserPronounOrders(t *testing.T) {
	for _, tc := range []struct {
		text string
		kept bool
	}{
		{"no, do not clean it up.", false},
		{"Please don't push that yet", false},
		{"don't touch them again", false},
		{"Don't add the co-authored-by footer to commits.", true},
		{"Never delete the session directories under ~/.local/state/minsky.", true},
		{"Do not run the migrations against the production database.", true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			cands := userCandidates(tc.text)
			kept := len(cands) == 1 && cands[0].Keep
			if kept != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; kept %v, want %v", tc.text, cands, kept, tc.kept)
			}
		})
	}
}

// TestUserPastReports: a user's report of what happened that only uses a
// rule word ("I never saw ...") is no rule; an order or a present habit
// with the same word, a passive fact of the code, and a report that also
// lays down a rule still are kept.
func TestUserPastReports(t *testing.T) {
	for _, tc := range []struct {
		text string
		kept bool
	}{
		{"But I never saw the settings dialog open after the upgrade.", false},
		{"It always failed on the first run of the nightly export job.", false},
		{"We never got a reply from the billing webhook in staging.", false},
		{"Never push directly to the release branch of this repository.", true},
		{"We always use yarn workspaces in this monorepo.", true},
		{"The cleanup hook in `worker/pool.go` is never called before shutdown.", true},
		{"I never saw the dialog open, so always run the UI tests under xvfb from now on.", true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			cands := userCandidates(tc.text)
			kept := len(cands) == 1 && cands[0].Keep
			if kept != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; kept %v, want %v", tc.text, cands, kept, tc.kept)
			}
		})
	}
}

// TestUserClauseOfTime: a sentence opening with "when" or "where" and
// then its subject is a statement with a clause of time or place, no
// question asked without its mark; "when" or "where" followed by a verb
// asks. The kept cases fail without clauseLead.
func TestUserClauseOfTime(t *testing.T) {
	for _, tc := range []struct {
		text string
		kept bool
	}{
		{"When I export a report with an empty month, the chart should show a zero bar.", true},
		{"when the importer finds a duplicate invoice it must skip it and log the number", true},
		{"Where the config sets no region, the uploader should default to eu-west-1.", true},
		{"when should we cut the release branch", false},
		{"where is the retry limit for the uploader set", false},
		{"When will the nightly export run again", false},
	} {
		t.Run(tc.text, func(t *testing.T) {
			cands := userCandidates(tc.text)
			kept := len(cands) == 1 && cands[0].Keep
			if kept != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; kept %v, want %v", tc.text, cands, kept, tc.kept)
			}
		})
	}
}
