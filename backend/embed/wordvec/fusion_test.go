package wordvec_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/eval"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// fusionCase is one query with its scope and relevant memory ids.
type fusionCase struct {
	q, project, typ string
	rel             map[string]bool
}

// TestExperimentFusion emulates the read pipeline's first stage only (raw
// legs, weighted RRF, no composite score, floors or MMR) to compare the SIF
// vectors as a third RRF list with the two-list hybrid and BM25 alone, on
// recall-dev and LoCoMo. Opt-in: WORDVEC_MODEL. Use it to compare fusion
// designs, not as the pipeline's absolute numbers (TestExperimentRetrieval).
func TestExperimentFusion(t *testing.T) {
	path := os.Getenv("WORDVEC_MODEL")
	if path == "" {
		t.Skip("set WORDVEC_MODEL to run the fusion experiment")
	}
	shared := os.Getenv("SHARED")
	if shared == "" {
		shared = "../../../../shared"
	}
	m := loadModelFile(t, path)
	ctx := context.Background()
	var mems []memory.Memory
	var recallCases, locomoCases []fusionCase
	if rf, err := eval.LoadRecallFile(shared + "/eval/recall-dev.json"); err == nil {
		for _, x := range rf.Memories {
			mems = append(mems, memory.Memory{ID: "r" + x.ID, Text: x.Text, Kind: memory.Kind(x.Kind), Project: "recall",
				Type: memory.TypeProject, Source: memory.SourceImport})
		}
		for _, q := range rf.Queries {
			if len(q.Relevant) == 0 {
				continue
			}
			rel := map[string]bool{}
			for _, id := range q.Relevant {
				rel["r"+id] = true
			}
			recallCases = append(recallCases, fusionCase{q: q.Q, project: "recall", typ: q.Type, rel: rel})
		}
	}
	if os.Getenv("WORDVEC_NO_LOCOMO") == "" {
		lm, lc := loadLoCoMo(t, shared+"/data/locomo/locomo10.json")
		mems = append(mems, lm...)
		locomoCases = lc
	}
	for i := range mems {
		if !store.ValidID(mems[i].ID) {
			mems[i].ID = fmt.Sprintf("x%d", i)
		}
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	lex := embed.NewLexical()
	open := func(model string, dim int, vec func(string) []float32) *store.Store {
		st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: model, Dim: dim, Clock: memory.FixedClock{T: now}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		batch := make([]memory.Memory, 0, 256)
		flush := func() {
			if _, err := st.PutBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
		for _, x := range mems {
			x.Embedding = vec(x.Text)
			x.CreatedAt, x.Importance = now, 0.5
			batch = append(batch, x)
			if len(batch) == cap(batch) {
				flush()
			}
		}
		flush()
		return st
	}
	lexStore := open(embed.LexicalModel, embed.LexicalDim, lex.EmbedOne)
	sifStore := open("sif", m.Dim(), m.Sentence)
	cfg := config.Default().Search
	pool := cfg.Candidates

	type variant struct {
		name    string
		weights []float64 // lexical vector, BM25, SIF; 0 = list unused
	}
	variants := []variant{
		{"bm25", []float64{0, 1, 0}},
		{"sif only", []float64{0, 0, 1}},
		{"lex .25 + bm25", []float64{0.25, 1, 0}},
		{"lex .25 + bm25 + sif .25", []float64{0.25, 1, 0.25}},
		{"lex .25 + bm25 + sif .5", []float64{0.25, 1, 0.5}},
		{"lex .25 + bm25 + sif 1", []float64{0.25, 1, 1}},
		{"bm25 + sif .5", []float64{0, 1, 0.5}},
	}
	run := func(name string, cases []fusionCase, ks []int) {
		if len(cases) == 0 {
			return
		}
		type acc struct{ sum []float64 }
		res := make([]map[string]*acc, len(variants))
		for i := range res {
			res[i] = map[string]*acc{}
		}
		for _, c := range cases {
			filter := store.Filter{Project: c.project}
			lq, err := lex.EmbedWeighted(ctx, c.q, nil)
			if err != nil {
				t.Fatal(err)
			}
			lv, err := lexStore.VectorSearch(ctx, lq, pool, filter)
			if err != nil {
				t.Fatal(err)
			}
			tx, err := bm25Search(ctx, lexStore, c.q, pool, filter)
			if err != nil {
				t.Fatal(err)
			}
			sv, err := sifStore.VectorSearch(ctx, m.Sentence(c.q), pool, filter)
			if err != nil {
				t.Fatal(err)
			}
			legs := [][]string{ids(lv), ids(tx), ids(sv)}
			for vi, v := range variants {
				var lists [][]string
				var ws []float64
				for li, w := range v.weights {
					if w > 0 {
						lists, ws = append(lists, legs[li]), append(ws, w)
					}
				}
				fused := search.RRF(lists, ws, cfg.RRFK, pool)
				ranked := make([]string, len(fused))
				for i, f := range fused {
					ranked[i] = f.ID
				}
				for _, key := range []string{"all", c.typ} {
					a := res[vi][key]
					if a == nil {
						a = &acc{sum: make([]float64, len(ks)+1)}
						res[vi][key] = a
					}
					for ki, k := range ks {
						a.sum[ki] += eval.RecallAt(ranked, c.rel, k)
					}
					a.sum[len(ks)]++
				}
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (raw legs + RRF, R@%v):", name, ks)
		for vi, v := range variants {
			var keys []string
			for k := range res[vi] {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(&b, "\n  %-26s", v.name)
			for _, k := range keys {
				a := res[vi][k]
				n := a.sum[len(ks)]
				fmt.Fprintf(&b, " %s", k)
				for ki := range ks {
					fmt.Fprintf(&b, " %.3f", a.sum[ki]/n)
				}
				b.WriteString(" |")
			}
		}
		t.Log(b.String())
	}
	run("recall-dev", recallCases, []int{5})
	run("LoCoMo", locomoCases, []int{5, 10, 25, 50})
}

func ids(l []store.Scored) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = s.ID
	}
	return out
}

var (
	locomoSession = regexp.MustCompile(`^session_\d+$`)
	locomoDia     = regexp.MustCompile(`D:?(\d+):(\d+)`)
)

// loadLoCoMo reads LoCoMo as eval.RunLoCoMo does: a memory per turn
// ("speaker: text [image: caption]"), scoped per conversation.
func loadLoCoMo(t *testing.T, path string) ([]memory.Memory, []fusionCase) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Logf("LoCoMo absent: %v", err)
		return nil, nil
	}
	var samples []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(data, &samples); err != nil {
		t.Fatal(err)
	}
	norm := func(s string) string {
		mm := locomoDia.FindStringSubmatch(s)
		if mm == nil {
			return ""
		}
		var a, b int
		fmt.Sscan(mm[1], &a)
		fmt.Sscan(mm[2], &b)
		return fmt.Sprintf("D%d-%d", a, b)
	}
	var mems []memory.Memory
	var cases []fusionCase
	for _, s := range samples {
		turns := map[string]bool{}
		for key, raw := range s.Conversation {
			if !locomoSession.MatchString(key) {
				continue
			}
			var ts []struct {
				Speaker, DiaID, Text, BlipCaption string `json:",omitempty"`
			}
			var tsRaw []map[string]any
			if err := json.Unmarshal(raw, &tsRaw); err != nil {
				t.Fatal(err)
			}
			_ = ts
			for _, tr := range tsRaw {
				str := func(k string) string { v, _ := tr[k].(string); return v }
				id := norm(str("dia_id"))
				if id == "" || turns[id] {
					continue
				}
				text := str("text")
				if sp := str("speaker"); sp != "" {
					text = sp + ": " + text
				}
				if c := str("blip_caption"); c != "" {
					text += " [image: " + c + "]"
				}
				turns[id] = true
				mems = append(mems, memory.Memory{ID: s.SampleID + "-" + id, Text: strings.ToValidUTF8(text, " "),
					Project: s.SampleID, Kind: memory.KindFact, Type: memory.TypeUser, Source: memory.SourceImport})
			}
		}
		for _, qa := range s.QA {
			rel := map[string]bool{}
			for _, e := range qa.Evidence {
				for _, x := range locomoDia.FindAllString(e, -1) {
					if id := norm(x); turns[id] {
						rel[s.SampleID+"-"+id] = true
					}
				}
			}
			if len(rel) == 0 || strings.TrimSpace(qa.Question) == "" {
				continue
			}
			cases = append(cases, fusionCase{q: qa.Question, project: s.SampleID, typ: "qa", rel: rel})
		}
	}
	sort.Slice(mems, func(i, j int) bool { return mems[i].ID < mems[j].ID })
	return mems, cases
}

// bm25Search is a BM25 search for free text, each analysed term at weight 1.
func bm25Search(ctx context.Context, st *store.Store, q string, n int, f store.Filter) ([]store.Scored, error) {
	var terms []store.Term
	for _, w := range st.Analyze(q) {
		terms = append(terms, store.Term{Text: w, Boost: 1})
	}
	return st.TextSearchTerms(ctx, terms, n, f)
}
