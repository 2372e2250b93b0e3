package daemon

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleepAware: sinceBoot counts the time the computer slept.
const sleepAware = true

// sinceBoot is macOS's CLOCK_MONOTONIC, which goes on while the computer
// sleeps (Go's monotonic clock, mach_absolute_time, does not).
func sinceBoot() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return monoSince()
	}
	return time.Duration(ts.Nano())
}
