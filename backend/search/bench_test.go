package search

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Search latency benchmarks: hybrid, bm25-only and vector-only queries over
// stores of 1k, 10k and 100k synthetic memories embedded with the built-in
// embedder, through the whole read pipeline (query analysis and keywords,
// query embedding, both legs, RRF, composite, floors, MMR). Each reports the
// p50 and p99 of its per-query latencies. Stores are built once and cached
// under os.TempDir()/memtray-search-bench (delete it to rebuild). Run:
//
//	go test ./backend/search -run '^$' -bench . -benchtime 300x

var benchSizes = []int{1000, 10000, 100000}

// benchCommon are frequent words of engineering notes; generated words
// make the vocabulary's long tail (identifiers, names).
var benchCommon = strings.Fields(`the a to of and in is for that on with as it be by this we use are not or from
at should when an if run test build config file error fix server client request response cache database
query index table migration schema deploy release version branch commit merge review api endpoint handler
token auth session user project team service worker queue job retry timeout limit memory store search
log debug trace metric alert container image docker pod node cluster network port host proxy route path
function method type interface field value key list default option flag env variable secret role policy
always never must prefer avoid instead because since after before only each every new old first last
frontend backend css react typescript go python shell npm git ci pipeline lint postgres redis kafka bucket
invoice ledger shipment label carrier webhook signature upload attachment document snapshot compaction`)

// benchGen makes deterministic synthetic memory texts and queries.
type benchGen struct {
	r     *rand.Rand
	z     *rand.Zipf
	words []string
}

func newBenchGen(seed int64) *benchGen {
	r := rand.New(rand.NewSource(seed))
	words := slices.Clone(benchCommon)
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "do", "gra", "sta", "tor", "lin", "mex", "quo"}
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	wr := rand.New(rand.NewSource(7))
	for len(words) < 20000 {
		var b strings.Builder
		for k := 0; k < 2+wr.Intn(3); k++ {
			b.WriteString(syl[wr.Intn(len(syl))])
		}
		switch wr.Intn(10) {
		case 0:
			b.WriteString("_" + syl[wr.Intn(len(syl))])
		case 1:
			b.WriteString(strings.ToUpper(syl[wr.Intn(len(syl))][:1]) + syl[wr.Intn(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return &benchGen{r: r, z: rand.NewZipf(r, 1.07, 2, uint64(len(words)-1)), words: words}
}

func (g *benchGen) word() string { return g.words[g.z.Uint64()] }

// text is a memory of 12..40 words, sometimes with a path, version or
// upper-case identifier.
func (g *benchGen) text() string {
	n := 12 + g.r.Intn(29)
	parts := make([]string, 0, n+1)
	for range n {
		parts = append(parts, g.word())
	}
	switch g.r.Intn(5) {
	case 0:
		parts = append(parts, fmt.Sprintf("src/%s/%s.go", g.word(), g.word()))
	case 1:
		parts = append(parts, fmt.Sprintf("v%d.%d.%d", g.r.Intn(5), g.r.Intn(20), g.r.Intn(10)))
	case 2:
		parts = append(parts, strings.ToUpper(g.word()+"_"+g.word()))
	}
	return strings.Join(parts, " ") + "."
}

// query is a short query (2..4 words), a question (8..14 words) or, one
// time in ten, a prompt-length text (60 words).
func (g *benchGen) query() string {
	var n int
	switch k := g.r.Intn(10); {
	case k < 4:
		n = 2 + g.r.Intn(3)
	case k < 9:
		n = 8 + g.r.Intn(7)
	default:
		n = 60
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.word()
	}
	return strings.Join(parts, " ")
}

var benchKinds = []memory.Kind{memory.KindFact, memory.KindDecision, memory.KindConvention, memory.KindPattern,
	memory.KindDebugging, memory.KindConfig, memory.KindSymbol}

var benchProjects = []string{"tallyho", "quill", "harbor", "atlas", "beacon", "cinder", "delta", "ember"}

var benchNow = time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)

// benchStore opens, building it first if not cached, a store of n
// synthetic memories.
func benchStore(b *testing.B, n int) *store.Store {
	b.Helper()
	emb := embed.NewBuiltin()
	dir := filepath.Join(os.TempDir(), "memtray-search-bench",
		fmt.Sprintf("n%d-%s-f%d-g1-m%s", n, emb.Model(), store.FormatVersion, store.TextMappingVersion))
	clock := memory.FixedClock{T: benchNow}
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
		os.RemoveAll(dir)
		start := time.Now()
		st, err := store.Open(ctx, store.Options{Dir: dir, Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
		if err != nil {
			b.Fatal(err)
		}
		g := newBenchGen(1)
		const batch = 1000
		for i := 0; i < n; i += batch {
			ms := make([]memory.Memory, min(batch, n-i))
			texts := make([]string, len(ms))
			for j := range ms {
				texts[j] = g.text()
			}
			vecs, err := emb.Embed(ctx, texts)
			if err != nil {
				b.Fatal(err)
			}
			for j := range ms {
				k := i + j
				m := memory.Memory{Text: texts[j], Kind: benchKinds[k%len(benchKinds)],
					Project: benchProjects[k%len(benchProjects)], Type: memory.TypeProject,
					CreatedAt: benchNow.Add(-time.Duration(k%500) * time.Hour), Embedding: vecs[j],
					AccessCount: k % 13, ReinforcedCount: k % 3}
				if m.Kind == memory.KindSymbol {
					m.Surface = memory.SurfaceSymbol
				}
				ms[j] = m
			}
			if _, err := st.PutBatch(ctx, ms); err != nil {
				b.Fatal(err)
			}
		}
		if err := st.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "complete"), nil, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Logf("built %d memories in %v", n, time.Since(start).Round(time.Millisecond))
	}
	st, err := store.Open(ctx, store.Options{Dir: dir, Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

// reportLatencies reports the p50 and p99 of lat in milliseconds.
func reportLatencies(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := min(int(p*float64(len(lat))), len(lat)-1)
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

func BenchmarkSearch(b *testing.B) {
	g := newBenchGen(99)
	queries := make([]string, 500)
	for i := range queries {
		queries[i] = g.query()
	}
	for _, n := range benchSizes {
		for _, mode := range Modes {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, mode), func(b *testing.B) {
				st := benchStore(b, n)
				e := New(st, embed.NewBuiltin(), config.Default().Search, memory.FixedClock{T: benchNow})
				ctx := context.Background()
				// Warm up: bleve's segments and the vector rows in the page
				// cache, the word vectors loaded, and the garbage of opening
				// the store collected, so the timed queries see a daemon
				// that has been serving (start-up is BenchmarkOpen's).
				for _, q := range queries[len(queries)-100:] {
					if _, err := e.Search(ctx, Query{Text: q, Mode: mode}); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := time.Now()
					if _, err := e.Search(ctx, Query{Text: queries[i%len(queries)], Mode: mode, Project: benchProjects[i%3]}); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				b.StopTimer()
				reportLatencies(b, lat)
			})
		}
	}
}

// BenchmarkSearchScoped is a prompt recall's search (Query.Prompt) with
// and without the prompt's reach (Query.ProjectScoped), with no current
// project and with one of the store's eight: scoped, the legs apply the
// reach themselves (the text leg inside bleve), so the search costs no
// more than unscoped. Run:
//
//	go test ./backend/search -run '^$' -bench SearchScoped -benchtime 100x
func BenchmarkSearchScoped(b *testing.B) {
	g := newBenchGen(99)
	queries := make([]string, 500)
	for i := range queries {
		queries[i] = g.query()
	}
	for _, n := range benchSizes {
		for _, c := range []struct {
			name    string
			scoped  bool
			project string
		}{{"unscoped", false, ""}, {"scoped", true, ""}, {"unscoped-project", false, "tallyho"}, {"scoped-project", true, "tallyho"}} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, c.name), func(b *testing.B) {
				st := benchStore(b, n)
				e := New(st, embed.NewBuiltin(), config.Default().Search, memory.FixedClock{T: benchNow})
				ctx := context.Background()
				q := func(text string) Query {
					return Query{Text: text, Project: c.project, ProjectScoped: c.scoped, Prompt: true}
				}
				for _, text := range queries[len(queries)-50:] { // warm up, as BenchmarkSearch
					if _, err := e.Run(ctx, q(text)); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := time.Now()
					if _, err := e.Run(ctx, q(queries[i%len(queries)])); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				b.StopTimer()
				reportLatencies(b, lat)
			})
		}
	}
}

// BenchmarkSearchSubject is a prompt recall's search of prompts that
// write a name by its form (a path as the store's memories write them),
// half of them a question about the path alone ("why does src/a/b.go
// fail?"), half words and the path, with the subject stage on and off
// (subjectNames), one after the other in the same run: its cost is the
// ratio of the two. Run:
//
//	go test ./backend/search -run '^$' -bench SearchSubject -benchtime 200x
func BenchmarkSearchSubject(b *testing.B) {
	g := newBenchGen(99)
	queries := make([]string, 500)
	for i := range queries {
		path := fmt.Sprintf("src/%s/%s.go", g.word(), g.word())
		if i%2 == 0 {
			queries[i] = "why does " + path + " fail?"
		} else {
			queries[i] = g.query() + " in " + path
		}
	}
	defer func(on bool) { subjectNames = on }(subjectNames)
	for _, n := range benchSizes[:2] {
		st := benchStore(b, n)
		e := New(st, embed.NewBuiltin(), config.Default().Search, memory.FixedClock{T: benchNow})
		ctx := context.Background()
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%dk/subject=%v", n/1000, on), func(b *testing.B) {
				subjectNames = on
				q := func(text string) Query {
					return Query{Text: text, Project: "tallyho", ProjectScoped: true, Prompt: true}
				}
				for _, text := range queries[len(queries)-50:] { // warm up, as BenchmarkSearch
					if _, err := e.Run(ctx, q(text)); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := time.Now()
					if _, err := e.Run(ctx, q(queries[i%len(queries)])); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				b.StopTimer()
				reportLatencies(b, lat)
			})
		}
	}
}
