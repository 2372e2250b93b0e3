package ingest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// benchSession returns a synthetic live session of n user turns: each turn
// reads a file, states a finding about it and ends with a summary whose
// list repeats the commands and files earlier turns said (what the held
// test reads), so what the session said grows with every turn.
func benchSession(id string, n int) []Turn {
	var exs []memory.Exchange
	for i := range n {
		prompt := fmt.Sprintf("look at the retry logic of worker %d", i)
		finding := fmt.Sprintf("The scheduler in `pkg%[1]d/sched.go` retries a failed job %[2]d times because the queue driver drops the lease after %[2]d0 seconds.", i, i%7+2)
		summary := fmt.Sprintf("Changed the retry count of worker %[1]d.\n\n"+
			"- Worker %[1]d now backs off exponentially between retries, so a flaky database no longer exhausts the pool\n"+
			"- Files: `pkg%[1]d/sched.go`, `pkg%[1]d/sched_test.go`\n"+
			"- Try it: `jobctl run --worker %[1]d --config local.yaml`\n"+
			"- Run the tests with `go test ./pkg%[1]d/...` before pushing\n", i)
		for _, ex := range sessionOf(id, prompt, "Let me read the scheduler.", finding, summary) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// BenchmarkLiveSessionHeld processes an n-turn synthetic session live
// (no later texts, the session not ended: every turn read with what the
// session's earlier turns said, held.go) and reports the bytes allocated
// per turn and the bytes the session's recent turns are counted for
// (recentTurns.size) per turn. Before the shared record of what the
// session said each turn copied every earlier block (O(turns²)).
func BenchmarkLiveSessionHeld(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{8, 64, 256} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			turns := benchSession("bench", n)
			if len(turns) != n {
				b.Fatalf("%d turns, want %d", len(turns), n)
			}
			var alloc, kept uint64
			for range b.N {
				b.StopTimer()
				f := newFixture(b, nil)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.StartTimer()
				for _, tn := range turns {
					if _, _, err := f.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				runtime.ReadMemStats(&after)
				alloc += after.TotalAlloc - before.TotalAlloc
				kept += uint64(f.p.recent.size)
				b.StartTimer()
			}
			b.ReportMetric(float64(alloc)/float64(b.N*n), "B/turn")
			b.ReportMetric(float64(kept)/float64(b.N*n), "counted-B/turn")
		})
	}
}

// BenchmarkSessionRecord keeps the recent turns of an n-turn synthetic
// session as live capture does (what a new turn is distilled with, then
// the turn remembered), without distilling or storing: the bytes
// allocated per turn for what the session said (held.go), which grew with
// the session while each turn copied every earlier block.
func BenchmarkSessionRecord(b *testing.B) {
	for _, n := range []int{8, 64, 256} {
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			turns := benchSession("bench", n)
			said := make([][]heldText, len(turns))
			for i, tn := range turns {
				said[i] = saidBlocks(tn)
			}
			b.ReportAllocs()
			var ms0, ms1 runtime.MemStats
			runtime.ReadMemStats(&ms0)
			for range b.N {
				var r recentTurns
				for i, tn := range turns {
					tn.held = heldOf(&r, tn.SessionID)
					rt := recentTurn{said: slices.Clone(said[i])}
					rt.setTurn(tn)
					r.set(tn.SessionID, append(r.turns(tn.SessionID), rt))
				}
			}
			runtime.ReadMemStats(&ms1)
			b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N*n), "B/turn")
		})
	}
}

// heldOf is what a new turn of session is distilled with.
func heldOf(r *recentTurns, session string) []heldText { return r.held(session) }
