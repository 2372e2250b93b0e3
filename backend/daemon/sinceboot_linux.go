package daemon

import "golang.org/x/sys/unix"

// bootClock is CLOCK_BOOTTIME: the time since boot, suspend included
// (CLOCK_MONOTONIC, Go's, stops while the computer sleeps).
const bootClock = unix.CLOCK_BOOTTIME
