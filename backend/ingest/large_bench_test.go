package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkLiveSessionLarge captures an n-turn session whose every turn
// shows a 48 KiB file in a fence (paddedSession) live: the CPU time of
// the last quarter of its turns, per turn, once the session's recent
// turns fill maxLaterBytes. Run with -cpu 1.
func BenchmarkLiveSessionLarge(b *testing.B) {
	ctx := context.Background()
	const pad = 48 << 10
	for _, n := range []int{24} {
		turns := paddedSession("bench", n, pad)
		if len(turns) != n {
			b.Fatalf("%d turns, want %d", len(turns), n)
		}
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			last := n - n/4
			var cpu time.Duration
			for range b.N {
				b.StopTimer()
				f := newFixture(b, nil)
				var c0 time.Duration
				for i, tn := range turns {
					if i == last {
						b.StartTimer()
						c0 = processCPU()
					}
					if _, _, err := f.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
						b.Fatal(err)
					}
				}
				cpu += processCPU() - c0
				b.StopTimer()
			}
			turns := float64(b.N * (n - last))
			b.ReportMetric(float64(b.Elapsed().Microseconds())/turns/1000, "ms/turn")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/turns/1000, "cpu-ms/turn")
			}
		})
	}
}
