package eval

import (
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
