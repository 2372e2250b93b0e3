//go:build race

package store

// raceEnabled: the race detector slows scans tenfold, so the quantization
// tests check smaller corpora under it.
const raceEnabled = true
