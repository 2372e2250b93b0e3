package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/recall"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
)

// usedStep is one model response of a test session's turn: its text or
// one tool call (name, input) with the result it got.
type usedStep struct {
	text        string
	tool, input string
	result      string
}

// writeUsedSession writes a Claude Code session file of one turn: the
// prompt, then steps, and returns its path.
func writeUsedSession(t *testing.T, root, session, prompt string, steps []usedStep) string {
	t.Helper()
	const cwd = "/home/dev/src/ledgerd"
	var lines []string
	n := 0
	line := func(typ string, msg any) {
		n++
		b, err := json.Marshal(map[string]any{"type": typ, "cwd": cwd, "sessionId": session, "uuid": fmt.Sprintf("x%d", n),
			"timestamp": fmt.Sprintf("2026-03-02T09:00:%02d.000Z", n), "isSidechain": false, "userType": "external",
			"requestId": fmt.Sprintf("req_%d", n), "message": msg})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	line("user", map[string]any{"role": "user", "content": prompt})
	for i, s := range steps {
		id := fmt.Sprintf("msg_%d", i)
		if s.tool == "" {
			line("assistant", map[string]any{"model": "claude-sonnet-4-5", "id": id, "type": "message", "role": "assistant",
				"content": []any{map[string]any{"type": "text", "text": s.text}}, "stop_reason": "end_turn"})
			continue
		}
		var input any
		if err := json.Unmarshal([]byte(s.input), &input); err != nil {
			t.Fatal(err)
		}
		tid := fmt.Sprintf("toolu_%d", i)
		line("assistant", map[string]any{"model": "claude-sonnet-4-5", "id": id, "type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "tool_use", "id": tid, "name": s.tool, "input": input}}, "stop_reason": "tool_use"})
		line("user", map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": tid, "content": s.result}}})
	}
	dir := filepath.Join(root, "-home-dev-src-ledgerd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, session+".jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A memory a prompt's recall gave and the turn that followed used (it
// wrote the memory's flag or path, which the prompt did not) is
// reinforced once, noted as used in that recall's log entry; the same
// turn read again (a new daemon that lost the file's cursor) reinforces
// nothing more. A memory given and not used, used only in the prompt's
// own words, or written only after a tool result showed it, is left as
// it was.
func TestTurnUseReinforcesRecalledMemory(t *testing.T) {
	t.Parallel()
	const memText = "ledgerd's integration tests need the flag --wal-dir=/tmp/ledgerd-wal and the script scripts/itest.sh; tmpfs is refused for the WAL."
	const prompt = "How do I run the integration tests of ledgerd?"
	cases := []struct {
		name   string
		prompt string
		steps  []usedStep
		want   int // reinforcements of the memory
	}{
		{name: "wrote the flag", prompt: prompt, steps: []usedStep{
			{text: "I'll run the integration tests."},
			{tool: "Bash", input: `{"command":"go test ./itest --wal-dir=/tmp/ledgerd-wal"}`, result: "ok  ledgerd/itest 3.2s"},
			{text: "The integration tests pass."}}, want: 1},
		{name: "wrote the script's path", prompt: prompt, steps: []usedStep{
			{tool: "Bash", input: `{"command":"bash scripts/itest.sh"}`, result: "PASS"},
			{text: "All green."}}, want: 1},
		{name: "did not use it", prompt: prompt, steps: []usedStep{
			{tool: "Bash", input: `{"command":"go test ./..."}`, result: "ok  ledgerd 1.1s"},
			{text: "The integration tests pass with the default settings."}}, want: 0},
		{name: "the prompt wrote the flag", prompt: "Run the integration tests of ledgerd with --wal-dir=/tmp/ledgerd-wal please.", steps: []usedStep{
			{tool: "Bash", input: `{"command":"go test ./itest --wal-dir=/tmp/ledgerd-wal"}`, result: "ok"},
			{text: "Done."}}, want: 0},
		{name: "a result showed the script first", prompt: prompt, steps: []usedStep{
			{tool: "Bash", input: `{"command":"ls scripts"}`, result: "itest.sh\nscripts/itest.sh\nlint.sh"},
			{tool: "Bash", input: `{"command":"bash scripts/itest.sh"}`, result: "PASS"},
			{text: "Done."}}, want: 0},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			cfg := testConfig(t)
			root := cfg.Capture.Transcripts.ClaudeCodeDirs[0]
			d, _ := serve(t, cfg)
			cl := httpapi.NewClient(d.listen, d.Token())
			m, err := cl.Add(ctx, httpapi.AddRequest{Text: memText, Kind: "fact", Project: "ledgerd"})
			if err != nil {
				t.Fatal(err)
			}
			session := fmt.Sprintf("7d1f6c2e-0b5a-4c39-9a7e-used0000000%d", i)
			got, err := cl.Recall(ctx, search.RecallRequest{SessionID: session, Prompt: tc.prompt, Project: "ledgerd", Event: search.EventPrompt, Agent: "claude-code"})
			if err != nil {
				t.Fatal(err)
			}
			given := false
			for _, h := range got.Hits {
				given = given || h.Memory.ID == m.ID
			}
			if !given {
				t.Fatalf("the prompt's recall did not give the memory: %+v", got)
			}
			path := writeUsedSession(t, root, session, tc.prompt, tc.steps)
			read := func(d *Daemon) {
				t.Helper()
				cl := httpapi.NewClient(d.listen, d.Token())
				before := d.tail.Stats().Processed
				acc, err := cl.CaptureTranscript(ctx, httpapi.TranscriptRequest{Path: path, Event: tail.EventStop, SessionID: session, CWD: "/home/dev/src/ledgerd"})
				if err != nil || !acc.Queued {
					t.Fatalf("capture transcript: %+v %v", acc, err)
				}
				r := &transcriptRig{t: t, d: d}
				r.waitProcessed(before + 1)
				if st := d.tail.Stats(); st.Turns != 1 {
					t.Fatalf("the session file's turn was not read: %+v", st)
				}
			}
			check := func(d *Daemon, when string) {
				t.Helper()
				after, err := d.store.Get(ctx, m.ID)
				if err != nil {
					t.Fatal(err)
				}
				if after.ReinforcedCount != tc.want {
					t.Errorf("%s: reinforced %d times, want %d", when, after.ReinforcedCount, tc.want)
				}
				es, err := d.recall.RecallLog(ctx, store.RecallLogQuery{SessionID: session})
				if err != nil || len(es) != 1 {
					t.Fatalf("%s: recall log %+v, %v", when, es, err)
				}
				used := 0
				for _, f := range es[0].Feedback {
					if f.ID == m.ID && f.Op == recall.OpUsed && f.Score == 1 {
						used++
					}
				}
				if used != tc.want || len(es[0].Feedback) != used {
					t.Errorf("%s: the recall's feedback %+v, want %d used", when, es[0].Feedback, tc.want)
				}
			}
			read(d)
			check(d, "after the turn")
			// The same turn read again: a new daemon on the data dir that
			// lost the session file's cursor.
			d.Close()
			if err := os.RemoveAll(filepath.Join(cfg.DataDir, TranscriptsDir)); err != nil {
				t.Fatal(err)
			}
			d2, _ := serve(t, cfg)
			read(d2)
			check(d2, "after the turn was read again")
		})
	}
}
