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
	"github.com/memtray/memtray/backend/memory"
)

// concat embeds a text as [sqrt(1-β)·lexical, sqrt(β)·SIF]: both halves are
// unit vectors, so the cosine is (1-β)·cos_lexical + β·cos_SIF. Queries keep
// the lexical embedder's IDF weighting (EmbedWeighted).
type concat struct {
	lex  *embed.Lexical
	m    *wordvec.Model
	beta float64
}

func (c *concat) Model() string { return fmt.Sprintf("exp-concat-%.2f", c.beta) }
func (c *concat) Dim() int      { return embed.LexicalDim + c.m.Dim() }

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
	m := loadModelFile(t, path)
	floats := func(env, def string) []float64 { return envFloats(t, env, def) }
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
		runs = append(runs, run{name: fmt.Sprintf("lexical vw=%.2f", vw), opts: eval.Options{Embedder: embed.NewLexical(), Search: &cfg}})
	}
	for _, b := range betas {
		for _, vw := range vws {
			cfg := config.Default().Search
			cfg.VectorWeight = vw
			runs = append(runs, run{name: fmt.Sprintf("concat β=%.2f vw=%.2f", b, vw),
				opts: eval.Options{Embedder: &concat{lex: embed.NewLexical(), m: m, beta: b}, Search: &cfg}})
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

// loadModelFile loads the model file at path.
func loadModelFile(tb testing.TB, path string) *wordvec.Model {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m, err := wordvec.Load(f)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// envFloats parses the comma-separated numbers of environment variable env,
// def when it is unset.
func envFloats(tb testing.TB, env, def string) []float64 {
	tb.Helper()
	s := os.Getenv(env)
	if s == "" {
		s = def
	}
	var out []float64
	for _, x := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			tb.Fatalf("%s: %v", env, err)
		}
		out = append(out, v)
	}
	return out
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

// TestExperimentMisses prints, for one configuration (WORDVEC_BETAS and
// WORDVEC_VW, first values), every recall-dev query whose relevant memories
// are not all in the hybrid top 5, with the rank of each in every mode.
// Opt-in: WORDVEC_MODEL.
func TestExperimentMisses(t *testing.T) {
	path := os.Getenv("WORDVEC_MODEL")
	if path == "" {
		t.Skip("set WORDVEC_MODEL to run the misses experiment")
	}
	shared := os.Getenv("SHARED")
	if shared == "" {
		shared = "../../../../shared"
	}
	rf, err := eval.LoadRecallFile(shared + "/eval/recall-dev.json")
	if err != nil {
		t.Skip(err)
	}
	text := map[string]string{}
	for _, m := range rf.Memories {
		text[m.ID] = m.Text
	}
	m := loadModelFile(t, path)
	beta, _ := strconv.ParseFloat(strings.Split(os.Getenv("WORDVEC_BETAS")+",0.5", ",")[0], 64)
	vw, _ := strconv.ParseFloat(strings.Split(os.Getenv("WORDVEC_VW")+",1", ",")[0], 64)
	cfg := config.Default().Search
	cfg.VectorWeight = vw
	rep, err := eval.RunRecall(context.Background(), shared+"/eval/recall-dev.json",
		eval.Options{Embedder: &concat{lex: embed.NewLexical(), m: m, beta: beta}, Search: &cfg, Details: true})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ q, mode string }
	ranked := map[key][]string{}
	for _, d := range rep.Details {
		if !d.Floors {
			ranked[key{d.Q, d.Mode + "-nofloor"}] = d.Ranked
		} else {
			ranked[key{d.Q, d.Mode}] = d.Ranked
		}
	}
	for _, q := range rf.Queries {
		h := ranked[key{q.Q, "hybrid"}]
		rank := func(l []string, id string) int {
			for i, x := range l {
				if x == id {
					return i + 1
				}
			}
			return 0
		}
		miss := len(q.Relevant) == 0 && len(h) > 0
		for _, id := range q.Relevant {
			if r := rank(h, id); r == 0 || r > 5 {
				miss = true
			}
		}
		if !miss {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "[%s] %s\n", q.Type, q.Q)
		for _, id := range q.Relevant {
			fmt.Fprintf(&b, "   want %s ranks", id)
			for _, mode := range []string{"hybrid", "bm25", "vector", "hybrid-nofloor", "bm25-nofloor", "vector-nofloor"} {
				fmt.Fprintf(&b, " %s=%d", mode, rank(ranked[key{q.Q, mode}], id))
			}
			fmt.Fprintf(&b, "\n      %.110s\n", text[id])
		}
		for i, id := range h[:min(3, len(h))] {
			fmt.Fprintf(&b, "   got%d %s %.100s\n", i+1, id, text[id])
		}
		t.Log(b.String())
	}
}

// TestExperimentNegatives prints, per recall-dev query, the best SIF and
// lexical cosine over its relevant memories and over all memories, to see
// whether a cosine floor can tell negative queries apart. Opt-in:
// WORDVEC_MODEL.
func TestExperimentNegatives(t *testing.T) {
	path := os.Getenv("WORDVEC_MODEL")
	if path == "" {
		t.Skip("set WORDVEC_MODEL to run the negatives experiment")
	}
	rf, err := eval.LoadRecallFile("../../../../shared/eval/recall-dev.json")
	if err != nil {
		t.Skip(err)
	}
	m := loadModelFile(t, path)
	lex := embed.NewLexical()
	sif := map[string][]float32{}
	lx := map[string][]float32{}
	for _, x := range rf.Memories {
		sif[x.ID] = m.Sentence(x.Text)
		lx[x.ID] = lex.EmbedOne(x.Text)
	}
	dot := func(a, b []float32) float64 {
		var s float64
		for i := range a {
			s += float64(a[i]) * float64(b[i])
		}
		return s
	}
	for _, q := range rf.Queries {
		qs, ql := m.Sentence(q.Q), lex.EmbedOne(q.Q)
		rel := map[string]bool{}
		for _, id := range q.Relevant {
			rel[id] = true
		}
		var bestRelS, bestAllS, bestRelL, bestAllL float64
		for id := range sif {
			s, l := dot(qs, sif[id]), dot(ql, lx[id])
			bestAllS, bestAllL = math.Max(bestAllS, s), math.Max(bestAllL, l)
			if rel[id] {
				bestRelS, bestRelL = math.Max(bestRelS, s), math.Max(bestRelL, l)
			}
		}
		t.Logf("%-16s sif rel %.2f all %.2f | lex rel %.2f all %.2f | %.60s", q.Type, bestRelS, bestAllS, bestRelL, bestAllL, q.Q)
	}
}

// segw is the built-in embedder with other list weights for its parts.
type segw struct {
	*embed.Builtin
	lw, sw float64
}

func (s segw) Segments() []memory.Segment {
	seg := s.Builtin.Segments()
	seg[0].Weight, seg[1].Weight = s.lw, s.sw
	return seg
}

// TestExperimentSegments runs recall-dev (and LoCoMo unless
// WORDVEC_NO_LOCOMO) through the full pipeline with the shipped built-in
// embedder, for every combination of lexical list weight (WORDVEC_LW),
// semantic list weight (WORDVEC_SW), synonym weight (WORDVEC_SYN) and
// hypernym weight (WORDVEC_HYP). Opt-in: WORDVEC_SEGMENTS=1.
func TestExperimentSegments(t *testing.T) {
	if os.Getenv("WORDVEC_SEGMENTS") == "" {
		t.Skip("set WORDVEC_SEGMENTS=1 to run the segment-weight experiment")
	}
	shared := "../../../../shared"
	floats := func(env, def string) []float64 { return envFloats(t, env, def) }
	ctx := context.Background()
	for _, lw := range floats("WORDVEC_LW", "0.25") {
		for _, sw := range floats("WORDVEC_SW", "0.5") {
			for _, syn := range floats("WORDVEC_SYN", "0.3") {
				for _, hyp := range floats("WORDVEC_HYP", "0.15") {
					cfg := config.Default().Search
					cfg.SynonymWeight, cfg.HypernymWeight = syn, hyp
					opts := eval.Options{Embedder: segw{embed.NewBuiltin(), lw, sw}, Search: &cfg}
					rep, err := eval.RunRecall(ctx, shared+"/eval/recall-dev.json", opts)
					if err != nil {
						t.Skip(err)
					}
					h := rep.Modes["hybrid"]
					line := fmt.Sprintf("lw %.2f sw %.2f syn %.2f hyp %.2f | dev all %.3f para %.3f multi %.3f exact %.3f short %.3f",
						lw, sw, syn, hyp, h.Overall.RecallAt5, h.ByType["paraphrase"].RecallAt5, h.ByType["multi-fact"].RecallAt5,
						h.ByType["exact-identifier"].RecallAt5, h.ByType["short"].RecallAt5)
					if os.Getenv("WORDVEC_NO_LOCOMO") == "" {
						lr, err := eval.RunLoCoMo(ctx, shared+"/data/locomo/locomo10.json", opts)
						if err != nil {
							t.Fatal(err)
						}
						o, b := lr.Modes["hybrid"].Overall, lr.Modes["bm25"].Overall
						line += fmt.Sprintf(" | LoCoMo %.3f %.3f %.3f %.3f (bm25 %.3f %.3f %.3f %.3f)", o.RecallAt5, o.RecallAt10, o.RecallAt25, o.RecallAt50,
							b.RecallAt5, b.RecallAt10, b.RecallAt25, b.RecallAt50)
					}
					t.Log(line)
				}
			}
		}
	}
}
