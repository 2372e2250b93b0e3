package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// onFirstReport is an ingest's stdout that runs fn once, when the first
// input's report arrives.
type onFirstReport struct {
	strings.Builder
	first string
	fn    func()
}

func (w *onFirstReport) Write(p []byte) (int, error) {
	if w.fn != nil && strings.Contains(string(p), w.first) {
		w.fn()
		w.fn = nil
	}
	return w.Builder.Write(p)
}

// TestIngestReadsEachInputInItsTurn: ingest checks every input first but
// reads, parses and sends them one at a time; it parsed and kept every
// input before sending the first (about 130 MB for 25 MB of sessions, a
// history of gigabytes ran out of memory). The second input, rewritten
// once the first was sent, is ingested as it is then.
func TestIngestReadsEachInputInItsTurn(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	dir := t.TempDir()
	exchanges := func(n int) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `{"user":"which port does service %d use","assistant":"Service %d listens on port %d; its health check is /healthz."}`+"\n", i, i, 8000+i)
		}
		return []byte(b.String())
	}
	first, second := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	os.WriteFile(first, exchanges(1), 0o600)
	os.WriteFile(second, exchanges(1), 0o600)
	out := &onFirstReport{first: first + " (exchanges)", fn: func() {
		if err := os.WriteFile(second, exchanges(3), 0o600); err != nil {
			t.Error(err)
		}
	}}
	var errb strings.Builder
	code := Run(&Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errb, Ctx: context.Background()},
		[]string{"ingest", dd, "--as", "exchanges", first, second})
	if code != 0 || out.fn != nil {
		t.Fatalf("ingest: exit %d\n%s%s", code, out.String(), errb.String())
	}
	_, rep, _ := strings.Cut(out.String(), second+" (exchanges)")
	if !strings.Contains(rep, "exchanges 3") {
		t.Errorf("the second input was read before the first was sent (want its 3 exchanges of then):\n%s", out.String())
	}
}

// TestIngestChecksEveryInputFirst: a missing or unreadable input among
// several stops ingest before anything is sent.
func TestIngestChecksEveryInputFirst(t *testing.T) {
	dir := isolate(t)
	dd := "--data-dir=" + dir
	good := filepath.Join(t.TempDir(), "a.jsonl")
	os.WriteFile(good, []byte(`{"user":"which port does the API use","assistant":"The API listens on port 8080; its health check is /healthz."}`+"\n"), 0o600)
	missing := filepath.Join(t.TempDir(), "missing.md")
	code, out, errs := run(t, context.Background(), "", "ingest", dd, "--as", "exchanges", good, missing)
	if code == 0 || !strings.Contains(errs, "missing.md") || strings.Contains(out, good) {
		t.Fatalf("ingest with a missing input: exit %d\n%s%s", code, out, errs)
	}
	if code, out, _ := run(t, context.Background(), "", "decisions", dd); code != 0 || strings.Contains(out, "8080") {
		t.Fatalf("something was sent before the missing input was found: %d %s", code, out)
	}
}

// TestIngestReportCounts: the report's counts agree with their nouns; it
// said "decided as 1 turns" and "1 user prompts".
func TestIngestReportCounts(t *testing.T) {
	for _, tc := range []struct {
		rep  IngestReport
		want []string
	}{
		{IngestReport{File: "a.jsonl", As: "claude-code", Exchanges: 3, Verdicts: map[string]int{"stored": 1},
			Transcript: &transcript.Stats{Format: "claude-code", Lines: 1, UserPrompts: 1, ToolLoops: 1}},
			[]string{"decided as 1 turn: stored 1", "1 line, 1 user prompt, 1 tool-loop iteration,"}},
		{IngestReport{File: "b.jsonl", As: "codex", Exchanges: 5, Verdicts: map[string]int{"stored": 1, "rejected": 1},
			Transcript: &transcript.Stats{Format: "codex", Lines: 9, UserPrompts: 2, ToolLoops: 0}},
			[]string{"decided as 2 turns: stored 1, rejected 1", "9 lines, 2 user prompts, 0 tool-loop iterations,"}},
	} {
		var b strings.Builder
		writeIngestReport(&b, tc.rep, false)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: report lacks %q:\n%s", tc.rep.File, w, b.String())
			}
		}
	}
}

// TestIngestReportWrittenTo: when a later statement wrote again a memory
// an earlier one wrote, the report says how many memories the writes went
// to (what `memtray list` shows), per input and in the total.
func TestIngestReportWrittenTo(t *testing.T) {
	decide := func(r *IngestReport, verdict memory.Verdict, ids ...string) {
		r.add(memory.Decision{Verdict: verdict, MemoryIDs: ids})
	}
	a := IngestReport{File: "a.jsonl", As: "specstory", Verdicts: map[string]int{}, RejectedBy: map[string]int{}}
	decide(&a, memory.VerdictStored, "m1", "m2")
	decide(&a, memory.VerdictStored, "m3", "m1") // says m1's statement again
	decide(&a, memory.VerdictDuplicate, "m2")
	b := IngestReport{File: "b.jsonl", As: "codex", Verdicts: map[string]int{}, RejectedBy: map[string]int{}}
	decide(&b, memory.VerdictStored, "m4")
	var out strings.Builder
	writeIngestReport(&out, a, false)
	writeIngestReport(&out, b, false)
	writeIngestTotal(&out, []IngestReport{a, b}, "")
	for _, want := range []string{
		"memories written 4 (3 distinct: later turns said some again), duplicates avoided 1",
		"memories written 1, duplicates avoided 0",
		"total: 2 inputs, memories written 5 (4 distinct: later turns said some again), duplicates avoided 1",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(out.String(), "see them with `memtray list`") {
		t.Errorf("a run that stored memories does not say where to see them:\n%s", out.String())
	}
	// A run that stored nothing says where the reasons are, not "see them".
	none := IngestReport{File: "note.txt", As: "document", Verdicts: map[string]int{}, RejectedBy: map[string]int{}}
	none.add(memory.Decision{Verdict: memory.VerdictRejected, Stage: "chunk"})
	out.Reset()
	writeIngestTotal(&out, []IngestReport{none}, " --data-dir /d")
	if got := out.String(); strings.Contains(got, "see them") || !strings.Contains(got, "nothing was stored: why each exchange was rejected, with `memtray ingest --data-dir /d --details FILE...`") {
		t.Errorf("a run that stored nothing says %q", got)
	}
	if a.Memories != 4 || a.Distinct != 3 || a.Duplicates != 1 {
		t.Errorf("counts: written %d, distinct %d, duplicates %d; want 4, 3, 1", a.Memories, a.Distinct, a.Duplicates)
	}
}

// TestIngestReportSkipped: the report names the first skipped exchanges,
// and all of them with --details; when none was valid, the warning says
// so and no skip line repeats it.
func TestIngestReportSkipped(t *testing.T) {
	skipped := make([]ingest.Skipped, 5)
	for i := range skipped {
		skipped[i] = ingest.Skipped{Exchange: i + 1, Error: "invalid: bad"}
	}
	for _, tc := range []struct {
		name    string
		rep     IngestReport
		details bool
		want    string // "" for no skip line
	}{
		{"first three", IngestReport{File: "a.jsonl", Exchanges: 4, Skipped: skipped}, false,
			"skipped 5 exchanges: exchange 1: invalid: bad; exchange 2: invalid: bad; exchange 3: invalid: bad; and 2 more (--details lists them) (the rest of the file was ingested)"},
		{"details", IngestReport{File: "a.jsonl", Exchanges: 4, Skipped: skipped}, true,
			"skipped 5 exchanges: exchange 1: invalid: bad; exchange 2: invalid: bad; exchange 3: invalid: bad; exchange 4: invalid: bad; exchange 5: invalid: bad (the rest"},
		{"few", IngestReport{File: "a.jsonl", Exchanges: 4, Skipped: skipped[:2]}, false,
			"skipped 2 exchanges: exchange 1: invalid: bad; exchange 2: invalid: bad (the rest"},
		{"none valid", IngestReport{File: "a.jsonl", Skipped: skipped[:1], Warning: "no valid exchange: " + ingest.SkippedLine(skipped[:1])}, false, ""},
	} {
		var b strings.Builder
		writeIngestReport(&b, tc.rep, tc.details)
		got := b.String()
		if tc.want == "" {
			if strings.Count(got, "skipped 1 exchange") != 1 || strings.Contains(got, "(the rest of the file was ingested)") {
				t.Errorf("%s: want the warning alone:\n%s", tc.name, got)
			}
			continue
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: report lacks %q:\n%s", tc.name, tc.want, got)
		}
	}
}

// TestNoBarsWhenNotTerminal: reindex, eval and pull draw their progress bars
// only on a terminal, as import does; into a log or a pipe stderr got each
// bar redrawn with carriage returns, dozens of copies on one line.
func TestNoBarsWhenNotTerminal(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	if code, _, errs := run(t, ctx, "", "add", "--data-dir", dir, "The staging Redis listens on port 6380."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, l := range []string{`{"status":"pulling manifest"}`,
			`{"status":"pulling 970aa74c0a90","digest":"sha256:970aa74c0a90","total":1000,"completed":500}`,
			`{"status":"pulling 970aa74c0a90","digest":"sha256:970aa74c0a90","total":1000,"completed":1000}`, `{"status":"success"}`} {
			io.WriteString(w, l+"\n")
		}
	}))
	defer ollama.Close()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"reindex", []string{"reindex", "--data-dir", dir, "--embedder", "builtin"}},
		{"eval recall", []string{"eval", "recall", "../eval/testdata/recall-tiny.json"}},
		{"pull", []string{"pull", "--data-dir", dir}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "pull" {
				t.Setenv("OLLAMA_HOST", ollama.URL)
			}
			logf, err := os.Create(filepath.Join(t.TempDir(), "stderr.log")) // an *os.File, as in a redirect
			if err != nil {
				t.Fatal(err)
			}
			defer logf.Close()
			var out strings.Builder
			code := Run(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: logf, Ctx: ctx}, tc.args)
			logged, _ := os.ReadFile(logf.Name())
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out.String(), logged)
			}
			if strings.Contains(string(logged), "\r") || strings.Contains(string(logged), "====") {
				t.Errorf("stderr into a file got a bar: %q", logged)
			}
		})
	}
}
