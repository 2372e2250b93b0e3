package ingest

import (
	"slices"
	"strings"
	"testing"
)

// TestUserOrderRevises: a later turn's order of the user's putting Y in
// X's place revises the statement that says X, whatever verb opens it;
// the model saying the same words (its plan) revises nothing, and an
// order replacing something the statement does not say revises nothing.
func TestUserOrderRevises(t *testing.T) {
	finding := "The release job in `.github/workflows/release.yml` installs the dependencies with `npm ci` before it builds the bundle."
	turn := GroupTurns(sessionOf("s", "how does the release build work?", "Let me read the workflow.", finding, "That is the whole release job."))[0]
	tests := []struct {
		name    string
		user    string // the later turn's user message ("" : none)
		model   string // the later turn's model text
		revised bool
	}{
		{"an order with a plan verb and instead of", "Change the release job to use `pnpm install --frozen-lockfile` instead of `npm ci`.", "", true},
		{"rather than", "Make the release job run `pnpm install` rather than `npm ci`, please.", "", true},
		{"not X but Y", "Run not `npm ci` but `pnpm install` in the release job.", "", true},
		{"Y, not X", "Use `pnpm install` in the release job, not `npm ci`.", "", true},
		{"the model's plan", "", "Change the release job to use `pnpm install --frozen-lockfile` instead of `npm ci`.", false},
		{"an order replacing something else", "Change the lint job to use `eslint --cache` instead of `tslint`.", "", false},
		{"a question", "Could the release job use `pnpm install` instead of `npm ci`?", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := Turn{SessionID: "s", Turn: 9}
			if tt.user != "" {
				next.User = []string{tt.user}
			}
			if tt.model != "" {
				next.Steps = []Step{{Text: tt.model}}
			}
			later := LaterTexts([]Turn{next}, "s")
			check := func(want bool) {
				t.Helper()
				for _, c := range Distill(turn, later) {
					if !strings.Contains(c.Text, "`npm ci` before it builds") && !strings.Contains(c.Reason, "`npm ci` before") {
						continue
					}
					if got := strings.HasPrefix(c.Reason, "revised later"); got != want {
						t.Fatalf("revised = %v (keep %v, %q), want %v", got, c.Keep, c.Reason, want)
					}
					return
				}
				t.Fatal("no candidate holds the finding")
			}
			check(tt.revised)
			if tt.revised {
				withAblated(t, ruleUserOrder, func() { check(false) })
			}
		})
	}
}

// TestUserReplaced: the objects a user's sentence replaces, by form.
func TestUserReplaced(t *testing.T) {
	tests := []struct {
		sentence string
		want     []string
	}{
		{"Switch the cache to Redis instead of the in-memory map.", []string{"the in-memory map"}},
		{"Keep the config in `settings.toml` rather than `config.yaml`, it is what the deploy reads.", []string{"`config.yaml`"}},
		{"Fix not the parser but the lexer, it drops the comments.", []string{"the parser"}},
		{"Redis instead of the in-memory map, when it is up.", nil},
		{"Use `uv`, not `pip`.", []string{"`pip`"}},
		{"Do that instead of this.", nil},
		{"Should we use Redis instead of the in-memory map?", nil},
	}
	for _, tt := range tests {
		t.Run(tt.sentence, func(t *testing.T) {
			got := userReplaced(tt.sentence)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("userReplaced = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUserOrderLive: live capture, which learns of the user's order only
// when its turn comes, revises the earlier turn's statement as batch
// ingest does (replayBoth compares the two stores), for each form of the
// order, "rather than" included, which holds no revision cue.
func TestUserOrderLive(t *testing.T) {
	first := []string{"how does the release build work?", "Let me read the workflow.", "The release job in `.github/workflows/release.yml` installs the dependencies with `npm ci` before it builds the bundle."}
	for _, order := range []string{
		"Change the release job to use `pnpm install --frozen-lockfile` instead of `npm ci`.",
		"Make the release job run `pnpm install` rather than `npm ci`.",
	} {
		t.Run(order, func(t *testing.T) {
			turns := threeTurns("s-order", first, []string{order, "Let me edit the workflow.", "Done."})
			_, _, _, got := replayBoth(t, turns)
			if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "`npm ci` before it builds") }) {
				t.Fatalf("the statement the user's order revises stands: %q", got)
			}
		})
	}
}
