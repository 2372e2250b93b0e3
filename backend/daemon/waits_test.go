package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/polltest"
)

// testWait bounds every wait of these tests for something that should happen
// soon (a worker taking an exchange, a warning showing, an event arriving):
// a guard against a hang, not a performance check (polltest.Guard).
const testWait = polltest.Guard

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
