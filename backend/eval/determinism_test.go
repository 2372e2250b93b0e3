package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// TestEvaluationsDeterministic: each evaluation, run twice on the same
// data, gives the same report to the last digit and, for the recall file,
// the same ranking of every query in every mode. Each run builds its own
// store, so the text index's segments differ between them: the store's
// text search ranks the same whatever the layout (store's
// TestTextSearchSameWhateverTheLayout is the test that failed before).
func TestEvaluationsDeterministic(t *testing.T) {
	ctx := context.Background()
	runs := map[string]func() (any, error){
		"recall": func() (any, error) {
			return RunRecall(ctx, "testdata/recall-tiny.json", Options{TempDir: t.TempDir(), Details: true})
		},
		"locomo": func() (any, error) {
			return RunLoCoMo(ctx, "testdata/locomo-tiny.json", Options{TempDir: t.TempDir()})
		},
		"sessions": func() (any, error) {
			rep, err := RunSessions(ctx, filepath.Join("testdata", "sessions", "set.json"), SessionsOptions{TempDir: t.TempDir()})
			if rep != nil {
				rep.Seconds = 0 // how long it took
			}
			return rep, err
		},
		"longmemeval": func() (any, error) {
			return RunLongMemEval(ctx, "testdata/longmemeval-tiny.json", Options{TempDir: t.TempDir()})
		},
	}
	for name, run := range runs {
		t.Run(name, func(t *testing.T) {
			var out [2]string
			for i := range out {
				rep, err := run()
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(rep)
				if err != nil {
					t.Fatal(err)
				}
				out[i] = string(b)
			}
			if out[0] != out[1] {
				t.Errorf("two runs differ:\n%s\n%s", out[0], out[1])
			}
		})
	}
}

// TestSessionsDumpDeterministic: the sessions dump, which shows the leg
// ranks, scores and order of what each query got (the report does not),
// is the same in every run. testdata/ties holds three projects' memories
// of the same words, which tie in both legs; ties are broken by memory id,
// so only seeded ids (SeededIDs) make the runs agree: with the store's
// random ids four runs agree about once in 200.
func TestSessionsDumpDeterministic(t *testing.T) {
	ctx := context.Background()
	var first string
	for i := range 4 {
		var dump bytes.Buffer
		rep, err := RunSessions(ctx, filepath.Join("testdata", "ties", "set.json"), SessionsOptions{TempDir: t.TempDir(), Dump: &dump})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Skipped != "" {
			t.Fatal(rep.Skipped)
		}
		if !bytes.Contains(dump.Bytes(), []byte(": 3 memories")) {
			t.Fatalf("the unrelated prompt did not get the three tied memories:\n%s", dump.String())
		}
		out := dump.String()
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("run %d's dump differs from the first:\n%s\n---\n%s", i+1, first, out)
		}
	}
}

// TestSessionsScoresSameHoweverLongTheRunTakes: two runs of the sessions
// evaluation's daemon that do the same things, one of them slower, give
// the same scores to the last bit. On the wall clock a memory's age at
// recall was the time the run had taken, so the recency factor, and every
// composite score with it, moved from run to run (below the dump's third
// decimal, except when a score sat on a rounding edge: 1.346 in one run,
// 1.347 in the next).
func TestSessionsScoresSameHoweverLongTheRunTakes(t *testing.T) {
	ctx := context.Background()
	set, err := LoadSessionSet(filepath.Join("testdata", "sessions", "set.json"))
	if err != nil {
		t.Fatal(err)
	}
	ls := &set.Sessions[0]
	exs, err := readSession(filepath.Join("testdata", "sessions", ls.File), ls)
	if err != nil {
		t.Fatal(err)
	}
	run := func(pause time.Duration) []memory.Hit {
		t.Helper()
		d, dir, err := openSessionsDaemon(ctx, t.TempDir(), newSteppedClock())
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			d.Close()
			os.RemoveAll(dir)
		}()
		if _, err := d.Feed().Ingest(ctx, httpapi.IngestRequest{Exchanges: exs}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause) // a slower machine
		rec, err := d.Services().Recaller.Recall(ctx, search.RecallRequest{SessionID: "same",
			Prompt: ls.Facts[0].Queries[0], Project: ls.Project, Event: search.EventPrompt})
		if err != nil {
			t.Fatal(err)
		}
		return rec.Hits
	}
	first := run(0)
	if len(first) == 0 {
		t.Fatal("the query got nothing: no score to compare")
	}
	got := run(50 * time.Millisecond)
	if len(got) != len(first) {
		t.Fatalf("the slower run got %d hits, the first %d", len(got), len(first))
	}
	for j := range got {
		a, b := first[j], got[j]
		if a.Memory.ID != b.Memory.ID || math.Float64bits(a.Score) != math.Float64bits(b.Score) || a.Breakdown != b.Breakdown {
			t.Fatalf("hit %d: the slower run %s %.17g (recency %.17g), the first %s %.17g (recency %.17g)",
				j+1, b.Memory.ID, b.Score, b.Breakdown.Recency, a.Memory.ID, a.Score, a.Breakdown.Recency)
		}
	}
	if first[0].Breakdown.Recency == 1 {
		t.Errorf("recency %v: the clock did not move between writing and recalling", first[0].Breakdown.Recency)
	}
}
