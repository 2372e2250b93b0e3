package ingest

import (
	"context"
	"testing"
)

// BenchmarkReplayedSession measures what a second ingest of a history
// costs against its first: an n-turn synthetic session (benchSession)
// ingested as `memtray ingest` does (ended, each turn knowing the
// session's later texts), then by a new process on the same store, whose
// turns are all replayed (their marks): each is distilled again knowing
// the whole session and remembered (rememberReplayed), and settled against
// what its run stored (settleReplayed). The variants switch the settling
// off (as at 1368516) and the remembering off (as before exp-regrow: a
// replayed turn costs its marks' read). Only the ingest being measured is
// timed; run with -cpu 1.
func BenchmarkReplayedSession(b *testing.B) {
	const n = 32
	ctx := context.Background()
	ingest := func(b *testing.B, p *Pipeline, turns []Turn) {
		for i, tn := range turns {
			if _, _, err := p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true}); err != nil {
				b.Fatalf("turn %d: %v", i+1, err)
			}
		}
	}
	for _, v := range []struct {
		name                 string
		replay, settle, skip bool
	}{
		{"first ingest", false, false, false},
		{"replayed", true, true, false},
		{"replayed, settling off", true, false, false},
		{"replayed, remembering off", true, false, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			settleReplayOff, replayOff = !v.settle, v.skip
			b.Cleanup(func() { settleReplayOff, replayOff = false, false })
			turns := benchSession("bench", n)
			for range b.N {
				b.StopTimer()
				f := newFixture(b, nil)
				p := f.p
				if v.replay {
					ingest(b, p, turns)
					p = pipelineOn(b, f)
				}
				b.StartTimer()
				ingest(b, p, turns)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n)/1000, "ms/turn")
		})
	}
}
