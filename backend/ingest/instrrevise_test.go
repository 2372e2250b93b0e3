package ingest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestLineReplacements: the rule lines an edit takes out, each with the
// rule line written in its place in the same hunk; a line the edit keeps
// or moves, a line of code and a line too short to be a rule are not
// taken out.
func TestLineReplacements(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		want          []goneRule
	}{
		{"replaced", "## Setup\n" + ruleYarn + "\n- Run the linter before every push.",
			"## Setup\n" + rulePnpm + "\n- Run the linter before every push.",
			[]goneRule{{normLine(ruleYarn), normLine(rulePnpm)}}},
		{"deleted", "## Setup\n" + ruleYarn + "\n- Run the linter before every push.", "## Setup\n- Run the linter before every push.",
			[]goneRule{{line: normLine(ruleYarn)}}},
		{"moved", ruleYarn + "\n- Run the linter before every push.", "- Run the linter before every push.\n" + ruleYarn, nil},
		{"kept with a period", "- Run the linter before every push", "- Run the linter before every push.", nil},
		{"two replaced by one", "- Quote every variable expansion.\n- Never parse the output of ls.\n## End",
			"- Write scripts for POSIX sh only.\n## End",
			[]goneRule{{"quote every variable expansion", "write scripts for posix sh only"}, {"never parse the output of ls", "write scripts for posix sh only"}}},
		{"code and short lines", "- Use bash.\n```sh\nset -eu and then run the tests\n```", "- Use sh.\n```sh\nset -e and then run the tests\n```", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lineReplacements(instrEdit{file: "CLAUDE.md", before: splitLines(tc.before), after: splitLines(tc.after)})
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// writeTurn is a turn of session id that writes the whole CLAUDE.md.
func writeTurn(id, prompt, content string) []memory.Exchange {
	in, _ := json.Marshal(map[string]string{"file_path": "/repo/CLAUDE.md", "content": content})
	return []memory.Exchange{
		{SessionID: id, Turn: 1, UserTurns: 1, Project: "shop", User: prompt, Assistant: "I'll rewrite CLAUDE.md.",
			ToolCalls: []memory.ToolCall{{ID: "w" + id, Name: "Write", Input: string(in)}}},
		{SessionID: id, Turn: 2, UserTurns: 1, Project: "shop", ToolLoop: true, Assistant: "Rewritten.",
			ToolResults: []memory.ToolResult{{ToolUseID: "w" + id, Content: "ok"}}},
	}
}

const ruleLint = "- Run the linter before every push; CI fails on any warning."

// TestInstrRuleRevisedAcrossSessions: a rule a later session's edit of
// the file replaces is superseded by the rule written in its place; one
// it deletes, or a write of the whole file leaves out, is trashed; a rule
// of another file, or one the edit keeps, stands. Batch ingest and live
// capture end alike.
func TestInstrRuleRevisedAcrossSessions(t *testing.T) {
	first := editTurn("s-1", 1, "record the setup rules", "## Setup", "## Setup\n"+ruleYarn+"\n"+ruleLint+"\n- Deploy only from the `release` branch, never from main.")
	for _, tc := range []struct {
		name       string
		later      []memory.Exchange
		gone, kept []string // rule texts (in part)
		by         string   // the rule superseding the yarn rule, "" when trashed
	}{
		{"replaced", editTurn("s-2", 1, "we moved to pnpm", ruleYarn, rulePnpm),
			[]string{"`yarn`"}, []string{"`pnpm`", "linter", "`release`"}, "`pnpm`"},
		{"deleted", editTurn("s-2", 1, "drop the yarn rule", "## Setup\n"+ruleYarn+"\n"+ruleLint, "## Setup\n"+ruleLint),
			[]string{"`yarn`"}, []string{"linter", "`release`"}, ""},
		{"written whole", writeTurn("s-2", "rewrite CLAUDE.md", "# Shop\n\n## Setup\n"+ruleLint+"\n- Deploy only from the `release` branch, never from main.\n"),
			[]string{"`yarn`"}, []string{"linter", "`release`"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := append(GroupTurns(first), GroupTurns(tc.later)...)
			batch, live, _, got := replayBoth(t, turns)
			joined := strings.Join(got, "\n")
			for _, g := range tc.gone {
				if strings.Contains(joined, g) {
					t.Errorf("store %q: %s still stands", got, g)
				}
			}
			for _, k := range tc.kept {
				if !strings.Contains(joined, k) {
					t.Errorf("store %q: want a rule with %s", got, k)
				}
			}
			for _, f := range []*fixture{batch, live} {
				old := findMemory(t, f.st, "`yarn`", true)
				if tc.by == "" {
					if old.ID != "" {
						t.Errorf("the yarn rule %q stands: want it in the trash", old.Text)
					}
					continue
				}
				next := findMemory(t, f.st, tc.by, false)
				if old.ID == "" || next.ID == "" || old.SupersededBy != next.ID {
					t.Errorf("the yarn rule %q superseded by %q, want by %q (%q)", old.Text, old.SupersededBy, next.ID, next.Text)
				}
			}
		})
	}
}

// TestInstrRuleRevisedInItsProject: an edit of a file of the same name
// in another project, or in a session of no project, revises no rule of
// this one.
func TestInstrRuleRevisedInItsProject(t *testing.T) {
	first := editTurn("s-1", 1, "record the setup rules", "## Setup", "## Setup\n"+ruleYarn+"\n"+ruleLint)
	for _, project := range []string{"kv", ""} {
		later := editTurn("s-2", 1, "we moved to pnpm", ruleYarn, rulePnpm)
		for i := range later {
			later[i].Project = project
		}
		_, _, _, got := replayBoth(t, append(GroupTurns(first), GroupTurns(later)...))
		if !slices.Contains(got, "CLAUDE.md: Setup: Install packages with `yarn`; the lockfile is `yarn.lock` and CI rejects `package-lock.json`.") {
			t.Errorf("project %q: store %q: want the yarn rule of project shop standing", project, got)
		}
	}
}

// findMemory returns the memory of the store whose text holds part,
// superseded ones too when all; none when there is none.
func findMemory(t *testing.T, st *store.Store, part string, all bool) memory.Memory {
	t.Helper()
	var out memory.Memory
	if err := st.Iterate(context.Background(), store.Filter{IncludeSuperseded: all}, func(m memory.Memory) error {
		if strings.Contains(m.Text, part) {
			out = m
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
