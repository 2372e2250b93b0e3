package eval

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// jsonShape decodes v's JSON into generic maps.
func jsonShape(t *testing.T, v any) map[string]any {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRunRecallTiny(t *testing.T) {
	rep, err := RunRecall(context.Background(), "testdata/recall-tiny.json", Options{TempDir: t.TempDir(), Details: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memories != 8 || rep.Queries != 5 {
		t.Fatalf("counts %d %d", rep.Memories, rep.Queries)
	}
	for _, mode := range ModeNames {
		mr := rep.Modes[mode]
		if mr == nil {
			t.Fatalf("mode %s missing", mode)
		}
		if mr.Overall.N != 4 || mr.Negatives != 1 {
			t.Errorf("%s: n %d negatives %d", mode, mr.Overall.N, mr.Negatives)
		}
		if ex := mr.ByType["exact-identifier"]; ex.N != 2 || ex.RecallAt5 != 1 || ex.MRR != 1 {
			t.Errorf("%s exact-identifier: %+v", mode, ex)
		}
		if _, ok := mr.ByType["negative"]; ok {
			t.Errorf("%s: negative queries in by_type", mode)
		}
		// The vector leg always has candidates: without floors they stay.
		if mode != "bm25" && rep.WithoutFloors[mode].NegativeEmptyRate != 0 {
			t.Errorf("%s: without floors a negative query returned nothing", mode)
		}
	}
	// Every detail's metrics add up to the report's.
	var sum float64
	n := 0
	for _, d := range rep.Details {
		if d.Mode == "hybrid" && d.Floors && len(d.Relevant) > 0 {
			rel := map[string]bool{}
			for _, id := range d.Relevant {
				rel[id] = true
			}
			sum += RecallAt(d.Ranked, rel, 5)
			n++
		}
	}
	if !near(sum/float64(n), rep.Modes["hybrid"].Overall.RecallAt5) {
		t.Errorf("details R@5 %v, report %v", sum/float64(n), rep.Modes["hybrid"].Overall.RecallAt5)
	}
	// The JSON shape of the issue: {"modes": {"hybrid": R, "bm25": R, "vector": R}}.
	rep.Details = nil
	m := jsonShape(t, rep)
	modes := m["modes"].(map[string]any)
	if got := keys(modes); !reflect.DeepEqual(got, []string{"bm25", "hybrid", "vector"}) {
		t.Fatalf("modes %v", got)
	}
	r := modes["hybrid"].(map[string]any)
	if got := keys(r); !reflect.DeepEqual(got, []string{"by_type", "negative_empty_rate", "overall"}) {
		t.Errorf("R keys %v", got)
	}
	want := []string{"mrr", "ndcg_at_10", "recall_at_10", "recall_at_5"}
	if got := keys(r["overall"].(map[string]any)); !reflect.DeepEqual(got, want) {
		t.Errorf("overall keys %v", got)
	}
	if got := keys(r["by_type"].(map[string]any)["short"].(map[string]any)); !reflect.DeepEqual(got, want) {
		t.Errorf("by_type keys %v", got)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "exact-identifier") || !strings.Contains(b.String(), "negatives empty") {
		t.Errorf("table: %v\n%s", err, b.String())
	}
}

func TestRecallFileErrors(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"malformed":        `{"memories": [`,
		"no memories":      `{"memories": [], "queries": [{"q": "x", "relevant": []}]}`,
		"unknown relevant": `{"memories": [{"id": "a", "text": "t"}], "queries": [{"q": "x", "relevant": ["b"]}]}`,
		"repeated id":      `{"memories": [{"id": "a", "text": "t"}, {"id": "a", "text": "u"}], "queries": [{"q": "x", "relevant": []}]}`,
		"bad kind":         `{"memories": [{"id": "a", "text": "t", "kind": "gossip"}], "queries": [{"q": "x", "relevant": []}]}`,
		"empty query":      `{"memories": [{"id": "a", "text": "t"}], "queries": [{"q": " ", "relevant": []}]}`,
	}
	for name, content := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		os.WriteFile(p, []byte(content), 0o600)
		if _, err := RunRecall(context.Background(), p, Options{TempDir: dir}); err == nil {
			t.Errorf("%s: no error", name)
		} else if name != "malformed" && !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: %v is not ErrInvalid", name, err)
		}
	}
	if _, err := RunRecall(context.Background(), filepath.Join(dir, "absent.json"), Options{}); err == nil {
		t.Error("absent file: no error")
	}
}

func TestRunLoCoMoTiny(t *testing.T) {
	rep, err := RunLoCoMo(context.Background(), "testdata/locomo-tiny.json", Options{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	// 9 turns; 5 questions with evidence ("D:1:3" and "D1:03" normalised,
	// "D2:1; D2:3" split), 1 without, 1 unresolved id (D9:9).
	if rep.Conversations != 2 || rep.Turns != 9 || rep.Questions != 5 || rep.Skipped != 1 || rep.Unresolved != 1 {
		t.Fatalf("counts %+v", rep)
	}
	for _, mode := range []string{"hybrid", "vector"} {
		// Each conversation has fewer than 50 turns and the vector leg ranks
		// them all: recall@50 is 1.
		if o := rep.Modes[mode].Overall; o.RecallAt50 != 1 || o.N != 5 {
			t.Errorf("%s overall %+v", mode, o)
		}
	}
	for _, mode := range ModeNames {
		o := rep.Modes[mode].Overall
		if !(o.RecallAt5 <= o.RecallAt10 && o.RecallAt10 <= o.RecallAt25 && o.RecallAt25 <= o.RecallAt50) {
			t.Errorf("%s: recall not monotone in k: %+v", mode, o)
		}
		if c := rep.Modes[mode].ByCategory["4"]; c.N != 3 {
			t.Errorf("%s: category 4 (numbers and strings) n = %d", mode, c.N)
		}
	}
	m := jsonShape(t, rep)
	r := m["modes"].(map[string]any)["bm25"].(map[string]any)
	if got := keys(r); !reflect.DeepEqual(got, []string{"by_category", "overall"}) {
		t.Errorf("keys %v", got)
	}
	if got := keys(r["overall"].(map[string]any)); !reflect.DeepEqual(got, []string{"recall_at_10", "recall_at_25", "recall_at_5", "recall_at_50"}) {
		t.Errorf("overall keys %v", got)
	}
	var b bytes.Buffer
	if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "4 single-hop") {
		t.Errorf("table: %v\n%s", err, b.String())
	}
}

func TestRunLongMemEvalTinyAndGzip(t *testing.T) {
	data, err := os.ReadFile("testdata/longmemeval-tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "tiny.json.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	os.WriteFile(gz, buf.Bytes(), 0o600)
	for _, path := range []string{"testdata/longmemeval-tiny.json", gz} {
		rep, err := RunLongMemEval(context.Background(), path, Options{TempDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Questions != 2 || rep.Abstention != 1 || rep.Sessions != 6 {
			t.Fatalf("%s: counts %+v", path, rep)
		}
		h := rep.Modes["hybrid"].Overall
		// Three documents per question: everything is within the top 5.
		if h.RecallAllAt5 != 1 || h.RecallAllAt10 != 1 || h.N != 2 {
			t.Errorf("%s: hybrid %+v", path, h)
		}
		// The kitchen question finds its session first.
		if c := rep.Modes["hybrid"].ByType["single-session-user"]; c.NDCGAnyAt5 != 1 {
			t.Errorf("%s: single-session-user %+v", path, c)
		}
		var b bytes.Buffer
		if err := rep.WriteTable(&b); err != nil || !strings.Contains(b.String(), "multi-session") {
			t.Errorf("table: %v\n%s", err, b.String())
		}
	}
}

func TestDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	badGz := filepath.Join(dir, "bad.json.gz")
	os.WriteFile(badGz, []byte{0x1f, 0x8b, 0, 1, 2}, 0o600)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte("[]"), 0o600)
	for _, p := range []string{bad, badGz, empty, filepath.Join(dir, "absent")} {
		if _, err := RunLoCoMo(context.Background(), p, Options{TempDir: dir}); err == nil {
			t.Errorf("locomo %s: no error", p)
		}
		if _, err := RunLongMemEval(context.Background(), p, Options{TempDir: dir}); err == nil {
			t.Errorf("longmemeval %s: no error", p)
		}
	}
}
