package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if r.As != "transcript" || r.Exchanges != 5 || r.Memories != 1 || r.Transcript == nil || r.Transcript.Project != "weatherapp" {
		t.Fatalf("first replay: %+v", r)
	}
	code, out, _ = run(t, ctx, "", "ingest", dd, "testdata/session.jsonl")
	if code != 0 || !strings.Contains(out, "memories written 0, duplicates avoided 1") {
		t.Fatalf("second replay: %d\n%s", code, out)
	}

	dir := t.TempDir()
	doc := filepath.Join(dir, "NOTES.md")
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

	// Bad input: nothing of a batch is stored when one input is invalid.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"assistant\":\"fine\"}\n{\"assistant\": 3}\n"), 0o600)
	for _, args := range [][]string{
		{"ingest", dd, "--as", "exchanges", exs, bad},
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
