package teamsync

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// benchTeamSize is the team a joining daemon pulls in BenchmarkInitialSync:
// $MEMTRAY_BENCH_TEAM memories, else 10,000.
func benchTeamSize(b *testing.B) int {
	v := os.Getenv("MEMTRAY_BENCH_TEAM")
	if v == "" {
		return 10000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 || n%1000 != 0 {
		b.Fatalf("MEMTRAY_BENCH_TEAM=%q: want a multiple of 1000", v)
	}
	return n
}

// benchMemory is the i-th memory of the benchmark's team, made on demand
// so the benchmark holds none of them while a daemon joins.
func benchMemory(i int, at time.Time) team.Memory {
	text := fmt.Sprintf("Service %d of the shop keeps queue q%d on host h%d and restarts after %d failures.", i, i*7, i*13, i%9)
	return team.Memory{ID: fmt.Sprintf("m%07d", i), Text: text, ContentHash: memory.ContentHash(text),
		Kind: memory.KindFact, Type: memory.TypeProject, Project: "shop", Importance: 0.5, CreatedAt: at, UpdatedAt: at}
}

// namedEmbedder is the built-in embedder under another model name: each
// "embedded" run has a model whose vectors nobody cached yet.
type namedEmbedder struct {
	*embed.Builtin
	model string
}

func (e namedEmbedder) Model() string { return e.model }

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func peakRSS() (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// resetPeakRSS returns the Go heap's free pages to the system and resets
// VmHWM to the current resident set (Linux: clear_refs 5), so the next
// peakRSS is the peak of what runs in between.
func resetPeakRSS() error {
	runtime.GC()
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// BenchmarkInitialSync measures a daemon joining a team of
// $MEMTRAY_BENCH_TEAM memories (default 10,000): a fresh store pulls and
// applies them all with the built-in embedder, either embedding every
// text itself (vectors=embedded, a model nobody cached) or reusing the
// vectors the embedded run cached in the database (vectors=cached). The
// pull is pipelined (pull=pipelined: reading, embedding on every core
// and applying overlap, pages of 2000) or, for the baseline, one stage
// after the other with one embedding goroutine and pages of 500
// (pull=serial, the pull before the pipeline). It reports seconds and the
// process's peak resident set during the join (VmHWM, reset before it)
// and the live Go heap after it (what the daemon keeps: the store's
// records and vector index).
//
//	MEMTRAY_BENCH_TEAM=100000 go test -run XXX -bench 'InitialSync/pull=pipelined' -benchtime 1x ./backend/teamsync/
func BenchmarkInitialSync(b *testing.B) {
	size := benchTeamSize(b)
	srv := pgtest.Shared(b)
	ctx := context.Background()
	owner := uniq("bowner")
	db := srv.NewDB(b, owner)
	url := srv.ConnString(owner, db)
	ts, err := team.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer ts.Close()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < size; i += 1000 {
		batch := make([]team.Memory, 0, 1000)
		for k := range 1000 {
			batch = append(batch, benchMemory(i+k, at))
		}
		if _, err := ts.Push(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	join := func(b *testing.B, emb memory.Embedder, serial bool) (PullReport, time.Duration, uint64, uint64) {
		st, err := store.Open(ctx, store.Options{Dir: b.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Shared: Shared([]string{"*"})})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		opts := Options{Store: st, Embedder: emb, Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, url) }}
		if serial {
			opts.PullBatch, opts.Workers = 500, 1
		}
		sy, err := New(opts)
		if err != nil {
			b.Fatal(err)
		}
		defer sy.Close()
		sy.serial = serial
		if err := resetPeakRSS(); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		rep, err := sy.PullNow(ctx)
		took := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		rss, err := peakRSS()
		if err != nil {
			b.Fatal(err)
		}
		if st.Count() != size || rep.Put != size {
			b.Fatalf("pulled %d, store holds %d, want %d", rep.Put, st.Count(), size)
		}
		// What the daemon keeps once the join is over: the store's live
		// heap (its records' index and vectors), for the peak's context.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return rep, took, rss, ms.HeapAlloc
	}
	for _, serial := range []bool{true, false} {
		mode := map[bool]string{true: "serial", false: "pipelined"}[serial]
		// The model the embedded run used and cached, for the cached run.
		emb := namedEmbedder{Builtin: embed.NewBuiltin(), model: embed.BuiltinModel + "+bench-" + mode}
		embedded := false
		for _, vectors := range []string{"embedded", "cached"} {
			b.Run(fmt.Sprintf("pull=%s/vectors=%s", mode, vectors), func(b *testing.B) {
				if vectors == "cached" && !embedded {
					join(b, emb, serial) // caches the vectors (untimed)
					embedded = true
				}
				for i := range b.N {
					e := emb
					if vectors == "embedded" && i > 0 {
						e.model += strconv.Itoa(i) // nobody cached this one
					}
					_, took, rss, live := join(b, e, serial)
					embedded = embedded || vectors == "embedded"
					b.ReportMetric(took.Seconds(), "s")
					b.ReportMetric(float64(rss)/(1<<20), "peak-RSS-MiB")
					b.ReportMetric(float64(live)/(1<<20), "live-heap-after-MiB")
					b.Logf("team of %d, pull=%s, vectors=%s: %.1f s, peak RSS %.0f MiB, live heap after %.0f MiB",
						size, mode, vectors, took.Seconds(), float64(rss)/(1<<20), float64(live)/(1<<20))
				}
			})
		}
	}
}
