package ingest

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkLiveSessionLarge captures an n-turn session whose every turn
// shows a 48 KiB file in a fence (paddedSession, about 1100 lines a
// turn) live, with mayUpdate reading only the new turn's sentences that
// may name a pending statement's lead and, as at 764e448, every one of
// them ("lead filter off": each line classified, and the process's class
// memo emptied every few turns by the one-off lines): the time of the
// last quarter of its turns, per turn, and the process's CPU time in it.
// Run with -cpu 1; the two variants of one n compare within a run.
func BenchmarkLiveSessionLarge(b *testing.B) {
	const pad = 48 << 10
	for _, n := range []int{24} {
		turns := paddedSession("bench", n, pad)
		if len(turns) != n {
			b.Fatalf("%d turns, want %d", len(turns), n)
		}
		for _, off := range []bool{false, true} {
			name := fmt.Sprintf("turns=%d/lead filter", n)
			if off {
				name += " off"
			}
			b.Run(name, func(b *testing.B) {
				leadFilterOff = off
				b.Cleanup(func() { leadFilterOff = false })
				benchTurns(b, turns, func(f *fixture, i int) SessionState { return SessionState{} }, nil)
			})
		}
	}
}

// BenchmarkBatchSessionRevising ingests an n-turn session whose every
// turn revises (insteadSession) as one batch request (feed.Ingest: each
// turn given what its session said after it, Later), with the request's
// revising sentences read once (Revisions) and, as at 764e448, once for
// every turn before them ("memo off"): the time of the last quarter of
// its turns, per turn, and the process's CPU time in it. Run with -cpu 1.
func BenchmarkBatchSessionRevising(b *testing.B) {
	for _, n := range []int{80} {
		turns := insteadSession("bench", n)
		if len(turns) != n {
			b.Fatalf("%d turns, want %d", len(turns), n)
		}
		for _, off := range []bool{false, true} {
			name := fmt.Sprintf("turns=%d/memo", n)
			if off {
				name += " off"
			}
			b.Run(name, func(b *testing.B) {
				var revs *Revisions
				var later *Later
				benchTurns(b, turns, func(f *fixture, i int) SessionState {
					if i == 0 {
						later, revs = NewLater(turns), nil
						if !off {
							revs = NewRevisions()
						}
					}
					return SessionState{Ended: true, Revisions: revs}
				}, func(i int) []LaterText { return later.After(i, turns[i].SessionID) })
			})
		}
	}
}

// benchTurns runs turns through a new pipeline b.N times, each turn with
// the state st returns and the later texts later returns (nil: none),
// timing the last quarter of the turns: it reports their wall and CPU
// milliseconds per turn.
func benchTurns(b *testing.B, turns []Turn, st func(f *fixture, i int) SessionState, later func(i int) []LaterText) {
	ctx := context.Background()
	n := len(turns)
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
			s := st(f, i)
			var l []LaterText
			if later != nil {
				l = later(i)
			}
			if _, _, err := f.p.ProcessTurn(ctx, tn, l, s); err != nil {
				b.Fatal(err)
			}
		}
		cpu += processCPU() - c0
		b.StopTimer()
	}
	k := float64(b.N * (n - last))
	b.ReportMetric(float64(b.Elapsed().Microseconds())/k/1000, "ms/turn")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/k/1000, "cpu-ms/turn")
	}
}
