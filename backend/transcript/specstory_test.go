package transcript

import (
	"bytes"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSpecStory(t *testing.T) {
	history := filepath.Join(outsideRepo(t, "spec-repo"), ".specstory", "history")
	tests := []struct {
		file  string
		opts  Options
		want  []want
		check func(t *testing.T, exs []want, st Stats)
	}{
		{
			file: "2025-04-26_22-29-retry-policy.md",
			want: []want{
				{User: "why do uploads fail after a network blip?", UserTurns: 1,
					Assistant: "I'll look at the uploader first.", Calls: []string{"Listed directory"}},
				{ToolLoop: true, UserTurns: 1,
					Assistant: "Read file: src/upload/retry.ts\n\nThe retry loop gives up after the first failure because `maxAttempts` defaults to 1; a blip ends the upload.",
					Results:   []string{"Listed directory: | Name |"}},
				{User: "make it retry 3 times with backoff", UserTurns: 2,
					Assistant: "```typescript:src/upload/retry.ts\nexport const maxAttempts = 3;\n---\n```",
					Calls:     []string{"Grep search"}, Results: []string{"Grep search: | File | Line | Match |"}},
			},
			check: func(t *testing.T, _ []want, st Stats) {
				if st.SessionID != "2025-04-26_22-29-retry-policy" || st.Skipped[SkipEmpty] != 1 || st.UserPrompts != 2 {
					t.Errorf("stats %+v", st)
				}
			},
		},
		{
			file: "2026-07-13_13-40-49Z-fix-flaky.md",
			want: []want{
				{User: "fix the flaky test in app.py", UserTurns: 1, Assistant: "I'll run the suite first.", Calls: []string{"Bash"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "The failure comes from test_clock, which reads the wall clock; freezing time fixes it.",
					Calls: []string{"Edit"}, Results: []string{"Bash: Run the suite"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "test_clock now uses a frozen time and passes 20 runs in a row.",
					Results: []string{"Edit: ```diff"}},
			},
			check: func(t *testing.T, _ []want, st Stats) {
				if st.SessionID != "5c7d5c23-0000-4000-8000-00000000abcd" || st.UserPrompts != 2 || st.Skipped[SkipSidechain] != 1 {
					t.Errorf("stats %+v", st)
				}
			},
		},
		{
			file: "2026-07-13_13-40-49Z-fix-flaky.md",
			opts: Options{Sidechains: true},
			want: []want{
				{User: "fix the flaky test in app.py", UserTurns: 1, Assistant: "I'll run the suite first.", Calls: []string{"Bash"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "The failure comes from test_clock, which reads the wall clock; freezing time fixes it.",
					Calls: []string{"Edit"}, Results: []string{"Bash: Run the suite"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "Subagent: the only other wall-clock read is in conftest.py.",
					Results: []string{"Edit: ```diff"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "test_clock now uses a frozen time and passes 20 runs in a row."},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tc.opts.Location = time.UTC
			exs, st := parseDetected(t, filepath.Join(history, tc.file), FormatSpecStory, tc.opts)
			got := summarizeAll(exs)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("exchanges differ:\n got %s\nwant %s", dump(got), dump(tc.want))
			}
			if st.Project != "spec-repo" || st.Sessions != 1 {
				t.Errorf("stats %+v", st)
			}
			if tc.check != nil {
				tc.check(t, got, st)
			}
		})
	}
}

// TestParseSpecStoryTimes: role lines' times (UTC) when they have them,
// else the title's (local).
func TestParseSpecStoryTimes(t *testing.T) {
	history := filepath.Join("testdata", "spec-repo", ".specstory", "history")
	exs, _, err := ParseFile(filepath.Join(history, "2026-07-13_13-40-49Z-fix-flaky.md"), Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if !exs[0].StartedAt.Equal(time.Date(2026, 7, 13, 13, 40, 49, 0, time.UTC)) || !exs[0].EndedAt.Equal(time.Date(2026, 7, 13, 13, 41, 1, 0, time.UTC)) ||
		exs[0].Model != "claude-opus-4-6" || exs[2].Model != "claude-opus-4-6" {
		t.Errorf("first exchange %v..%v %q", exs[0].StartedAt, exs[0].EndedAt, exs[0].Model)
	}
	loc := time.FixedZone("UTC-4", -4*3600)
	exs, _, err = ParseFile(filepath.Join(history, "2025-04-26_22-29-retry-policy.md"), Options{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	if !exs[0].StartedAt.Equal(time.Date(2025, 4, 26, 22, 29, 15, 0, time.UTC)) {
		t.Errorf("title time %v", exs[0].StartedAt)
	}
	// An older export's US-style title.
	in := "## SpecStory\n\n## Chat (10/16/2024, 10:22:51 PM)\n\n_**User**_\n\nhi\n\n---\n\n_**Assistant**_\n\nThe answer is 42.\n"
	exs, _, err = ParseSpecStory(strings.NewReader(in), Options{Location: time.UTC})
	if err != nil || len(exs) != 1 || !exs[0].StartedAt.Equal(time.Date(2024, 10, 16, 22, 22, 51, 0, time.UTC)) {
		t.Fatalf("%v %+v", err, exs)
	}
}

func TestParseSpecStoryUnterminated(t *testing.T) {
	// A block that never closes is kept as text; a line too long is an error naming it.
	in := "_**User**_\n\nq\n\n---\n\n_**Assistant**_\n\n<details><summary>Read file</summary>\nbody never closed\n"
	exs, st, err := ParseSpecStory(strings.NewReader(in), Options{})
	if err != nil || len(exs) != 1 || !strings.Contains(exs[0].Assistant, "body never closed") {
		t.Fatalf("%v %+v %+v", err, exs, st)
	}
	_, _, err = ParseSpecStory(strings.NewReader("_**User**_\n"+strings.Repeat("z", 64)+"\n"), Options{MaxLineBytes: 32})
	if !errors.Is(err, ErrLineTooLong) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("%v", err)
	}
}

func FuzzParseSpecStory(f *testing.F) {
	seedLines(f, filepath.Join("spec-repo", ".specstory", "history", "*.md"))
	f.Add([]byte("_**User**_\nq\n---\n_**Assistant**_\n<tool-use data-tool-name=\"x\"><details><summary>s</summary>b</details></tool-use>\nafter\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		exs, st, err := ParseSpecStory(bytes.NewReader(in), Options{MaxLineBytes: 1 << 16, Location: time.UTC})
		checkFuzzed(t, exs, st, err)
	})
}
