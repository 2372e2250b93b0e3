package cli

import (
	"testing"
	"time"
)

// testWait bounds every wait of these tests for something that should happen
// soon (a daemon starting or stopping, a pipeline catching up). It is a guard
// against a hang, not a performance check: on a loaded 2-core CI machine under
// -race such waits take many times longer than on a laptop, so it is generous.
const testWait = 60 * time.Second

// Polls back off: the first look comes soon, later ones ever more seldom,
// so that a long wait on a loaded machine costs few wakeups.
const (
	firstPoll = time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// backoff is the pause after one of pause before the next look.
func backoff(pause time.Duration) time.Duration { return min(2*pause, maxPoll) }

// waitUntil polls cond, backing off, until it holds (true) or testWait has
// passed (false). It is for what offers nothing to wait on; waitText,
// waitClosed and waitRecv wait on the event itself.
func waitUntil(cond func() bool) bool {
	deadline := time.Now().Add(testWait)
	for pause := firstPoll; !cond(); pause = backoff(pause) {
		if time.Now().After(deadline) {
			return cond() // a last look: the condition may have turned after the sleep
		}
		time.Sleep(pause)
	}
	return true
}

// waitFor polls cond until it holds, failing the test with what it waited
// for (and detail's text, when given, at the time it gave up) after testWait.
func waitFor(t testing.TB, what string, cond func() bool, detail func() string) {
	t.Helper()
	if waitUntil(cond) {
		return
	}
	msg := ""
	if detail != nil {
		msg = ": " + detail()
	}
	t.Fatalf("gave up after %s waiting for %s%s", testWait, what, msg)
}

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
