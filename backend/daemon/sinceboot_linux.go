package daemon

import (
	"time"

	"golang.org/x/sys/unix"
)

// sleepAware: sinceBoot counts the time the computer slept.
const sleepAware = true

// sinceBoot is the time since boot, suspend included (CLOCK_BOOTTIME);
// Go's monotonic clock (CLOCK_MONOTONIC) stops while the computer sleeps.
func sinceBoot() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return monoSince()
	}
	return time.Duration(ts.Nano())
}
