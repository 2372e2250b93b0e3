package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
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
