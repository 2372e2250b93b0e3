package recall

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/search"
)

// BenchmarkRecall measures a prompt recall with and without the recall
// log. The log's writer writes in the background (one transaction per
// batch, the withheld memories' previews read there), so the recall pays
// for queueing its entry; the writer's CPU competes with it on the
// machine's cores. The service is closed (the last batch written) within
// the timing. p50-ms and p99-ms are of the recalls alone (what the hook
// waits for), less disturbed than ns/op by other work on the machine.
func BenchmarkRecall(b *testing.B) {
	for _, logged := range []bool{false, true} {
		b.Run(fmt.Sprint("logged=", logged), func(b *testing.B) {
			rec, built, st := openStore(b)
			o := Options{Recaller: rec, Built: built, Clock: &testClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}}
			if logged {
				o.Log = st
			}
			s, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if _, err := s.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: prompt}); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2])/1e6, "p50-ms")
			b.ReportMetric(float64(took[len(took)*99/100])/1e6, "p99-ms")
		})
	}
}
