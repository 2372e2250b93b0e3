package transcript

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestClaudeCompactionSummary: the summary a compacted session starts with
// is not a user prompt, flagged (isCompactSummary) or not (older versions);
// the next response carries it as its Summary.
func TestClaudeCompactionSummary(t *testing.T) {
	exs, st := parseFile(t, "compact.jsonl", Options{})
	var got []want
	for _, ex := range exs {
		got = append(got, summarize(ex))
		if strings.Contains(ex.User, "being continued") {
			t.Errorf("exchange %d has the summary as User: %q", ex.Turn, ex.User)
		}
	}
	wantExs := []want{
		{User: "Why do ledger totals drift after a restart?", UserTurns: 1,
			Assistant: "The snapshot is written before the WAL is fsynced, so a crash loses the tail; totals drift by the lost entries."},
		{ToolLoop: true, UserTurns: 1, Assistant: "Continuing: I will move the fsync before the snapshot.", Calls: []string{"Edit"}},
		{ToolLoop: true, UserTurns: 1, Assistant: "The WAL is now fsynced before the snapshot is written.", Results: []string{"Edit: edited snap.go"}},
		{User: "Add a regression test for the crash case.", UserTurns: 2,
			Assistant: "Added TestCrashBeforeSnapshot, which kills the writer between WAL append and snapshot."},
	}
	if !reflect.DeepEqual(got, wantExs) {
		t.Fatalf("exchanges:\n got %s\nwant %s", dump(got), dump(wantExs))
	}
	if st.UserPrompts != 2 || st.Summaries != 2 || st.Skipped[SkipInjected] != 0 {
		t.Fatalf("stats %+v", st)
	}
	// The summaries ride on the response after them, for the pipeline.
	if !strings.HasPrefix(exs[1].Summary, "This session is being continued") || !strings.Contains(exs[3].Summary, "fsync moved") || exs[0].Summary != "" {
		t.Fatalf("summaries: %q / %q / %q", exs[0].Summary, exs[1].Summary, exs[3].Summary)
	}
}

// TestClaudeAgentProgress: Claude Code 2.1 logs a subagent's messages as
// agent_progress entries of the main file; they are the subagent's
// conversation with Sidechains, skipped without.
func TestClaudeAgentProgress(t *testing.T) {
	exs, st := parseFile(t, "progress.jsonl", Options{})
	if len(exs) != 2 || st.Skipped[SkipSidechain] != 4 || st.Skipped[SkipBookkeeping] != 1 || st.Sidechain != 0 {
		t.Fatalf("without sidechains: %d exchanges, %+v", len(exs), st)
	}
	exs, st = parseFile(t, "progress.jsonl", Options{Sidechains: true})
	var got []want
	for _, ex := range exs {
		got = append(got, summarize(ex))
	}
	wantExs := []want{
		{User: "Which invoices skip the tax rounding?", UserTurns: 1, Calls: []string{"Task"}},
		{User: "Find invoice code paths that skip RoundTax.", ToolLoop: true, UserTurns: 1, Calls: []string{"Grep"}},
		{ToolLoop: true, UserTurns: 1, Assistant: "Credit notes call Total() directly and never RoundTax; only invoice.go:40 rounds.",
			Results: []string{"Grep: invoice.go:40 RoundTax(total)"}},
		{ToolLoop: true, UserTurns: 1, Assistant: "Credit notes skip the tax rounding: they call Total() without RoundTax.",
			Results: []string{"Task: Credit notes skip RoundTax."}},
	}
	if !reflect.DeepEqual(got, wantExs) {
		t.Fatalf("exchanges:\n got %s\nwant %s", dump(got), dump(wantExs))
	}
	if st.Sidechain != 2 || !reflect.DeepEqual(st.Agents, []string{"b77"}) || st.UserPrompts != 1 || exs[1].Model != "claude-haiku-4-5" {
		t.Fatalf("stats %+v", st)
	}
}

// TestParseFileSubagents: with Sidechains, ParseFile adds a session's
// subagent files (<session>/subagents/agent-*.jsonl) in time order; a
// subagent file named on its own is read without the option.
func TestParseFileSubagents(t *testing.T) {
	path := filepath.Join("testdata", "subsess.jsonl")
	exs, st, err := ParseFile(path, Options{})
	if err != nil || len(exs) != 2 || st.Sidechain != 0 {
		t.Fatalf("without sidechains: %v %d %+v", err, len(exs), st)
	}
	exs, st, err = ParseFile(path, Options{Sidechains: true})
	if err != nil {
		t.Fatal(err)
	}
	checkExchanges(t, exs, st)
	if len(exs) != 3 || st.Sidechain != 1 || !reflect.DeepEqual(st.Agents, []string{"c3d"}) {
		t.Fatalf("with sidechains: %d exchanges, %+v", len(exs), st)
	}
	side := exs[1]
	if !side.ToolLoop || side.User != "Check the indexer schedule." || side.SessionID != "subsess" || side.Project != "search" ||
		side.Turn != 2 || side.UserTurns != 1 || !strings.Contains(side.Assistant, "commented out") {
		t.Fatalf("subagent exchange: %+v", side)
	}
	if exs[2].Turn != 3 || !strings.Contains(exs[2].Assistant, "cron was disabled") {
		t.Fatalf("last exchange: %+v", exs[2])
	}

	// The subagent file alone.
	exs, st, err = ParseFile(filepath.Join("testdata", "subsess", "subagents", "agent-c3d.jsonl"), Options{})
	if err != nil || len(exs) != 1 || st.Sidechain != 1 || st.SessionID != "subsess" || st.Project != "search" {
		t.Fatalf("subagent file: %v %d %+v", err, len(exs), st)
	}
}

// TestParseFileSubagentsSkipped: the lines a subagent file skips count
// in the session's Stats.Skipped, by reason, with the session file's own.
func TestParseFileSubagentsSkipped(t *testing.T) {
	session := `{"type":"user","uuid":"u1","sessionId":"sk","cwd":"/work/kiln","timestamp":"2026-04-02T10:00:00.000Z","message":{"role":"user","content":"Why does the kiln job retry twice?"}}
{"type":"assistant","uuid":"a1","sessionId":"sk","timestamp":"2026-04-02T10:00:05.000Z","message":{"id":"m1","role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"Its backoff is set to two attempts in jobs.yaml."}]}}
not json
`
	cases := []struct {
		name  string
		agent string
		want  map[string]int
	}{
		{"no skipped line in the subagent", `{"type":"user","uuid":"s1","isSidechain":true,"agentId":"k1","sessionId":"sk","timestamp":"2026-04-02T10:00:01.000Z","message":{"role":"user","content":"Read jobs.yaml."}}
{"type":"assistant","uuid":"s2","isSidechain":true,"agentId":"k1","sessionId":"sk","timestamp":"2026-04-02T10:00:02.000Z","message":{"id":"m2","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"attempts: 2"}]}}
`, map[string]int{SkipMalformed: 1}},
		{"skipped lines in the subagent", `{"type":"user","uuid":"s1","isSidechain":true,"agentId":"k1","sessionId":"sk","timestamp":"2026-04-02T10:00:01.000Z","message":{"role":"user","content":"Read jobs.yaml."}}
{"type":"assistant","uuid":"s2","isSidechain":true,"agentId":"k1","sessionId":"sk","timestamp":"2026-04-02T10:00:02.000Z","message":{"id":"m2","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"attempts: 2"}]}}
{"type":"assistant","uuid":"s2","isSidechain":true,"agentId":"k1","sessionId":"sk","timestamp":"2026-04-02T10:00:02.000Z","message":{"id":"m2","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"attempts: 2"}]}}
{"truncated
`, map[string]int{SkipMalformed: 2, SkipDuplicate: 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "sk.jsonl")
			if err := os.MkdirAll(filepath.Join(dir, "sk", "subagents"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(session), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "sk", "subagents", "agent-k1.jsonl"), []byte(tc.agent), 0o600); err != nil {
				t.Fatal(err)
			}
			exs, st, err := ParseFile(path, Options{Sidechains: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(exs) != 2 || st.Sidechain != 1 {
				t.Fatalf("%d exchanges, %d of subagents (want 2, 1)", len(exs), st.Sidechain)
			}
			if !reflect.DeepEqual(st.Skipped, tc.want) {
				t.Errorf("skipped %v, want %v", st.Skipped, tc.want)
			}
		})
	}
}
