//go:build unix

package tail

import (
	"os"
	"syscall"
)

// fileKey is the device and inode of fi.
func fileKey(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino) //nolint:unconvert // Dev is int32 on darwin
	}
	return 0, 0
}
