//go:build unix

package ingest

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the process has used:
// what a benchmark reports beside the wall clock, which on a loaded
// machine counts the other processes' turns too.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
