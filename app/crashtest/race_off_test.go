//go:build !race

package crashtest

// raceBuild: see race_on_test.go.
const raceBuild = false
