package store

import (
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
)

// BenchmarkApply measures batches as the steward and undo make them, on a
// store of 2,000 records: each batch rewrites 100 records' metadata (no
// text change) and moves 20 records to the trash, or back.
func BenchmarkApply(b *testing.B) {
	recs := benchRecords(2000)
	s, err := Open(context.Background(), Options{Dir: b.TempDir(), Model: embed.BuiltinModel, Dim: embed.BuiltinDim})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	stored, err := s.PutBatch(ctx, recs)
	if err != nil {
		b.Fatal(err)
	}
	var moved []string
	for _, m := range stored[1000:1020] {
		moved = append(moved, m.ID)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var batch Batch
		for j := 0; j < 100; j++ {
			m := stored[(i*100+j)%1000]
			m.Importance = float64((i+j)%10) / 10
			m.UpdatedAt = time.Unix(int64(i), 0).UTC()
			batch.Put = append(batch.Put, m)
		}
		if i%2 == 0 {
			for _, id := range moved {
				batch.Trash = append(batch.Trash, TrashRequest{ID: id, Reason: "bench"})
			}
		} else {
			batch.Restore = moved
		}
		if err := s.Apply(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*120)/b.Elapsed().Seconds(), "changes/s")
}
