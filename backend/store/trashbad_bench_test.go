package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// BenchmarkReopenTrash is BenchmarkReopen of a store of 1000 records, 300
// of them in the trash: what decoding every trash entry at Open (the
// unreadable ones noted: trashbad.go) adds to a start.
func BenchmarkReopenTrash(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	s, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim})
	if err != nil {
		b.Fatal(err)
	}
	ms := make([]memory.Memory, 1000)
	for i := range ms {
		ms[i] = mem(fmt.Sprintf("reopened fact %d about word%d and word%d", i, i, i%17))
	}
	stored, err := s.PutBatch(ctx, ms)
	if err != nil {
		b.Fatal(err)
	}
	var batch Batch
	for _, m := range stored[:300] {
		batch.Trash = append(batch.Trash, TrashRequest{ID: m.ID, Reason: "bench"})
	}
	if err := s.Apply(ctx, batch); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Open(ctx, Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
