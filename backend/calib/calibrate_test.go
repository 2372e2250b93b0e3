package calib

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

var t0 = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

// TestRulesReproduceBuiltin: the built-in model's derived thresholds are
// the values memtray shipped with (the rules' fractions were fitted on
// it). It fails when the built-in model changes enough to move them: then
// the new values are the model's calibration, and the eval sets should be
// run again before refitting the fractions.
func TestRulesReproduceBuiltin(t *testing.T) {
	r, err := Calibrate(context.Background(), embed.NewBuiltin(), Builtin(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range Rules {
		got := r.Thresholds[rule.Name]
		t.Logf("%-28s derived %.3f, shipped %.3f (%s %.3f .. %s %.3f)", rule.Name, got, rule.Builtin,
			rule.Lo, quantileOf(r, rule.Lo), rule.Hi, quantileOf(r, rule.Hi))
		if math.Abs(got-rule.Builtin) > 0.005 {
			t.Errorf("%s: derived %.3f, shipped %.3f", rule.Name, got, rule.Builtin)
		}
	}
}

// quantileOf reads an anchor from a result's summaries (P10, P50 or P90).
func quantileOf(r *Result, a Anchor) float64 {
	s := r.Stats[a.Dist]
	switch a.Q {
	case 0.1:
		return s.P10
	case 0.5:
		return s.P50
	case 0.9:
		return s.P90
	}
	return math.NaN()
}

// TestScaledMovesThresholds: a model whose cosines are an affine function
// of the built-in model's gets that function of the built-in thresholds.
func TestScaledMovesThresholds(t *testing.T) {
	ctx := context.Background()
	base, err := Calibrate(ctx, embed.NewBuiltin(), Builtin(), t0)
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []float64{0, 0.5, Compressed, 2} {
		sc := Scaled{Inner: embed.NewBuiltin(), Offset: off}
		r, err := Calibrate(ctx, sc, Builtin(), t0)
		if err != nil {
			t.Fatal(err)
		}
		for _, rule := range Rules {
			want := sc.Map(base.Thresholds[rule.Name])
			if got := r.Thresholds[rule.Name]; math.Abs(got-want) > 0.0015 {
				t.Errorf("offset %.2f: %s = %.4f, want %.4f", off, rule.Name, got, want)
			}
		}
		if off == Compressed && r.Stats[DistUnrelated].Min < 0.6 {
			t.Errorf("compressed: unrelated pairs from %.3f, want at least 0.6", r.Stats[DistUnrelated].Min)
		}
	}
}

// flat embeds every text alike: no class is above another.
type flat struct{}

func (flat) Model() string { return "test-flat" }
func (flat) Dim() int      { return 2 }
func (flat) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// short returns one vector too few.
type short struct{ flat }

func (short) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)-1), nil
}

func TestCalibrateRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		emb  memory.Embedder
		want string
	}{
		{"flat", flat{}, "does not separate"},
		{"short", short{}, "vectors for"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Calibrate(context.Background(), tt.emb, Builtin(), t0); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// counting counts the texts embedded.
type counting struct {
	memory.Embedder
	n int
}

func (c *counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n += len(texts)
	return c.Embedder.Embed(ctx, texts)
}

// TestEnsure: a model's calibration is made once, stored in the store,
// read back after a restart, made for a new model, and made again when
// the stored one is stale or damaged.
func TestEnsure(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b := &counting{Embedder: embed.NewBuiltin()}
	open := func() *store.Store {
		st, err := store.Open(ctx, store.Options{Dir: dir, Model: b.Model(), Dim: b.Dim(), Clock: memory.FixedClock{T: t0}})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	r, made, err := Ensure(ctx, st, b, t0)
	if err != nil || !made || b.n == 0 || !r.Current(b.Model()) {
		t.Fatalf("first: made %v, embedded %d, err %v", made, b.n, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	defer st.Close()
	b.n = 0
	r2, made, err := Ensure(ctx, st, b, t0.Add(time.Hour))
	if err != nil || made || b.n != 0 || !r2.At.Equal(t0) || r2.Thresholds[VectorFloor] != r.Thresholds[VectorFloor] {
		t.Fatalf("after restart: made %v, embedded %d, at %v, err %v", made, b.n, r2.At, err)
	}
	sc := Scaled{Inner: embed.NewBuiltin(), Offset: Compressed}
	r3, made, err := Ensure(ctx, st, sc, t0)
	if err != nil || !made || r3.Model != sc.Model() || r3.Thresholds[VectorFloor] <= r.Thresholds[VectorFloor] {
		t.Fatalf("other model: made %v, %+v, err %v", made, r3, err)
	}
	for _, tt := range []struct {
		name string
		data string
	}{
		{"stale set", strings.Replace(string(mustEncode(t, r)), r.Set, "000000000000", 1)},
		{"damaged", "{"},
		{"missing threshold", strings.Replace(string(mustEncode(t, r)), VectorFloor, "x", 1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := st.SetCalibration(b.Model(), []byte(tt.data)); err != nil {
				t.Fatal(err)
			}
			b.n = 0
			if _, made, err := Ensure(ctx, st, b, t0); err != nil || !made || b.n == 0 {
				t.Fatalf("made %v, embedded %d, err %v", made, b.n, err)
			}
		})
	}
}

func mustEncode(t *testing.T, r *Result) []byte {
	t.Helper()
	data, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestApply(t *testing.T) {
	r := &Result{Model: "m", Thresholds: map[string]float64{DuplicateSimilarity: 0.97, SourceSimilarity: 0.9,
		MergeSimilarity: 0.93, VectorFloor: 0.71, SkillFloor: 0.74}}
	for _, tt := range []struct {
		name   string
		model  string
		r      *Result
		set    func(c *config.Config)
		want   map[string]float64
		source map[string]string
	}{
		{"calibrated", "m", r, func(*config.Config) {},
			map[string]float64{DuplicateSimilarity: 0.97, SourceSimilarity: 0.9, MergeSimilarity: 0.93, VectorFloor: 0.71, SkillFloor: 0.74},
			map[string]string{DuplicateSimilarity: SourceCalibrated, SkillFloor: SourceCalibrated}},
		{"config overrides", "m", r, func(c *config.Config) { c.Search.VectorFloor, c.Recall.SkillFloor = 0.5, 0.2 },
			map[string]float64{VectorFloor: 0.5, SkillFloor: 0.2, DuplicateSimilarity: 0.97},
			map[string]string{VectorFloor: SourceConfig, SkillFloor: SourceConfig, DuplicateSimilarity: SourceCalibrated}},
		{"no calibration, built-in", "builtin-wordvec-v1", nil, func(*config.Config) {},
			map[string]float64{DuplicateSimilarity: 0.92, SourceSimilarity: 0.75, MergeSimilarity: 0.7, VectorFloor: 0.3, SkillFloor: 0.35},
			map[string]string{MergeSimilarity: SourceDefault}},
		{"no calibration, semantic", "ollama:nomic-embed-text", nil, func(*config.Config) {},
			map[string]float64{MergeSimilarity: 0.88, DuplicateSimilarity: 0.92},
			map[string]string{MergeSimilarity: SourceDefault}},
		{"another model's calibration", "other", r, func(*config.Config) {},
			map[string]float64{VectorFloor: 0.3, MergeSimilarity: 0.88},
			map[string]string{VectorFloor: SourceDefault}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Default()
			for _, rule := range Rules {
				*field(&cfg, rule.Name) = 0 // not set
			}
			tt.set(&cfg)
			vals := Apply(&cfg, tt.r, tt.model)
			if len(vals) != len(Rules) {
				t.Fatalf("%d values", len(vals))
			}
			for _, v := range vals {
				if got := *field(&cfg, v.Name); got != v.Value {
					t.Errorf("%s: config %v, value %v", v.Name, got, v.Value)
				}
				if want, ok := tt.want[v.Name]; ok && v.Value != want {
					t.Errorf("%s = %v, want %v", v.Name, v.Value, want)
				}
				if want, ok := tt.source[v.Name]; ok && v.Source != want {
					t.Errorf("%s from %s, want %s", v.Name, v.Source, want)
				}
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("applied config invalid: %v", err)
			}
		})
	}
}
