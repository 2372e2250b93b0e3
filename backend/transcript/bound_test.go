package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
)

// TestReadersCutOversize: each reader, given a session whose tool result
// is larger than the write pipeline takes whole (several MiB, as a build
// log or a dumped file can be), gives every Exchange it gives without the
// blob, the blob's result cut with a marker, and every Exchange passes
// ingest.Validate: one huge result never costs the session.
func TestReadersCutOversize(t *testing.T) {
	blob := func(sep string) string { // about 5 MiB, lines joined by sep
		return strings.Repeat("build output line that goes on and on"+sep, 5<<20/40)
	}
	cases := []struct {
		name, file string
		format     Format
		inject     func(s string) string
	}{
		{"claude code", "basic.jsonl", FormatClaudeCode, func(s string) string {
			return strings.Replace(s, `"content":"Exit code 1\n`, `"content":"Exit code 1\n`+blob(`\n`), 1)
		}},
		{"codex", "codex.jsonl", FormatCodex, func(s string) string {
			return strings.Replace(s, `"output":"Exit code: 1\n`, `"output":"Exit code: 1\n`+blob(`\n`), 1)
		}},
		{"aider", filepath.Join("aider-repo", ".aider.chat.history.md"), FormatAider, func(s string) string {
			return strings.Replace(s, "> Applied edit to Makefile  \n", "> Applied edit to Makefile  \n"+strings.TrimSuffix("> "+blob("  \n> "), "> "), 1)
		}},
		{"specstory", filepath.Join("spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"), FormatSpecStory, func(s string) string {
			return strings.Replace(s, "`retry.ts` |\n", "`retry.ts` |\n"+blob("\n"), 1)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			big := tc.inject(string(raw))
			if len(big) < len(raw)+4<<20 {
				t.Fatal("the fixture's tool result was not found")
			}
			opts := Options{SessionID: "s", Project: "p"}
			want, _, err := ParseBytes(tc.file, raw, tc.format, opts)
			if err != nil {
				t.Fatal(err)
			}
			got, st, err := ParseBytes(tc.file, []byte(big), tc.format, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || st.Cut != 1 {
				t.Fatalf("%d exchanges (want %d), %d cut (want 1)", len(got), len(want), st.Cut)
			}
			marked := 0
			for i, ex := range got {
				if err := ingest.Validate(ex); err != nil {
					t.Errorf("exchange %d: %v", i+1, err)
				}
				if ex.Assistant != want[i].Assistant || ex.User != want[i].User {
					t.Errorf("exchange %d: its texts changed", i+1)
				}
				for _, r := range ex.ToolResults {
					if strings.Contains(r.Content, "bytes cut by memtray") {
						marked++
						if len(r.Content) > memory.MaxToolResultBytes {
							t.Errorf("exchange %d: a result of %d bytes", i+1, len(r.Content))
						}
					}
				}
			}
			if marked != 1 {
				t.Errorf("%d results say they were cut, want 1", marked)
			}
		})
	}
}
