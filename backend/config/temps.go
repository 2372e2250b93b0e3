package config

import (
	"os"
	"path/filepath"
	"regexp"
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if e.Type().IsRegular() && tempRE.MatchString(e.Name()) && os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}
