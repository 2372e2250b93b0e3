package daemon

import (
	"syscall"
	"testing"
)

// tmpfs mounts a small tmpfs at a new directory; the test is skipped
// where mounting is not allowed (not root, no CAP_SYS_ADMIN).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			syscall.Unmount(dir, syscall.MNT_DETACH)
		}
	})
	return dir
}
