//go:build race

package capture

// raceEnabled: the race detector slows the proxy's parsing tenfold, so
// the big-stream test sends less.
const raceEnabled = true
