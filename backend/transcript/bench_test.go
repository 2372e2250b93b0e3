package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reader benchmarks read synthetic sessions of growing size (1x, 4x,
// 16x) in the shapes that have made a reader super-linear: many
// exchanges in one session, one huge tool result, one long answer or
// block of many lines. Linear readers take about 4x the time per step:
//
//	go test -run '^$' -bench Readers -benchtime 3x ./backend/transcript/
//
// and compare the ns/op of the sizes of one shape.

// benchSizes are the growth factors of every shape.
var benchSizes = []int{1, 4, 16}

// benchCase builds the input of one shape at growth factor k.
type benchCase struct {
	name   string
	format Format
	file   string
	build  func(b *testing.B, raw string, k int) string
	// subagents: the number of subagent files beside the session (per k).
	subagents int
}

func benchFixture(b *testing.B, file string) string {
	raw, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		b.Fatal(err)
	}
	return string(raw)
}

// benchRepeat repeats a JSONL session n times, its ids made distinct per
// copy (a line whose uuid was seen is a duplicate).
func benchRepeat(raw string, n int) string {
	var sb strings.Builder
	for i := range n {
		s := strings.ReplaceAll(raw, `"uuid":"`, fmt.Sprintf(`"uuid":"c%d-`, i))
		s = strings.ReplaceAll(s, `"id":"msg`, fmt.Sprintf(`"id":"c%d-msg`, i))
		sb.WriteString(s)
	}
	return sb.String()
}

func benchInject(b *testing.B, raw, at, blob string) string {
	if !strings.Contains(raw, at) {
		b.Fatalf("%q not in the fixture", at)
	}
	return strings.Replace(raw, at, at+blob, 1)
}

// benchLines is n lines of tool output joined by sep.
func benchLines(n int, sep string) string {
	return strings.Repeat("build output line that goes on and on"+sep, n)
}

var benchCases = []benchCase{
	{name: "claude/exchanges", format: FormatClaudeCode, file: "basic.jsonl", build: func(b *testing.B, raw string, k int) string {
		return benchRepeat(raw, 200*k)
	}},
	{name: "claude/bigresult", format: FormatClaudeCode, file: "basic.jsonl", build: func(b *testing.B, raw string, k int) string {
		return benchInject(b, raw, `"content":"Exit code 1\n`, benchLines(4000*k, `\n`))
	}},
	{name: "claude/subagents", format: FormatClaudeCode, file: "subsess.jsonl", subagents: 8, build: func(b *testing.B, raw string, k int) string {
		return benchRepeat(raw, 20*k)
	}},
	{name: "codex/exchanges", format: FormatCodex, file: "codex.jsonl", build: func(b *testing.B, raw string, k int) string {
		return strings.Repeat(raw, 100*k)
	}},
	{name: "codex/bigresult", format: FormatCodex, file: "codex.jsonl", build: func(b *testing.B, raw string, k int) string {
		return benchInject(b, raw, `"output":"Exit code: 1\n`, benchLines(4000*k, `\n`))
	}},
	{name: "aider/chats", format: FormatAider, file: filepath.Join("aider-repo", ".aider.chat.history.md"), build: func(b *testing.B, raw string, k int) string {
		return strings.Repeat(raw, 100*k)
	}},
	{name: "aider/bigoutput", format: FormatAider, file: filepath.Join("aider-repo", ".aider.chat.history.md"), build: func(b *testing.B, raw string, k int) string {
		return benchInject(b, raw, "> Applied edit to Makefile  \n", strings.TrimSuffix("> "+benchLines(4000*k, "  \n> "), "> "))
	}},
	{name: "aider/longanswer", format: FormatAider, file: filepath.Join("aider-repo", ".aider.chat.history.md"), build: func(b *testing.B, raw string, k int) string {
		i := strings.Index(raw, "\n\n#### ")
		if i < 0 {
			b.Fatal("no prompt in the fixture")
		}
		// A long answer right before the second prompt.
		return raw[:i] + "\n" + benchLines(4000*k, "\n") + raw[i:]
	}},
	{name: "specstory/sections", format: FormatSpecStory, file: filepath.Join("spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"), build: func(b *testing.B, raw string, k int) string {
		i := strings.Index(raw, "_**User**_")
		if i < 0 {
			b.Fatal("no user section in the fixture")
		}
		return raw[:i] + strings.Repeat(raw[i:]+"\n---\n\n", 100*k)
	}},
	{name: "specstory/bigblock", format: FormatSpecStory, file: filepath.Join("spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"), build: func(b *testing.B, raw string, k int) string {
		return benchInject(b, raw, "`retry.ts` |\n", benchLines(4000*k, "\n"))
	}},
	{name: "specstory/longtext", format: FormatSpecStory, file: filepath.Join("spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"), build: func(b *testing.B, raw string, k int) string {
		i := strings.LastIndex(raw, "_**Assistant**_")
		if i < 0 {
			b.Fatal("no assistant section in the fixture")
		}
		i += len("_**Assistant**_\n")
		return raw[:i] + "\n" + benchLines(4000*k, "\n") + raw[i:]
	}},
}

func BenchmarkReaders(b *testing.B) {
	for _, bc := range benchCases {
		raw := benchFixture(b, bc.file)
		for _, k := range benchSizes {
			data := bc.build(b, raw, k)
			b.Run(fmt.Sprintf("%s/x%d", bc.name, k), func(b *testing.B) {
				path := ""
				if bc.subagents > 0 {
					path = benchSubagents(b, data, bc.subagents*k)
				}
				b.SetBytes(int64(len(data)))
				b.ResetTimer()
				for range b.N {
					var err error
					if path != "" {
						_, _, err = ParseFileAs(path, bc.format, Options{Sidechains: true})
					} else {
						_, _, err = ParseBytes(bc.file, []byte(data), bc.format, Options{SessionID: "s", Project: "p"})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// benchSubagents writes a session file and n subagent files beside it (a
// copy of the fixture's subagent file each) and returns the session's path.
func benchSubagents(b *testing.B, session string, n int) string {
	src, err := filepath.Glob(filepath.Join("testdata", "subsess", "subagents", "agent-*.jsonl"))
	if err != nil || len(src) == 0 {
		b.Fatal("no subagent file in the fixture")
	}
	agent, err := os.ReadFile(src[0])
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(session), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "s", "subagents"), 0o700); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		f := filepath.Join(dir, "s", "subagents", fmt.Sprintf("agent-b%04d.jsonl", i))
		if err := os.WriteFile(f, []byte(benchRepeat(string(agent), 1)), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return path
}
