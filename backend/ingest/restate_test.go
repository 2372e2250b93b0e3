package ingest

import (
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestChallenge(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"did you push? why not?", true},
		{"are you editing the files in the checkout or in the worktree?", true},
		{"why did you put the migration in the seed folder?", true},
		{"no, do not regenerate the lockfile", true},
		{"don't touch the vendored copy", true},
		{"you forgot the changelog entry again", true},
		{"you're writing to the production bucket", true},
		{"> I will now edit the generated client.\n\nthat's the opposite of what the README says", true},
		{"why is the integration test slow?", false},
		{"add a retry to the uploader", false},
		{"no problem, go ahead", false},
		{"> no, wait\n\nplease add the index", false},
	}
	for _, tc := range tests {
		if got := challenge(tc.text); got != tc.want {
			t.Errorf("challenge(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestRestatement: the normative sentences of a reply that concedes a
// user's correction form the user's rule; narration never does, and
// without a correction the same reply forms none.
func TestRestatement(t *testing.T) {
	tests := []struct {
		name  string
		user  string
		texts []string
		later []string
		rule  string // a substring of the kept restatement ("" = none)
		kind  memory.Kind
		typ   memory.Type
		drop  []string // substrings no kept statement has
	}{
		{
			name:  "an admission and the rule restated, about the agent",
			user:  "did you run the formatter? why not?",
			texts: []string{"I should have run it. I should run the formatter before every commit. Let me run it now.", "Formatted."},
			rule:  "I should run the formatter before every commit",
			kind:  memory.KindPreference, typ: memory.TypeUser,
			drop: []string{"Let me run", "I should have"},
		},
		{
			name:  "a rule about the agent that names the project's command is the project's",
			user:  "did you run the formatter? why not?",
			texts: []string{"I should have run it. Per the contributing guide, I should run `make fmt` before every commit. Let me run it now.", "Formatted."},
			rule:  "I should run `make fmt` before every commit",
			kind:  memory.KindConvention, typ: memory.TypeProject,
			drop: []string{"Let me run", "I should have"},
		},
		{
			name:  "a concession and a project rule",
			user:  "why did you put the fixture in testdata/tmp?",
			texts: []string{"You're absolutely right - I apologize for the oversight. Shared fixtures belong in `testdata/shared`, never in a temporary folder. Let me move it.", "Moved."},
			rule:  "Shared fixtures belong in `testdata/shared`, never in a temporary folder",
			kind:  memory.KindConvention, typ: memory.TypeProject,
			drop: []string{"apologize", "Let me move"},
		},
		{
			name:  "the rest of the acknowledging sentence is part of the rule",
			user:  "are you editing the checkout or the worktree?",
			texts: []string{"You're right - I was editing the checkout instead of the worktree. All task edits must be made in the worktree. Let me redo them there.", "Done."},
			rule:  "I was editing the checkout instead of the worktree. All task edits must be made in the worktree.",
			kind:  memory.KindPreference, typ: memory.TypeUser,
		},
		{
			name:  "a later sentence of the agent does not revise the user's rule",
			user:  "why did you commit to main?",
			texts: []string{"You're right. Feature work must go on a feature branch, never directly on main. Let me move the commit.", "Moved the commit to `feat/export`."},
			later: []string{"Actually the feature branch for main work was reset instead."},
			rule:  "Feature work must go on a feature branch",
			kind:  memory.KindConvention, typ: memory.TypeProject,
		},
		{
			name:  "a finding of the same reply stays a memory of its own",
			user:  "why did you edit the generated client?",
			texts: []string{"You're right. Generated code must never be edited by hand. The generator reads `api/openapi.yaml` and writes `client/gen.go` on every `make gen` run.", "Reverted."},
			rule:  "Generated code must never be edited by hand.",
			kind:  memory.KindConvention, typ: memory.TypeProject,
			drop: []string{"hand. The generator"},
		},
		{
			name:  "a rule of the agent's process, not said of it, is the user's",
			user:  "did you add the footer again?",
			texts: []string{"You're right. Commit messages must never carry a co-authored-by footer. Let me amend it.", "Amended."},
			rule:  "Commit messages must never carry a co-authored-by footer.",
			kind:  memory.KindPreference, typ: memory.TypeUser,
		},
		{
			name:  "no correction: a concession forms no rule",
			user:  "the export should include archived rows too",
			texts: []string{"You're right. Feature work must go on a feature branch, never directly on main. Let me move the commit.", "Moved."},
		},
		{
			name:  "a correction answered by narration only forms no rule",
			user:  "no, do not delete the cache folder",
			texts: []string{"You're right, I apologize. Let me restore it from the backup instead.", "Restored."},
			drop:  []string{"restore it"},
		},
		{
			name:  "a rule that does not say what it is is no rule",
			user:  "no, that's the wrong flag",
			texts: []string{"Ah yes, you're right - I need to use the correct flag. Let me try again.", "Done."},
			drop:  []string{"correct flag"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			turn := Turn{User: []string{tc.user}}
			for _, tx := range tc.texts {
				turn.Steps = append(turn.Steps, Step{Text: tx})
			}
			cands := Distill(turn, modelSaid(tc.later...))
			var taught []Candidate
			for _, c := range cands {
				if c.Keep && c.taught {
					taught = append(taught, c)
				}
				for _, d := range tc.drop {
					if c.Keep && strings.Contains(c.Text, d) {
						t.Errorf("kept %q (%s)", c.Text, c.Class)
					}
				}
			}
			if tc.rule == "" {
				if len(taught) > 0 {
					t.Fatalf("restatement %q kept, want none", taught[0].Text)
				}
				return
			}
			if len(taught) != 1 {
				t.Fatalf("%d restatements kept, want 1; candidates %+v", len(taught), cands)
			}
			c := taught[0]
			if !strings.Contains(c.Text, tc.rule) || c.Kind != tc.kind || c.Type != tc.typ || c.kindOrigin() != memory.KindCued {
				t.Fatalf("restatement %q %s/%s (%s), want %q %s/%s (cue)", c.Text, c.Kind, c.Type, c.kindOrigin(), tc.rule, tc.kind, tc.typ)
			}
		})
	}
}

// TestRuleType: a rule the user states is the user's preference (it
// follows them to every project) when it is about the user or the agent's
// way of working, and a convention of the project when it requires
// something of the project's content. Each case fails without ruleType:
// the project's rules would stay the user's, and the user's rules that
// name a part of a project too would turn into the project's.
func TestRuleType(t *testing.T) {
	tests := []struct {
		text string
		kind memory.Kind
		typ  memory.Type
	}{
		// the project's content: its stack, libraries, files, components
		{"The backend must use sqlx for every query, never an ORM.", memory.KindConvention, memory.TypeProject},
		{"Use Drizzle for the ORM and keep the schema in one place.", memory.KindConvention, memory.TypeProject},
		{"Each settings field should appear on one tab only, never on two.", memory.KindConvention, memory.TypeProject},
		{"Never hand-edit the generated files in `internal/gen`.", memory.KindConvention, memory.TypeProject},
		{"Never commit `config/local.yaml`, it holds each machine's paths.", memory.KindConvention, memory.TypeProject},
		// the agent's way of working and the user themselves
		{"Please don't add new dependencies to the app without asking.", memory.KindPreference, memory.TypeUser},
		{"Never commit changes to the backend until I say so.", memory.KindPreference, memory.TypeUser},
		{"Always run the whole test suite of a module before you push.", memory.KindPreference, memory.TypeUser},
		{"I'm on Fedora 40 with a desktop session. Never assume a headless server.", memory.KindPreference, memory.TypeUser},
		// a flag, an acronym or a word in capitals in a rule of the agent's
		// way of working names no thing of a project (projectThing)
		{"Never commit with --no-verify when the hooks complain; fix what they report.", memory.KindPreference, memory.TypeUser},
		{"Never push straight to the main branch, always open a PR for review.", memory.KindPreference, memory.TypeUser},
		{"Always run the tests locally before you push, don't wait for CI to catch it.", memory.KindPreference, memory.TypeUser},
		{"Use TDD: always write the failing test before the code.", memory.KindPreference, memory.TypeUser},
		{"Do NOT add comments that only restate what the code does.", memory.KindPreference, memory.TypeUser},
		// ... but outside such a rule an acronym names the project's thing,
		// and what belongs to the project or the team is the project's
		{"Always keep uploads in AWS, never on the local disk.", memory.KindConvention, memory.TypeProject},
		{"Always sign commits with the team's signing key, never a personal one.", memory.KindConvention, memory.TypeProject},
		{"Always run our lint script before you push.", memory.KindConvention, memory.TypeProject},
		{"Never commit with --no-verify in `billing-api`, its hook checks the schema.", memory.KindConvention, memory.TypeProject},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			var got []Candidate
			for _, c := range userCandidates(tc.text) {
				if c.Keep && c.Class == ClassPreference {
					got = append(got, c)
				}
			}
			if len(got) != 1 || got[0].Kind != tc.kind || got[0].Type != tc.typ {
				t.Fatalf("userCandidates(%q) = %+v, want one rule %s/%s", tc.text, got, tc.kind, tc.typ)
			}
		})
	}
}
