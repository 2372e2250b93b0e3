package daemon

import "golang.org/x/sys/unix"

// bootClock is macOS's CLOCK_MONOTONIC, which goes on while the computer
// sleeps (Go's monotonic clock, mach_absolute_time, does not).
const bootClock = unix.CLOCK_MONOTONIC
