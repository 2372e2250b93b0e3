//go:build linux || darwin

package daemon

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleepAware: sinceBoot counts the time the computer slept.
const sleepAware = true

// sinceBoot reads bootClock, a clock that goes on while the computer
// sleeps (Go's monotonic clock stops then); on an error it falls back to
// the monotonic clock.
func sinceBoot() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(bootClock, &ts) != nil {
		return monoSince()
	}
	return time.Duration(ts.Nano())
}
