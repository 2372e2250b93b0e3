//go:build race

package crashtest

// raceBuild: the tests, and so the daemons they start, run with the race
// detector, which slows a daemon's start and checks about four times.
const raceBuild = true
