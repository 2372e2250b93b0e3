package cli

import (
	"strings"
	"testing"
	"time"
)

// testWait bounds every wait of these tests for something that should happen
// soon (a daemon starting or stopping, a pipeline catching up). It is a guard
// against a hang, not a performance check: on a loaded 2-core CI machine under
// -race such waits take many times longer than on a laptop, so it is generous.
const testWait = 60 * time.Second

// pollEvery is the pause between two checks of a polled condition.
const pollEvery = 20 * time.Millisecond

// waitUntil polls cond until it holds (true) or testWait has passed (false).
func waitUntil(cond func() bool) bool {
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			return cond() // a last look: the condition may have turned after the sleep
		}
		time.Sleep(pollEvery)
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

// waitServing waits until a `memtray serve` run writing to out says it
// serves, failing the test with its stderr errb after testWait.
func waitServing(t testing.TB, out, errb *syncBuffer) {
	t.Helper()
	waitFor(t, `serve to print "serving on"`, func() bool { return strings.Contains(out.String(), "serving on") }, errb.String)
}
