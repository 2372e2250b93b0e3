//go:build race

package daemon

// raceEnabled: the race detector slows the pipeline about tenfold, so the
// tests that capture a long session live skip under it.
const raceEnabled = true
