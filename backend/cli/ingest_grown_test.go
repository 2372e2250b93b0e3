package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A history that grew since it was ingested (a session file read when
// half of it was written, then again whole) ends as one whole ingest of
// it: the same live memories. The first ingest of the cut files decides
// their turns; the second replays those (their turn marks) and decides
// the new ones, which must read what the replayed turns said as a whole
// ingest reads it (held.go).

// grownChange is how the live memories of a grown history's ingests
// differ from one whole ingest's, by text.
type grownChange struct {
	whole, grown int
	// onlyWhole and onlyGrown are the live texts of one store only.
	onlyWhole, onlyGrown []string
}

// same reports whether both stores hold the same live texts.
func (c grownChange) same() bool {
	return len(c.onlyWhole) == 0 && len(c.onlyGrown) == 0
}

func (c grownChange) String() string {
	return fmt.Sprintf("whole %d live memories, grown %d: %d only in whole %q, %d only in grown %q", c.whole, c.grown, len(c.onlyWhole), c.onlyWhole, len(c.onlyGrown), c.onlyGrown)
}

// userPromptStart reports whether line i of a history's lines opens a
// user prompt: SpecStory's "_**User**_" heading, Aider's first "#### "
// line of a run of them, a JSON line of a Claude Code or Codex transcript
// that holds the user's words (jsonPrompt).
func userPromptStart(lines []string, i int) bool {
	l := lines[i]
	if strings.HasPrefix(l, "_**User**_") {
		return true
	}
	if strings.HasPrefix(l, "{") {
		return jsonPrompt(l)
	}
	return strings.HasPrefix(l, "#### ") && (i == 0 || !strings.HasPrefix(lines[i-1], "#### "))
}

// jsonPrompt reports whether a transcript line holds a user prompt: a
// Claude Code "user" record whose content is text (not a tool result, not
// a meta record), or a Codex user message that is not the environment or
// instructions block Codex sends first. Tags (a task notification, a
// command's output) are no prompt of the user's.
func jsonPrompt(line string) bool {
	var rec struct {
		Type    string `json:"type"`
		IsMeta  bool   `json:"isMeta"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Payload struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"payload"`
	}
	if json.Unmarshal([]byte(line), &rec) != nil {
		return false
	}
	words := func(s string) bool {
		s = strings.TrimSpace(s)
		return s != "" && !strings.HasPrefix(s, "<")
	}
	switch {
	case rec.Type == "user" && !rec.IsMeta:
		var s string
		if json.Unmarshal(rec.Message.Content, &s) == nil {
			return words(s)
		}
		var blocks []struct{ Type, Text string }
		if json.Unmarshal(rec.Message.Content, &blocks) != nil || len(blocks) == 0 {
			return false
		}
		return blocks[0].Type == "text" && words(blocks[0].Text)
	case rec.Type == "response_item" && rec.Payload.Type == "message" && rec.Payload.Role == "user":
		return len(rec.Payload.Content) > 0 && words(rec.Payload.Content[0].Text)
	}
	return false
}

// cutAtMiddlePrompt returns a history's text up to its middle user
// prompt (userPromptStart), that prompt left out; ok is false when it has
// fewer than two prompts.
func cutAtMiddlePrompt(text string) (string, bool) {
	lines := strings.SplitAfter(text, "\n")
	var starts []int
	for i := range lines {
		if userPromptStart(lines, i) {
			starts = append(starts, i)
		}
	}
	if len(starts) < 2 {
		return "", false
	}
	return strings.Join(lines[:starts[len(starts)/2]], ""), true
}

// liveTexts returns the texts of the store's live memories (export
// leaves the trash out; superseded ones are left out here), sorted.
func liveTexts(t *testing.T, dd string) []string {
	t.Helper()
	var out []string
	for _, m := range exportRecords(t, dd) {
		if s, _ := m["superseded_by"].(string); s != "" {
			continue
		}
		out = append(out, m["text"].(string))
	}
	slices.Sort(out)
	return out
}

// grownIngest copies the history files into one folder (the project's),
// ingests each cut at its middle user prompt and then whole into one
// store, each whole into another, and returns how their live memories
// differ.
func grownIngest(t *testing.T, files []string) grownChange {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "histories")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var paths []string
	whole := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		paths = append(paths, p)
		whole[p] = b
	}
	ingest := func(dd string) {
		t.Helper()
		if code, _, errs := run(t, ctx, "", append([]string{"ingest", dd}, paths...)...); code != 0 {
			t.Fatalf("ingest: exit %d %s", code, errs)
		}
	}
	write := func(cut bool) {
		t.Helper()
		for _, p := range paths {
			b := whole[p]
			if cut {
				if c, ok := cutAtMiddlePrompt(string(b)); ok {
					b = []byte(c)
				}
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	wholeDir := "--data-dir=" + isolate(t)
	write(false)
	ingest(wholeDir)
	grownDir := "--data-dir=" + isolate(t)
	write(true)
	ingest(grownDir)
	write(false)
	ingest(grownDir)
	a, b := liveTexts(t, wholeDir), liveTexts(t, grownDir)
	c := grownChange{whole: len(a), grown: len(b)}
	for _, s := range a {
		if _, ok := slices.BinarySearch(b, s); !ok {
			c.onlyWhole = append(c.onlyWhole, s)
		}
	}
	for _, s := range b {
		if _, ok := slices.BinarySearch(a, s); !ok {
			c.onlyGrown = append(c.onlyGrown, s)
		}
	}
	return c
}

// TestCutAtMiddlePrompt: SpecStory and Aider histories are cut before
// their middle user prompt; a history of one prompt is not cut.
func TestCutAtMiddlePrompt(t *testing.T) {
	tests := []struct {
		name, text, want string
		ok               bool
	}{
		{"specstory", "# T\n\n_**User**_\n\na\n\n---\n\n_**User**_\n\nb\n\n---\n\n_**User**_\n\nc\n", "# T\n\n_**User**_\n\na\n\n---\n\n", true},
		{"aider, a prompt of two lines", "# aider chat started\n\n#### one\n#### more\n\nok\n\n#### two\n\nok\n", "# aider chat started\n\n#### one\n#### more\n\nok\n\n", true},
		{"one prompt", "_**User**_\n\na\n", "", false},
		{"claude code, a tool result and a notification are no prompt",
			`{"type":"user","message":{"content":"one"}}` + "\n" + `{"type":"assistant","message":{"content":[]}}` + "\n" +
				`{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}` + "\n" +
				`{"type":"user","message":{"content":"<task-notification>x</task-notification>"}}` + "\n" +
				`{"type":"user","message":{"content":[{"type":"text","text":"two"}]}}` + "\n" +
				`{"type":"user","isMeta":true,"message":{"content":"meta"}}` + "\n" +
				`{"type":"user","message":{"content":"three"}}` + "\n",
			`{"type":"user","message":{"content":"one"}}` + "\n" + `{"type":"assistant","message":{"content":[]}}` + "\n" +
				`{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}` + "\n" +
				`{"type":"user","message":{"content":"<task-notification>x</task-notification>"}}` + "\n", true},
		{"codex, the environment block is no prompt",
			`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x"}]}}` + "\n" +
				`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}` + "\n" +
				`{"type":"event_msg","payload":{"type":"user_message","message":"one"}}` + "\n" +
				`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"two"}]}}` + "\n",
			`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x"}]}}` + "\n" +
				`{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"one"}]}}` + "\n" +
				`{"type":"event_msg","payload":{"type":"user_message","message":"one"}}` + "\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cutAtMiddlePrompt(tt.text)
			if got != tt.want || ok != tt.ok {
				t.Errorf("cutAtMiddlePrompt = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestIngestGrownFixture: a SpecStory session written for this test
// whose fourth turn only repeats, in its list, a command its second turn
// gave (dropped as said in an earlier turn), ingested cut before its
// third prompt and then whole, ends as ingested whole once. At 2308138
// the replayed second turn left nothing in the session's record of what
// it said, and the grown run stored the repeated command.
func TestIngestGrownFixture(t *testing.T) {
	c := grownIngest(t, []string{filepath.Join("testdata", "grown", "2026-03-09_14-00-quarterly-export.md")})
	if c.whole == 0 {
		t.Fatalf("the whole ingest stored nothing: %s", c)
	}
	if !c.same() {
		t.Errorf("the grown history differs from one whole ingest: %s", c)
	}
}

// TestIngestGrownShared measures the same on every shared history (Claude
// Code, Codex, SpecStory and Aider) under /work/shared/data (or $MEMTRAY_SHARED/data), per
// source; it runs with MEMTRAY_EVAL_LONG set (minutes), skips without
// the files, and reports what differs (a turn of an ended session is not
// revised by a later run's turns: not asserted).
func TestIngestGrownShared(t *testing.T) {
	if testing.Short() || os.Getenv("MEMTRAY_EVAL_LONG") == "" {
		t.Skip("set MEMTRAY_EVAL_LONG=1 to ingest every shared history cut, then whole (minutes)")
	}
	for _, src := range []struct{ name, glob string }{
		{"claude-code", "data/claude-code-transcripts/*.jsonl"},
		{"codex", "data/agent-sessions/codex/*.jsonl"},
		{"cursor", "data/agent-sessions/cursor/*.md"},
		{"aider", "data/agent-sessions/aider/*.md"},
	} {
		files := sharedSessionFiles(t, src.name, src.glob)
		if len(files) == 0 {
			continue
		}
		t.Run(src.name, func(t *testing.T) {
			c := grownIngest(t, files)
			t.Logf("%s: %s", src.name, c)
		})
	}
}
