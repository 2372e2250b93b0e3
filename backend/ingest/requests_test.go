package ingest

import (
	"strings"
	"testing"
)

// preferenceWith reports whether userCandidates(text) keeps a `user`
// preference holding sub.
func preferenceWith(text, sub string) bool {
	for _, c := range userCandidates(text) {
		if c.Keep && c.Class == ClassPreference && strings.Contains(c.Text, sub) {
			return true
		}
	}
	return false
}

// TestUserRequestDetails: a rule-worded sentence that follows a request
// in its paragraph and speaks of what the request names, naming nothing
// else, is how this turn's work is to come out, not a standing rule; a
// rule with a standing word, one naming the project's files, one about
// something else, one in another paragraph and one after no request stay
// the user's preferences.
func TestUserRequestDetails(t *testing.T) {
	for _, tc := range []struct {
		text, rule string
		kept       bool
	}{
		{"Let's add a sidebar to the dashboard. Each sidebar section should collapse on its own.", "Each sidebar section", false},
		{"First, let's build an export dialog for the report page. The dialog should offer two file formats.", "The dialog should", false},
		{"Sort all the imports in the module. Do not change the import aliases.", "Do not change", false},
		{"Now I want to see new charts on the home screen. Then each chart should have its legend below it.", "each chart", false},
		{"Let's add a sidebar to the dashboard. Never add the co-authored-by footer to commits.", "co-authored-by", true},
		{"Let's add a sidebar to the dashboard. Don't add the co-authored-by footer to commits.", "co-authored-by", true},
		{"Add a sidebar to the dashboard. Each sidebar should always collapse on small screens.", "always collapse", true},
		{"Fix the upload handler. The handler must stream to `storage/blobs` through `blob.Writer`.", "must stream", true},
		{"Add an audit command to the CLI.\n\nConstraints:\n- Keep every audit command read-only and side-effect free.", "read-only", true},
		{"Each panel should group related settings together so they are easy to find.", "Each panel", true},
		{"Sort all the imports in the module. Use yarn for every install in this repo.", "Use yarn", true},
		{"Add tests for the parser. Tests must not hit the network or the disk.", "must not hit", true},
		{"Fix the flaky test in the parser suite. Don't commit anything until I say so.", "until I say so", true},
		{"In the README, reorder the sections. Do not change the wording.", "Do not change", false},
		{"Do not change the wording of error messages shown to customers.", "Do not change", true},
		{"Reorder the sections. Never change the wording.", "Never change", true},
		{"Update the changelog entry. Do not touch the release script in `scripts/release.sh`.", "Do not touch", true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if got := preferenceWith(tc.text, tc.rule); got != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; preference with %q kept %v, want %v", tc.text, userCandidates(tc.text), tc.rule, got, tc.kept)
			}
		})
	}
}

// TestRequestOpen: an order of work opens with a request verb or with an
// imperative on a determined object, possibly after the place it applies
// to; a place, a subject or a how-to rule opens none.
func TestRequestOpen(t *testing.T) {
	for _, tc := range []struct {
		ls   string
		want bool
	}{
		{"reorder all the lists.", true},
		{"in the readme, reorder the sections.", true},
		{"let's add a tabbed panel for the settings.", true},
		{"in the lists, the items are sorted by name.", false},
		{"all the lists are sorted by name.", false},
		{"use the session command to find the repo.", false},
		{"bullet lists use the dash marker.", false},
	} {
		if got := requestOpen(tc.ls); got != tc.want {
			t.Errorf("requestOpen(%q) = %v, want %v", tc.ls, got, tc.want)
		}
	}
}

// TestStandingOrder: an order of work with a clause that makes it recur
// ("as each step is done", "once every check passes", "as you go",
// "whenever") is a rule the user keeps for later work, typed by what it
// is about (ruleType); an order without one, and one whose "each" is a
// place ("after each heading") or a part of what the turn changes ("each
// of the panels"), is this turn's request. The kept cases fail without
// standingOrder.
func TestStandingOrder(t *testing.T) {
	for _, tc := range []struct {
		text, rule string
		kept       bool
	}{
		{"Push your branch as each step is done and the suite is green.", "as each step", true},
		{"Commit the work once every check passes.", "once every check", true},
		{"Write the changelog entries as you go.", "as you go", true},
		{"Run the linter after each file is edited.", "after each file", true},
		{"Push the branch when the suite is green.", "when the suite", false},
		{"Add a blank line after each heading in the guide.", "after each heading", false},
		{"Rename each of the panels to match the menu.", "each of the panels", false},
		{"Commit your work now.", "Commit your work", false},
	} {
		t.Run(tc.text, func(t *testing.T) {
			if got := preferenceWith(tc.text, tc.rule); got != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; preference with %q kept %v, want %v", tc.text, userCandidates(tc.text), tc.rule, got, tc.kept)
			}
		})
	}
	// what it is about types it: the agent's way of working is the user's
	for _, c := range userCandidates("Push your branch as each step is done and the suite is green.") {
		if c.Keep && c.Type != "user" {
			t.Errorf("%q typed %s, want user", c.Text, c.Type)
		}
	}
}
