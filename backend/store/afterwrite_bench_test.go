package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// BenchmarkTextSearchAfterWrite is the first text search after a write,
// what a daemon that captures and recalls in turns pays on every recall:
// each iteration changes one memory's text (untimed), which makes a new
// index snapshot, then searches (timed), which counts the BM25
// statistics of the new snapshot (bm25Stats). On a copy of the cached
// store. Run:
//
//	go test ./backend/store -run '^$' -bench TextSearchAfterWrite -cpu 1
func BenchmarkTextSearchAfterWrite(b *testing.B) {
	texts, _ := benchQueries(200)
	for _, n := range benchSizes[:2] {
		b.Run(sizeName(n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "store")
			if err := os.CopyFS(dir, os.DirFS(benchStoreDir(b, n))); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			s, err := Open(ctx, Options{Dir: dir, Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			live, _, err := s.ChangedSince(ctx, 0)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]string, 0, len(live))
			for id := range live {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			emb := embed.NewBuiltin()
			lat := make(latencies, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if _, err := s.Update(ctx, ids[i%len(ids)], func(m *memory.Memory) error {
					m.Text += fmt.Sprintf(" run it with --pass-%d", i)
					vecs, err := emb.Embed(ctx, []string{m.Text})
					if err != nil {
						return err
					}
					m.Embedding = vecs[0]
					return nil
				}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t := time.Now()
				if _, err := s.TextSearch(ctx, texts[i%len(texts)], 20, Filter{}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
			}
			lat.report(b)
		})
	}
}
