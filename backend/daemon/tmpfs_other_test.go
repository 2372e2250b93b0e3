//go:build !linux

package daemon

import "testing"

// tmpfs skips the test: a size-limited filesystem to fill is mounted only
// on Linux (see tmpfs_linux_test.go).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	t.Skip("the disk-full fault needs a tmpfs, mounted only on Linux")
	return ""
}
