//go:build !linux && !darwin

package daemon

import "time"

// sleepAware: without a sleep-counting clock, a sleep looks like a jump.
const sleepAware = false

// sinceBoot falls back to Go's monotonic clock, which may stop while the
// computer sleeps.
func sinceBoot() time.Duration { return monoSince() }
