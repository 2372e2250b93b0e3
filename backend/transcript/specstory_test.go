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
					Assistant: "I'll look at the uploader first.", Calls: []string{"Listed directory", "Read file"}},
				{ToolLoop: true, UserTurns: 1,
					Assistant: "The retry loop gives up after the first failure because `maxAttempts` defaults to 1; a blip ends the upload.",
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
			// An older export's bare tool uses between "---" lines: a rule
			// fetched (whose fenced block holds indented fences that close
			// nothing), files read, errors, terminal commands with their
			// output (one cut inside a block of its own), an edit.
			file: "2025-05-02_09-10-bare-tool-lines.md",
			want: []want{
				{User: "fix the failing cache test", UserTurns: 1, Assistant: "I'll start with the project rules.",
					Calls: []string{"Fetch rules", "Read file", "Read file", "Read file", "Listed directory", "Terminal", "Terminal", "Cancelled", "terminal"}},
				{ToolLoop: true, UserTurns: 1,
					Assistant: "The cache keeps expired entries until the next write, so `size()` counts them; the test reads `size()` right after expiry.",
					Calls:     []string{"Edit"},
					Results: []string{"Fetch rules: **Every change goes through th", "!Read file: Could not find file 'src/cache",
						"!Listed directory: Could not resolve URI: Error: ", "Terminal: FAIL src/cache/store.test.ts", "Terminal: # Cache",
						"!Cancelled: Cancelled", "!terminal: Model provided invalid argumen"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "`size()` now skips expired entries and the cache test passes.",
					Results: []string{"Edit: ```diff"}},
			},
			check: func(t *testing.T, _ []want, st Stats) {
				if st.UserPrompts != 1 || st.ToolCalls != 10 {
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
	f.Add([]byte("_**Assistant**_\nRead file: a.go\n---\nCancelled\n---\n### Rule: r\n```markdown\n  ```bash\n```\n---\n```bash\nls\n```\n\n```\n```json\n```\n\n---\nok\n"))
	f.Add([]byte("_**Assistant**_\n---\n```diff\n- a\n+ b\n```\n---\n````\n```\n````\n~~~\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		exs, st, err := ParseSpecStory(bytes.NewReader(in), Options{MaxLineBytes: 1 << 16, Location: time.UTC})
		checkFuzzed(t, exs, st, err)
	})
}

// TestMDFence: which lines open and close a fenced block.
func TestMDFence(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		in    []bool // after each line
	}{
		{"plain", []string{"```go", "x := 1", "```", "text"}, []bool{true, true, false, false}},
		{"tildes", []string{"~~~", "```", "~~~~"}, []bool{true, true, false}},
		{"info string does not close", []string{"```markdown", "```bash", "make", "```", "more", "```"}, []bool{true, true, true, true, true, false}},
		{"indented fences inside", []string{"```markdown", "- run:", "     ```bash", "     make", "     ```", "     ```bash", "```"},
			[]bool{true, true, true, true, true, true, false}},
		{"nested in output", []string{"```", "$ head README.md", "```markdown", "- [ ] a task", "```", "## Tasks", "```", "text"},
			[]bool{true, true, true, true, true, true, false, false}},
		{"bare indented line inside", []string{"```markdown", "     ```", "x", "     ```", "```"}, []bool{true, true, true, true, false}},
		{"indented opening", []string{"   ```bash", "   make", "   ```", "after"}, []bool{true, true, false, false}},
		{"shorter run does not close", []string{"````", "```", "````"}, []bool{true, true, false}},
		{"inline code is no fence", []string{"```x``` is inline", "text"}, []bool{false, false}},
		{"two backticks", []string{"``x``"}, []bool{false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f mdFence
			for i, l := range tc.lines {
				f.line(l)
				if f.in() != tc.in[i] {
					t.Fatalf("after line %d %q: in %v, want %v", i, l, f.in(), tc.in[i])
				}
			}
		})
	}
}
