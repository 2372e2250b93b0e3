package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// TestIngestCommand replays a hand-written Claude Code transcript twice
// (the second replay adds nothing), ingests a document and an exchanges
// file, and refuses bad input before anything is stored.
func TestIngestCommand(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	code, out, errs := run(t, ctx, "", "ingest", dd, "--json", "testdata/session.jsonl")
	if code != 0 {
		t.Fatalf("ingest: %d %s", code, errs)
	}
	var reps []IngestReport
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("ingest --json: %v\n%s", err, out)
	}
	r := reps[0]
	if r.As != "claude-code" || r.Exchanges != 5 || r.Memories != 1 || r.Transcript == nil || r.Transcript.Project != "weatherapp" {
		t.Fatalf("first replay: %+v", r)
	}
	code, out, _ = run(t, ctx, "", "ingest", dd, "testdata/session.jsonl")
	if code != 0 || !strings.Contains(out, "memories written 0, duplicates avoided 1") {
		t.Fatalf("second replay: %d\n%s", code, out)
	}

	dir := t.TempDir()
	doc := filepath.Join(dir, "tiles-docs", "NOTES.md")
	os.MkdirAll(filepath.Dir(doc), 0o700)
	os.WriteFile(doc, []byte("# Tiles\n\nForecast tiles are cached in Redis under `tile:<z>:<x>:<y>`; the cache TTL follows the model run.\n"), 0o600)
	exs := filepath.Join(dir, "ex.jsonl")
	os.WriteFile(exs, []byte(`{"user":"which port","assistant":"The tile server listens on 127.0.0.1:8089 because 8080 is taken by the proxy; never expose it publicly."}`+"\n"), 0o600)
	code, out, errs = run(t, ctx, "", "ingest", dd, "--as", "auto", doc)
	if code != 0 || !strings.Contains(out, "(document)") || !strings.Contains(out, "memories written 1") {
		t.Fatalf("document: %d %s %s", code, out, errs)
	}
	code, out, errs = run(t, ctx, "", "ingest", dd, "--as", "exchanges", "--project", "weatherapp", exs)
	if code != 0 || !strings.Contains(out, "stored 1") {
		t.Fatalf("exchanges: %d %s %s", code, out, errs)
	}
	code, out, _ = run(t, ctx, "", "list", dd, "--json")
	if code != 0 || strings.Count(out, `"id"`) != 3 {
		t.Fatalf("list after ingest: %s", out)
	}

	// Bad input: refused before anything is stored. A file that fails to
	// parse after one that does stops the run before the first is sent
	// (every input is parsed first: validateInputs), the error naming the
	// file and the line.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"assistant\":\"fine\"}\n{\"assistant\": 3}\n"), 0o600)
	code, out, errs = run(t, ctx, "", "ingest", dd, "--as", "exchanges", "--project", "weatherapp", exs, bad)
	if code == 0 || !strings.Contains(errs, bad+": line 2:") || !strings.Contains(errs, "nothing was ingested") || strings.Contains(out, exs) {
		t.Errorf("an input that fails to parse after one that does: exit %d, %q %q; want an error naming its line, nothing ingested", code, out, errs)
	}
	for _, args := range [][]string{
		{"ingest", dd, "--as", "nonsense", exs},
		{"ingest", dd},
		{"ingest", dd, filepath.Join(dir, "missing.md")},
	} {
		if code, _, _ := run(t, ctx, "", args...); code == 0 {
			t.Errorf("%v: exit 0", args)
		}
	}
	code, out, _ = run(t, ctx, "", "list", dd, "--json")
	if strings.Count(out, `"id"`) != 3 {
		t.Errorf("bad input changed the store: %s", out)
	}
	// stdin as a document.
	code, out, errs = run(t, ctx, "Deploys go through `make deploy` only, because it runs the smoke tests against staging first.", "ingest", dd, "-")
	if code != 0 || !strings.Contains(out, "memories written 1") {
		t.Fatalf("stdin: %d %s %s", code, out, errs)
	}
	// A document file belongs to the folder (or repository) holding it;
	// stdin has no place, so no project.
	_, out, _ = run(t, ctx, "", "list", dd, "--json")
	for _, want := range []struct{ text, project string }{{"Forecast tiles", "tiles-docs"}, {"make deploy", ""}} {
		if p, ok := projectOf(out, want.text); !ok || p != want.project {
			t.Errorf("%q: project %q (found %v), want %q", want.text, p, ok, want.project)
		}
	}
}

// projectOf returns the project of the memory whose text contains text in
// the output of `list --json`.
func projectOf(listJSON, text string) (string, bool) {
	var page struct {
		Memories []struct {
			Text    string `json:"text"`
			Project string `json:"project"`
		} `json:"memories"`
	}
	if json.Unmarshal([]byte(listJSON), &page) != nil {
		var ms []struct {
			Text    string `json:"text"`
			Project string `json:"project"`
		}
		if json.Unmarshal([]byte(listJSON), &ms) != nil {
			return "", false
		}
		page.Memories = ms
	}
	for _, m := range page.Memories {
		if strings.Contains(m.Text, text) {
			return m.Project, true
		}
	}
	return "", false
}

// TestIngestAgentSessions ingests a session of every agent format, found by
// content, end to end into a real store; a file that yields nothing says
// why and, when no input yields anything, the exit status is not 0 (issue
// 24: a Codex rollout read as a Claude Code transcript reported
// "exchanges 0" with exit 0 and no warning).
func TestIngestAgentSessions(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	// A copy outside memtray's checkout: inside it, a history's location
	// would name memtray's own repository as its project.
	fixtures := filepath.Join(t.TempDir(), "testdata")
	if err := os.CopyFS(fixtures, os.DirFS(filepath.Join("..", "transcript", "testdata"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, as, project string
		exchanges         int
	}{
		{"codex.jsonl", "codex", "tiles", 5},
		{"codex-legacy.jsonl", "codex", "legacy-app", 2},
		{filepath.Join("aider-repo", ".aider.chat.history.md"), "aider", "aider-repo", 5},
		{filepath.Join("spec-repo", ".specstory", "history", "2026-07-13_13-40-49Z-fix-flaky.md"), "specstory", "spec-repo", 3},
		{"compact.jsonl", "claude-code", "ledger", 4},
	} {
		path := filepath.Join(fixtures, tc.file)
		code, out, errs := run(t, ctx, "", "ingest", dd, "--json", path)
		if code != 0 || errs != "" {
			t.Fatalf("%s: exit %d, %s", tc.file, code, errs)
		}
		var reps []IngestReport
		if err := json.Unmarshal([]byte(out), &reps); err != nil || len(reps) != 1 {
			t.Fatalf("%s: %v\n%s", tc.file, err, out)
		}
		r := reps[0]
		decided := 0
		for _, n := range r.Verdicts {
			decided += n
		}
		if r.As != tc.as || r.Exchanges != tc.exchanges || r.Transcript == nil || r.Transcript.Project != tc.project || r.Warning != "" || decided == 0 {
			t.Errorf("%s: %+v", tc.file, r)
		}
	}

	injected := filepath.Join(fixtures, "codex-injected.jsonl")
	code, out, errs := run(t, ctx, "", "ingest", dd, injected)
	if code == 0 || !strings.Contains(errs, "codex-injected.jsonl") || !strings.Contains(errs, "only injected context") ||
		!strings.Contains(errs, "nothing to ingest") {
		t.Errorf("a rollout of injected context only: exit %d\n%s%s", code, out, errs)
	}
	dir := t.TempDir()
	unknown := filepath.Join(dir, "notes.jsonl")
	os.WriteFile(unknown, []byte(`{"note":"not a session"}`+"\n"), 0o600)
	code, _, errs = run(t, ctx, "", "ingest", dd, unknown)
	if code == 0 || !strings.Contains(errs, "notes.jsonl: format not recognised") {
		t.Errorf("an unrecognised .jsonl: exit %d %s", code, errs)
	}
	code, _, errs = run(t, ctx, "", "ingest", dd, "--as", "transcript", filepath.Join(fixtures, "aider-repo", ".aider.chat.history.md"))
	if code != 0 {
		t.Errorf("--as transcript detects the agent: exit %d %s", code, errs)
	}
	// One input yields: exit 0, the empty one is reported with its warning.
	code, out, errs = run(t, ctx, "", "ingest", dd, "--json", "--as", "codex", injected, filepath.Join(fixtures, "codex-exec.jsonl"))
	var reps []IngestReport
	if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != 2 || reps[0].Exchanges != 0 ||
		!strings.Contains(reps[0].Warning, "only injected context") || reps[1].Exchanges != 2 || !strings.Contains(errs, "warning") {
		t.Errorf("mixed inputs: exit %d %s %s", code, out, errs)
	}
	// Forcing a format that does not fit, or an unknown one.
	if code, _, errs := run(t, ctx, "", "ingest", dd, "--as", "codex", filepath.Join(fixtures, "aider-repo", ".aider.chat.history.md")); code == 0 {
		t.Errorf("aider history forced as codex: exit 0 %s", errs)
	}
	if code, _, _ := run(t, ctx, "", "ingest", dd, "--as", "windsurf", injected); code != 2 {
		t.Errorf("--as windsurf: exit %d, want 2", code)
	}
	code, out, errs = run(t, ctx, "", "ingest", dd, "--as", "cursor", filepath.Join(fixtures, "spec-repo", ".specstory", "history", "2025-04-26_22-29-retry-policy.md"))
	if code != 0 || !strings.Contains(out, "(specstory)") || !strings.Contains(out, "specstory session:") {
		t.Errorf("--as cursor: exit %d %s %s", code, out, errs)
	}
}

func TestEvalFilterCommand(t *testing.T) {
	isolate(t) // eval filter uses its own temporary store
	code, out, errs := run(t, context.Background(), "", "eval", "filter", "--passes", "2", "--json", "../eval/testdata/filter-tiny.jsonl")
	if code != 0 {
		t.Fatalf("eval filter: %d %s", code, errs)
	}
	var rep struct {
		Passes []struct {
			ByLabel map[string]struct {
				Total, Stored int
				FilteredBy    map[string]int `json:"filtered_by"`
			} `json:"by_label"`
			SubstantiveRecall float64 `json:"substantive_recall"`
			NoiseRejection    float64 `json:"noise_rejection"`
			LowRejection      float64 `json:"low_rejection"`
			PreJudgeShare     float64 `json:"pre_judge_share"`
		} `json:"passes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Passes) != 2 || rep.Passes[0].ByLabel["noise"].Total == 0 {
		t.Fatalf("report: %s", out)
	}
	code, out, _ = run(t, context.Background(), "", "eval", "filter", "../eval/testdata/filter-tiny.jsonl")
	if code != 0 || !strings.Contains(out, "substantive recall") || !strings.Contains(out, "filtered by") {
		t.Fatalf("table: %d %s", code, out)
	}
	if code, _, _ := run(t, context.Background(), "", "eval", "filter", "--passes", "0", "../eval/testdata/filter-tiny.jsonl"); code != 2 {
		t.Errorf("--passes 0: exit %d, want 2", code)
	}
}

// TestIngestBatches: a request holds whole sessions; only a session larger
// than a request is cut, and then between two user turns.
func TestIngestBatches(t *testing.T) {
	ex := func(session string, prompt bool, size int) memory.Exchange {
		e := memory.Exchange{SessionID: session, Assistant: strings.Repeat("a", size), ToolLoop: !prompt}
		if prompt {
			e.User = "q"
		}
		return e
	}
	var exs []memory.Exchange
	for i := 0; i < 300; i++ { // one session of 300 exchanges, a turn every 10
		exs = append(exs, ex("s1", i%10 == 0, 10))
	}
	exs = append(exs, ex("s2", true, 10), ex("s2", false, 10))
	got := ingestBatches(exs, 1<<20)
	if len(got) != 1 || len(got[0]) != 302 {
		t.Fatalf("small sessions: %d batches, want one with everything", len(got))
	}
	// A byte budget of ~100 exchanges cuts s1, at turn starts only.
	got = ingestBatches(exs, 100*(10+512+1)+10)
	total := 0
	for i, b := range got {
		total += len(b)
		if i > 0 && b[0].User == "" && b[0].SessionID == got[i-1][len(got[i-1])-1].SessionID {
			t.Fatalf("batch %d starts mid-turn", i)
		}
	}
	if total != len(exs) || len(got) < 3 {
		t.Fatalf("%d batches, %d exchanges in all (want %d)", len(got), total, len(exs))
	}
}

// TestIngestInputErrors: an input that cannot be read is refused before
// anything is stored, with a message that names it and says what to do;
// a directory says to give its files (it once read "read DIR: read DIR:
// is a directory").
func TestIngestInputErrors(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"directory", []string{dir}, []string{dir + " is a directory", filepath.Join(dir, "*")}},
		{"missing file", []string{filepath.Join(dir, "missing.jsonl")}, []string{"missing.jsonl", "no such file"}},
	} {
		code, out, errs := run(t, ctx, "", append([]string{"ingest", dd}, tc.args...)...)
		if code == 0 {
			t.Errorf("%s: exit 0\n%s", tc.name, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q does not say %q", tc.name, errs, w)
			}
		}
		if strings.Count(errs, "is a directory") > 1 {
			t.Errorf("%s: stderr repeats itself: %q", tc.name, errs)
		}
	}
}

// TestReadInputChecks: readHead (the check of every input) and readInput
// (the whole read) refuse the same inputs with the same messages, both
// through openInput: a directory (naming its files), a missing file, a
// file larger than maxIngestFile (refused from its size, before a byte
// is read); stdin is read by readInput alone.
func TestReadInputChecks(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(file, []byte("# Notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.md")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.jsonl")
	if f, err := os.Create(huge); err != nil {
		t.Fatal(err)
	} else if err := errors.Join(f.Truncate(maxIngestFile+1), f.Close()); err != nil { // sparse
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sessions")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       string // the whole text read; or, with wantErr, what the error says
		wantErr    bool
	}{
		{"file", file, "# Notes\n", false},
		{"empty file", empty, "", false},
		{"directory", sub, sub + " is a directory: give the session files in it (memtray ingest " + filepath.Join(sub, "*") + ")", true},
		{"missing", filepath.Join(dir, "missing.jsonl"), "no such file", true},
		{"too large", huge, huge + ": larger than 256 MiB", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, size, herr := readHead(tc.path, 4)
			data, rerr := readInput(&Env{Stdin: strings.NewReader("stdin")}, tc.path)
			if tc.wantErr {
				for fn, err := range map[string]error{"readHead": herr, "readInput": rerr} {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("%s = %v, want an error saying %q", fn, err, tc.want)
					}
				}
				return
			}
			if herr != nil || rerr != nil {
				t.Fatalf("readHead: %v; readInput: %v", herr, rerr)
			}
			if want := tc.want[:min(4, len(tc.want))]; string(head) != want || size != int64(len(tc.want)) {
				t.Errorf("readHead = %q, %d; want %q, %d", head, size, want, len(tc.want))
			}
			if string(data) != tc.want {
				t.Errorf("readInput = %q, want %q", data, tc.want)
			}
		})
	}
	if data, err := readInput(&Env{Stdin: strings.NewReader("from stdin")}, "-"); err != nil || string(data) != "from stdin" {
		t.Errorf("readInput(-) = %q, %v", data, err)
	}
}

// TestFlagsForHint: the flags a suggested command carries reach the same
// store: --config when the config is not the default one, --data-dir when
// the data dir is not the one that config gives by itself (a flag or
// $MEMTRAY_DATA_DIR chose it); none for an unreadable config.
func TestFlagsForHint(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("MEMTRAY_CONFIG", "")
	def := config.DefaultDataDir()
	other := filepath.Join(t.TempDir(), "data")
	withDataDir := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(withDataDir, []byte(`{"data_dir": "`+other+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"data_dir": 7}`), 0o600); err != nil {
		t.Fatal(err)
	}
	q := agentsetup.ShellQuote
	for _, tc := range []struct {
		name      string
		c         common
		env, want string
	}{
		{"defaults", common{}, "", ""},
		{"another data dir", common{dataDir: other}, "", " --data-dir " + q(other)},
		{"another data dir from the environment", common{}, other, " --data-dir " + q(other)},
		{"another config, its data dir", common{configPath: withDataDir}, "", " --config " + q(withDataDir)},
		{"another config, the default data dir", common{configPath: withDataDir, dataDir: def}, "",
			" --config " + q(withDataDir) + " --data-dir " + q(def)},
		{"an unreadable config", common{configPath: bad}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MEMTRAY_DATA_DIR", tc.env)
			if got := tc.c.flagsForHint(); got != tc.want {
				t.Fatalf("flagsForHint = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestIngestReportText: the printed report counts what the pipeline
// decided as turns when a turn spans several exchanges (it printed
// "exchanges 161: stored 10, rejected 3", leaving 148 unaccounted for),
// sums several inputs up and says where to look at the result, with the
// flags that reach the same store (a plain `memtray list` after ingesting
// with --data-dir listed the default store, without them).
func TestIngestReportText(t *testing.T) {
	dir := isolate(t)
	dd := "--data-dir=" + dir
	ctx := context.Background()
	fixtures := filepath.Join(t.TempDir(), "testdata")
	if err := os.CopyFS(fixtures, os.DirFS(filepath.Join("..", "transcript", "testdata"))); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(t.TempDir(), "NOTES.md")
	os.WriteFile(doc, []byte("# Tiles\n\nForecast tiles are cached in Redis under `tile:<z>:<x>:<y>`; the cache TTL follows the model run.\n"), 0o600)
	inputs := []string{"testdata/session.jsonl", filepath.Join(fixtures, "codex.jsonl"), doc}
	code, out, errs := run(t, ctx, "", append([]string{"ingest", dd, "--json"}, inputs...)...)
	var reps []IngestReport
	if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != 3 {
		t.Fatalf("ingest --json: exit %d %s %s", code, out, errs)
	}
	var want []string
	memories := 0
	for _, r := range reps {
		decided := 0
		for _, n := range r.Verdicts {
			decided += n
		}
		switch {
		case r.As == "document":
			want = append(want, "  document: stored 1\n")
		case decided != r.Exchanges:
			want = append(want, fmt.Sprintf("  exchanges %d, decided as %s: ", r.Exchanges, nOf(decided, "turn")))
		default:
			t.Fatalf("%s: every exchange decided on its own (%d): the fixture no longer has a tool loop", r.File, decided)
		}
		memories += r.Memories
	}
	// The same inputs again, printed: all duplicates now, the same shape.
	code, out, errs = run(t, ctx, "", append([]string{"ingest", dd}, inputs...)...)
	if code != 0 {
		t.Fatalf("ingest: exit %d %s", code, errs)
	}
	want = want[:2] // the document is a duplicate now
	flags := " --config " + os.Getenv("MEMTRAY_CONFIG") + " --data-dir " + dir
	want = append(want, "total: 3 inputs, memories written 0, ", "`memtray list"+flags+"`", "`memtray search"+flags+" QUERY`", "`memtray decisions"+flags+"`")
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
	if memories == 0 {
		t.Errorf("the first ingest wrote nothing: %+v", reps)
	}
}

// TestIngestNoProjectNote: an Aider history renamed and moved out of its
// repository belongs to the folder holding it (at e6cd3fa it had no
// project, so its memories were in reach of every prompt in every
// project); only a history read from stdin, which has no place, has no
// project, and the note says so and how to file it under one; with
// --project there is no note.
func TestIngestNoProjectNote(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	history, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "aider-repo", ".aider.chat.history.md"))
	if err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), "histories", "tiles.aider.chat.history.md")
	os.MkdirAll(filepath.Dir(moved), 0o700)
	os.WriteFile(moved, history, 0o600)
	code, out, errs := run(t, ctx, "", "ingest", dd, "--json", moved)
	var reps []IngestReport
	if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != 1 || reps[0].Transcript == nil || reps[0].Transcript.Project != "histories" {
		t.Fatalf("moved history: exit %d %s %s", code, out, errs)
	}
	if strings.Contains(errs, "no project") {
		t.Errorf("a note of no project for a file in a folder: %q", errs)
	}
	code, out, errs = run(t, ctx, string(history), "ingest", dd, "--json", "--as", "aider", "-")
	reps = nil
	if code != 0 || json.Unmarshal([]byte(out), &reps) != nil || len(reps) != 1 || reps[0].Transcript == nil || reps[0].Transcript.Project != "" {
		t.Fatalf("stdin: exit %d %s %s", code, out, errs)
	}
	if !strings.Contains(errs, "-: no project found") || !strings.Contains(errs, "--project NAME") {
		t.Errorf("no note of the missing project: %q", errs)
	}
	code, _, errs = run(t, ctx, string(history), "ingest", dd, "--as", "aider", "--project", "tiles", "-")
	if code != 0 || strings.Contains(errs, "no project") {
		t.Errorf("--project: exit %d, %q", code, errs)
	}
}

// reportWatch is an ingest's stdout that, when the first input's report
// arrives, counts the memories of the daemon doing the ingest.
type reportWatch struct {
	strings.Builder
	first  string
	count  func() int
	atThat int
}

func (w *reportWatch) Write(p []byte) (int, error) {
	if w.atThat < 0 && strings.Contains(string(p), w.first) {
		w.atThat = w.count()
	}
	return w.Builder.Write(p)
}

// TestIngestReportsAsItGoes: each input's report is printed as soon as
// that input is done, not all at the end: importing a long history took
// minutes with nothing on the screen.
func TestIngestReportsAsItGoes(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	serveUntilEnd(t, dir)
	mems := liveClient(t, dir).Services().Memories
	count := func() int {
		res, err := mems.List(ctx, httpapi.ListRequest{Limit: 1})
		if err != nil {
			t.Errorf("list: %v", err)
		}
		return res.Total
	}
	first := filepath.Join(t.TempDir(), "codex.jsonl")
	data, err := os.ReadFile(filepath.Join("..", "transcript", "testdata", "codex.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(first, data, 0o600)
	out := &reportWatch{first: first + " (codex)", count: count, atThat: -1}
	var errb strings.Builder
	code := Run(&Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: &errb, Ctx: ctx},
		[]string{"ingest", "--data-dir", dir, first, "testdata/session.jsonl"})
	if code != 0 || out.atThat < 0 {
		t.Fatalf("ingest: exit %d, first report seen at %d\n%s%s", code, out.atThat, out.String(), errb.String())
	}
	if end := count(); out.atThat >= end {
		t.Errorf("the first input's report came after the second input was ingested (%d memories then, %d at the end):\n%s", out.atThat, end, out.String())
	}
}

// TestSessionGlob: a directory given to ingest is answered with the
// pattern of the session files in it, for each agent's layout; "DIR/*"
// named the folders of ~/.claude/projects and ~/.codex/sessions, each
// again "a directory".
func TestSessionGlob(t *testing.T) {
	sep := string(filepath.Separator)
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"claude code", []string{"-home-me-api/s1.jsonl", "-home-me-api/s2.jsonl", "-home-me-web/s3.jsonl",
			"-home-me-api/s1/subagents/agent-1.jsonl", "-home-me-api/s1/subagents/agent-2.jsonl",
			"-home-me-api/s1/subagents/agent-3.jsonl", "-home-me-api/s1/subagents/agent-4.jsonl",
			"-home-me-api/memory/a.md", "-home-me-api/memory/b.md", "-home-me-api/memory/c.md", "-home-me-api/memory/d.md"},
			"*" + sep + "*.jsonl"},
		{"codex", []string{"2026/01/05/rollout-a.jsonl", "2026/01/06/rollout-b.jsonl", "2025/12/31/rollout-c.jsonl"},
			"*" + sep + "*" + sep + "*" + sep + "*.jsonl"},
		{"specstory", []string{"2025-04-26_22-29-retry.md", "2025-04-27_10-00-fix.md"}, "*.md"},
		{"nothing like a session", []string{"notes.txt"}, "*"},
		{"empty", nil, "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(f))
				os.MkdirAll(filepath.Dir(p), 0o700)
				os.WriteFile(p, []byte("{}\n"), 0o600)
			}
			if got, want := sessionGlob(dir), filepath.Join(dir, tc.want); got != want {
				t.Errorf("sessionGlob = %s, want %s", got, want)
			}
		})
	}
	// Through the command: the error names the pattern.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "-home-me-api"), 0o700)
	os.WriteFile(filepath.Join(dir, "-home-me-api", "s1.jsonl"), []byte("{}\n"), 0o600)
	code, _, errs := run(t, context.Background(), "", "ingest", "--data-dir="+isolate(t), dir)
	if want := "(memtray ingest " + filepath.Join(dir, "*", "*.jsonl") + ")"; code == 0 || !strings.Contains(errs, want) {
		t.Errorf("ingest DIR: exit %d %q, want %q", code, errs, want)
	}
}

// TestIngestKeepsWhatIsValid: a session file with a tool result of
// several MiB is ingested whole, the result cut (as the pipeline reads
// results: context only); an exchange that is still invalid (an answer
// without a question) is left out and reported, and the rest of its file
// is ingested. Before, either made the whole file fail.
func TestIngestKeepsWhatIsValid(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	dir := t.TempDir()

	raw, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	blob := strings.Repeat(`ok  weatherapp/tiles 0.2s\n`, 5<<20/26)
	big := strings.Replace(string(raw), `"content": "ok  weatherapp/tiles 0.2s"`, `"content": "`+blob+`ok  weatherapp/tiles 0.2s"`, 1)
	if len(big) < 5<<20 {
		t.Fatal("the fixture's tool result was not found")
	}
	huge := filepath.Join(dir, "huge.jsonl")
	os.WriteFile(huge, []byte(big), 0o600)
	code, out, errs := run(t, ctx, "", "ingest", dd, "--json", huge)
	if code != 0 {
		t.Fatalf("oversize tool result: exit %d %s", code, errs)
	}
	var reps []IngestReport
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatal(err)
	}
	if r := reps[0]; r.Exchanges != 5 || r.Memories != 1 || len(r.Skipped) != 0 || r.Transcript.Cut != 1 {
		t.Fatalf("oversize tool result: %+v", r)
	}
	if code, out, _ = run(t, ctx, "", "ingest", dd, huge); code != 0 || !strings.Contains(out, "oversize content cut in 1 exchange (tool results to 8 KiB") {
		t.Fatalf("oversize tool result, text report: %d\n%s", code, out)
	}

	exs := filepath.Join(dir, "ex.jsonl")
	os.WriteFile(exs, []byte(strings.Join([]string{
		`{"session_id":"s","turn":1,"user":"which port","assistant":"The tile server listens on 127.0.0.1:8089 because 8080 is taken by the proxy; never expose it publicly."}`,
		`{"session_id":"s","turn":2,"user":"and the cache?","assistant":"Cached.","answers":[{"question":"","answer":"yes"}]}`,
		`{"session_id":"s","turn":3,"user":"where do tiles expire","assistant":"Tiles in Redis expire with the forecast model run, because the TTL is set from the run's timestamp in tiles/cache.go."}`,
	}, "\n")+"\n"), 0o600)
	code, out, errs = run(t, ctx, "", "ingest", dd, "--as", "exchanges", "--project", "weatherapp", exs)
	want := "skipped 1 exchange: exchange 2: invalid: answers[0] has no question"
	if code != 0 || !strings.Contains(out, want) || !strings.Contains(out, "exchanges 2: stored 1, rejected 1") {
		t.Fatalf("an invalid exchange: exit %d, want %q\n%s%s", code, want, out, errs)
	}
	code, out, _ = run(t, ctx, "", "ingest", dd, "--json", "--as", "exchanges", "--project", "weatherapp", exs)
	reps = nil
	if err := json.Unmarshal([]byte(out), &reps); code != 0 || err != nil || len(reps[0].Skipped) != 1 || reps[0].Skipped[0].Exchange != 2 || reps[0].Skipped[0].Turn != 2 {
		t.Fatalf("--json: %d %v %s", code, err, out)
	}
}

// TestIngestExchangesCountsPrompts: `memtray ingest --as exchanges` of a
// session without user_turns numbers its turns by its prompts over the
// whole input, so the run sent after a skipped invalid exchange is
// numbered too ("turn 3", the skipped prompt counted), not only the run
// that holds the session's start.
func TestIngestExchangesCountsPrompts(t *testing.T) {
	dir := isolate(t)
	exs := filepath.Join(t.TempDir(), "ex.jsonl")
	os.WriteFile(exs, []byte(
		`{"session_id":"s","turn":1,"user":"which port","assistant":"The tile server listens on 127.0.0.1:8089 because 8080 is taken by the proxy."}`+"\n"+
			`{"session_id":"s","turn":2,"user":"and the cache","answers":[{"question":"","answer":"yes"}],"assistant":"ok"}`+"\n"+
			`{"session_id":"s","turn":3,"user":"where are tiles kept","assistant":"Forecast tiles are cached in Redis under tile keys because the model run sets their TTL."}`+"\n"), 0o600)
	code, out, errs := run(t, context.Background(), "", "ingest", "--data-dir="+dir, "--details", "--as", "exchanges", "--project", "weatherapp", exs)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	for _, w := range []string{"    turn 1 ", "    turn 3 "} {
		if !strings.Contains(out, w) {
			t.Errorf("report lacks %q:\n%s", w, out)
		}
	}
}

// TestIngestExchangesAreHistory: `--as exchanges` reads a session's record,
// so its memories have a session's source (transcript, not cli: a memory
// of no project added on purpose reaches every project) and, like a
// history of no working directory, the project each exchange names, else
// --project, else the folder of the file; stdin has no folder.
func TestIngestExchangesAreHistory(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	folder := filepath.Join(t.TempDir(), "ledger-notes")
	os.MkdirAll(folder, 0o700)
	file := filepath.Join(folder, "exchanges.jsonl")
	os.WriteFile(file, []byte(
		`{"session_id":"s1","user":"which port","assistant":"The tile server listens on 127.0.0.1:8089 because 8080 is taken by the proxy; never expose it publicly."}`+"\n"+
			`{"session_id":"s2","project":"harbor","user":"how do deploys run","assistant":"The harbor deploy script lives in deploy/harbor.sh because the registry needs a login first; it pushes to registry.internal:5000."}`+"\n"), 0o600)
	if code, out, errs := run(t, ctx, "", "ingest", dd, "--as", "exchanges", file); code != 0 {
		t.Fatalf("ingest: %d %s %s", code, out, errs)
	}
	stdin := `{"session_id":"s3","user":"where are the fixtures","assistant":"The ledger fixtures live in testdata/ledger/*.json and are regenerated by go generate ./ledger, never by hand."}` + "\n"
	if code, out, errs := run(t, ctx, stdin, "ingest", dd, "--as", "exchanges", "-"); code != 0 {
		t.Fatalf("ingest stdin: %d %s %s", code, out, errs)
	}
	_, out, _ := run(t, ctx, "", "list", dd, "--json")
	var page struct {
		Memories []struct {
			Text    string `json:"text"`
			Project string `json:"project"`
			Source  string `json:"source"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(out), &page); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"tile server": "ledger-notes", "harbor deploy": "harbor", "ledger fixtures": ""}
	found := 0
	for _, m := range page.Memories {
		for text, project := range want {
			if !strings.Contains(m.Text, text) {
				continue
			}
			found++
			if m.Project != project || m.Source != memory.SourceTranscript {
				t.Errorf("%q: project %q source %q, want project %q source %q", text, m.Project, m.Source, project, memory.SourceTranscript)
			}
		}
	}
	if found != len(want) {
		t.Fatalf("found %d of the %d memories:\n%s", found, len(want), out)
	}
}

// TestIngestAgainFilesUnderProject: a Claude Code session whose records
// name no working directory, in a ~/.claude/projects folder whose
// directory is not on this machine, is of no project (the note says why);
// once the directory is (the repository cloned), running the same
// `memtray ingest` again files what the first run stored under its
// project, and stores nothing again.
func TestIngestAgainFilesUnderProject(t *testing.T) {
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	data, err := os.ReadFile(filepath.Join("testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	data = regexp.MustCompile(`"cwd": "[^"]*", `).ReplaceAll(data, nil)
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(work, "src", "weather.app")
	file := filepath.Join(work, "claude", "projects", transcript.ClaudeProjectDir(repo), "sess-cli.jsonl")
	os.MkdirAll(filepath.Dir(file), 0o700)
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	projects := func() map[string]int {
		_, out, _ := run(t, ctx, "", "list", dd, "--json", "--superseded")
		var page struct {
			Memories []struct {
				Project string `json:"project"`
			} `json:"memories"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, m := range page.Memories {
			n[m.Project]++
		}
		return n
	}
	code, out, errs := run(t, ctx, "", "ingest", dd, file)
	if code != 0 || !strings.Contains(out, "memories written 1") || !strings.Contains(errs, "not on this machine") {
		t.Fatalf("first ingest: %d\n%s\n%s", code, out, errs)
	}
	if got := projects(); got[""] != 1 || len(got) != 1 {
		t.Fatalf("after the first ingest: projects %v, want 1 memory of no project", got)
	}
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	code, out, errs = run(t, ctx, "", "ingest", dd, file)
	if code != 0 || !strings.Contains(out, `project "weather.app"`) || !strings.Contains(out, "memories written 0") {
		t.Fatalf("second ingest: %d\n%s\n%s", code, out, errs)
	}
	// The summary line says it, not only --details (the decision's reason).
	if want := "memories written 0, duplicates avoided 1, re-filed 1 memory under weather.app (ingested before with no project)"; !strings.Contains(out, want) {
		t.Errorf("second ingest's summary lacks %q:\n%s", want, out)
	}
	if got := projects(); got["weather.app"] != 1 || len(got) != 1 {
		t.Fatalf("after the second ingest: projects %v, want the memory under weather.app", got)
	}
}
