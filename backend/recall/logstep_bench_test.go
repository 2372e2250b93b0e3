package recall

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/search"
)

// BenchmarkLogStep measures what logging adds to one recall on the hook's
// path (the recall itself made once, before the timing): queueing its
// entry. close-ns/op is the writer's work for all of them (redaction,
// previews, one transaction), made to wait for Close, off the hook's
// path.
func BenchmarkLogStep(b *testing.B) {
	rec, built, st := openStore(b)
	s, err := New(Options{Recaller: rec, Built: built, Log: st, Clock: &testClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)},
		LogQueue: b.N + 1, LogBatch: b.N + 1, LogEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	req := search.RecallRequest{SessionID: "s", Prompt: prompt}
	out, err := s.Recall(context.Background(), req)
	if err != nil || len(out.Hits) == 0 {
		b.Fatalf("recalled %d, %v", len(out.Hits), err)
	}
	b.ResetTimer()
	for i := range b.N {
		req.SessionID = fmt.Sprint("s", i)
		s.log(req, out)
	}
	b.StopTimer()
	start := time.Now()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "close-ns/op")
}
