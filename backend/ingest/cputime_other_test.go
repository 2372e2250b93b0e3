//go:build !unix

package ingest

import "time"

// processCPU is not measured here: 0 (the benchmarks then report the
// wall clock only).
func processCPU() time.Duration { return 0 }
