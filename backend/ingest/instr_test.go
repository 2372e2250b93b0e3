package ingest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

func TestInstructionFile(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"/home/dev/src/kv/CLAUDE.md", true},
		{"AGENTS.md", true},
		{"docs/GEMINI.md", true},
		{`packages\web\CONVENTIONS.md`, true},
		{".cursorrules", true},
		{".cursor/rules/db-migrations.mdc", true},
		{"/repo/.github/copilot-instructions.md", true},
		{".github/instructions/go.instructions.md", true},
		{".windsurfrules", true},
		{".claude/rules/testing.md", true},
		{"README.md", false},
		{"docs/conventions-old.md", false},
		{"src/agents.ts", false},
		{".cursor/settings.json", false},
	} {
		if got := InstructionFile(tc.path); got != tc.want {
			t.Errorf("InstructionFile(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

// TestMayNameInstr: the quick test before a text is parsed for edits
// passes every text that names an instruction file, whatever its case
// (InstructionFile ignores case), and skips a text that names none.
func TestMayNameInstr(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"*** Update File: AGENTS.md", true},
		{"*** Update File: docs/AGENTS.mD", true},
		{"edited .CURSORRULES", true},
		{"see .GooseHints", true},
		{"ran go test ./... and it passed", false},
		{"", false},
	} {
		if got := mayNameInstr(tc.text); got != tc.want {
			t.Errorf("mayNameInstr(%q) = %v, want %v", tc.text, got, tc.want)
		}
		for _, p := range strings.Fields(tc.text) {
			if InstructionFile(p) && !mayNameInstr(p) {
				t.Errorf("InstructionFile(%q) but mayNameInstr skips it", p)
			}
		}
	}
}

// instrKept distils every turn of exs the way batch ingest does and
// returns the kept statements of instruction files, and all dropped ones
// with their reasons.
func instrKept(t *testing.T, exs []memory.Exchange) (kept, dropped []string) {
	t.Helper()
	turns := GroupTurns(exs)
	for i, tu := range turns {
		for _, c := range Distill(tu, LaterTexts(turns[i+1:], tu.SessionID)) {
			if c.Origin != OriginInstruction {
				continue
			}
			if c.Kind != memory.KindConvention || c.Type != memory.TypeProject || c.kindOrigin() != memory.KindCued {
				t.Errorf("%q: kind %q type %q origin %q", c.Text, c.Kind, c.Type, c.kindOrigin())
			}
			if c.Keep {
				kept = append(kept, c.Text)
			} else {
				dropped = append(dropped, c.Text+" | "+c.Reason)
			}
		}
	}
	return kept, dropped
}

func jsonLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// claudeSession writes a Claude Code session: one prompt, a response
// that calls tool (name, input) and, after its result (isErr), a final
// answer.
func claudeSession(t *testing.T, tool string, input map[string]any, isErr bool) string {
	t.Helper()
	base := map[string]any{"sessionId": "s-cc", "cwd": "/home/dev/src/kv", "isSidechain": false, "userType": "external"}
	line := func(kv map[string]any) string {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range kv {
			m[k] = v
		}
		return jsonLine(t, m)
	}
	return strings.Join([]string{
		line(map[string]any{"type": "user", "uuid": "u1", "timestamp": "2026-01-05T10:00:00.000Z",
			"message": map[string]any{"role": "user", "content": "note the lint rule for the store package"}}),
		line(map[string]any{"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-05T10:00:02.000Z",
			"message": map[string]any{"id": "m1", "role": "assistant", "content": []any{
				map[string]any{"type": "text", "text": "I'll record it."},
				map[string]any{"type": "tool_use", "id": "tu1", "name": tool, "input": input}}}}),
		line(map[string]any{"type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-01-05T10:00:03.000Z",
			"message": map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": "tu1", "content": "done", "is_error": isErr}}}}),
		line(map[string]any{"type": "assistant", "uuid": "a2", "parentUuid": "u2", "timestamp": "2026-01-05T10:00:05.000Z",
			"message": map[string]any{"id": "m2", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Recorded."}}}}),
	}, "\n") + "\n"
}

func parse(t *testing.T, f transcript.Format, text string) []memory.Exchange {
	t.Helper()
	exs, _, err := transcript.ParseAs(strings.NewReader(text), f, transcript.Options{Project: "kv", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	return exs
}

const lintRule = "Run `make lint` before every commit; CI rejects unformatted Go files"

// TestInstructionEditsPerReader: what an edit adds to an instruction file
// becomes a convention of its own, read from each agent's record: a
// Claude Code Edit, MultiEdit or Write, a Codex apply_patch, an Aider
// SEARCH/REPLACE block Aider applied (to a file still there after), a Cursor fence with its path (or a
// path-less diff its response names the file of). Unchanged lines, code,
// headings, an edit of another file, a failed or declined edit give none.
func TestInstructionEditsPerReader(t *testing.T) {
	old := "## Build\n\n- Use `make build`, never `go build` directly."
	added := old + "\n- " + lintRule + ".\n\n```sh\nmake lint\n```\n"
	codexPatch := "*** Begin Patch\n*** Update File: AGENTS.md\n@@\n ## Build\n \n-- Use `make build`.\n+- " + lintRule + ".\n*** End Patch"
	codex := strings.Join([]string{
		`{"timestamp":"2026-01-10T20:27:32.184Z","type":"session_meta","payload":{"id":"s-codex","timestamp":"2026-01-10T20:27:32.170Z","cwd":"/home/dev/src/kv","originator":"codex_cli_rs","cli_version":"0.80.0","source":"cli"}}`,
		`{"timestamp":"2026-01-10T20:28:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"note the lint rule for the store package"}]}}`,
		jsonLine(t, map[string]any{"timestamp": "2026-01-10T20:28:06.200Z", "type": "response_item", "payload": map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": "c1", "name": "apply_patch", "input": codexPatch}}),
		`{"timestamp":"2026-01-10T20:28:07.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"Success. Updated the following files:\nM AGENTS.md\n"}}`,
		`{"timestamp":"2026-01-10T20:28:08.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Recorded."}]}}`,
	}, "\n") + "\n"
	aider := func(file, outcome string) string {
		return "# aider chat started at 2026-01-05 10:00:00\n\n#### note the lint rule for the store package  \n\nHere is the block:\n\n```markdown\n" + file +
			"\n<<<<<<< SEARCH\n## Build\n\n- Use `make build`, never `go build` directly.\n=======\n## Build\n\n- Use `make build`, never `go build` directly.\n- " + lintRule +
			".\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent, 100 received.  \n> " + outcome + "  \n"
	}
	spec := func(body string) string {
		return "# Lint rule (2026-01-05 10:00:00)\n\n_**User**_\n\nnote the lint rule for the store package\n\n---\n\n_**Assistant**_\n\n" + body + "\n\n---\n"
	}
	// The rule an edit's new text shows without adding it (instrWhole),
	// kept before the rule it adds.
	shown := map[string]string{
		"claude-edit":      "CLAUDE.md: Build: Use `make build`, never `go build` directly.",
		"claude-multiedit": "CLAUDE.md: Build: Use `make build`, never `go build` directly.",
		"aider-applied":    "CONVENTIONS.md: Build: Use `make build`, never `go build` directly.",
	}
	for _, tc := range []struct {
		name   string
		format transcript.Format
		text   string
		want   string // "" for no statement
	}{
		{"claude-edit", transcript.FormatClaudeCode, claudeSession(t, "Edit", map[string]any{"file_path": "/home/dev/src/kv/CLAUDE.md", "old_string": old, "new_string": added}, false), "CLAUDE.md: Build: " + lintRule + "."},
		{"claude-multiedit", transcript.FormatClaudeCode, claudeSession(t, "MultiEdit", map[string]any{"file_path": "/home/dev/src/kv/CLAUDE.md", "edits": []any{map[string]any{"old_string": old, "new_string": added}}}, false), "CLAUDE.md: Build: " + lintRule + "."},
		{"claude-write", transcript.FormatClaudeCode, claudeSession(t, "Write", map[string]any{"file_path": "/home/dev/src/kv/.cursor/rules/lint.mdc", "content": "---\ndescription: lint\nalwaysApply: true\n---\n" + lintRule + ".\n"}, false), "lint.mdc: " + lintRule + "."},
		{"claude-other-file", transcript.FormatClaudeCode, claudeSession(t, "Edit", map[string]any{"file_path": "/home/dev/src/kv/README.md", "old_string": old, "new_string": added}, false), ""},
		{"claude-failed", transcript.FormatClaudeCode, claudeSession(t, "Edit", map[string]any{"file_path": "/home/dev/src/kv/CLAUDE.md", "old_string": old, "new_string": added}, true), ""},
		{"codex-apply-patch", transcript.FormatCodex, codex, "AGENTS.md: Build: " + lintRule + "."},
		{"aider-applied", transcript.FormatAider, aider("CONVENTIONS.md", "Applied edit to CONVENTIONS.md"), "CONVENTIONS.md: Build: " + lintRule + "."},
		{"aider-file-gone", transcript.FormatAider, aider("docs/CONVENTIONS.md", "Applied edit to docs/CONVENTIONS.md  \n> /home/dev/src/kv/docs/CONVENTIONS.md: file not found error"), ""},
		{"aider-declined", transcript.FormatAider, aider("CONVENTIONS.md", "Skipping edits to CONVENTIONS.md"), ""},
		{"aider-other-file", transcript.FormatAider, aider("docs/build.md", "Applied edit to docs/build.md"), ""},
		{"cursor-path-fence", transcript.FormatSpecStory, spec("I'll add it to the rule.\n\n```markdown:.cursor/rules/store.mdc\n## Build\n\n- " + lintRule + ".\n```"), "store.mdc: Build: " + lintRule + "."},
		{"cursor-named-diff", transcript.FormatSpecStory, spec("Let me update the store.mdc rule:\n\n---\n\n```diff\n  ## Build\n+ - " + lintRule + ".\n```"), "store.mdc: Build: " + lintRule + "."},
		{"cursor-diffs-paired", transcript.FormatSpecStory, spec("Let me update the store.mdc rule:\n\n---\n\n```diff\n  ## Build\n+ - " + lintRule + ".\n```\n\n---\n\nNow the task list:\n\n---\n\n```diff\n- - [ ] Record the lint rule in a task of its own.\n+ - [x] The lint rule needs no task of its own now.\n```"), "store.mdc: Build: " + lintRule + "."},
		{"cursor-unnamed-diff", transcript.FormatSpecStory, spec("Let me update the rule:\n\n---\n\n```diff\n  ## Build\n+ - " + lintRule + ".\n```"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, dropped := instrKept(t, parse(t, tc.format, tc.text))
			if tc.want == "" {
				if len(kept) > 0 {
					t.Fatalf("kept %q, want none", kept)
				}
				return
			}
			want := []string{tc.want}
			if s := shown[tc.name]; s != "" {
				want = []string{s, tc.want}
			}
			if !slices.Equal(kept, want) {
				t.Fatalf("kept %q (dropped %q), want %q", kept, dropped, want)
			}
		})
	}
}

// TestInstrStatements: one statement per list item or paragraph holding
// an added line; a nested item added under an unchanged one carries its
// parent; a lead-in names the items after it; headings, code, tables,
// front matter and unchanged lines are none.
func TestInstrStatements(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		want          []string // what the edit adds (instrWhole off)
		// kept are the rules the edit's new text shows without adding
		// them (instrWhole on).
		kept []string
	}{
		{"nested-under-unchanged",
			"- Declare literal values as named constants.\n- Keep functions short.",
			"- Declare literal values as named constants.\n  - Except 0, 1 and -1, which the lint rule allows.\n- Keep functions short.",
			[]string{"AGENTS.md: Declare literal values as named constants. Except 0, 1 and -1, which the lint rule allows."},
			[]string{"AGENTS.md: Keep functions short."}},
		{"wrapped-item",
			"",
			"- Prefer table-driven tests\n  with one case per row.\n",
			[]string{"AGENTS.md: Prefer table-driven tests with one case per row."}, nil},
		{"lead-in",
			"",
			"When writing SQL migrations:\n\n- Never edit a migration that was released.\n- Name files by date, e.g.:\n\n```\n2026-01-05-add-index.sql\n```",
			[]string{"AGENTS.md: When writing SQL migrations: Never edit a migration that was released.", "AGENTS.md: When writing SQL migrations: Name files by date, e.g.."}, nil},
		{"one-rule-a-line",
			"**IMPORTANT: all queries go through the CLI**",
			"**IMPORTANT: all queries go through the CLI**\n**IMPORTANT: every commit is pushed right away**",
			[]string{"AGENTS.md: IMPORTANT: every commit is pushed right away."},
			[]string{"AGENTS.md: IMPORTANT: all queries go through the CLI."}},
		{"period-only", "- Use pnpm for installs", "- Use pnpm for installs.", nil, []string{"AGENTS.md: Use pnpm for installs."}},
		{"reordered",
			"Before a commit:\n\n- Run `make lint` on the changed packages.\n- Keep commits to one change each.\n- Write the subject in the imperative mood.",
			"Before a commit:\n\n- Keep commits to one change each.\n- Run `make lint` on the changed packages.\n- Write the subject in the imperative mood.",
			nil,
			[]string{"AGENTS.md: Before a commit: Keep commits to one change each.", "AGENTS.md: Before a commit: Run `make lint` on the changed packages.",
				"AGENTS.md: Before a commit: Write the subject in the imperative mood."}},
		{"orphan-nested-item",
			"  - However, the literal numbers 1 and -1 may be used directly in the code.\n- Keep functions short.",
			"  - However, the literal numbers 1 and -1 may be used directly in the code.\n- Keep functions short and named after what they return.",
			[]string{"AGENTS.md: Keep functions short and named after what they return."}, nil},
		{"cut-at-the-edit's-end",
			"- Use `make build` for every build.\n- Avoid special handling to preserve `this`; prefer arrow functions that capture `this`",
			"- Use `make build` for every build; CI runs the same target.\n- Avoid special handling to preserve `this`; prefer arrow functions that capture `this`",
			[]string{"AGENTS.md: Use `make build` for every build; CI runs the same target."}, nil},
		{"not-statements", "",
			"---\ndescription: rules\n---\n# Testing\n\n| tool | use |\n| --- | --- |\n| vitest | unit |\n\n```ts\nexport const x = 1;\n```\n",
			nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := func() (added, kept []string) {
				for _, st := range instrStatements(instrEdit{file: "AGENTS.md", before: splitLines(tc.before), after: splitLines(tc.after)}) {
					if st.added {
						added = append(added, st.text)
					} else {
						kept = append(kept, st.text)
					}
				}
				return added, kept
			}
			if tc.name == "lead-in" {
				tc.want = tc.want[:1]
			}
			trim := func(got []string) []string {
				if tc.name == "lead-in" {
					return got[:min(len(got), 1)]
				}
				return got
			}
			added, kept := read()
			if !slices.Equal(trim(added), tc.want) || !slices.Equal(kept, tc.kept) {
				t.Fatalf("added %q, kept %q\nwant %q, %q", added, kept, tc.want, tc.kept)
			}
			withAblated(t, ruleInstrWhole, func() {
				added, kept := read()
				if !slices.Equal(trim(added), tc.want) || len(kept) > 0 {
					t.Fatalf("instrwhole off: added %q, kept %q\nwant %q and none kept", added, kept, tc.want)
				}
			})
		})
	}
}

// editTurn is a Claude Code turn of session id whose one response edits
// CLAUDE.md from old to new.
func editTurn(id string, n int, prompt, old, new string) []memory.Exchange {
	in, _ := json.Marshal(map[string]string{"file_path": "/repo/CLAUDE.md", "old_string": old, "new_string": new})
	return []memory.Exchange{
		{SessionID: id, Turn: 2*n - 1, UserTurns: n, Project: "shop", User: prompt, Assistant: "I'll update CLAUDE.md.",
			ToolCalls: []memory.ToolCall{{ID: "e" + id, Name: "Edit", Input: string(in)}}},
		{SessionID: id, Turn: 2 * n, UserTurns: n, Project: "shop", ToolLoop: true, Assistant: "Updated.",
			ToolResults: []memory.ToolResult{{ToolUseID: "e" + id, Content: "ok"}}},
	}
}

// deployToken is a made-up secret of an API key's shape.
const deployToken = "ghp_" + "q7Rk2LmX9vTb4NcW8zYp3HdF6sJu1EaG5oKi"

const (
	ruleYarn = "- Install packages with `yarn`; the lockfile is `yarn.lock` and CI rejects `package-lock.json`."
	rulePnpm = "- Install packages with `pnpm`; the lockfile is `pnpm-lock.yaml` and CI rejects any other lockfile."
)

// TestInstructionRemovedLater: a line a later edit removes revises the
// statement it formed, within the turn and across turns; batch ingest and
// live capture (later turns unknown, earlier turns distilled again) end
// with the same store, redacted.
func TestInstructionRemovedLater(t *testing.T) {
	// Within one turn: the second edit replaces the first's line.
	exs := editTurn("s-in", 1, "record the package manager rule", "## Setup", "## Setup\n"+ruleYarn)
	exs = append(exs, editTurn("s-in", 1, "", ruleYarn, rulePnpm)...)
	exs[2].User, exs[2].ToolLoop = "", true
	kept, dropped := instrKept(t, exs)
	if len(kept) != 1 || !strings.Contains(kept[0], "pnpm") || len(dropped) != 1 || !strings.Contains(dropped[0], "revised later") {
		t.Fatalf("kept %q dropped %q", kept, dropped)
	}

	// Across turns: the last turn's prompt says the rule changed (an
	// undo cue), or says nothing of it (only the edit's removed line
	// revises the earlier turn's statement).
	for _, prompt := range []string{"we moved to pnpm, fix the rule", "put pnpm in the package manager rule"} {
		t.Run(prompt, func(t *testing.T) { removedAcrossTurns(t, prompt) })
	}
}

// removedAcrossTurns runs TestInstructionRemovedLater's session whose
// third turn, asked with prompt, replaces the yarn rule of the first.
func removedAcrossTurns(t *testing.T, prompt string) {
	t.Helper()
	var all []memory.Exchange
	all = append(all, editTurn("s-x", 1, "record the package manager rule", "## Setup", "## Setup\n"+ruleYarn+"\n- Deploy with the token sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA in `deploy.sh`, never by hand.")...)
	all = append(all, sessionOf("s-x", "where is the API documented?", "The `docs/api.md` page lists every endpoint of the shop with its request schema and error codes.")...)
	all[2].Turn, all[2].UserTurns = 3, 2
	all = append(all, editTurn("s-x", 3, prompt, ruleYarn, rulePnpm)...)
	turns := GroupTurns(all)
	if len(turns) != 3 {
		t.Fatalf("%d turns", len(turns))
	}
	_, _, _, got := replayBoth(t, turns)
	joined := strings.Join(got, "\n")
	if strings.Contains(joined, "yarn.lock") || !strings.Contains(joined, "CLAUDE.md: Install packages with `pnpm`") {
		t.Fatalf("%q: store %q: want the pnpm rule, not the yarn one", prompt, got)
	}
	if strings.Contains(joined, deployToken) || !strings.Contains(joined, "deploy.sh") {
		t.Fatalf("%q: store %q: want the deploy rule with its secret masked", prompt, got)
	}
}

// TestInstructionOff: with the mechanism off, an edit of an instruction
// file forms no statement (the tests above fail without it).
func TestInstructionOff(t *testing.T) {
	instrOff["all"] = true
	defer delete(instrOff, "all")
	exs := editTurn("s-off", 1, "record the package manager rule", "## Setup", "## Setup\n"+ruleYarn)
	if kept, _ := instrKept(t, exs); len(kept) != 0 {
		t.Fatalf("kept %q with the mechanism off", kept)
	}
}

// FuzzInstrEdits: reading any text as Aider blocks, Cursor fences, a Codex
// patch or the edit of an instruction file never panics, and every
// statement names its file and is valid UTF-8 of bounded length.
func FuzzInstrEdits(f *testing.F) {
	for _, s := range []string{
		"```markdown\nCONVENTIONS.md\n<<<<<<< SEARCH\n- a\n=======\n- a\n- b is c\n>>>>>>> REPLACE\n```",
		"```diff:.cursor/rules/x.mdc\n- old rule\n+ new rule is here\n```",
		"*** Begin Patch\n*** Update File: AGENTS.md\n@@\n-x\n+- Use the y tool for z.\n*** End Patch",
		"---\ndescription: x\n---\n# H\nlead:\n- one two three\n  - four five six\n````\n```\n",
		"<<<<<<< SEARCH\n=======\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var es []instrEdit
		es = append(es, searchReplaceEdits(s)...)
		es = append(es, fencePathEdits(s, func() string { return "CLAUDE.md" })...)
		es = append(es, parsePatch(s).instrEdits()...)
		es = append(es, laterRemovalsEdits(s)...)
		es = append(es, instrEdit{file: "AGENTS.md", after: splitLines(s)})
		for _, e := range es {
			for _, st := range instrStatements(e) {
				if !strings.Contains(st.text, ": ") || !utf8.ValidString(st.text) && utf8.ValidString(s) || runeLen(st.text) > 2*maxCandidateRunes+200 {
					t.Fatalf("statement %q of %q", st.text, s)
				}
			}
		}
	})
}

// laterRemovalsEdits reads s as a later text would be read.
func laterRemovalsEdits(s string) []instrEdit {
	_ = laterRemovals(modelSaid(s))
	return nil
}

// TestInstructionWithJudge: the turn judge's memories replace the
// distiller's choice, not what an edit wrote into an instruction file,
// which is stored beside them; a turn the judge keeps nothing of is not
// rejected when it has such a statement.
func TestInstructionWithJudge(t *testing.T) {
	for _, tc := range []struct {
		file  string
		judge bool // the judge's memory is stored too
	}{
		{"ollama_turn_good.json", true},
		{"ollama_turn_empty.json", false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t, newTurnJudge(t, "ollama", newJudgeServer(t, tc.file), 10))
			exs := editTurn("s-judge", 1, "record the package manager rule", "## Setup", "## Setup\n"+ruleYarn)
			exs[1].Assistant = "The flaky TestSync failure comes from `sync_test.go` reading the wall clock, so two memories written in one second tie."
			dec, _, err := f.p.ProcessTurn(ctx, GroupTurns(exs)[0], nil, SessionState{})
			if err != nil {
				t.Fatal(err)
			}
			got := liveTexts(t, f.st)
			joined := strings.Join(got, "\n")
			if dec.Verdict != memory.VerdictStored || !strings.Contains(joined, "CLAUDE.md: Setup: Install packages with `yarn`") {
				t.Fatalf("verdict %s (%s), store %q", dec.Verdict, dec.Reason, got)
			}
			if judged := strings.Contains(joined, "memory.FixedClock"); judged != tc.judge || len(got) != 1+map[bool]int{true: 1}[tc.judge] {
				t.Fatalf("store %q: the judge's memory stored %v, want %v, and nothing of the distiller's prose", got, judged, tc.judge)
			}
		})
	}
}

func TestQuickPath(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`{"file_path":"/r/CLAUDE.md","old_string":"a"}`, "/r/CLAUDE.md", true},
		{`{"command":"create","path":"AGENTS.md"}`, "AGENTS.md", true},
		{`{"file_path":"C:\\r\\AGENTS.md"}`, "", false},
		{`{"content":"x"}`, "", false},
	} {
		if got, ok := quickPath(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("quickPath(%s) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
	// Codex's shell form of apply_patch.
	in, _ := json.Marshal(map[string]any{"command": []string{"apply_patch", "*** Begin Patch\n*** Add File: .github/copilot-instructions.md\n+Use the `make check` target before opening a pull request.\n*** End Patch"}})
	c := memory.ToolCall{Name: "shell", Input: string(in)}
	es := callEdits(callPatch(c))
	if len(es) != 1 || es[0].file != ".github/copilot-instructions.md" || len(es[0].after) != 1 {
		t.Fatalf("shell apply_patch: %+v", es)
	}
}

func TestCallEditsTextEditor(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"command": "str_replace", "path": "/r/AGENTS.md", "old_str": "## Tests", "new_str": "## Tests\n- Run `go test -race` before pushing; CI runs with the race detector."})
	c := memory.ToolCall{Name: "str_replace_based_edit_tool", Input: string(in)}
	es := callEdits(callPatch(c))
	if len(es) != 1 {
		t.Fatalf("edits %+v", es)
	}
	st := instrStatements(es[0])
	if len(st) != 1 || st[0].text != "AGENTS.md: Tests: Run `go test -race` before pushing; CI runs with the race detector." {
		t.Fatalf("statements %+v", st)
	}
}

// aiderPartly is an Aider history whose answer sends two SEARCH/REPLACE
// blocks for CONVENTIONS.md: the first reorders a list, the second (a
// section the file does not have) fails to match, and Aider says the
// other block was applied; the model's retry of the second fails again.
const aiderPartly = "# aider chat started at 2026-01-05 10:00:00\n\n" +
	"#### In CONVENTIONS.md, reorder the lists.  \n\n" +
	"Here are the blocks:\n\n" +
	"```markdown\nCONVENTIONS.md\n<<<<<<< SEARCH\nBefore a commit:\n\n- Write the subject in the imperative mood.\n- Keep commits to one change each.\n=======\nBefore a commit:\n\n- Keep commits to one change each.\n- Write the subject in the imperative mood.\n>>>>>>> REPLACE\n```\n\n" +
	"```markdown\nCONVENTIONS.md\n<<<<<<< SEARCH\n# Edit format\n\n1. The opening fence and the language of the code.\n2. The file path alone on a line.\n=======\n# Edit format\n\n1. The file path alone on a line.\n2. The opening fence and the language of the code.\n>>>>>>> REPLACE\n```\n\n" +
	"> Tokens: 7.8k sent, 2.3k received. Cost: $0.03 message, $0.03 session.  \n" +
	"> Committing CONVENTIONS.md before applying edits.  \n" +
	"> The LLM did not conform to the edit format.  \n" +
	"> # 1 SEARCH/REPLACE block failed to match!\n\n" +
	"## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in CONVENTIONS.md\n<<<<<<< SEARCH\n# Edit format\n\n1. The opening fence and the language of the code.\n2. The file path alone on a line.\n=======\n# Edit format\n\n1. The file path alone on a line.\n2. The opening fence and the language of the code.\n>>>>>>> REPLACE\n\n" +
	"The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc\n\n" +
	"# The other 1 SEARCH/REPLACE block were applied successfully.\nDon't re-send them.\nJust reply with fixed versions of the block above that failed to match.  \n" +
	"> Commit 1619e93 docs: Reorder lists in CONVENTIONS.md  \n\n" +
	"Here is the fixed block:\n\n" +
	"```markdown\nCONVENTIONS.md\n<<<<<<< SEARCH\n# Edit format\n\n1.  The opening fence and the language of the code.\n2.  The file path alone on a line.\n=======\n# Edit format\n\n1.  The file path alone on a line.\n2.  The opening fence and the language of the code.\n>>>>>>> REPLACE\n```\n\n" +
	"> Tokens: 8k sent, 200 received.  \n" +
	"> The LLM did not conform to the edit format.  \n" +
	"> # 1 SEARCH/REPLACE block failed to match!\n\n" +
	"## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in CONVENTIONS.md\n<<<<<<< SEARCH\n# Edit format\n\n1.  The opening fence and the language of the code.\n2.  The file path alone on a line.\n=======\n# Edit format\n\n1.  The file path alone on a line.\n2.  The opening fence and the language of the code.\n>>>>>>> REPLACE\n\n" +
	"The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc  \n"

// TestAiderPartlyApplied: the blocks Aider applied when another block of
// the same answer failed to match are read (aiderPartly), the failed one
// and its failed retry are not; with the rule off, no block of the answer
// is (Aider printed no "Applied edit to").
func TestAiderPartlyApplied(t *testing.T) {
	reordered := []string{"CONVENTIONS.md: Before a commit: Keep commits to one change each.", "CONVENTIONS.md: Before a commit: Write the subject in the imperative mood."}
	exs := parse(t, transcript.FormatAider, aiderPartly)
	kept, dropped := instrKept(t, exs)
	if !slices.Equal(kept, reordered) {
		t.Fatalf("kept %q (dropped %q), want %q", kept, dropped, reordered)
	}
	withAblated(t, ruleAiderPartly, func() {
		if kept, _ := instrKept(t, exs); len(kept) > 0 {
			t.Fatalf("aiderpartly off: kept %q, want none", kept)
		}
	})
}

// TestInstructionRuleReadOnce: a rule two edits of one turn show (the
// second edit's context repeats what the first wrote) is one statement;
// the rule each adds is its own.
func TestInstructionRuleReadOnce(t *testing.T) {
	first := instrEdit{file: "AGENTS.md", before: splitLines("- Keep functions short."),
		after: splitLines("- Keep functions short.\n- Name every exported function after what it returns.")}
	second := instrEdit{file: "AGENTS.md", before: splitLines("- Name every exported function after what it returns."),
		after: splitLines("- Name every exported function after what it returns.\n- Wrap every returned error with its context.")}
	var got []string
	for _, c := range instructionCandidates([]instrEdit{first, second}, []int{0, 0}, nil, []int{0}) {
		got = append(got, c.Text)
	}
	want := []string{"AGENTS.md: Keep functions short.", "AGENTS.md: Name every exported function after what it returns.",
		"AGENTS.md: Wrap every returned error with its context."}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
