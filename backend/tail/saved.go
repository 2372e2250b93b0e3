package tail

import "path/filepath"

// SavedCursors reads the cursors a Tailer with Options.Dir dir saved (for
// instance, what working directory each transcript's session ran in),
// without starting one. Damaged cursor files are skipped and reported.
func SavedCursors(dir string) ([]Cursor, []error) {
	all, errs := cursorStore{filepath.Join(dir, "cursors")}.loadAll()
	out := make([]Cursor, 0, len(all))
	for _, c := range all {
		out = append(out, *c)
	}
	return out, errs
}
