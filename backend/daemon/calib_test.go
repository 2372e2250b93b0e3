package daemon

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
)

// thresholdsByName indexes the thresholds in effect.
func thresholdsByName(t *testing.T, d *Daemon) map[string]calib.Value {
	t.Helper()
	s, err := d.Status().Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]calib.Value{}
	for _, v := range s.Thresholds {
		out[v.Name] = v
	}
	if len(out) != len(calib.Rules) {
		t.Fatalf("stats list %d thresholds, want %d", len(out), len(calib.Rules))
	}
	return out
}

// TestCalibrationAtOpen: a new store calibrates its model once (kept in
// the store across restarts), the values apply where the config leaves a
// threshold unset, and a config value wins.
func TestCalibrationAtOpen(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Search.VectorFloor = 0.25
	d := openAt(t, cfg, nil)
	got := thresholdsByName(t, d)
	for _, rule := range calib.Rules {
		v := got[rule.Name]
		switch rule.Name {
		case calib.VectorFloor:
			if v.Source != calib.SourceConfig || v.Value != 0.25 || v.Calibrated != rule.Builtin {
				t.Errorf("%s: %+v, want the config's 0.25 over the calibrated %v", rule.Name, v, rule.Builtin)
			}
		default:
			if v.Source != calib.SourceCalibrated || v.Value != rule.Builtin {
				t.Errorf("%s: %+v, want calibrated %v", rule.Name, v, rule.Builtin)
			}
		}
	}
	data, ok, err := d.store.Calibration(embed.BuiltinModel)
	if err != nil || !ok {
		t.Fatalf("no calibration stored: %v", err)
	}
	r, err := calib.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openAt(t, cfg, nil)
	data2, _, _ := d.store.Calibration(embed.BuiltinModel)
	if r2, err := calib.Decode(data2); err != nil || !r2.At.Equal(r.At) {
		t.Fatalf("calibrated again after a restart: %v", err)
	}
	if got := thresholdsByName(t, d)[calib.DuplicateSimilarity]; got.Source != calib.SourceCalibrated {
		t.Fatalf("after a restart: %+v", got)
	}
}

// TestCalibrationFollowsSwitch: a re-embedding calibrates the new model
// and its values apply at once; switching back reuses the stored record.
func TestCalibrationFollowsSwitch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lex := embed.NewLexical() // a model on another scale than the built-in one
	f := ollamafake.New(t, ollamafake.Options{Models: []string{"nomic-embed-text:latest"}, Dim: lex.Dim(),
		Vector: func(_, text string, _ int) []float32 { return lex.EmbedOne(text) }})
	d := openAt(t, ollamaConfig(t, f.URL()), nil)
	seed(t, d, 5)
	run := func(req httpapi.ReembedRequest) {
		t.Helper()
		j, err := d.Services().Embedders.Reembed(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if j = waitJob(t, d, j); j.State != httpapi.JobDone {
			t.Fatalf("switch: %+v", j)
		}
	}
	run(httpapi.ReembedRequest{Provider: "ollama"})
	model := d.Embedder().Model()
	data, ok, err := d.store.Calibration(model)
	if err != nil || !ok {
		t.Fatalf("no calibration of %s after the switch: %v", model, err)
	}
	r, err := calib.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, rule := range calib.Rules {
		v := thresholdsByName(t, d)[rule.Name]
		if v.Source != calib.SourceCalibrated || v.Value != r.Thresholds[rule.Name] {
			t.Errorf("%s after the switch: %+v, want %s's calibrated %v", rule.Name, v, model, r.Thresholds[rule.Name])
		}
		if v.Value != rule.Builtin {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("no threshold moved with the model")
	}
	run(httpapi.ReembedRequest{Provider: "builtin"})
	for _, rule := range calib.Rules {
		if v := thresholdsByName(t, d)[rule.Name]; v.Value != rule.Builtin || v.Source != calib.SourceCalibrated {
			t.Errorf("%s after switching back: %+v", rule.Name, v)
		}
	}
}

// TestCalibrationFails: a model that does not separate the set's classes
// (the fake's hashed vectors: every two texts nearly orthogonal) keeps
// the values memtray used before calibration, 0.88 for merges.
func TestCalibrationFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeOllama(t, 24, "nomic-embed-text:latest")
	d := openAt(t, ollamaConfig(t, f.URL()), nil)
	seed(t, d, 5)
	j, err := d.Services().Embedders.Reembed(ctx, httpapi.ReembedRequest{Provider: "ollama"})
	if err != nil {
		t.Fatal(err)
	}
	if j = waitJob(t, d, j); j.State != httpapi.JobDone {
		t.Fatalf("switch: %+v", j)
	}
	for _, rule := range calib.Rules {
		want := rule.Builtin
		if rule.Name == calib.MergeSimilarity {
			want = 0.88
		}
		if v := thresholdsByName(t, d)[rule.Name]; v.Source != calib.SourceDefault || v.Value != want {
			t.Errorf("%s: %+v, want the default %v", rule.Name, v, want)
		}
	}
}

// flaky is the built-in model under another name whose server does not
// answer while down is set.
type flaky struct {
	*embed.Builtin
	down atomic.Bool
}

func (f *flaky) Model() string { return "test-flaky" }

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.down.Load() {
		return nil, fmt.Errorf("test-flaky: %w", memory.ErrUnavailable)
	}
	return f.Builtin.Embed(ctx, texts)
}

// TestCalibrationRetried: a model whose server does not answer at open
// starts on the default thresholds and is calibrated once it answers.
func TestCalibrationRetried(t *testing.T) {
	defer func(d time.Duration) { calibRetry = d }(calibRetry)
	calibRetry = 10 * time.Millisecond
	f := &flaky{Builtin: embed.NewBuiltin()}
	f.down.Store(true)
	d, err := Open(context.Background(), Options{Config: testConfig(t), Embedder: f})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v := thresholdsByName(t, d)[calib.VectorFloor]; v.Source != calib.SourceDefault {
		t.Fatalf("while the server is down: %+v", v)
	}
	f.down.Store(false)
	polltest.Wait(t, "the calibration once the server is back", func() bool {
		return thresholdsByName(t, d)[calib.VectorFloor].Source == calib.SourceCalibrated
	}, func() string { return fmt.Sprintf("%+v", thresholdsByName(t, d)[calib.VectorFloor]) })
	if _, ok, err := d.store.Calibration("test-flaky"); !ok || err != nil {
		t.Fatalf("calibration not stored: %v", err)
	}
}
