package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// Benchmarks run against stores of synthetic memories: texts drawn from a
// vocabulary with Zipfian word frequencies (deterministic seed), embedded
// with the built-in 256-d embedder. Stores are cached under
// os.TempDir()/memtray-bench keyed by size and model, so repeated runs skip
// the build. Run:
//
//	go test ./backend/store -run '^$' -bench . -benchtime 200x

// baseWords are common words of engineering notes; synthetic words extend
// the vocabulary's long tail.
var baseWords = strings.Fields(`the a to of and in is for that on with as it be by this we use are not or from
at should when an if run test build config file error fix use server client request response cache
database query index table migration schema deploy release version branch commit merge review api
endpoint handler token auth session user project team service worker queue job retry timeout
limit memory store search vector text embedding model log debug trace metric alert monitor
container image docker kubernetes pod node cluster network port host proxy route path url
function method class type interface struct field value key map list array string number
default option flag env variable secret password credential permission role policy rule
always never must prefer avoid instead because since after before during until only each
every all some none new old first last next previous main local remote upstream downstream
frontend backend ui css html react svelte vite typescript go python rust java script shell
make npm pnpm yarn pip cargo git ci pipeline stage step lint format check compile bundle
postgres redis kafka s3 bucket lambda terraform helm chart value yaml json toml csv parquet`)

// vocab returns n words: baseWords then pronounceable synthetic ones.
func vocab(n int) []string {
	out := slices.Clone(baseWords)
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "do", "gra", "sta", "tor", "lin", "mex", "quo"}
	r := rand.New(rand.NewSource(42))
	seen := map[string]bool{}
	for _, w := range out {
		seen[w] = true
	}
	for len(out) < n {
		var b strings.Builder
		for k := 0; k < 2+r.Intn(3); k++ {
			b.WriteString(syl[r.Intn(len(syl))])
		}
		if r.Intn(8) == 0 {
			b.WriteString("_" + syl[r.Intn(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// textGen makes synthetic memory texts and queries.
type textGen struct {
	r     *rand.Rand
	z     *rand.Zipf
	words []string
}

func newTextGen(seed int64) *textGen {
	r := rand.New(rand.NewSource(seed))
	words := vocab(20000)
	return &textGen{r: r, z: rand.NewZipf(r, 1.07, 2, uint64(len(words)-1)), words: words}
}

func (g *textGen) text(minW, maxW int) string {
	n := minW + g.r.Intn(maxW-minW+1)
	parts := make([]string, 0, n+2)
	for i := 0; i < n; i++ {
		parts = append(parts, g.words[g.z.Uint64()])
	}
	switch g.r.Intn(6) {
	case 0:
		parts = append(parts, fmt.Sprintf("v%d.%d.%d", g.r.Intn(5), g.r.Intn(20), g.r.Intn(10)))
	case 1:
		parts = append(parts, fmt.Sprintf("src/%s/%s.go", g.words[g.z.Uint64()], g.words[g.z.Uint64()]))
	case 2:
		parts = append(parts, strconv.Itoa(g.r.Intn(65536)))
	}
	return strings.Join(parts, " ") + "."
}

var benchProjects = []string{"tallyho", "quill", "harbor", "atlas", "beacon", "cinder", "delta", "ember"}

// benchStore opens (building and caching if needed) a store of n synthetic
// memories embedded with the built-in embedder.
func benchStore(b *testing.B, n int) *Store {
	b.Helper()
	dir := benchStoreDir(b, n)
	s, err := Open(context.Background(), Options{Dir: dir, Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// benchStoreDir returns the cached store directory for n records, building it once.
func benchStoreDir(b testing.TB, n int) string {
	root := filepath.Join(os.TempDir(), "memtray-bench")
	dir := filepath.Join(root, fmt.Sprintf("n%d-%s-f%d-r%d-m%s", n, embed.BuiltinModel, FormatVersion, recVersion, TextMappingVersion))
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return dir
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp(root, "build-")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	ctx := context.Background()
	emb := embed.NewBuiltin()
	s, err := Open(ctx, Options{Dir: tmp, Model: emb.Model(), Dim: emb.Dim()})
	if err != nil {
		b.Fatal(err)
	}
	g := newTextGen(int64(n))
	const batch = 1000
	for done := 0; done < n; done += batch {
		k := min(batch, n-done)
		texts := make([]string, k)
		for i := range texts {
			texts[i] = g.text(8, 60)
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		ms := make([]memory.Memory, k)
		for i := range ms {
			ms[i] = memory.Memory{Text: texts[i], Embedding: vecs[i], Project: benchProjects[g.r.Intn(len(benchProjects))],
				Kind: memory.Kinds[g.r.Intn(len(memory.Kinds))], Source: memory.SourceCapture,
				CreatedAt: time.Unix(1700000000+int64(done+i)*60, 0)}
		}
		if _, err := s.PutBatch(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d-record bench store in %v", n, time.Since(start).Round(time.Millisecond))
	return dir
}

// benchQueries returns q query texts and their embeddings.
func benchQueries(q int) ([]string, [][]float32) {
	g := newTextGen(7)
	texts := make([]string, q)
	for i := range texts {
		texts[i] = g.text(4, 12)
	}
	vecs, _ := embed.NewBuiltin().Embed(context.Background(), texts)
	return texts, vecs
}

// latencies records per-operation durations and reports percentiles.
type latencies []time.Duration

func (l latencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	pct := func(p float64) float64 {
		i := int(p * float64(len(l)-1))
		return float64(l[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

var benchSizes = []int{1000, 10000, 100000}

func sizeName(n int) string { return fmt.Sprintf("%dk", n/1000) }

func BenchmarkVectorSearch(b *testing.B) {
	_, vecs := benchQueries(200)
	for _, n := range benchSizes {
		for _, scoped := range []bool{false, true} {
			name := sizeName(n)
			f := Filter{}
			if scoped {
				name += "/project"
				f.Project = benchProjects[0]
			}
			b.Run(name, func(b *testing.B) {
				s := benchStore(b, n)
				ctx := context.Background()
				lat := make(latencies, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := time.Now()
					if _, err := s.VectorSearch(ctx, vecs[i%len(vecs)], 20, f); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				lat.report(b)
			})
		}
	}
}

func BenchmarkTextSearch(b *testing.B) {
	texts, _ := benchQueries(200)
	for _, n := range benchSizes {
		for _, scoped := range []bool{false, true} {
			name := sizeName(n)
			f := Filter{}
			if scoped {
				name += "/project"
				f.Project = benchProjects[0]
			}
			b.Run(name, func(b *testing.B) {
				s := benchStore(b, n)
				ctx := context.Background()
				lat := make(latencies, 0, b.N)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t := time.Now()
					if _, err := s.TextSearch(ctx, texts[i%len(texts)], 20, f); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t))
				}
				lat.report(b)
			})
		}
	}
}

// BenchmarkHybrid is what one recall costs the store: embed the query with
// the built-in embedder, run both legs concurrently (20 candidates each),
// fetch the union's records.
func BenchmarkHybrid(b *testing.B) {
	texts, _ := benchQueries(200)
	emb := embed.NewBuiltin()
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := benchStore(b, n)
			ctx := context.Background()
			lat := make(latencies, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t := time.Now()
				q := texts[i%len(texts)]
				vecs, err := emb.Embed(ctx, []string{q})
				if err != nil {
					b.Fatal(err)
				}
				var vs, ts []Scored
				var verr, terr error
				var wg sync.WaitGroup
				wg.Add(1)
				go func() { defer wg.Done(); vs, verr = s.VectorSearch(ctx, vecs[0], 20, Filter{}) }()
				ts, terr = s.TextSearch(ctx, q, 20, Filter{})
				wg.Wait()
				if verr != nil || terr != nil {
					b.Fatal(verr, terr)
				}
				union := append(ids(vs), ids(ts)...)
				if _, err := s.GetMany(ctx, union); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			lat.report(b)
		})
	}
}

func benchRecords(n int) []memory.Memory {
	g := newTextGen(99)
	texts := make([]string, n)
	for i := range texts {
		texts[i] = g.text(8, 60)
	}
	vecs, _ := embed.NewBuiltin().Embed(context.Background(), texts)
	out := make([]memory.Memory, n)
	for i := range out {
		out[i] = memory.Memory{Text: texts[i], Embedding: vecs[i], Project: benchProjects[i%len(benchProjects)]}
	}
	return out
}

// BenchmarkPut measures single durable inserts (one fsync'd bbolt commit
// each, plus both indexes).
func BenchmarkPut(b *testing.B) {
	recs := benchRecords(2000)
	s, err := Open(context.Background(), Options{Dir: b.TempDir(), Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := recs[i%len(recs)]
		m.Text += " " + strconv.Itoa(i)
		t := time.Now()
		if _, err := s.Put(ctx, m); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	lat.report(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkPutBatch measures inserts of 500 records per transaction.
func BenchmarkPutBatch(b *testing.B) {
	const size = 500
	recs := benchRecords(size)
	s, err := Open(context.Background(), Options{Dir: b.TempDir(), Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		batch := slices.Clone(recs)
		for j := range batch {
			batch[j].Text += " " + strconv.Itoa(i)
		}
		if _, err := s.PutBatch(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "records/s")
}

// openStats is what the openstats helper process reports.
type openStats struct {
	OpenMS float64 `json:"open_ms"`
	HeapMB float64 `json:"heap_mb"`
	RSSMB  float64 `json:"rss_mb"`
	Count  int     `json:"count"`
	// ListTextMB is what List's lowercased texts hold (their bytes).
	ListTextMB float64 `json:"list_text_mb"`
}

func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// helperOpenStats opens the store in dir in a fresh process and prints
// open time, live heap and RSS as JSON.
func helperOpenStats(dir string) error {
	t := time.Now()
	s, err := Open(context.Background(), Options{Dir: dir, Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
	if err != nil {
		return err
	}
	el := time.Since(t)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	st := openStats{OpenMS: float64(el.Microseconds()) / 1000, HeapMB: float64(ms.HeapAlloc) / (1 << 20), RSSMB: rssMB(), Count: s.Count()}
	s.mu.RLock()
	for _, e := range s.entries {
		st.ListTextMB += float64(len(e.lower)) / (1 << 20)
	}
	s.mu.RUnlock()
	_ = s.Close()
	return json.NewEncoder(os.Stdout).Encode(st)
}

// BenchmarkOpen measures start-up (Open of an existing store: load records
// into the vector index, open and reconcile the text index) in a fresh
// process each time, with the live heap and RSS after Open.
func BenchmarkOpen(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			dir := benchStoreDir(b, n)
			var opens, heaps, rss []float64
			var listText float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := helperOpen(b, dir)
				if st.Count != n {
					b.Fatalf("opened %d records, want %d", st.Count, n)
				}
				opens, heaps, rss = append(opens, st.OpenMS), append(heaps, st.HeapMB), append(rss, st.RSSMB)
				listText = st.ListTextMB
			}
			b.StopTimer()
			slices.Sort(opens)
			b.ReportMetric(opens[len(opens)/2], "open-ms")
			b.ReportMetric(heaps[len(heaps)-1], "heap-MB")
			b.ReportMetric(rss[len(rss)-1], "rss-MB")
			b.ReportMetric(listText, "list-text-MB")
		})
	}
}

// BenchmarkOpenOldMapping measures the first Open of a store whose text
// index an older build wrote (mapping version 1, before the names
// field): Open serves with it and builds the current one in the
// background (upgrade.go; under exp-rank2 it removed it and indexed
// every record again before it returned: 100k 417 s against 13 s). Each
// iteration opens, in fresh processes and one after the other, a copy of
// the cached store as it is ("current-ms", BenchmarkOpen's case) and a
// copy marked version 1 ("old-ms", whose Close stops the rebuild);
// "ratio" is the medians' ratio. Run:
//
//	go test ./backend/store -run '^$' -bench OpenOldMapping -benchtime 3x -cpu 1
func BenchmarkOpenOldMapping(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			src := benchStoreDir(b, n)
			var cur, old []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, v := range []string{TextMappingVersion, "1"} {
					b.StopTimer()
					dir := filepath.Join(b.TempDir(), "store")
					if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
						b.Fatal(err)
					}
					setTextMapping(b, dir, v)
					b.StartTimer()
					st := helperOpen(b, dir)
					if st.Count != n {
						b.Fatalf("opened %d records, want %d", st.Count, n)
					}
					if v == TextMappingVersion {
						cur = append(cur, st.OpenMS)
					} else {
						old = append(old, st.OpenMS)
					}
				}
			}
			b.StopTimer()
			slices.Sort(cur)
			slices.Sort(old)
			b.ReportMetric(cur[len(cur)/2], "current-ms")
			b.ReportMetric(old[len(old)/2], "old-ms")
			b.ReportMetric(old[len(old)/2]/cur[len(cur)/2], "ratio")
		})
	}
}

// helperOpen opens the store in dir in a fresh process (helperOpenStats)
// and returns what it measured.
func helperOpen(b *testing.B, dir string) openStats {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MEMTRAY_STORE_HELPER=openstats", "MEMTRAY_STORE_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("openstats: %v: %s", err, out)
	}
	var st openStats
	if err := json.Unmarshal(out[strings.LastIndex(strings.TrimSpace(string(out)), "\n")+1:], &st); err != nil {
		b.Fatalf("openstats output %q: %v", out, err)
	}
	return st
}

// BenchmarkList measures List (filter, sort and page over the in-memory
// columns) at 100k records.
func BenchmarkList(b *testing.B) {
	s := benchStore(b, 100_000)
	for _, q := range []ListQuery{
		{Limit: 50, Desc: true, IncludeSuperseded: true},
		{Limit: 50, Offset: 50_000, Sort: SortStickiness, StickyMinAccess: 5, IncludeSuperseded: true},
		{Limit: 50, Sort: SortImportance, Desc: true, Text: "index", IncludeSuperseded: true},
		{Limit: 50, Project: "quill", Snoozed: SnoozedExclude, Desc: true},
		{Limit: 50, Sort: SortProject, Kinds: []memory.Kind{memory.KindDecision}},
	} {
		b.Run(fmt.Sprintf("sort=%s,text=%q,project=%s,offset=%d", q.Sort, q.Text, q.Project, q.Offset), func(b *testing.B) {
			for b.Loop() {
				ids, _, err := s.List(context.Background(), q)
				if err != nil || len(ids) == 0 {
					b.Fatalf("List = %d, %v", len(ids), err)
				}
			}
		})
	}
}

// BenchmarkBM25Stats measures what the first text search after a write
// (a new index snapshot) spends on the BM25 statistics: the cache
// emptied, then bm25Stats.
func BenchmarkBM25Stats(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) {
			s := benchStore(b, n)
			s.textMu.RLock()
			defer s.textMu.RUnlock()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.bm25.mu.Lock()
				s.bm25.stats = nil
				s.bm25.mu.Unlock()
				if _, err := s.bm25Stats(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
