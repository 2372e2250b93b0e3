package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// parseDetected reads a fixture with ParseFile (so its format is detected)
// and checks what holds for every result.
func parseDetected(t *testing.T, name string, format Format, opts Options) ([]memory.Exchange, Stats) {
	t.Helper()
	if !filepath.IsAbs(name) {
		name = filepath.Join("testdata", name)
	}
	exs, st, err := ParseFile(name, opts)
	if err != nil {
		t.Fatalf("ParseFile(%s): %v", name, err)
	}
	if st.Format != format {
		t.Fatalf("%s read as %q, want %q", name, st.Format, format)
	}
	checkExchanges(t, exs, st)
	return exs, st
}

func summarizeAll(exs []memory.Exchange) []want {
	var got []want
	for _, ex := range exs {
		got = append(got, summarize(ex))
	}
	return got
}

func TestParseCodex(t *testing.T) {
	tests := []struct {
		file  string
		want  []want
		stats Stats // compared: counts, Skipped, session fields
		check func(t *testing.T, exs []memory.Exchange, st Stats)
	}{
		{
			file: "codex.jsonl",
			want: []want{
				{User: "Why are the map tiles blurry on retina screens?", UserTurns: 1,
					Assistant: "I'll check how the renderer picks the tile scale.", Calls: []string{"shell_command", "shell"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "The renderer hard-codes scale = 1, so retina screens get 256px tiles stretched to 512px.",
					Calls: []string{"apply_patch"}, Results: []string{"!shell_command: Exit code: 1", "shell: export const scale = 1;"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "Tiles now follow devicePixelRatio; retina screens load the @2x tiles.",
					Results: []string{"apply_patch: Success. Updated the following"}},
				{User: "Here is a screenshot of the remaining blur\n\n[image]", UserTurns: 2, Calls: []string{"local_shell"}},
				{ToolLoop: true, UserTurns: 2, Assistant: "Only the 256 and 512 folders exist; the @3x tiles for phones are missing.",
					Calls: []string{"web_search"}, Results: []string{"local_shell: 256"}},
			},
			stats: Stats{Exchanges: 5, UserPrompts: 2, ToolLoops: 3, ToolCalls: 5, ToolResults: 4,
				SessionID: "019b0000-aaaa-7000-8000-000000000001", CWD: "/home/dev/src/tiles", Project: "tiles", Entrypoint: "codex_cli_rs"},
			check: func(t *testing.T, exs []memory.Exchange, st Stats) {
				if st.Skipped[SkipInjected] != 4 || st.Summaries != 1 || st.Skipped[SkipDuplicate] != 1 {
					t.Errorf("injected: %v, summaries %d", st.Skipped, st.Summaries)
				}
				// The compaction summary rides on the next response, once.
				for i, ex := range exs {
					want := ""
					if i == 3 {
						want = "Summary: retina tiles fixed by following devicePixelRatio."
					}
					if ex.Summary != want {
						t.Errorf("exchange %d: Summary %q", i+1, ex.Summary)
					}
				}
				first := exs[0]
				if first.Model != "gpt-5-codex" || !first.StartedAt.Equal(time.Date(2026, 1, 10, 20, 28, 0, 0, time.UTC)) ||
					!first.EndedAt.Equal(time.Date(2026, 1, 10, 20, 28, 2, 600e6, time.UTC)) {
					t.Errorf("first exchange: model %q, %v..%v", first.Model, first.StartedAt, first.EndedAt)
				}
				if c := first.ToolCalls[0]; c.ID != "call_A" || c.Input != `{"command":"rg -n devicePixelRatio src","workdir":"/home/dev/src/tiles"}` {
					t.Errorf("tool call %+v", c)
				}
				if in := exs[1].ToolCalls[0].Input; !strings.HasPrefix(in, `{"input":"*** Begin Patch\n`) {
					t.Errorf("custom tool call input %q", in)
				}
				if in := exs[3].ToolCalls[0].Input; in != `{"type":"exec","command":["ls","public/tiles"],"timeout_ms":1000}` {
					t.Errorf("local shell input %q", in)
				}
			},
		},
		{
			file: "codex-exec.jsonl",
			want: []want{
				{User: "Bump the Go toolchain in go.mod to 1.26.", UserTurns: 1, Calls: []string{"shell"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "go.mod is read-only in this sandbox; rerun with --sandbox workspace-write.",
					Results: []string{"!shell: sandbox denied write to go.mod"}},
			},
			stats: Stats{Exchanges: 2, UserPrompts: 1, ToolLoops: 1, ToolCalls: 1, ToolResults: 1,
				SessionID: "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5", CWD: "/private/tmp/ci-job", Project: "ci-job", Entrypoint: "codex_exec", Headless: true},
		},
		{
			file: "codex-legacy.jsonl",
			want: []want{
				{User: "What does the cache flag do?", UserTurns: 1, Calls: []string{"shell"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "--cache keeps rendered pages in memory for 5 minutes; it is on by default.",
					Results: []string{`shell: main.go:12 flag.Bool("cache", `}},
			},
			stats: Stats{Exchanges: 2, UserPrompts: 1, ToolLoops: 1, ToolCalls: 1, ToolResults: 1,
				SessionID: "5973b6c0-94b8-487b-a530-2aeb6098ae0e", CWD: "/Users/dev/legacy-app", Project: "legacy-app"},
			check: func(t *testing.T, exs []memory.Exchange, st Stats) {
				if st.Skipped[SkipBookkeeping] != 3 || st.Skipped[SkipInjected] != 2 {
					t.Errorf("skipped %v", st.Skipped)
				}
			},
		},
		{
			file:  "codex-injected.jsonl",
			stats: Stats{SessionID: "019a0000-0000-7000-8000-00000000000e", CWD: "/home/dev/empty", Project: "empty", Entrypoint: "codex_cli_rs"},
			check: func(t *testing.T, exs []memory.Exchange, st Stats) {
				if why := st.Empty(); !strings.Contains(why, "only injected context") {
					t.Errorf("Empty() = %q", why)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			exs, st := parseDetected(t, tc.file, FormatCodex, Options{})
			if got := summarizeAll(exs); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("exchanges differ:\n got %s\nwant %s", dump(got), dump(tc.want))
			}
			cmp := Stats{Exchanges: st.Exchanges, UserPrompts: st.UserPrompts, ToolLoops: st.ToolLoops, ToolCalls: st.ToolCalls,
				ToolResults: st.ToolResults, SessionID: st.SessionID, CWD: st.CWD, Project: st.Project, Entrypoint: st.Entrypoint, Headless: st.Headless}
			if !reflect.DeepEqual(cmp, tc.stats) {
				t.Errorf("stats:\n got %+v\nwant %+v", cmp, tc.stats)
			}
			if st.Sessions != 1 || st.Skipped[SkipMalformed] != 0 || st.Skipped[SkipUnknownType] != 0 {
				t.Errorf("stats %+v", st)
			}
			if tc.check != nil {
				tc.check(t, exs, st)
			}
		})
	}
}

func TestParseCodexOptions(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("testdata", "codex-legacy.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	exs, st, err := ParseCodex(bytes.NewReader(in), Options{Project: "override", Headless: true})
	if err != nil || st.Project != "override" || !st.Headless || exs[0].Project != "override" || !exs[0].Headless {
		t.Fatalf("%v %+v", err, st)
	}
	// Without a meta id, the session is the caller's.
	noMeta := bytes.Join(bytes.Split(in, []byte("\n"))[1:], []byte("\n"))
	_, st, err = ParseCodex(bytes.NewReader(noMeta), Options{SessionID: "from-name"})
	if err != nil || st.SessionID != "from-name" {
		t.Fatalf("%v %+v", err, st)
	}
}

// TestParseCodexSummaryMessage: without a compacted line, the summary
// message of the rebuilt history is the next response's Summary.
func TestParseCodexSummaryMessage(t *testing.T) {
	in := `{"type":"message","role":"user","content":[{"type":"input_text","text":"Another language model started to solve this problem and produced a summary. Use it to assist with your own analysis:\nThe flaky test reads the wall clock."}]}
{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Freezing the clock in test_app.py fixes it."}]}
`
	exs, st, err := ParseCodex(strings.NewReader(in), Options{})
	if err != nil || len(exs) != 1 || exs[0].Summary != "The flaky test reads the wall clock." || exs[0].User != "" || !exs[0].ToolLoop || st.Summaries != 1 || st.UserPrompts != 0 {
		t.Fatalf("%v %+v %+v", err, exs, st)
	}
}

func TestParseCodexInvalid(t *testing.T) {
	long := `{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` +
		strings.Repeat("x", 200) + `"}]}}`
	ok := `{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"token_count"}}`
	_, _, err := ParseCodex(strings.NewReader(ok+"\n"+long+"\n"), Options{MaxLineBytes: 120})
	if !errors.Is(err, ErrLineTooLong) || !errors.Is(err, memory.ErrInvalid) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("long line: %v", err)
	}
	_, _, err = ParseCodex(strings.NewReader("not json\nnor this\n"), Options{})
	if !errors.Is(err, ErrNotTranscript) {
		t.Fatalf("not JSON: %v", err)
	}
	// Malformed lines are skipped and counted; bad UTF-8 is replaced.
	exs, st, err := ParseCodex(strings.NewReader(ok+"\n{\"trunc\n"+
		`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"caf`+"\xff"+`"}]}}`+"\n"+
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok\u0000"}]}}`+"\n"+
		`{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"brand_new_item"}}`+"\n"+
		`{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"message","role":"user","content":7}}`+"\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkExchanges(t, exs, st)
	if len(exs) != 1 || exs[0].User != "caf\uFFFD" || exs[0].Assistant != "ok" || st.Skipped[SkipMalformed] != 2 || st.Skipped[SkipUnknownType] != 1 || st.InvalidUTF8 != 2 {
		t.Fatalf("%+v %+v", exs, st)
	}
}

func FuzzParseCodex(f *testing.F) {
	seedLines(f, "codex*.jsonl")
	f.Fuzz(func(t *testing.T, in []byte) {
		exs, st, err := ParseCodex(bytes.NewReader(in), Options{MaxLineBytes: 1 << 16})
		checkFuzzed(t, exs, st, err)
	})
}

// seedLines adds each fixture matching pattern, and each of its lines, to
// a fuzzer's corpus.
func seedLines(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("testdata", pattern))
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line)
		}
	}
}

// checkFuzzed asserts what holds for any input: an error is ErrInvalid, the
// Exchanges are well formed, the counts add up.
func checkFuzzed(t *testing.T, exs []memory.Exchange, st Stats, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, memory.ErrInvalid) {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	checkExchanges(t, exs, st)
	skipped := 0
	for _, n := range st.Skipped {
		if n < 0 {
			t.Fatalf("negative skip count: %v", st.Skipped)
		}
		skipped += n
	}
	if skipped > st.Lines {
		t.Fatalf("skipped %d of %d lines", skipped, st.Lines)
	}
	for _, ex := range exs {
		if err := validExchange(ex); err != nil {
			t.Fatalf("exchange %d: %v", ex.Turn, err)
		}
	}
}

// validExchange checks that an Exchange's texts are valid UTF-8 without NUL.
func validExchange(ex memory.Exchange) error {
	texts := []string{ex.User, ex.Assistant, ex.SessionID, ex.Project, ex.Model}
	for _, c := range ex.ToolCalls {
		texts = append(texts, c.ID, c.Name, c.Input)
	}
	for _, r := range ex.ToolResults {
		texts = append(texts, r.ToolUseID, r.Name, r.Content)
	}
	for _, a := range ex.Answers {
		texts = append(texts, a.Question, a.Answer)
		// What ingest.Validate asks of an answer: its text, and a
		// question unless it is a refusal's words.
		if strings.TrimSpace(a.Answer) == "" || a.Refused != (strings.TrimSpace(a.Question) == "") {
			return fmt.Errorf("answer %+v: an answer needs its text, and a question unless refused", a)
		}
	}
	for _, s := range texts {
		if !memory.ValidUTF8(s) {
			return errors.New("invalid UTF-8 or NUL in " + s)
		}
	}
	return nil
}
