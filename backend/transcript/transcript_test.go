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
	"unicode/utf8"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
)

// want is the part of an Exchange a fixture test compares.
type want struct {
	User      string
	Assistant string
	ToolLoop  bool
	UserTurns int
	Error     bool
	Calls     []string // tool names
	Results   []string // "name: content" (its first line, at most 30 runes), "!" before an error
}

func summarize(ex memory.Exchange) want {
	w := want{User: ex.User, Assistant: ex.Assistant, ToolLoop: ex.ToolLoop, UserTurns: ex.UserTurns, Error: ex.Error}
	for _, c := range ex.ToolCalls {
		w.Calls = append(w.Calls, c.Name)
	}
	for _, r := range ex.ToolResults {
		c, _, _ := strings.Cut(r.Content, "\n")
		if rs := []rune(c); len(rs) > 30 {
			c = string(rs[:30])
		}
		s := r.Name + ": " + c
		if r.IsError {
			s = "!" + s
		}
		w.Results = append(w.Results, s)
	}
	return w
}

func parseFile(t *testing.T, name string, opts Options) ([]memory.Exchange, Stats) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	exs, st, err := Parse(f, opts)
	if err != nil {
		t.Fatalf("Parse(%s): %v", name, err)
	}
	checkExchanges(t, exs, st)
	return exs, st
}

// checkExchanges asserts what holds for every Parse result.
func checkExchanges(t testing.TB, exs []memory.Exchange, st Stats) {
	t.Helper()
	if st.Exchanges != len(exs) {
		t.Fatalf("Stats.Exchanges %d, got %d exchanges", st.Exchanges, len(exs))
	}
	loops, side := 0, 0
	prevTurns := 0
	// A file can hold several sessions (Aider): Turn and UserTurns count
	// within each, and the first is the Stats'.
	first, session := 0, st.SessionID
	for i, ex := range exs {
		// What a reader gives, the write pipeline takes: oversize content
		// is cut (memory.BoundExchange), never a reason to lose the file.
		if err := ingest.Validate(ex); err != nil {
			t.Fatalf("exchange %d fails ingest.Validate: %v", i, err)
		}
		if ex.SessionID != session && st.Sessions > 1 && i > 0 {
			first, session, prevTurns = i, ex.SessionID, 0
		}
		if ex.Turn != i-first+1 {
			t.Fatalf("exchange %d has Turn %d", i, ex.Turn)
		}
		if ex.Source != Source || ex.SessionID != session || ex.Project != st.Project || ex.Headless != st.Headless {
			t.Fatalf("exchange %d: session fields %q %q %q %v, stats %+v", i, ex.Source, ex.SessionID, ex.Project, ex.Headless, st)
		}
		for _, s := range []string{ex.User, ex.Assistant, ex.Model, ex.Project, ex.SessionID} {
			if !memory.ValidUTF8(s) {
				t.Fatalf("exchange %d holds invalid UTF-8: %q", i, s)
			}
		}
		for _, c := range ex.ToolCalls {
			if !memory.ValidUTF8(c.Input) || !memory.ValidUTF8(c.Name) {
				t.Fatalf("exchange %d: invalid tool call %q", i, c)
			}
		}
		for _, r := range ex.ToolResults {
			if !memory.ValidUTF8(r.Content) {
				t.Fatalf("exchange %d: invalid tool result", i)
			}
		}
		if err := validExchange(ex); err != nil {
			t.Fatalf("exchange %d: %v", i, err)
		}
		if ex.UserTurns < prevTurns || ex.UserTurns > st.UserPrompts {
			t.Fatalf("exchange %d: UserTurns %d after %d (prompts %d)", i, ex.UserTurns, prevTurns, st.UserPrompts)
		}
		prevTurns = ex.UserTurns
		if ex.ToolLoop && ex.User != "" && ex.UserTurns > 0 && !isSide(ex, st) {
			t.Fatalf("exchange %d: a tool loop with a user prompt %q", i, ex.User)
		}
		if !ex.ToolLoop && ex.User == "" {
			t.Fatalf("exchange %d: neither a prompt nor a tool loop", i)
		}
		if !ex.EndedAt.IsZero() && ex.EndedAt.Before(ex.StartedAt) {
			t.Fatalf("exchange %d ends before it starts", i)
		}
		switch {
		case isSide(ex, st):
			side++
		case ex.ToolLoop:
			loops++
		}
	}
	if st.Sidechain == 0 && loops != st.ToolLoops {
		t.Fatalf("Stats.ToolLoops %d, counted %d", st.ToolLoops, loops)
	}
}

// isSide guesses whether a tool-loop exchange with a User is a subagent's.
func isSide(ex memory.Exchange, st Stats) bool {
	return st.Sidechain > 0 && ex.ToolLoop && ex.User != ""
}

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file  string
		opts  Options
		want  []want
		stats Stats // the compared fields: counts, Skipped, session
		check func(t *testing.T, exs []memory.Exchange, st Stats)
	}{
		{
			file: "basic.jsonl",
			want: []want{
				{User: "Why does the compaction test fail on CI?", Assistant: "Let me look at the test and the CI config.", UserTurns: 1, Calls: []string{"Read", "Bash"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "The CI job sets TMPDIR to a directory that does not exist, so os.MkdirTemp fails in the compaction test.",
					Results: []string{"Read:      1→package kvstore", "!Bash: Exit code 1"}},
				{User: "Fix it by using t.TempDir() instead.", UserTurns: 2, Calls: []string{"Edit"}},
				{ToolLoop: true, UserTurns: 2, Assistant: "Done: the test now uses t.TempDir(), which the testing package cleans up.",
					Results: []string{"Edit: The file was updated."}},
			},
			stats: Stats{Lines: 17, Exchanges: 4, UserPrompts: 2, ToolLoops: 2, ToolCalls: 3, ToolResults: 3,
				Skipped:   map[string]int{SkipBookkeeping: 4},
				SessionID: "sess-basic", CWD: "/home/dev/src/kvstore", Project: "kvstore"},
			check: func(t *testing.T, exs []memory.Exchange, st Stats) {
				ex := exs[0]
				if ex.Model != "claude-opus-4-6" {
					t.Errorf("model %q", ex.Model)
				}
				if got := ex.ToolCalls[0]; got.ID != "toolu_1" || got.Input != `{"file_path":"/home/dev/src/kvstore/compact_test.go"}` {
					t.Errorf("tool call %+v", got)
				}
				if want := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC); !ex.StartedAt.Equal(want) {
					t.Errorf("StartedAt %v, want %v", ex.StartedAt, want)
				}
				if want := time.Date(2026, 1, 5, 10, 0, 7, 0, time.UTC); !ex.EndedAt.Equal(want) {
					t.Errorf("EndedAt %v, want %v", ex.EndedAt, want)
				}
				if r := exs[1].ToolResults[0]; r.ToolUseID != "toolu_1" {
					t.Errorf("result %+v", r)
				}
				if want := time.Date(2026, 1, 5, 10, 0, 9, 0, time.UTC); !exs[1].StartedAt.Equal(want) {
					t.Errorf("tool loop StartedAt %v, want %v", exs[1].StartedAt, want)
				}
				if st.Types["progress"] != 1 || st.Types["assistant"] != 8 {
					t.Errorf("types %v", st.Types)
				}
			},
		},
		{
			file: "commands.jsonl",
			want: []want{
				{User: "What is wrong in this screenshot of the checkout page?\n\n[image]", UserTurns: 1,
					Assistant: "The total ignores the discount: the coupon line is shown but not subtracted."},
				{User: "/review cart.go", UserTurns: 2, Assistant: "I'll read cart.go first.", Calls: []string{"Bash"}},
				{User: "Skip the review; just run gofmt on cart.go.", UserTurns: 3, Calls: []string{"Bash"},
					Results: []string{"!Bash: The user doesn't want to proce"}},
				{ToolLoop: true, UserTurns: 3, Assistant: "Formatting is done; cart.go is gofmt-clean.", Results: []string{"Bash: "}},
				{ToolLoop: true, UserTurns: 3, Assistant: "The background cart tests passed."},
				{User: "continue", UserTurns: 4, Assistant: "Continuing with the coupon fix in cart.go."},
			},
			stats: Stats{Lines: 27, Exchanges: 6, Summaries: 1, UserPrompts: 4, ToolLoops: 2, ToolCalls: 2, ToolResults: 2,
				Skipped: map[string]int{SkipMeta: 2, SkipCommand: 6, SkipInterrupted: 1, SkipSynthetic: 1,
					SkipInjected: 3, SkipBookkeeping: 1},
				SessionID: "sess-commands", CWD: "/Users/dev/work/webshop", Project: "webshop"},
		},
		{
			file: "queue.jsonl",
			want: []want{
				{User: "Add a retry with backoff to the invoice sender.", UserTurns: 1, Assistant: "Looking at the sender.", Calls: []string{"Grep"}},
				{User: "use at most 5 attempts", UserTurns: 2, Assistant: "Capping the retries at 5 attempts as you asked.",
					Calls: []string{"Edit"}, Results: []string{"Grep: sender.go:12:func Send(inv Inv"}},
				{User: "and log each retry", UserTurns: 3, Assistant: "Each retry is now logged with its attempt number.", Results: []string{"Edit: ok"}},
				{User: "also add a test", UserTurns: 4, Assistant: "Added TestSendRetries covering 5 failed attempts."},
				{User: "thanks, commit it", UserTurns: 5, Assistant: "Committed as \"sender: retry with backoff\"."},
			},
			stats: Stats{Lines: 17, Exchanges: 5, UserPrompts: 5, ToolLoops: 0, ToolCalls: 2, ToolResults: 2,
				Skipped:   map[string]int{SkipBookkeeping: 1, SkipDuplicate: 1},
				SessionID: "sess-queue", CWD: `C:\Users\dev\repos\billing`, Project: "billing"},
		},
		{
			file: "sidechain.jsonl",
			want: []want{
				{User: "Find every caller of LoadConfig and summarise how they handle errors.", UserTurns: 1, Calls: []string{"Task"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "LoadConfig has two callers; main.go exits, server.go wraps the error.",
					Results: []string{"Task: Two callers: main.go exits on "}},
			},
			stats: Stats{Lines: 9, Exchanges: 2, UserPrompts: 1, ToolLoops: 1, ToolCalls: 1, ToolResults: 1,
				Skipped:   map[string]int{SkipSidechain: 4, SkipBookkeeping: 1},
				SessionID: "sess-side", CWD: "/srv/app", Project: "app"},
		},
		{
			file: "sidechain.jsonl",
			opts: Options{Sidechains: true},
			want: []want{
				{User: "Find every caller of LoadConfig and summarise how they handle errors.", UserTurns: 1, Calls: []string{"Task"}},
				{User: "List every caller of LoadConfig and how it handles the error.", ToolLoop: true, UserTurns: 1, Calls: []string{"Grep"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "Two callers: main.go exits on error, server.go wraps and returns it.",
					Results: []string{"Grep: main.go:10"}},
				{ToolLoop: true, UserTurns: 1, Assistant: "LoadConfig has two callers; main.go exits, server.go wraps the error.",
					Results: []string{"Task: Two callers: main.go exits on "}},
			},
			stats: Stats{Lines: 9, Exchanges: 4, UserPrompts: 1, ToolLoops: 1, Sidechain: 2, Agents: []string{"a1f"}, ToolCalls: 2, ToolResults: 2,
				Skipped:   map[string]int{SkipBookkeeping: 1},
				SessionID: "sess-side", CWD: "/srv/app", Project: "app"},
			check: func(t *testing.T, exs []memory.Exchange, st Stats) {
				if exs[1].Model != "claude-haiku-4-5-20251001" {
					t.Errorf("subagent model %q", exs[1].Model)
				}
			},
		},
		{
			file: "headless.jsonl",
			want: []want{
				{User: "Summarise the failing tests in report.xml.", UserTurns: 1, Assistant: "Three tests fail, all in the parser package, on empty input."},
			},
			stats: Stats{Lines: 3, Exchanges: 1, UserPrompts: 1,
				Skipped:   map[string]int{SkipBookkeeping: 1},
				SessionID: "sess-headless", CWD: "/ci/workspace/", Project: "workspace", Entrypoint: "sdk-cli", Headless: true},
		},
		{
			file: "headless.jsonl",
			opts: Options{Project: "ci-bot", SessionID: "ignored", Headless: true},
			want: []want{
				{User: "Summarise the failing tests in report.xml.", UserTurns: 1, Assistant: "Three tests fail, all in the parser package, on empty input."},
			},
			stats: Stats{Lines: 3, Exchanges: 1, UserPrompts: 1,
				Skipped:   map[string]int{SkipBookkeeping: 1},
				SessionID: "sess-headless", CWD: "/ci/workspace/", Project: "ci-bot", Entrypoint: "sdk-cli", Headless: true},
		},
		{
			file: "errors.jsonl",
			want: []want{
				{User: "Rename the notes folder to journal. Use the caf\uFFFD style names.", UserTurns: 1, Error: true,
					Assistant: "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment."},
				{User: "try again, and keep the  out", UserTurns: 2, Assistant: "The folder is now called journal; the links in index.md point to it."},
			},
			stats: Stats{Lines: 11, Exchanges: 2, UserPrompts: 3, APIErrors: 1, InvalidUTF8: 2,
				Skipped:   map[string]int{SkipMalformed: 3, SkipUnknownType: 1, SkipNoMessage: 1, SkipDuplicate: 1},
				SessionID: "sess-errors", CWD: "/home/dev/notes", Project: "notes"},
			check: func(t *testing.T, exs []memory.Exchange, st Stats) {
				if exs[0].Model != "" {
					t.Errorf("an API error has no model, got %q", exs[0].Model)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%s%+v", tc.file, tc.opts), func(t *testing.T) {
			exs, st := parseFile(t, tc.file, tc.opts)
			var got []want
			for _, ex := range exs {
				got = append(got, summarize(ex))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("exchanges differ:\n got %s\nwant %s", dump(got), dump(tc.want))
			}
			if st.Format != FormatClaudeCode || st.Sessions != 1 {
				t.Errorf("format %q, sessions %d", st.Format, st.Sessions)
			}
			cmp := st
			cmp.Types, cmp.Format, cmp.Sessions = nil, "", 0
			if !reflect.DeepEqual(cmp, tc.stats) {
				t.Errorf("stats:\n got %+v\nwant %+v", cmp, tc.stats)
			}
			if tc.check != nil {
				tc.check(t, exs, st)
			}
		})
	}
}

func dump(ws []want) string {
	var b strings.Builder
	for _, w := range ws {
		fmt.Fprintf(&b, "\n  %+v", w)
	}
	return b.String()
}

func TestParseSessionIDFallback(t *testing.T) {
	in := `{"type":"user","message":{"role":"user","content":"hello there, model"}}
{"type":"assistant","message":{"id":"m1","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}]}}`
	exs, st, err := Parse(strings.NewReader(in), Options{SessionID: "from-file"})
	if err != nil {
		t.Fatal(err)
	}
	if st.SessionID != "from-file" || len(exs) != 1 || exs[0].SessionID != "from-file" || exs[0].Project != "" {
		t.Fatalf("got %+v %+v", st, exs)
	}
	// Without timestamps the times stay zero.
	if !exs[0].StartedAt.IsZero() || !exs[0].EndedAt.IsZero() {
		t.Fatalf("times %v %v", exs[0].StartedAt, exs[0].EndedAt)
	}
}

// TestParseSubagentFile reads a subagent's own file: only sidechain lines.
func TestParseSubagentFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "sidechain.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"isSidechain":true`) {
			lines = append(lines, l)
		}
	}
	in := strings.Join(lines, "\n")
	exs, st, err := Parse(strings.NewReader(in), Options{})
	if err != nil || len(exs) != 0 || st.Skipped[SkipSidechain] != 4 {
		t.Fatalf("without Sidechains: %v %d %+v", err, len(exs), st)
	}
	exs, st, err = Parse(strings.NewReader(in), Options{Sidechains: true})
	if err != nil {
		t.Fatal(err)
	}
	checkExchanges(t, exs, st)
	if len(exs) != 2 || st.Sidechain != 2 || st.UserPrompts != 0 || st.Project != "app" || exs[0].UserTurns != 0 {
		t.Fatalf("with Sidechains: %+v %+v", st, exs)
	}
}

func TestParseLineTooLong(t *testing.T) {
	ok := `{"type":"user","message":{"role":"user","content":"a prompt of some length"}}` + "\n"
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 300) + `"}}` + "\n"
	for _, in := range []string{ok + ok + long + ok, ok + ok + strings.TrimSuffix(long, "\n")} {
		_, st, err := Parse(strings.NewReader(in), Options{MaxLineBytes: 200})
		if !errors.Is(err, ErrLineTooLong) || !errors.Is(err, memory.ErrInvalid) {
			t.Fatalf("err %v", err)
		}
		if !strings.Contains(err.Error(), "line 3") {
			t.Fatalf("error does not name line 3: %v", err)
		}
		if st.UserPrompts != 2 {
			t.Fatalf("stats before the long line: %+v", st)
		}
	}
	// Exactly at the limit is fine.
	line := strings.TrimSuffix(ok, "\n")
	if _, _, err := Parse(strings.NewReader(line+"\n"+line), Options{MaxLineBytes: len(line)}); err != nil {
		t.Fatal(err)
	}
}

func TestParseNotTranscript(t *testing.T) {
	for _, in := range []string{"hello\nworld\n", "[1]\n\"x\"\n", "{broken\n"} {
		_, _, err := Parse(strings.NewReader(in), Options{})
		if !errors.Is(err, ErrNotTranscript) || !errors.Is(err, memory.ErrInvalid) {
			t.Fatalf("%q: err %v", in, err)
		}
	}
	for _, in := range []string{"", "\n\n  \n"} {
		exs, st, err := Parse(strings.NewReader(in), Options{})
		if err != nil || len(exs) != 0 || st.Lines != 0 {
			t.Fatalf("%q: %v %v %+v", in, exs, err, st)
		}
	}
}

type failReader struct{ r *strings.Reader }

func (f failReader) Read(p []byte) (int, error) {
	if f.r.Len() == 0 {
		return 0, errors.New("disk gone")
	}
	return f.r.Read(p)
}

func TestParseReadError(t *testing.T) {
	in := `{"type":"user","message":{"role":"user","content":"a prompt"}}` + "\n"
	_, _, err := Parse(failReader{strings.NewReader(in)}, Options{})
	if err == nil || !strings.Contains(err.Error(), "disk gone") || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err %v", err)
	}
}

func TestProjectName(t *testing.T) {
	for in, want := range map[string]string{
		"":                        "",
		"/":                       "",
		"/home/me/src/memtray":    "memtray",
		"/home/me/src/memtray///": "memtray",
		`C:\src\memtray`:          "memtray",
		"memtray":                 "memtray",
	} {
		if got := ProjectName(in); got != want {
			t.Errorf("ProjectName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ClaudeProjectDir("/home/me/src/spotter-worktrees/a.b_c"); got != "-home-me-src-spotter-worktrees-a-b-c" {
		t.Errorf("ClaudeProjectDir = %q", got)
	}
	if got := SessionIDFromPath("/x/-home-me-src/8f1c.jsonl"); got != "8f1c" {
		t.Errorf("SessionIDFromPath = %q", got)
	}
}

func sharedRoot() string {
	if root := os.Getenv("MEMTRAY_SHARED"); root != "" {
		return root
	}
	return "../../../shared"
}

// sharedDir returns the real transcripts under /work/shared (or
// $MEMTRAY_SHARED), skipping the test when they are absent.
func sharedDir(t testing.TB) string {
	t.Helper()
	p := filepath.Join(sharedRoot(), "data", "claude-code-transcripts")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s absent: %v", p, err)
	}
	return p
}

// TestParseRealTranscripts parses each real Claude Code transcript of the
// shared data and logs what it found.
func TestParseRealTranscripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(sharedDir(t), "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip("no transcripts")
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			exs, st, err := Parse(f, Options{SessionID: SessionIDFromPath(path)})
			if err != nil {
				t.Fatal(err)
			}
			checkExchanges(t, exs, st)
			var promptText, loopText, unnamed int
			for _, ex := range exs {
				for _, r := range ex.ToolResults {
					if r.Name == "" {
						unnamed++
					}
				}
				if ex.ToolLoop {
					loopText += utf8.RuneCountInString(ex.Assistant)
				} else {
					promptText += utf8.RuneCountInString(ex.Assistant)
				}
			}
			t.Logf("%s: lines %d, exchanges %d, user prompts %d, tool loops %d, tool calls %d, results %d; assistant text %d runes in prompt turns, %d in tool loops; skipped %v",
				name, st.Lines, st.Exchanges, st.UserPrompts, st.ToolLoops, st.ToolCalls, st.ToolResults, promptText, loopText, st.Skipped)
			if st.Exchanges == 0 || st.UserPrompts == 0 {
				t.Fatalf("nothing read: %+v", st)
			}
			if st.SessionID != SessionIDFromPath(path) {
				t.Errorf("session %q for file %s", st.SessionID, name)
			}
			if unnamed > 0 {
				t.Errorf("%d tool results without a tool name", unnamed)
			}
			if st.Skipped[SkipMalformed] > 0 || st.Skipped[SkipUnknownType] > 0 {
				t.Errorf("unexpected skips %v", st.Skipped)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, false)
		// Single lines too, so that mutations reach each shape.
		for _, line := range bytes.Split(b, []byte("\n")) {
			f.Add(line, true)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte, sidechains bool) {
		exs, st, err := Parse(bytes.NewReader(in), Options{Sidechains: sidechains, MaxLineBytes: 1 << 16})
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
	})
}

// BenchmarkParse parses the first real transcript when the shared data is
// there, else the basic fixture.
func BenchmarkParse(b *testing.B) {
	path := filepath.Join("testdata", "basic.jsonl")
	if files, _ := filepath.Glob(filepath.Join(sharedRoot(), "data", "claude-code-transcripts", "*.jsonl")); len(files) > 0 {
		path = files[0]
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s (%d bytes)", filepath.Base(path), len(data))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Parse(bytes.NewReader(data), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseRealSessions reads every real agent session of the shared data
// (Codex rollouts, Aider histories, SpecStory exports, Claude Code
// transcripts) through ParseFile, so by detection, and logs what it found.
func TestParseRealSessions(t *testing.T) {
	root := filepath.Join(sharedRoot(), "data")
	var files []string
	for _, pattern := range []string{"agent-sessions/*/*.jsonl", "agent-sessions/*/*.md", "claude-code-transcripts/*.jsonl"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("no sessions under %s", root)
	}
	for _, path := range files {
		name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			exs, st, err := ParseFile(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkExchanges(t, exs, st)
			texts := 0
			for _, ex := range exs {
				if ex.Assistant != "" {
					texts++
				}
				if err := validExchange(ex); err != nil {
					t.Fatalf("exchange %d: %v", ex.Turn, err)
				}
			}
			t.Logf("%s: %s, %d sessions, %d exchanges (%d with text, %d tool loops), %d user turns, %d tool calls, %d results, project %q, skipped %v",
				name, st.Format, st.Sessions, st.Exchanges, texts, st.ToolLoops, st.UserPrompts, st.ToolCalls, st.ToolResults, st.Project, st.Skipped)
			if st.Exchanges == 0 || st.UserPrompts == 0 || texts == 0 {
				t.Fatalf("nothing read: %+v", st)
			}
			if st.Skipped[SkipMalformed] > 0 || st.Skipped[SkipUnknownType] > 0 {
				t.Errorf("unexpected skips %v", st.Skipped)
			}
			if st.Format == FormatCodex {
				for _, ex := range exs {
					for _, s := range []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions"} {
						if strings.Contains(ex.User, s) {
							t.Fatalf("exchange %d: injected context as the user's prompt: %.80q", ex.Turn, ex.User)
						}
					}
				}
			}
		})
	}
}
