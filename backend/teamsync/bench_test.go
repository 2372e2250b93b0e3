package teamsync

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// benchTeamSize is the team a joining daemon pulls in BenchmarkInitialSync.
const benchTeamSize = 10000

// BenchmarkInitialSync measures a daemon joining a team of
// benchTeamSize memories: a fresh store pulls and applies them all, with
// the built-in embedder, either embedding every text itself or reusing the
// vectors another daemon of the same model cached in the database. It
// reports seconds and the Go heap's peak (sampled) in MiB.
//
//	go test -run XXX -bench InitialSync -benchtime 1x ./backend/teamsync/
func BenchmarkInitialSync(b *testing.B) {
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
	emb := embed.NewBuiltin()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var all []team.Memory
	for i := range benchTeamSize {
		text := fmt.Sprintf("Service %d of the shop keeps queue q%d on host h%d and restarts after %d failures.", i, i*7, i*13, i%9)
		all = append(all, team.Memory{ID: fmt.Sprintf("m%06d", i), Text: text, ContentHash: memory.ContentHash(text),
			Kind: memory.KindFact, Type: memory.TypeProject, Project: "shop", Importance: 0.5, CreatedAt: at, UpdatedAt: at})
	}
	for i := 0; i < len(all); i += 1000 {
		if _, err := ts.Push(ctx, all[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	for _, cached := range []bool{false, true} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			if cached {
				// Another daemon of this model embedded and shared them.
				for i := 0; i < len(all); i += 1000 {
					texts := make([]string, 0, 1000)
					for _, m := range all[i : i+1000] {
						texts = append(texts, m.Text)
					}
					vs, err := emb.Embed(ctx, texts)
					if err != nil {
						b.Fatal(err)
					}
					var cache []team.Vector
					for k, m := range all[i : i+1000] {
						cache = append(cache, team.Vector{MemoryID: m.ID, ContentHash: m.ContentHash, Values: vs[k]})
					}
					if err := ts.PutVectors(ctx, emb.Model(), cache); err != nil {
						b.Fatal(err)
					}
				}
			}
			for range b.N {
				st, err := store.Open(ctx, store.Options{Dir: b.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Shared: Shared([]string{"*"})})
				if err != nil {
					b.Fatal(err)
				}
				sy, err := New(Options{Store: st, Embedder: emb, Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, url) }})
				if err != nil {
					b.Fatal(err)
				}
				peak := uint64(0)
				stop := make(chan struct{})
				sampled := make(chan struct{})
				go func() {
					defer close(sampled)
					var ms runtime.MemStats
					for {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
					}
				}()
				start := time.Now()
				rep, err := sy.PullNow(ctx)
				took := time.Since(start)
				close(stop)
				<-sampled
				if err != nil {
					b.Fatal(err)
				}
				if st.Count() != benchTeamSize || rep.Put != benchTeamSize {
					b.Fatalf("pulled %d, store holds %d", rep.Put, st.Count())
				}
				b.ReportMetric(took.Seconds(), "s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
				_ = st.Close()
			}
		})
	}
}
