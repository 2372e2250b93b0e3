package feed

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// benchWords make each benchmark turn's statement its own (not a
// duplicate of an earlier turn's).
var benchWords = []string{"ledger", "invoice", "webhook", "tenant", "quota", "shard", "replica", "cursor", "bucket", "token",
	"schema", "cache", "queue", "worker", "lease", "backoff", "digest", "bundle", "socket", "cron"}

// benchExchange is turn i of its own session: the user asks, the
// assistant states a durable fact the pipeline stores.
func benchExchange(i int) memory.Exchange {
	w := func(k int) string { return benchWords[(i/pow(len(benchWords), k))%len(benchWords)] }
	return memory.Exchange{SessionID: fmt.Sprint("bench-", i), Turn: 1, UserTurns: 1, Project: "bench", Source: "api",
		User: "where is the " + w(0) + " " + w(1) + " limit set?",
		Assistant: fmt.Sprintf("The %s %s %s limit is set by %s_%s_LIMIT=%d in config/%s.yaml because the %s service reads it at startup.",
			w(0), w(1), w(2), w(0), w(1), 100+i, w(2), w(0))}
}

func pow(b, k int) int {
	n := 1
	for range k {
		n *= b
	}
	return n
}

// BenchmarkTurnDecided measures a turn decided and recorded, end to end
// on a real store on disk: the write pipeline (turn marks, the
// statement's memory) then the decision persisted in the
// recent-decisions log (OpenDecisionLog over the same store), as
// Service.Ingest does for each turn. serial is one caller; parallel=4 is
// four callers at once (the capture paths and the API deciding turns
// together), each op one turn. p50-ms and p99-ms are per turn.
func BenchmarkTurnDecided(b *testing.B) {
	for _, callers := range []int{1, 4} {
		name := "serial"
		if callers > 1 {
			name = fmt.Sprint("parallel=", callers)
		}
		b.Run(name, func(b *testing.B) {
			st, p, emb := openPipeline(b, false)
			cfg := config.Default()
			log, err := OpenDecisionLog(LogOptions{Size: cfg.Ingest.DecisionLog, Store: st, Failed: func(err error) { b.Error(err) }})
			if err != nil {
				b.Fatal(err)
			}
			s, err := New(Options{Store: st, Pipeline: p, Embedder: emb, Trash: trasher(b, st, p, emb), Log: log, LogSize: cfg.Ingest.DecisionLog})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var (
				mu       sync.Mutex
				took     = make([]time.Duration, 0, b.N)
				verdicts = map[memory.Verdict]int{}
				wg       sync.WaitGroup
			)
			next := make(chan int)
			b.ResetTimer()
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						start := time.Now()
						resp, err := s.Ingest(ctx, IngestRequest{Exchanges: []memory.Exchange{benchExchange(i)}})
						d := time.Since(start)
						if err != nil || len(resp.Decisions) != 1 {
							b.Errorf("turn %d: %d decisions, %v", i, len(resp.Decisions), err)
							continue
						}
						mu.Lock()
						took = append(took, d)
						verdicts[resp.Decisions[0].Verdict]++
						mu.Unlock()
					}
				}()
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			b.StopTimer()
			if len(took) == 0 {
				return
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
			b.ReportMetric(float64(verdicts[memory.VerdictStored])/float64(b.N), "stored/op")
		})
	}
}

// BenchmarkDecisionLogAdd measures recording a decision in the
// recent-decisions log kept in a real store on disk (the log's step of
// BenchmarkTurnDecided alone): serial is one caller, parallel=4 four at
// once. Add returns once the decision is on disk.
func BenchmarkDecisionLogAdd(b *testing.B) {
	for _, callers := range []int{1, 4} {
		name := "serial"
		if callers > 1 {
			name = fmt.Sprint("parallel=", callers)
		}
		b.Run(name, func(b *testing.B) {
			st := openStore(b, b.TempDir())
			log, err := OpenDecisionLog(LogOptions{Size: 1000, Store: st, Failed: func(err error) { b.Error(err) }})
			if err != nil {
				b.Fatal(err)
			}
			ex := benchExchange(0)
			var wg sync.WaitGroup
			next := make(chan int)
			b.ResetTimer()
			for range callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						log.Add(memory.Decision{ID: fmt.Sprint("d", i), Verdict: memory.VerdictStored, At: logT0.Add(time.Duration(i) * time.Second)}, ex)
					}
				}()
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			b.StopTimer()
			if got := len(log.Newest(b.N)); got != min(b.N, 1000) {
				b.Fatalf("the log holds %d decisions, want %d", got, min(b.N, 1000))
			}
		})
	}
}
