// Package polltest is test support: the backed-off poll that tests use to
// wait for what offers nothing to wait on (a store written by another
// goroutine, a database's activity, a daemon's counters). The looks back
// off, from 1 ms to at most 100 ms apart, so that a long wait on a loaded
// machine costs few wakeups and slows what it waits for little; Guard only
// ends a test that would otherwise hang (nothing is asserted about time:
// on a loaded 2-core CI machine under -race such waits take many times
// longer than on a laptop, so it is generous). No program imports it.
package polltest

import (
	"testing"
	"time"
)

// Guard bounds a wait: past it, Until gives up after one last look.
const Guard = time.Minute

// The pauses between looks: the first, doubled after each look up to the
// last.
const (
	FirstPause = time.Millisecond
	MaxPause   = 100 * time.Millisecond
)

// Until looks at cond, backing off between looks, until it holds (true)
// or Guard has passed (false): the last look is made after Guard passed,
// so a condition that turned during the last pause is seen.
func Until(cond func() bool) bool { return until(cond, Guard) }

// until is Until with guard for Guard.
func until(cond func() bool, guard time.Duration) bool {
	deadline := time.Now().Add(guard)
	for pause := FirstPause; ; pause = min(2*pause, MaxPause) {
		late := time.Now().After(deadline)
		if cond() {
			return true
		}
		if late {
			return false
		}
		time.Sleep(pause)
	}
}

// Eventually waits with Until until cond returns nil, and fails t with
// what it waited for and cond's last error if it never did.
func Eventually(t testing.TB, what string, cond func() error) {
	t.Helper()
	var err error
	if !Until(func() bool { err = cond(); return err == nil }) {
		t.Fatalf("%s: never happened within %s: %v", what, Guard, err)
	}
}

// Wait waits with Until until cond holds, and fails t with what it waited
// for if it never did, adding detail's text at the time it gave up when
// detail is not nil. It is for what offers nothing to wait on; a test that
// can wait on the event itself should.
func Wait(t testing.TB, what string, cond func() bool, detail func() string) {
	t.Helper()
	if Until(cond) {
		return
	}
	msg := ""
	if detail != nil {
		msg = ": " + detail()
	}
	t.Fatalf("gave up after %s waiting for %s%s", Guard, what, msg)
}
