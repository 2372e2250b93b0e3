package daemon

import "time"

// monoStart anchors monoSince.
var monoStart = time.Now()

// monoSince is the time since the process started by Go's monotonic clock.
func monoSince() time.Duration { return time.Since(monoStart) }
