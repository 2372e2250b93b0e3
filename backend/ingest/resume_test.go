package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// paddedSession returns a synthetic session of n user turns, each of
// which reads a file of pad bytes (its step shows it in a fence: text
// LaterTexts reads, so that a few dozen turns pass maxLaterBytes), states
// a finding and sums up with a list, one line of which every turn repeats
// (the held test drops it once a turn the session remembers said it).
func paddedSession(id string, n, pad int) []Turn {
	var exs []memory.Exchange
	for i := range n {
		var file strings.Builder
		file.WriteString("Here is the file:\n\n```go\n")
		for k := 0; file.Len() < pad; k++ {
			fmt.Fprintf(&file, "\tworker%d.option%d = load(%q, %d)\n", i, k, fmt.Sprintf("opt-%d-%d", i, k), k*i)
		}
		file.WriteString("```")
		finding := fmt.Sprintf("The scheduler in `pkg%[1]d/sched.go` retries a failed job %[2]d times because the queue driver drops the lease after %[2]d0 seconds.", i, i%7+2)
		summary := fmt.Sprintf("Changed the retry count of worker %[1]d.\n\n"+
			"- Worker %[1]d now backs off exponentially between retries, so a flaky database no longer exhausts the pool\n"+
			"- Files: `pkg%[1]d/sched.go`, `pkg%[1]d/sched_test.go`\n"+
			"- Run the tests with `go test ./...` before pushing\n", i)
		for _, ex := range sessionOf(id, fmt.Sprintf("look at the retry logic of worker %d", i), file.String(), finding, summary) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// recentState describes what p remembers of a session's recent turns
// (recentTurns): each turn's number, what it kept and from where, what
// it said and was distilled with (held), its pending statements and
// sizes, and the window a new turn of the session is distilled with.
func recentState(p *Pipeline, session string) string {
	var b strings.Builder
	for _, e := range p.recent.turns(session) {
		fmt.Fprintf(&b, "turn %d size %d calls %d said %d\n kept %v\n from %v\n restated %v untested %v\n pending %v\n said %v\n held %v\n",
			e.turn.Turn, e.size, e.callSize, e.saidSize, e.kept, e.from, e.restated, e.untested, e.pending, e.said, e.turn.held)
	}
	p.recent.mu.Lock()
	if s := p.recent.sessions[session]; s != nil {
		fmt.Fprintf(&b, "session size %d\n", s.size)
	}
	p.recent.mu.Unlock()
	fmt.Fprintf(&b, "next held %v\n", p.recent.held(session))
	return b.String()
}

// A daemon restarted in the middle of a long live session reads again
// only the turns before its cursor the session's next turns can reach
// (ResumeTurns: the last two maxLaterBytes windows), and remembers the
// session exactly as reading every turn again does: at a restart within
// the first window, between the two, and past both.
func TestResumeReadsTheLastTwoWindows(t *testing.T) {
	ctx := context.Background()
	// Windows of 32 KiB, not 512: the same walk over about 90 KiB of
	// later text, past two windows, at a sixteenth of the distilling.
	defer func(w int) { maxLaterBytes = w }(maxLaterBytes)
	maxLaterBytes = 32 << 10
	const n, pad = 30, 3 << 10
	turns := paddedSession("long", n, pad)
	if len(turns) != n {
		t.Fatalf("%d turns, want %d", len(turns), n)
	}
	f := newFixture(t, nil)
	for i, tn := range turns {
		if _, _, err := f.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	sizes := make([]int, n)
	for i, tn := range turns {
		c, _, _ := cleanTurn(tn, nil)
		sizes[i] = textsSize(laterOf(c))
	}
	last := oldestKept(n, func(i int) int { return sizes[i] })
	if before := oldestKept(last, func(i int) int { return sizes[i] }); before == 0 || last == before {
		t.Fatalf("the session's windows start at turns %d and %d: want two windows and turns before them", before+1, last+1)
	}
	for _, k := range []int{4, last + 3, n} {
		t.Run(fmt.Sprintf("restart after %d turns", k), func(t *testing.T) {
			every := pipelineOn(t, f)
			resumeBoundOff = true
			na, err := every.ResumeTurns(ctx, turns[:k])
			resumeBoundOff = false
			if err != nil || na != k {
				t.Fatalf("every turn read again: %d of %d, %v", na, k, err)
			}
			bound := pipelineOn(t, f)
			nb, err := bound.ResumeTurns(ctx, turns[:k])
			if err != nil {
				t.Fatal(err)
			}
			size := func(i int) int { return sizes[i] }
			if want := k - oldestKept(oldestKept(k, size), size); nb != want {
				t.Errorf("read %d of %d turns again, want the last two windows' %d", nb, k, want)
			}
			t.Logf("read %d of %d turns again", nb, k)
			if k == n && nb >= k {
				t.Errorf("read all %d turns of a session past two windows again", k)
			}
			if got, want := recentState(bound, "long"), recentState(every, "long"); got != want {
				t.Errorf("bounded resume remembers\n%.3000s\nevery turn read again remembers\n%.3000s", got, want)
			}
			if got := recentState(bound, "long"); !strings.Contains(got, "turn ") {
				t.Errorf("nothing remembered: %s", got)
			}
		})
	}
}
