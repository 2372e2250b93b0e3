package wordvec_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/wordvec"
	"github.com/memtray/memtray/backend/eval"
)

// concat embeds a text as [sqrt(1-β)·lexical, sqrt(β)·SIF]: both halves are
// unit vectors, so the cosine is (1-β)·cos_lexical + β·cos_SIF. Queries keep
// the lexical embedder's IDF weighting (EmbedWeighted).
type concat struct {
	lex  *embed.Builtin
	m    *wordvec.Model
	beta float64
}

func (c *concat) Model() string { return fmt.Sprintf("exp-concat-%.2f", c.beta) }
func (c *concat) Dim() int      { return embed.BuiltinDim + c.m.Dim() }

func (c *concat) join(lex []float32, text string) []float32 {
	sif := c.m.Sentence(text)
	out := make([]float32, 0, c.Dim())
	a, b := float32(math.Sqrt(1-c.beta)), float32(math.Sqrt(c.beta))
	for _, x := range lex {
		out = append(out, a*x)
	}
	for _, x := range sif {
		out = append(out, b*x)
	}
	return out
}

func (c *concat) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	lex, err := c.lex.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		lex[i] = c.join(lex[i], t)
	}
	return lex, nil
}

func (c *concat) EmbedWeighted(ctx context.Context, text string, weight func(string) float64) ([]float32, error) {
	lex, err := c.lex.EmbedWeighted(ctx, text, weight)
	if err != nil {
		return nil, err
	}
	return c.join(lex, text), nil
}

// TestExperimentRetrieval compares the lexical built-in embedder with the
// lexical+SIF concatenation on ../shared/eval/recall-dev.json and LoCoMo in
// one run. Opt-in: WORDVEC_MODEL=path/to/wordvec.bin (WORDVEC_BETAS and
// WORDVEC_VW, comma-separated, choose β and search.vector_weight).
func TestExperimentRetrieval(t *testing.T) {
	path := os.Getenv("WORDVEC_MODEL")
	if path == "" {
		t.Skip("set WORDVEC_MODEL to run the retrieval experiment")
	}
	shared := os.Getenv("SHARED")
	if shared == "" {
		shared = "../../../../shared"
	}
	recallPath := shared + "/eval/recall-dev.json"
	locomoPath := shared + "/data/locomo/locomo10.json"
	if _, err := os.Stat(recallPath); err != nil {
		t.Skipf("recall-dev absent: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := wordvec.Load(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	floats := func(env, def string) []float64 {
		s := os.Getenv(env)
		if s == "" {
			s = def
		}
		var out []float64
		for _, x := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				t.Fatalf("%s: %v", env, err)
			}
			out = append(out, v)
		}
		return out
	}
	if a := os.Getenv("WORDVEC_SIF"); a != "" {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SetSIF(v); err != nil {
			t.Fatal(err)
		}
	}
	betas := floats("WORDVEC_BETAS", "0.5")
	vws := floats("WORDVEC_VW", "0.25")
	ctx := context.Background()
	type run struct {
		name string
		opts eval.Options
	}
	var runs []run
	for _, vw := range vws {
		cfg := config.Default().Search
		cfg.VectorWeight = vw
		runs = append(runs, run{name: fmt.Sprintf("lexical vw=%.2f", vw), opts: eval.Options{Search: &cfg}})
	}
	for _, b := range betas {
		for _, vw := range vws {
			cfg := config.Default().Search
			cfg.VectorWeight = vw
			runs = append(runs, run{name: fmt.Sprintf("concat β=%.2f vw=%.2f", b, vw),
				opts: eval.Options{Embedder: &concat{lex: embed.NewBuiltin(), m: m, beta: b}, Search: &cfg}})
		}
	}
	skipLoCoMo := os.Getenv("WORDVEC_NO_LOCOMO") != ""
	for _, r := range runs {
		rep, err := eval.RunRecall(ctx, recallPath, r.opts)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "== %s\nrecall-dev R@5:", r.name)
		for _, mode := range eval.ModeNames {
			mr := rep.Modes[mode]
			var types []string
			for ty := range mr.ByType {
				types = append(types, ty)
			}
			sort.Strings(types)
			fmt.Fprintf(&b, "\n  %-7s all %.3f", mode, mr.Overall.RecallAt5)
			for _, ty := range types {
				fmt.Fprintf(&b, "  %s %.3f", ty, mr.ByType[ty].RecallAt5)
			}
			fmt.Fprintf(&b, "  neg-empty %.2f", mr.NegativeEmptyRate)
		}
		if _, err := os.Stat(locomoPath); err == nil && !skipLoCoMo {
			lr, err := eval.RunLoCoMo(ctx, locomoPath, r.opts)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "\nLoCoMo R@5/10/25/50:")
			for _, mode := range eval.ModeNames {
				o := lr.Modes[mode].Overall
				fmt.Fprintf(&b, "\n  %-7s %.3f %.3f %.3f %.3f", mode, o.RecallAt5, o.RecallAt10, o.RecallAt25, o.RecallAt50)
			}
		}
		t.Log(b.String())
	}
}

func loadEnvModel(b *testing.B) (*wordvec.Model, []byte) {
	path := os.Getenv("WORDVEC_MODEL")
	if path == "" {
		b.Skip("set WORDVEC_MODEL to benchmark a trained model")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	m, err := wordvec.Load(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	return m, data
}

// BenchmarkLoadModel measures Load on the model at WORDVEC_MODEL (from
// memory, uncompressed) and, when WORDVEC_MODEL.gz exists, from gzip.
func BenchmarkLoadModel(b *testing.B) {
	_, data := loadEnvModel(b)
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			if _, err := wordvec.Load(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
	gz, err := os.ReadFile(os.Getenv("WORDVEC_MODEL") + ".gz")
	if err != nil {
		return
	}
	b.Run("gzip", func(b *testing.B) {
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(gz))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := wordvec.Load(zr); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSentenceModel embeds memory-like sentences with the model at
// WORDVEC_MODEL.
func BenchmarkSentenceModel(b *testing.B) {
	m, _ := loadEnvModel(b)
	texts := []string{
		"comment threads anchor to Yjs relative positions, so comments survive concurrent edits",
		"the deploy script retries failed uploads three times before giving up",
		"Use credit_ledger.apply() instead of writing balances directly; it keeps the audit trail",
		"We decided to keep Postgres for billing and move session state to Redis",
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Sentence(texts[i%len(texts)])
		i++
	}
}
