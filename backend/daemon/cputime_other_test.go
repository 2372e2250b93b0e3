//go:build !unix

package daemon

import "time"

// processCPU is not measured here: 0 (the benchmarks then report the
// wall clock only).
func processCPU() time.Duration { return 0 }
