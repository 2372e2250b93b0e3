package cli

import (
	"testing"
	"time"

	"github.com/memtray/memtray/backend/polltest"
)

// testWait bounds every wait of these tests for something that should happen
// soon (a daemon starting or stopping, a pipeline catching up): a guard
// against a hang, not a performance check (polltest.Guard).
const testWait = polltest.Guard

// waitRecv waits for a value on ch, failing the test with what it waited for
// after testWait.
func waitRecv[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testWait):
		t.Fatalf("gave up after %s waiting for %s", testWait, what)
		var zero T
		return zero
	}
}

// waitClosed waits until ch is closed, failing the test with what it waited
// for after testWait.
func waitClosed(t testing.TB, what string, ch <-chan struct{}) {
	t.Helper()
	waitRecv(t, what, ch)
}

// waitText waits, woken by each write to buf, until cond holds for its
// text. If ended closes first (the writer is gone: a process exited), it
// fails the test at once with why's text; after testWait, with buf's text.
func waitText(t testing.TB, what string, buf *syncBuffer, cond func(string) bool, ended <-chan struct{}, why func() string) {
	t.Helper()
	deadline := time.NewTimer(testWait)
	defer deadline.Stop()
	for {
		text, wrote := buf.next()
		if cond(text) {
			return
		}
		select {
		case <-wrote:
		case <-ended:
			if cond(buf.String()) { // the last words before it ended
				return
			}
			t.Fatalf("gave up waiting for %s: %s", what, why())
		case <-deadline.C:
			t.Fatalf("gave up after %s waiting for %s: %q", testWait, what, buf.String())
		}
	}
}
