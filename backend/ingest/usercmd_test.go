package ingest

import (
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestCommandPurpose reads sentences of a user's message: a command named
// with what it is for is kept; a piece of work named in words, a goal of
// the moment, a command with no purpose, a question are not.
func TestCommandPurpose(t *testing.T) {
	for _, tc := range []struct {
		st   string
		want bool
	}{
		// a command and its purpose: the project's way of working
		{"Run tk list kiln-7 to see the open tickets and tk next to find the one to pick up.", true},
		{"Run `make seed` to load the demo fixtures.", true},
		{"Please use `just gen` to regenerate the protobuf stubs.", true},
		{"Also run ./scripts/dev.sh --watch to start the dev server.", true},
		{"use the kiln ticket show command to find the branch of a ticket", true},
		{"To list the pending migrations, run `dbmate status`.", true},
		{"Ok, run `cargo xtask dist` to build the release archives.", true},
		// work named in words, not a command typed
		{"Run the tests to check the parser still works.", false},
		{"run all the tests and fix any errors", false},
		{"Run unit tests to check the change.", false},
		{"use that to also center the save button", false},
		// a command in plain words, without code marks, is not told
		// from work named in words: left out
		{"Ok, run cargo xtask dist to build the release archives.", false},
		// a goal of the moment, not what the command is for
		{"Run `make seed` to see if the crash is gone.", false},
		{"run tk list kiln-7 to check whether it was closed", false},
		{"Run `npm test` to fix the build.", false},
		// a command with no purpose: this turn's request
		{"Run python -m pytest -q", false},
		{"run `cargo build --release`", false},
		// the purpose first, but no command
		{"To list the pending migrations, run the usual thing.", false},
	} {
		if got := commandPurpose(tc.st, lower(tc.st)); got != tc.want {
			t.Errorf("commandPurpose(%q) = %v, want %v", tc.st, got, tc.want)
		}
	}
}

// TestUserCommandCandidates reads whole messages of a user: the sentence
// naming a command with its purpose is kept as the project's convention,
// with the sentence before it that says what the work is on; the
// request that follows it, questions, approvals and one-off orders stay
// unstored. Each kept case fails without the commandPurpose case of
// userSentences (the order is a request: requestLead).
func TestUserCommandCandidates(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  string
		want string // the one candidate's text, "" for none
	}{
		{"command with its purpose, then the request",
			"Pick up ticket kiln-7. Run tk show kiln-7 to see the ticket details and tk next to find the ready subtasks. Begin with the first one.",
			"Pick up ticket kiln-7. Run tk show kiln-7 to see the ticket details and tk next to find the ready subtasks."},
		{"backticked command",
			"Run `make seed` to load the demo fixtures before you try the dashboard.",
			"Run `make seed` to load the demo fixtures before you try the dashboard."},
		{"one-off request", "Run the tests to check the parser still works.", ""},
		{"command typed without a purpose", "Run python -m pytest -q", ""},
		{"question", "Can you run `make seed` to load the fixtures?", ""},
		{"approval", "yes, looks good, go ahead", ""},
		{"goal of the moment", "Run `make seed` to see if the crash is gone.", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := userCandidates(tc.msg)
			if tc.want == "" {
				if len(cs) != 0 {
					t.Fatalf("kept %+v, want nothing", cs)
				}
				return
			}
			if len(cs) != 1 {
				t.Fatalf("got %d candidates %+v, want 1", len(cs), cs)
			}
			c := cs[0]
			if c.Text != tc.want || !c.Keep || c.Class != ClassPreference {
				t.Errorf("got %q (keep %v, class %s), want %q kept as a preference", c.Text, c.Keep, c.Class, tc.want)
			}
			if c.Kind != memory.KindConvention || c.Type != memory.TypeProject {
				t.Errorf("kind/type %s/%s, want convention/project: the command is the project's", c.Kind, c.Type)
			}
		})
	}
}

// TestRuleTypeCommand types a how-to order naming a command with its
// purpose as the project's convention, where the same order naming no
// command is the user's preference. It fails without commandRule.
func TestRuleTypeCommand(t *testing.T) {
	for _, tc := range []struct {
		rule string
		kind memory.Kind
		typ  memory.Type
	}{
		{"use the kiln ticket show command to find the branch of a ticket", memory.KindConvention, memory.TypeProject},
		{"use short commit subjects", memory.KindPreference, memory.TypeUser},
	} {
		k, ty := ruleType([]string{tc.rule}, tc.rule)
		if k != tc.kind || ty != tc.typ {
			t.Errorf("ruleType(%q) = %s/%s, want %s/%s", tc.rule, k, ty, tc.kind, tc.typ)
		}
	}
}

// benchUserMessages are user messages of every sort userCandidates reads:
// requests, rules, a command with its purpose, questions, approvals, a
// report and a pasted record.
var benchUserMessages = []string{
	"Pick up ticket kiln-7. Run tk show kiln-7 to see the ticket details and tk next to find the ready subtasks. Begin with the first one.",
	"add a retry to the uploader and make sure the tests pass",
	"Never push to main without asking me first. Use pnpm, not npm.",
	"Can you check why the export button does nothing?",
	"yes, looks good, go ahead",
	"i still get the same error when I open the settings page",
	"Stack: Go 1.22 with bbolt for storage.\nFrontend: Svelte with Vite.\nTests: table-driven, next to the code.",
	"Run `make seed` to load the demo fixtures, then add a chart of the weekly totals to the dashboard.",
	"we need a setting for the upload size limit. It should default to 10 MB.",
	"ok, commit as each task is completed and the tests pass",
}

// BenchmarkUserCandidates measures the reading of user messages alone:
// messages per second on one core with -cpu 1.
func BenchmarkUserCandidates(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range benchUserMessages {
			userCandidates(m)
		}
	}
	b.ReportMetric(float64(b.N*len(benchUserMessages))/b.Elapsed().Seconds(), "msgs/s")
}
