package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
)

// testWait bounds every wait of these tests for something that should happen
// soon (a worker taking an exchange, a warning showing, an event arriving).
// It is a guard against a hang, not a performance check: on a loaded 2-core
// CI machine under -race such waits take many times longer than on a laptop,
// so it is generous.
const testWait = 60 * time.Second

// Polls back off: the first look comes soon, later ones ever more seldom,
// so that a long wait on a loaded machine costs few wakeups.
const (
	firstPoll = time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// backoff is the pause after one of pause before the next look.
func backoff(pause time.Duration) time.Duration { return min(2*pause, maxPoll) }

// waitFor polls cond, backing off, until it holds, failing the test with
// what it waited for (and detail's text, when given, at the time it gave
// up) after testWait. It is for what offers nothing to wait on: waitJob
// waits on the daemon's events.
func waitFor(t testing.TB, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for pause := firstPoll; !cond(); pause = backoff(pause) {
		if time.Now().After(deadline) {
			if cond() { // a last look: it may have turned during the sleep
				return
			}
			msg := ""
			if detail != nil {
				msg = ": " + detail()
			}
			t.Fatalf("gave up after %s waiting for %s%s", testWait, what, msg)
		}
		time.Sleep(pause)
	}
}

// waitJob waits until d's job j has finished and returns it as it ended,
// woken by the daemon's job events (each change of a job publishes one).
func waitJob(t testing.TB, d *Daemon, j httpapi.Job) httpapi.Job {
	t.Helper()
	sub := d.bus.Subscribe(16)
	defer sub.Close()
	deadline := time.NewTimer(testWait)
	defer deadline.Stop()
	for {
		// A look after each event: one dropped from a full buffer was
		// published after those still queued, so the look after them sees it.
		cur, err := d.Job(context.Background(), j.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Finished() {
			return cur
		}
		select {
		case <-sub.C():
		case <-deadline.C:
			t.Fatalf("gave up after %s waiting for job %s (%s) to finish: %+v", testWait, j.ID, j.Kind, cur)
		}
	}
}
