package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// tempRE matches the names of WriteFileAtomic's temporary files:
// "." + the file's name + ".tmp" + digits.
var tempRE = regexp.MustCompile(`^\..+\.tmp[0-9]+$`)

// RemoveTemps deletes the temporary files WriteFileAtomic left in dir (not
// below it) when its process was killed between creating and renaming
// one, and returns how many it removed. Call it only where no other
// process writes at the same time: the daemon on its data dir, under the
// store's lock.
func RemoveTemps(dir string) int {
	return RemoveFiles(dir, tempRE.MatchString)
}

// RemoveFiles deletes the regular files in dir (not below it) whose name
// match accepts, and returns how many it removed. Like RemoveTemps, it is
// for leftovers of a killed process, where no other process writes.
func RemoveFiles(dir string, match func(name string) bool) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if e.Type().IsRegular() && match(e.Name()) && os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}

// RemoveFileTemps deletes the temporary files WriteFileAtomic left beside
// path (a file other processes may write too, such as the config file)
// once they are older than olderThan, which no write takes, and returns
// how many it removed.
func RemoveFileTemps(path string, olderThan time.Duration) int {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !tempRE.MatchString(name) || !strings.HasPrefix(name, "."+base+".tmp") {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < olderThan {
			continue
		}
		if os.Remove(filepath.Join(dir, name)) == nil {
			n++
		}
	}
	return n
}
