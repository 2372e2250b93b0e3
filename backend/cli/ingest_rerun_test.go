package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A second `memtray ingest` of the same history changes nothing: every
// turn the first run decided is replayed (its turn marks), no memory is
// added, removed, reinforced, superseded or revised. The inputs may be
// grouped otherwise the second time (each file alone first, then all at
// once): a session's turns are keyed by the session, not by the run.

// rerunChange is what a second ingest of the same inputs changed.
type rerunChange struct {
	memories int // before the second run
	added    int
	removed  int
	// fields counts the memories changed, per field of the export.
	fields map[string]int
	// again lists the decisions of the second run that were no replay.
	again []string
}

// none reports whether the second run changed nothing.
func (c rerunChange) none() bool {
	return c.added == 0 && c.removed == 0 && len(c.fields) == 0 && len(c.again) == 0
}

func (c rerunChange) String() string {
	return fmt.Sprintf("%d memories: %d added, %d removed, changed %v; %d turns decided again %v", c.memories, c.added, c.removed, c.fields, len(c.again), c.again)
}

// rerunIngest ingests inputs into a new store (each alone, or all at
// once), exports it, ingests them all at once again, exports it again and
// returns the difference.
func rerunIngest(t *testing.T, inputs []string, alone bool) rerunChange {
	t.Helper()
	dd := "--data-dir=" + isolate(t)
	ctx := context.Background()
	first := [][]string{inputs}
	if alone {
		first = nil
		for _, in := range inputs {
			first = append(first, []string{in})
		}
	}
	for _, ins := range first {
		if code, _, errs := run(t, ctx, "", append([]string{"ingest", dd}, ins...)...); code != 0 {
			t.Fatalf("ingest %v: exit %d %s", ins, code, errs)
		}
	}
	before := exportRecords(t, dd)
	code, out, errs := run(t, ctx, "", append([]string{"ingest", dd, "--json", "--details"}, inputs...)...)
	if code != 0 {
		t.Fatalf("ingest again: exit %d %s", code, errs)
	}
	var reps []IngestReport
	if err := json.Unmarshal([]byte(out), &reps); err != nil {
		t.Fatalf("ingest --json: %v", err)
	}
	after := exportRecords(t, dd)
	c := rerunChange{memories: len(before), fields: map[string]int{}}
	for _, r := range reps {
		for _, d := range r.Decisions {
			if d.Stage != "replay" {
				c.again = append(c.again, fmt.Sprintf("%s turn %d: %s at %s (%s)", filepath.Base(r.File), d.UserTurn, d.Verdict, d.Stage, d.Preview))
			}
		}
	}
	for id, m := range after {
		b, ok := before[id]
		if !ok {
			c.added++
			continue
		}
		for k := range mapsUnion(b, m) {
			if !reflect.DeepEqual(b[k], m[k]) {
				c.fields[k]++
			}
		}
	}
	for id := range before {
		if _, ok := after[id]; !ok {
			c.removed++
		}
	}
	if len(c.fields) == 0 {
		c.fields = nil
	}
	return c
}

// exportRecords exports the store of dd and returns its memories by id,
// every field as the export writes it.
func exportRecords(t *testing.T, dd string) map[string]map[string]any {
	t.Helper()
	file := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errs := run(t, context.Background(), "", "export", dd, file); code != 0 {
		t.Fatalf("export: exit %d %s", code, errs)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string]any{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("export line: %v", err)
		}
		if id, ok := m["id"].(string); ok {
			out[id] = m
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mapsUnion returns the keys of a and b.
func mapsUnion(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestIngestRerunFixture: histories written for this test (a SpecStory
// session whose second turn only repeats a command the first turn gave,
// dropped as said in an earlier turn, and whose third is narration; an
// Aider history with a thanks and a narrated linter run; a Claude Code
// session) ingested twice change nothing the second time, however the
// first run grouped them. At 9937c7b the turns that stored nothing were
// decided again: the repeated command, its first turn replayed, was
// stored the second time.
func TestIngestRerunFixture(t *testing.T) {
	inputs := []string{
		filepath.Join("testdata", "rerun", "tally", "2026-03-02_10-15-ledger-export.md"),
		filepath.Join("testdata", "rerun", "tally.aider.chat.history.md"),
		filepath.Join("testdata", "session.jsonl"),
	}
	for _, alone := range []bool{false, true} {
		name := "all at once"
		if alone {
			name = "each alone, then all at once"
		}
		t.Run(name, func(t *testing.T) {
			c := rerunIngest(t, inputs, alone)
			if c.memories == 0 {
				t.Fatalf("the first run stored nothing: %s", c)
			}
			if !c.none() {
				t.Errorf("the second run changed something: %s", c)
			}
		})
	}
}

// TestIngestRerunShared measures the same on every real session file
// under /work/shared/data (or $MEMTRAY_SHARED/data), per source; it runs
// with MEMTRAY_EVAL_LONG set (minutes), and skips without the files.
func TestIngestRerunShared(t *testing.T) {
	if testing.Short() || os.Getenv("MEMTRAY_EVAL_LONG") == "" {
		t.Skip("set MEMTRAY_EVAL_LONG=1 to ingest every shared session twice (minutes)")
	}
	sources := []struct{ name, glob string }{
		{"claude-code", "data/claude-code-transcripts/*.jsonl"},
		{"codex", "data/agent-sessions/codex/*.jsonl"},
		{"cursor", "data/agent-sessions/cursor/*.md"},
		{"aider", "data/agent-sessions/aider/*.md"},
	}
	for _, src := range sources {
		files := sharedSessionFiles(t, src.name, src.glob)
		if len(files) == 0 {
			continue
		}
		for _, alone := range []bool{false, true} {
			name := src.name + "/at once"
			if alone {
				name = src.name + "/each alone"
			}
			t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
				c := rerunIngest(t, files, alone)
				t.Logf("%s: %s", name, c)
				if !c.none() {
					t.Errorf("the second run changed something: %s", c)
				}
			})
		}
	}
}

// sharedSessionFiles lists, sorted, the shared session files matching
// glob under /work/shared (or $MEMTRAY_SHARED), and logs when there are
// none (the long measures skip that source).
func sharedSessionFiles(t *testing.T, name, glob string) []string {
	t.Helper()
	root := os.Getenv("MEMTRAY_SHARED")
	if root == "" {
		root = "/work/shared"
	}
	files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(glob)))
	slices.Sort(files)
	if len(files) == 0 {
		t.Logf("%s: no files under %s", name, root)
	}
	return files
}
