package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestDetect(t *testing.T) {
	files := map[string]Format{
		"basic.jsonl":          FormatClaudeCode,
		"sidechain.jsonl":      FormatClaudeCode,
		"errors.jsonl":         FormatClaudeCode,
		"codex.jsonl":          FormatCodex,
		"codex-legacy.jsonl":   FormatCodex,
		"codex-injected.jsonl": FormatCodex,
		filepath.Join("aider-repo", ".aider.chat.history.md"):                                   FormatAider,
		filepath.Join("spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"): FormatSpecStory,
	}
	for name, want := range files {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Detect(b); got != want || err != nil {
			t.Errorf("%s: %q %v, want %q", name, got, err, want)
		}
	}
	tests := []struct {
		in   string
		want Format
	}{
		{`{"type":"summary","summary":"x","leafUuid":"u"}`, FormatClaudeCode},
		{`{"record_type":"state"}`, FormatCodex},
		{`{"id":"x","timestamp":"2025-05-01T00:00:00Z","instructions":null}`, FormatCodex},
		{`{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}`, FormatCodex},
		// A first line cut by the head bound is known by its keys.
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"` + strings.Repeat("a", detectHead), FormatCodex},
		{"\n\n# aider chat started at 2025-01-01 00:00:00\n", FormatAider},
		{"## SpecStory\n\n## Title (10/16/2024, 10:22:51 PM)\n", FormatSpecStory},
		{"\xef\xbb\xbf_**User (2026-01-01 00:00Z)**_\n\nhi\n", FormatSpecStory},
		{`{"user":"which port","assistant":"8089"}`, ""},
		{"# Notes\n\nJust a document.\n", ""},
		{"", ""},
		{"   \n", ""},
	}
	for _, tc := range tests {
		got, err := Detect([]byte(tc.in))
		if got != tc.want || (tc.want == "") != errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Detect(%.60q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if err != nil && !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("error %v is not ErrInvalid", err)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"claude-code": FormatClaudeCode, "Claude": FormatClaudeCode, "codex": FormatCodex,
		"aider": FormatAider, "specstory": FormatSpecStory, "cursor": FormatSpecStory} {
		if got, err := ParseFormat(in); got != want || err != nil {
			t.Errorf("ParseFormat(%q) = %q %v", in, got, err)
		}
	}
	if _, err := ParseFormat("windsurf"); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("unknown format: %v", err)
	}
	if _, _, err := ParseAs(strings.NewReader(""), "windsurf", Options{}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("ParseAs unknown format: %v", err)
	}
}

// TestParseFileErrors: a file of no known format, a missing file.
func TestParseFileErrors(t *testing.T) {
	dir := t.TempDir()
	doc := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(doc, []byte("# Notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ParseFile(doc, Options{}); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), doc) {
		t.Errorf("document: %v", err)
	}
	if _, _, err := ParseFile(filepath.Join(dir, "missing.jsonl"), Options{}); err == nil {
		t.Error("missing file: no error")
	}
	// Forcing a format reads the file as that format.
	_, st, err := ParseFileAs(doc, FormatCodex, Options{})
	if !errors.Is(err, ErrNotTranscript) || !strings.Contains(err.Error(), doc) || st.Format != FormatCodex {
		t.Errorf("forced: %v %+v", err, st)
	}
}

func TestStatsEmpty(t *testing.T) {
	tests := []struct {
		st   Stats
		want string
	}{
		{Stats{Exchanges: 1}, ""},
		{Stats{}, "the file is empty"},
		{Stats{Lines: 4, Skipped: map[string]int{SkipSidechain: 4}}, "only subagent"},
		{Stats{Lines: 2, UserPrompts: 1}, "1 user prompt(s) but no model response"},
		{Stats{Lines: 3, Skipped: map[string]int{SkipInjected: 2, SkipBookkeeping: 1}}, "only injected context (2 line(s)"},
		{Stats{Lines: 3, Skipped: map[string]int{SkipBookkeeping: 3}}, "no user turn and no model response"},
	}
	for _, tc := range tests {
		got := tc.st.Empty()
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.st, got, tc.want)
		}
	}
}

func FuzzDetect(f *testing.F) {
	seedLines(f, "*.jsonl")
	f.Add([]byte("# aider chat started at 2025-01-01 00:00:00\n"))
	f.Add([]byte("_**User**_\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		format, err := Detect(in)
		if err != nil {
			if format != "" || !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("%q %v", format, err)
			}
			return
		}
		exs, st, err := ParseAs(strings.NewReader(string(in)), format, Options{MaxLineBytes: 1 << 16})
		checkFuzzed(t, exs, st, err)
	})
}

func TestSessionIDFromPath(t *testing.T) {
	for in, want := range map[string]string{
		"/home/me/.claude/projects/-home-me-src-api/5f1c0a.jsonl":                                  "5f1c0a",
		"/home/me/.codex/sessions/2025/10/31/rollout-2025-10-31T19-02-58-c61729d4-da6d-46a4.jsonl": "c61729d4-da6d-46a4",
		"repo/.specstory/history/2025-04-26_22-29-retry-policy.md":                                 "2025-04-26_22-29-retry-policy",
		"rollout-short.jsonl": "rollout-short",
		"-":                   "-",
	} {
		if got := SessionIDFromPath(in); got != want {
			t.Errorf("SessionIDFromPath(%q) = %q, want %q", in, got, want)
		}
	}
}
