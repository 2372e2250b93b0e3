//go:build !race

package capture

// raceEnabled: see race_on_test.go.
const raceEnabled = false
