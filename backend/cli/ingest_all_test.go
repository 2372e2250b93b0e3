package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ingestFixture is the path of a file in testdata/ingest.
func ingestFixture(name string) string { return filepath.Join("testdata", "ingest", name) }

// countMemories is how many memories `memtray list` counts in the store
// of dd (--data-dir=DIR), through its daemon when one runs.
func countMemories(t *testing.T, dd string) int {
	t.Helper()
	code, out, errs := run(t, context.Background(), "", "list", dd, "--json", "--limit", "1000")
	if code != 0 {
		t.Fatalf("list: exit %d %s", code, errs)
	}
	var page struct {
		Total *int `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil || page.Total == nil {
		t.Fatalf("list --json: %v: %s", err, out)
	}
	return *page.Total
}

// ingestStores are the two ways `memtray ingest` reaches a store: opened
// by the command itself, and through the daemon that holds it (served on
// loopback). Each returns the --data-dir flag.
var ingestStores = []struct {
	name string
	open func(t *testing.T) string
}{
	{"own store", func(t *testing.T) string { return "--data-dir=" + isolate(t) }},
	{"through the daemon", func(t *testing.T) string {
		cfg := mcpIsolate(t)
		serveDaemon(t, cfg)
		return "--data-dir=" + cfg.DataDir
	}},
}

// TestIngestValidatesEveryInputFirst: `memtray ingest A B C` with C
// malformed stored A and B, then failed on C. Now every input is read and
// parsed before anything is sent: a malformed one stops the run with
// nothing stored, and the error names the file, the line and what to do.
// Through the command's own store and through a running daemon.
func TestIngestValidatesEveryInputFirst(t *testing.T) {
	cases := []struct {
		name string
		as   string
		bad  string
		want []string
	}{
		{"a line cut short", "exchanges", "truncated.jsonl", []string{"truncated.jsonl: line 3: unexpected EOF"}},
		{"an unknown field", "exchanges", "unknown-field.jsonl", []string{"unknown-field.jsonl: line 1: json: unknown field \"colour\""}},
		{"a document not UTF-8", "auto", "latin1.md", []string{"latin1.md: line 4, column 22: not UTF-8 text", "iconv"}},
	}
	for _, st := range ingestStores {
		for _, tc := range cases {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				dd := st.open(t)
				good := []string{ingestFixture("ports.jsonl"), ingestFixture("deploy.jsonl")}
				if tc.as == "auto" {
					good = []string{filepath.Join("testdata", "session.jsonl"), ingestFixture("notes.md")}
				}
				args := append([]string{"ingest", dd, "--as", tc.as}, append(good, ingestFixture(tc.bad))...)
				code, out, errs := run(t, context.Background(), "", args...)
				if code != 1 {
					t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
				}
				for _, w := range append(tc.want, "nothing was ingested", "fix "+ingestFixture(tc.bad)+" (or leave it out) and run the command again") {
					if !strings.Contains(errs, w) {
						t.Errorf("the error does not say %q:\n%s", w, errs)
					}
				}
				if strings.Contains(out, good[0]) {
					t.Errorf("an input was reported ingested:\n%s", out)
				}
				if n := countMemories(t, dd); n != 0 {
					t.Errorf("%d memories stored, want none", n)
				}
			})
		}
	}
}

// TestIngestAgainStoresNothingTwice: ingesting the same inputs again (a
// run that failed part way, repeated whole) stores nothing twice: a
// session's turns are skipped by their turn marks, exchanges of no session
// and documents are duplicates of what they stored. Through the command's
// own store and through a running daemon.
func TestIngestAgainStoresNothingTwice(t *testing.T) {
	sets := [][]string{
		{"--as", "exchanges", ingestFixture("ports.jsonl"), ingestFixture("deploy.jsonl")},
		{filepath.Join("testdata", "session.jsonl"), ingestFixture("notes.md")},
	}
	for _, st := range ingestStores {
		t.Run(st.name, func(t *testing.T) {
			dd := st.open(t)
			for _, set := range sets {
				args := append([]string{"ingest", dd}, set...)
				if code, out, errs := run(t, context.Background(), "", args...); code != 0 || strings.Contains(out, "  memories written 0,") {
					t.Fatalf("first ingest: exit %d, want every input to write memories\n%s%s", code, out, errs)
				}
			}
			first := countMemories(t, dd)
			for _, set := range sets {
				args := append([]string{"ingest", dd}, set...)
				code, out, errs := run(t, context.Background(), "", args...)
				if code != 0 {
					t.Fatalf("ingest again: exit %d\n%s%s", code, out, errs)
				}
				if n := strings.Count(out, "  memories written 0,"); n != 2 {
					t.Errorf("ingest again wrote memories (%d of 2 inputs wrote none):\n%s", n, out)
				}
			}
			if n := countMemories(t, dd); n != first {
				t.Errorf("%d memories after ingesting again, %d before", n, first)
			}
		})
	}
}

// TestIngestFailsPartWay: an input that was valid when checked but fails
// when its turn comes (here rewritten, cut short, after the first input
// was sent) stops the run; the error names the inputs ingested whole and
// says that running the command again is safe. Run again once the file is
// fixed, it stores the rest and nothing twice.
func TestIngestFailsPartWay(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	dir := t.TempDir()
	first, second := filepath.Join(dir, "ports.jsonl"), filepath.Join(dir, "later.jsonl")
	copyFile(t, ingestFixture("ports.jsonl"), first)
	copyFile(t, ingestFixture("deploy.jsonl"), second)
	out := &onFirstReport{first: first + " (exchanges)", fn: func() {
		data, _ := os.ReadFile(ingestFixture("truncated.jsonl"))
		if err := os.WriteFile(second, data, 0o600); err != nil {
			t.Error(err)
		}
	}}
	var errb strings.Builder
	code := Run(&Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errb, Ctx: context.Background()},
		[]string{"ingest", dd, "--as", "exchanges", first, second})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errb.String())
	}
	for _, w := range []string{second + ": line 3: unexpected EOF", "the 1 input before it was ingested whole (" + first + ")", "run the same command again", "not stored twice"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("the error does not say %q:\n%s", w, errb.String())
		}
	}
	stored := countMemories(t, dd)
	if stored == 0 {
		t.Fatalf("the first input was not stored")
	}
	copyFile(t, ingestFixture("deploy.jsonl"), second)
	code, again, errs := run(t, context.Background(), "", "ingest", dd, "--as", "exchanges", first, second)
	if code != 0 {
		t.Fatalf("ingest again: exit %d\n%s%s", code, again, errs)
	}
	_, rest, _ := strings.Cut(again, second)
	if head, _, _ := strings.Cut(again, second); !strings.Contains(head, "  memories written 0,") || strings.Contains(rest, "  memories written 0,") {
		t.Errorf("ingest again: want the first input to write nothing and the second to write:\n%s", again)
	}
	if n := countMemories(t, dd); n <= stored {
		t.Errorf("%d memories after the second input, %d before", n, stored)
	}
}

// copyFile copies the file from to to.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, data, 0o600)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestNotTextAt: the line and column of the first byte that is not UTF-8
// text (or NUL), which the error of a document input names.
func TestNotTextAt(t *testing.T) {
	for _, tc := range []struct {
		in        string
		line, col int
	}{
		{"", 0, 0},
		{"plain\ntext\n", 0, 0},
		{"é ü ✓\n", 0, 0},
		{"\xff", 1, 1},
		{"ab\ncd\xfe", 2, 3},
		{"ab\n\ncd\x00", 3, 3},
		{"ok\n\xe2\x82", 2, 1}, // a rune cut short
	} {
		line, col := notTextAt([]byte(tc.in))
		if line != tc.line || col != tc.col {
			t.Errorf("notTextAt(%q) = %d, %d, want %d, %d", tc.in, line, col, tc.line, tc.col)
		}
	}
}

// FuzzParseExchanges: parseExchanges never panics, and what it returns
// has a project (the one given, when the line had none) and a source.
func FuzzParseExchanges(f *testing.F) {
	for _, name := range []string{"ports.jsonl", "deploy.jsonl", "truncated.jsonl", "unknown-field.jsonl"} {
		data, err := os.ReadFile(ingestFixture(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"user":"a","assistant":"b","project":"p","source":"s"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		exs, err := parseExchanges(data, "proj")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") && err.Error() != "no exchanges" {
				t.Errorf("error does not name the line: %v", err)
			}
			return
		}
		for _, ex := range exs {
			if ex.Project == "" || ex.Source == "" {
				t.Errorf("exchange without project or source: %+v", ex)
			}
		}
	})
}
