package wordvec_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/wordvec"
	"github.com/memtray/memtray/backend/eval"
	"github.com/memtray/memtray/backend/memory"
)

// ablEmb is the built-in embedder (embed.Builtin: lexical features + SIF
// over word vectors, each its own RRF list) over any word-vector model and
// list weights, so an ablation runs the same read pipeline as the product.
type ablEmb struct {
	name   string
	lex    *embed.Lexical
	m      *wordvec.Model
	lw, sw float64
}

func (a *ablEmb) Model() string { return "exp-" + a.name }
func (a *ablEmb) Dim() int      { return embed.LexicalDim + a.m.Dim() + 1 }

func (a *ablEmb) Segments() []memory.Segment {
	return []memory.Segment{
		{Name: "lexical", Dim: embed.LexicalDim, Weight: a.lw},
		{Name: "semantic", Dim: a.m.Dim() + 1, Weight: a.sw},
	}
}

// join mirrors embed's join at semantic share 0.5.
func (a *ablEmb) join(lex []float32, text string, flag bool) []float32 {
	sif := a.m.Sentence(text)
	out := make([]float32, a.Dim())
	h := float32(math.Sqrt(0.5))
	for i, x := range lex {
		out[i] = h * x
	}
	sem := out[embed.LexicalDim:]
	var norm float32
	for i, x := range sif {
		sem[i] = h * x
		norm += x * x
	}
	if norm == 0 && flag {
		sem[a.m.Dim()] = h
	}
	return out
}

func (a *ablEmb) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	lex, err := a.lex.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i, t := range texts {
		lex[i] = a.join(lex[i], t, true)
	}
	return lex, nil
}

func (a *ablEmb) EmbedWeighted(ctx context.Context, text string, weight func(string) float64) ([]float32, error) {
	lex, err := a.lex.EmbedWeighted(ctx, text, weight)
	if err != nil {
		return nil, err
	}
	return a.join(lex, text, false), nil
}

// loadAnyModel loads "builtin" (the shipped model) or a model file, gzipped
// when its name ends in .gz.
func loadAnyModel(tb testing.TB, path string) *wordvec.Model {
	tb.Helper()
	if path == "builtin" {
		m, err := wordvec.Builtin()
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	if !strings.HasSuffix(path, ".gz") {
		return loadModelFile(tb, path)
	}
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	m, err := wordvec.Load(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestExperimentAblation runs the product's read pipeline with the built-in
// embedder's design over every combination of word-vector model
// (WORDVEC_MODELS, comma-separated files or "builtin"), vocabulary cut
// (WORDVEC_VOCAB, keep the N most frequent words; 0 = all), SIF constant
// (WORDVEC_SIF) and semantic list weight (WORDVEC_SW; lexical WORDVEC_LW),
// and prints recall-dev R@5 per type, LoCoMo R@5..50 (unless
// WORDVEC_NO_LOCOMO) and LongMemEval recall_all@5/@10 (when WORDVEC_LME
// names the file; WORDVEC_LME_LIMIT questions) in hybrid mode, plus the
// vector-only paraphrase and LoCoMo R@5. Opt-in: WORDVEC_ABLATE=1.
func TestExperimentAblation(t *testing.T) {
	if os.Getenv("WORDVEC_ABLATE") == "" {
		t.Skip("set WORDVEC_ABLATE=1 to run the ablation")
	}
	shared := os.Getenv("SHARED")
	if shared == "" {
		shared = "../../../../shared"
	}
	ctx := context.Background()
	models := strings.Split(os.Getenv("WORDVEC_MODELS"), ",")
	if models[0] == "" {
		models = []string{"builtin"}
	}
	lmeLimit := 0
	if s := os.Getenv("WORDVEC_LME_LIMIT"); s != "" {
		var err error
		if lmeLimit, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range models {
		full := loadAnyModel(t, path)
		for _, vocab := range envFloats(t, "WORDVEC_VOCAB", "0") {
			m := full
			if vocab > 0 {
				m = wordvec.Truncated(full, int(vocab))
			}
			for _, a := range envFloats(t, "WORDVEC_SIF", "1e-4") {
				if err := m.SetSIF(a); err != nil {
					t.Fatal(err)
				}
				for _, lw := range envFloats(t, "WORDVEC_LW", "0.25") {
					for _, sw := range envFloats(t, "WORDVEC_SW", "0.25") {
						name := fmt.Sprintf("%s V=%d a=%g lw=%.2f sw=%.2f", path, m.Len(), a, lw, sw)
						cfg := config.Default().Search
						opts := eval.Options{Embedder: &ablEmb{name: name, lex: embed.NewLexical(), m: m, lw: lw, sw: sw}, Search: &cfg}
						t.Log(ablationLine(t, ctx, shared, name, opts, lmeLimit) + oovLine(t, shared, m))
					}
				}
			}
		}
	}
}

// ablationLine runs the sets for one configuration and formats one line.
func ablationLine(t *testing.T, ctx context.Context, shared, name string, opts eval.Options, lmeLimit int) string {
	rep, err := eval.RunRecall(ctx, shared+"/eval/recall-dev.json", opts)
	if err != nil {
		t.Fatal(err)
	}
	h, v := rep.Modes["hybrid"], rep.Modes["vector"]
	line := fmt.Sprintf("%s | dev %.3f exact %.3f para %.3f multi %.3f short %.3f (vec para %.3f)", name,
		h.Overall.RecallAt5, h.ByType["exact-identifier"].RecallAt5, h.ByType["paraphrase"].RecallAt5,
		h.ByType["multi-fact"].RecallAt5, h.ByType["short"].RecallAt5, v.ByType["paraphrase"].RecallAt5)
	if nf := rep.WithoutFloors["hybrid"]; nf != nil {
		line += fmt.Sprintf(" (no floors %.3f para %.3f)", nf.Overall.RecallAt5, nf.ByType["paraphrase"].RecallAt5)
	}
	if os.Getenv("WORDVEC_NO_LOCOMO") == "" {
		lr, err := eval.RunLoCoMo(ctx, shared+"/data/locomo/locomo10.json", opts)
		if err != nil {
			t.Fatal(err)
		}
		o := lr.Modes["hybrid"].Overall
		line += fmt.Sprintf(" | LoCoMo %.3f %.3f %.3f %.3f (vec %.3f)", o.RecallAt5, o.RecallAt10, o.RecallAt25, o.RecallAt50,
			lr.Modes["vector"].Overall.RecallAt5)
	}
	if lme := os.Getenv("WORDVEC_LME"); lme != "" {
		o := opts
		o.Limit = lmeLimit
		lr, err := eval.RunLongMemEval(ctx, lme, o)
		if err != nil {
			t.Fatal(err)
		}
		x := lr.Modes["hybrid"].Overall
		line += fmt.Sprintf(" | LME %.3f %.3f (vec %.3f)", x.RecallAllAt5, x.RecallAllAt10, lr.Modes["vector"].Overall.RecallAllAt10)
	}
	return line
}

// TestExperimentTrain trains one model per combination of WORDVEC_MINCOUNT,
// WORDVEC_WINDOW and WORDVEC_EIGEN (other parameters as DefaultParams) from
// a corpus dumped by `trainvec -extract-only -dump-corpus FILE`
// (WORDVEC_CORPUS; only every WORDVEC_EVERY-th document when set) and
// writes each to WORDVEC_OUT/mc<N>-w<N>-e<P>-every<K>.bin for
// TestExperimentAblation. The dump's documents are separated by blank lines
// and have none inside, so the token stream (and the model) is the one
// trainvec builds: the defaults reproduce the shipped model byte for byte.
// Opt-in.
func TestExperimentTrain(t *testing.T) {
	path, out := os.Getenv("WORDVEC_CORPUS"), os.Getenv("WORDVEC_OUT")
	if path == "" || out == "" {
		t.Skip("set WORDVEC_CORPUS and WORDVEC_OUT to train models")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c := wordvec.NewCorpus()
	every := 1
	if s := os.Getenv("WORDVEC_EVERY"); s != "" {
		if every, err = strconv.Atoi(s); err != nil || every < 1 {
			t.Fatalf("WORDVEC_EVERY %q", s)
		}
	}
	for i, doc := range strings.Split(string(data), "\n\n") {
		if i%every == 0 {
			c.Add(doc)
		}
	}
	data = nil
	t.Logf("corpus: %d tokens, %d types (every %d documents)", c.Tokens(), c.Types(), every)
	for _, mc := range envFloats(t, "WORDVEC_MINCOUNT", "5") {
		for _, w := range envFloats(t, "WORDVEC_WINDOW", "5") {
			for _, e := range envFloats(t, "WORDVEC_EIGEN", "0.5") {
				p := wordvec.DefaultParams()
				p.MinCount, p.Window, p.EigenPower = int(mc), int(w), e
				m, st, err := wordvec.Train(c, p)
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.Create(fmt.Sprintf("%s/mc%d-w%d-e%g-every%d.bin", out, p.MinCount, p.Window, p.EigenPower, every))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := m.WriteTo(f); err != nil {
					t.Fatal(err)
				}
				if err := f.Close(); err != nil {
					t.Fatal(err)
				}
				t.Logf("min count %d window %d eigen %g: vocab %d, nonzero %d", p.MinCount, p.Window, p.EigenPower, st.Vocab, st.NonZero)
			}
		}
	}
}

// oovLine reports the share of recall-dev's query and memory tokens the
// model does not know.
func oovLine(t *testing.T, shared string, m *wordvec.Model) string {
	rf, err := eval.LoadRecallFile(shared + "/eval/recall-dev.json")
	if err != nil {
		t.Fatal(err)
	}
	var qk, qn, mk, mn int
	for _, q := range rf.Queries {
		k, n := m.Known(q.Q)
		qk, qn = qk+k, qn+n
	}
	for _, x := range rf.Memories {
		k, n := m.Known(x.Text)
		mk, mn = mk+k, mn+n
	}
	return fmt.Sprintf(" | dev OOV queries %.1f%% memories %.1f%%", 100*float64(qn-qk)/float64(qn), 100*float64(mn-mk)/float64(mn))
}
