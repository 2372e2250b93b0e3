package steward

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Benchmarks sweep stores of synthetic memories (Zipfian words over a
// vocabulary, 8 projects, varied counts and ages, 2% near-duplicates),
// embedded with the built-in embedder. Stores are built once and cached
// under os.TempDir()/memtray-bench-steward keyed by size and model. Run:
//
//	go test ./backend/steward -run '^$' -bench Sweep -benchtime 1x -timeout 60m

var benchWords = strings.Fields(`the a to of and in is for that on with as it be by this we use are not or from
at should when an if run test build config file error fix server client request response cache database query
index table migration schema deploy release version branch commit merge review api endpoint handler token auth
session user project team service worker queue job retry timeout limit memory store search vector text embedding
model log debug trace metric alert monitor container image docker kubernetes pod node cluster network port host
proxy route path url function method class type interface struct field value key map list array string number`)

func benchVocab(n int) []string {
	out := append([]string(nil), benchWords...)
	syl := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "do", "gra", "sta", "tor", "lin", "mex", "quo"}
	r := rand.New(rand.NewSource(42))
	seen := map[string]bool{}
	for len(out) < n {
		var b strings.Builder
		for k := 0; k < 2+r.Intn(3); k++ {
			b.WriteString(syl[r.Intn(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

var benchProjects = []string{"tallyho", "quill", "harbor", "atlas", "beacon", "cinder", "delta", "ember"}

// benchStoreDir returns the cached store of n synthetic memories, building it once.
func benchStoreDir(b *testing.B, n int) string {
	root := filepath.Join(os.TempDir(), "memtray-bench-steward")
	dir := filepath.Join(root, fmt.Sprintf("n%d-%s-v2-m%s", n, testEmb.Model(), store.TextMappingVersion))
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
	st, err := store.Open(ctx, store.Options{Dir: tmp, Model: testEmb.Model(), Dim: testEmb.Dim()})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewSource(int64(n)))
	words := benchVocab(20000)
	z := rand.NewZipf(r, 1.07, 2, uint64(len(words)-1))
	var prev []memory.Memory
	const batch = 1000
	for done := 0; done < n; done += batch {
		k := min(batch, n-done)
		texts := make([]string, k)
		dupOf := make([]int, k)
		for i := range texts {
			dupOf[i] = -1
			if len(prev) > 0 && r.Intn(50) == 0 {
				dupOf[i] = r.Intn(len(prev))
				texts[i] = prev[dupOf[i]].Text + "." // a near-duplicate
				continue
			}
			parts := make([]string, 8+r.Intn(50))
			for j := range parts {
				parts[j] = words[z.Uint64()]
			}
			texts[i] = strings.Join(parts, " ")
		}
		vecs, err := testEmb.Embed(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		ms := make([]memory.Memory, k)
		for i := range ms {
			created := now.Add(-time.Duration(r.Intn(400*24)) * time.Hour)
			m := memory.Memory{Text: texts[i], Embedding: vecs[i], Project: benchProjects[r.Intn(len(benchProjects))],
				Kind: memory.Kinds[r.Intn(len(memory.Kinds))], Type: memory.Types[r.Intn(len(memory.Types))],
				Source: memory.SourceCapture, CreatedAt: created, Importance: 0.01 + 0.99*r.Float64()}
			if r.Intn(3) == 0 {
				m.AccessCount = r.Intn(20)
				m.ReinforcedCount = r.Intn(m.AccessCount/2 + 1)
				m.LastAccessed = created.Add(time.Duration(r.Int63n(int64(now.Sub(created)) + 1)))
				m.Hits = []time.Time{m.LastAccessed}
			}
			m.Pinned = r.Intn(100) == 0
			if dupOf[i] >= 0 {
				m.Project, m.Type = prev[dupOf[i]].Project, prev[dupOf[i]].Type
			}
			ms[i] = m
		}
		prev = ms
		if _, err := st.PutBatch(ctx, ms); err != nil {
			b.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("built %d-memory bench store in %v", n, time.Since(start).Round(time.Millisecond))
	return dir
}

// peakHeap samples the live heap every few milliseconds until stop is called.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); wg.Wait(); return peak.Load() }
}

// BenchmarkSweep plans a sweep over stores of 10k and 100k memories:
// "full" every operation with a full merge scan (the first sweep, or one a
// week), "auto" the same planned for the scheduled sweep's apply (Apply:
// the default auto_apply, so merges and prunes are not assumed by the
// operations after them), "incremental" every operation after a previous scan with nothing
// changed since (an hourly sweep's floor), "nomerge" the five other
// operations. It reports the sweep time, the peak live heap during it (the
// store's resident vector index included; base-heap-MB is the heap before
// the sweep), the memories searched for merge neighbours and the actions.
func BenchmarkSweep(b *testing.B) {
	sizes := []int{10000, 100000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		for _, mode := range []string{"full", "auto", "incremental", "nomerge"} {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, mode), func(b *testing.B) {
				dir := benchStoreDir(b, n)
				st, err := store.Open(context.Background(), store.Options{Dir: dir, Model: testEmb.Model(), Dim: testEmb.Dim(), Clock: memory.FixedClock{T: now}})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				sw := New(st, config.Default().Steward, Options{Dir: b.TempDir(), Clock: memory.FixedClock{T: now}})
				po := PlanOptions{FullMerge: mode == "full" || mode == "auto"}
				if mode == "auto" {
					po.Apply = config.Default().Steward.AutoApply
				}
				if mode == "nomerge" {
					po.Ops = nonMerge
				}
				if mode == "incremental" {
					if _, err := sw.Plan(context.Background(), po); err != nil {
						b.Fatal(err)
					}
					sw.clock = memory.FixedClock{T: now.Add(time.Hour)}
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc
				var peak uint64
				var p *Plan
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					stop := peakHeap()
					p, err = sw.Plan(context.Background(), po)
					if err != nil {
						b.Fatal(err)
					}
					peak = max(peak, stop())
				}
				b.StopTimer()
				if p.Scanned != n {
					b.Fatalf("scanned %d of %d", p.Scanned, n)
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "sweep-ms")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
				b.ReportMetric(float64(base)/(1<<20), "base-heap-MB")
				b.ReportMetric(float64(len(p.Actions)), "actions")
				b.ReportMetric(float64(p.MergeQueried), "merge-queried")
				b.Logf("%dk %s: %v", n/1000, mode, p.Counts)
			})
		}
	}
}
