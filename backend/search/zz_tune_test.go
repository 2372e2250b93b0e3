package search

// Temporary tuning harness (not committed): a bleve in-memory index standing in
// for the store until it lands.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/blevesearch/bleve/v2"
	_ "github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

type fakeIdx struct {
	bl   bleve.Index
	im   *mapping.IndexMappingImpl
	mems map[string]memory.Memory
	df   map[string]int
	ids  []string
}

func newFake(t testing.TB) *fakeIdx {
	im := bleve.NewIndexMapping()
	im.DefaultAnalyzer = "en"
	im.ScoringModel = "bm25"
	bl, err := bleve.NewMemOnly(im)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeIdx{bl: bl, im: im, mems: map[string]memory.Memory{}, df: map[string]int{}}
}

func (f *fakeIdx) put(m memory.Memory) {
	f.mems[m.ID] = m
	f.ids = append(f.ids, m.ID)
	for t := range termSet(f.Analyze(m.Text)) {
		f.df[t]++
	}
	f.bl.Index(m.ID, map[string]any{"text": m.Text})
}

func (f *fakeIdx) Analyze(text string) []string {
	toks := f.im.AnalyzerNamed("en").Analyze([]byte(text))
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = string(t.Term)
	}
	return out
}
func (f *fakeIdx) Count() int { return len(f.mems) }
func (f *fakeIdx) DocFreq(ctx context.Context, terms []string) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range terms {
		out[t] = f.df[t]
	}
	return out, nil
}
func (f *fakeIdx) GetMany(ctx context.Context, ids []string) (map[string]memory.Memory, error) {
	out := map[string]memory.Memory{}
	for _, id := range ids {
		if m, ok := f.mems[id]; ok {
			out[id] = m
		}
	}
	return out, nil
}
func (f *fakeIdx) VectorSearch(ctx context.Context, vec []float32, n int, fl store.Filter) ([]store.Scored, error) {
	var out []store.Scored
	for _, id := range f.ids {
		m := f.mems[id]
		if fl.Project != "" && m.Project != fl.Project {
			continue
		}
		out = append(out, store.Scored{ID: id, Score: Cosine(vec, m.Embedding)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > n {
		out = out[:n]
	}
	return out, nil
}
func (f *fakeIdx) TextSearch(ctx context.Context, q string, n int, fl store.Filter) ([]store.Scored, error) {
	mq := bleve.NewMatchQuery(q)
	mq.SetField("text")
	req := bleve.NewSearchRequestOptions(mq, n, 0, false)
	r, err := f.bl.Search(req)
	if err != nil {
		return nil, err
	}
	var out []store.Scored
	for _, h := range r.Hits {
		out = append(out, store.Scored{ID: h.ID, Score: h.Score})
	}
	return out, nil
}

type rfile struct {
	Memories []struct{ ID, Text, Kind, Project string } `json:"memories"`
	Queries  []struct {
		Q        string   `json:"q"`
		Relevant []string `json:"relevant"`
		Type     string   `json:"type"`
	} `json:"queries"`
}

func TestTune(t *testing.T) {
	if os.Getenv("TUNE") == "" {
		t.Skip()
	}
	data, err := os.ReadFile("/work/shared/eval/recall-dev.json")
	if err != nil {
		t.Skip()
	}
	var rf rfile
	json.Unmarshal(data, &rf)
	f := newFake(t)
	emb := embed.NewBuiltin()
	for _, m := range rf.Memories {
		v := emb.EmbedOne(m.Text)
		f.put(memory.Memory{ID: m.ID, Text: m.Text, Kind: memory.Kind(m.Kind), Project: m.Project, Type: "project", Importance: 0.5, Embedding: v})
	}
	cfg := config.Default().Search
	if os.Getenv("NOFLOOR") != "" {
		cfg.AbsoluteFloor = 0
	}
	e := newEngine(f, emb, cfg, nil)
	for _, mode := range Modes {
		sums := map[string][2]float64{}
		neg := 0
		for _, q := range rf.Queries {
			r, err := e.Run(context.Background(), Query{Text: q.Q, K: 10, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			rel := map[string]bool{}
			for _, id := range q.Relevant {
				rel[id] = true
			}
			got := 0
			var top []string
			for i, h := range r.Hits {
				if i < 5 && rel[h.Memory.ID] {
					got++
				}
				if i < 5 {
					top = append(top, h.Memory.ID)
				}
			}
			if q.Type == "negative" {
				if len(r.Hits) == 0 {
					neg++
				}
				if os.Getenv("V") != "" {
					fmt.Printf("%s NEG %q ev=%.2f hits=%d\n", mode, q.Q, r.Evidence, len(r.Hits))
				}
				continue
			}
			rc := float64(got) / float64(len(q.Relevant))
			s := sums[q.Type]
			s[0] += rc
			s[1]++
			sums[q.Type] = s
			a := sums["all"]
			a[0] += rc
			a[1]++
			sums["all"] = a
			if os.Getenv("V") != "" && rc < 1 {
				fmt.Printf("%s MISS %.2f %s %q rel=%v top=%v ev=%.2f\n", mode, rc, q.Type, q.Q, q.Relevant, top, r.Evidence)
			}
		}
		var keys []string
		for k := range sums {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "%s=%.3f ", k, sums[k][0]/sums[k][1])
		}
		fmt.Printf("%-7s R@5 %s neg=%d/5\n", mode, b.String(), neg)
	}
}
