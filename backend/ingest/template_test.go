package ingest

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCommandInput(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		template bool
		want     string
	}{
		{
			name:     "plain message",
			text:     "Never push to main without a review; we use pnpm in this repo.",
			template: false,
			want:     "Never push to main without a review; we use pnpm in this repo.",
		},
		{
			name: "pasted document with headings but no input section",
			text: "Here is the design:\n\n# Widget store\n\n## Storage\n\nWidgets MUST be kept in widgets.db.",
			want: "Here is the design:\n\n# Widget store\n\n## Storage\n\nWidgets MUST be kept in widgets.db.",
		},
		{
			name:     "command with the user's words fenced",
			text:     "## User Input\n\n```text\nThe exporter must write CSV with a header row.\n```\n\nYou **MUST** consider the user input.\n\n## Outline\n\n1. Run `scripts/setup.sh --json` from the repo root.\n",
			template: true,
			want:     "The exporter must write CSV with a header row.",
		},
		{
			name:     "command run without words",
			text:     "## User Input\n\n```text\n\n```\n\nYou **MUST** consider the user input (if not empty).\n\n## Outline\n\nAll paths must be absolute.\n",
			template: true,
			want:     "",
		},
		{
			name:     "unfenced input section",
			text:     "# Review command\n\n## Arguments\n\nonly look at the parser package\n\n## Steps\n\nEvery finding must name a file.\n",
			template: true,
			want:     "only look at the parser package",
		},
		{
			name:     "placeholder left in",
			text:     "Use the prompt in .prompts/plan.md with this as the user input: $ARGUMENTS",
			template: true,
			want:     "",
		},
		{
			name:     "placeholder inside the input section",
			text:     "## User Input\n\n```\n$ARGUMENTS\n```\n\n## Rules\n\nEach task must be testable.\n",
			template: true,
			want:     "",
		},
		{
			name:     "one heading named input is not a command",
			text:     "## Input\n\nThe loader reads input.yaml from the working directory.",
			template: false,
			want:     "## Input\n\nThe loader reads input.yaml from the working directory.",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, tmpl := commandInput(tc.text)
			if tmpl != tc.template || got != tc.want {
				t.Errorf("commandInput = %q, %v; want %q, %v", got, tmpl, tc.want, tc.template)
			}
		})
	}
}

// TestUserCandidatesCommandTemplate: a command template's rules are not
// the user's preferences; what the user typed into it still is.
func TestUserCandidatesCommandTemplate(t *testing.T) {
	text := "## User Input\n\n```text\nThe sync daemon must only start after the `ledger.db` migrations have run.\n```\n\n" +
		"You **MUST** consider the user input before proceeding.\n\n## Outline\n\n" +
		"1. **Setup**: Run `.tools/check.sh --json` from repo root. All paths must be absolute.\n" +
		"2. Every task must follow the checklist format and should never skip the tests phase.\n"
	cands := userCandidates(text)
	var kept []string
	for _, c := range cands {
		if c.Keep {
			kept = append(kept, c.Text)
		}
	}
	if len(kept) != 1 || !strings.Contains(kept[0], "ledger.db") {
		t.Fatalf("kept %q; want only the user's sentence about ledger.db", kept)
	}
}

// FuzzCommandInput: reading any message as a command template never
// panics, keeps valid UTF-8, and the user's words come from the message.
func FuzzCommandInput(f *testing.F) {
	f.Add("## User Input\n\n```text\nuse yarn\n```\n\n## Outline\n")
	f.Add("$ARGUMENTS")
	f.Add("## Arguments\n```\nunterminated")
	f.Add("# a\n## input\n~~~\nx\n~~~\n## b")
	f.Fuzz(func(t *testing.T, text string) {
		got, tmpl := commandInput(text)
		if !tmpl && got != text {
			t.Fatalf("not a template but changed: %q -> %q", text, got)
		}
		if utf8.ValidString(text) && !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 from %q", text)
		}
		if tmpl && got != "" && !strings.Contains(text, strings.Split(got, "\n")[0]) {
			t.Fatalf("words %q not in %q", got, text)
		}
	})
}

// TestUserCandidatesConditionalRule: a requirement stated as a condition
// ("only after X will Y") is a standing rule of the user's.
func TestUserCandidatesConditionalRule(t *testing.T) {
	for _, text := range []string{
		"Only after a positive answer from the health endpoint will the chat panel be enabled.",
		"The exporter runs only when the `--publish` flag is set on the release job.",
	} {
		cands := userCandidates(text)
		if len(cands) != 1 || !cands[0].Keep {
			t.Errorf("userCandidates(%q) = %+v; want it kept", text, cands)
		}
	}
}
