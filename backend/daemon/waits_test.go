package daemon

import (
	"testing"
	"time"
)

// testWait bounds every wait of these tests for something that should happen
// soon (a worker taking an exchange, a warning showing, an event arriving).
// It is a guard against a hang, not a performance check: on a loaded 2-core
// CI machine under -race such waits take many times longer than on a laptop,
// so it is generous.
const testWait = 60 * time.Second

// pollEvery is the pause between two checks of a polled condition.
const pollEvery = 20 * time.Millisecond

// waitFor polls cond until it holds, failing the test with what it waited
// for (and detail's text, when given, at the time it gave up) after testWait.
func waitFor(t testing.TB, what string, cond func() bool, detail func() string) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
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
		time.Sleep(pollEvery)
	}
}
