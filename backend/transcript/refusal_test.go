package transcript

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// TestClaudeRefusal: the words a user types when refusing a tool call (a
// permission prompt, a plan of ExitPlanMode) ride, as Answers with Refused
// set, on the response after the refusal, which stays a tool-loop
// iteration of the same turn; a refusal without words, a tool's output
// that quotes a refusal and AskUserQuestion's "clarify" give none, and
// Claude Code's message about a rejected plan is no prompt of the user.
func TestClaudeRefusal(t *testing.T) {
	tests := []struct {
		file     string
		prompts  int
		refusals int
		want     [][]memory.Answer // per exchange
	}{
		{"refusal.jsonl", 2, 2, [][]memory.Answer{
			nil,
			{{Answer: "This repository uses pnpm, never npm: the lockfile is pnpm-lock.yaml and npm would write a second one.", Refused: true}},
			nil,
			{{Answer: "Keep the changelog in CHANGELOG.md as well; the GitHub release notes alone get lost when we mirror the repository.", Refused: true}},
			nil, // refused without words: the user's next prompt says it
		}},
		{"refusal_variants.jsonl", 1, 2, [][]memory.Answer{
			nil,
			nil, // a Read's output quoting a refusal
			{{Answer: "Keep the old package name as an alias until the 3.0 release.", Refused: true}},
			nil, // AskUserQuestion sent back to clarify
			{{Answer: "Migrations run only in CI.\nNever from a laptop.", Refused: true}},
			nil, // a plan sent back without words
			nil, // Claude Code's message about the rejected plan is no prompt: the plan is the agent's
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			exs, st := parseFile(t, tt.file, Options{})
			if st.UserPrompts != tt.prompts || st.Refusals != tt.refusals || len(exs) != len(tt.want) {
				t.Fatalf("%d exchanges, stats %+v", len(exs), st)
			}
			for i, ex := range exs {
				if !reflect.DeepEqual(ex.Answers, tt.want[i]) {
					t.Errorf("exchange %d answers:\n got %+v\nwant %+v", i+1, ex.Answers, tt.want[i])
				}
				if len(ex.Answers) > 0 && (!ex.ToolLoop || ex.User != "") {
					t.Errorf("exchange %d carries a refusal but is no tool-loop iteration: %+v", i+1, summarize(ex))
				}
			}
		})
	}
}

// TestRefusal reads the user's words from one refusal's result text and
// structured result.
func TestRefusal(t *testing.T) {
	const lead = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file)."
	said := lead + " To tell you how to proceed, the user said:\n"
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	long := strings.Repeat("Use the staging database for every test run.\n", 100)
	cases := []struct {
		name       string
		result     string
		isError    bool
		structured json.RawMessage
		want       string
	}{
		{"words", said + "use the vendored copy", true, nil, "use the vendored copy"},
		{"not an error", said + "use the vendored copy", false, nil, ""},
		{"hint cut off", said + "use the vendored copy\n\nNote: The user's next message may contain a correction or preference. Pay close attention.", true, nil, "use the vendored copy"},
		{"lines kept", said + "  first line\nsecond line  \n", true, nil, "first line\nsecond line"},
		{"no words", lead + " STOP what you are doing and wait for the user to tell you how to proceed.", true, str("User rejected tool use"), ""},
		{"empty words", said + "  \n", true, nil, ""},
		{"subagent", "Permission for this tool use was denied. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). The user said:\nask before deleting", true, nil, "ask before deleting"},
		{"reason in toolUseResult", lead, true, str("Error: " + lead + " The user provided the following reason for the rejection: keep the alias"), "keep the alias"},
		{"said in toolUseResult", "rejected", true, str("Error: " + said + "keep the alias"), "keep the alias"},
		{"toolUseResult not a string", lead, true, json.RawMessage(`{"answers":{}}`), ""},
		{"quoted, not led", "1\u2192" + said + "file content", true, nil, ""},
		{"clarify", said + "The user wants to clarify these questions.\n    This means they may have additional information.", true, nil, ""},
		{"long, cut at a line", said + long, true, nil, strings.TrimSpace(long[:strings.LastIndexByte(long[:maxRefusalRunes], '\n')])},
		{"invalid UTF-8", said + "caf\xe9 au lait", true, nil, "caf\uFFFD au lait"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Refusal(c.result, c.isError, c.structured); got != c.want {
				t.Errorf("Refusal = %q, want %q", got, c.want)
			}
		})
	}
}

// FuzzRefusal: whatever the result, Refusal does not panic and gives
// bounded valid UTF-8 without Claude Code's note, and nothing for a
// result that is no error.
func FuzzRefusal(f *testing.F) {
	f.Add("The user doesn't want to proceed with this tool use. To tell you how to proceed, the user said:\nno\n\nNote: The user's next message may contain a correction or preference.", true, `"Error: x"`)
	f.Add("Permission for this tool use was denied. The user said:\n\xff", true, ``)
	f.Add("The user doesn't want to proceed with this tool use.", true, `"Error: The user doesn't want to proceed with this tool use. The user provided the following reason for the rejection: r"`)
	f.Fuzz(func(t *testing.T, result string, isError bool, structured string) {
		got := Refusal(result, isError, json.RawMessage(structured))
		if got == "" {
			return
		}
		if !isError || !memory.ValidUTF8(got) || utf8.RuneCountInString(got) > maxRefusalRunes ||
			strings.Contains(got, refusalHint) || got != strings.TrimSpace(got) {
			t.Fatalf("Refusal(%q, %v, %q) = %q", result, isError, structured, got)
		}
	})
}
