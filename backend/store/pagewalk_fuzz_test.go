package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// FuzzWalkRecordsFile: the salvage's own reader of bbolt pages
// (walkRecordsFile, then salvageable on what it read) meets a records
// file patched with arbitrary bytes at one offset: it returns an error or
// what it could read, and never panics, loops or reads past the file.
func FuzzWalkRecordsFile(f *testing.F) {
	img, ps := fuzzRecordsImage(f, "walked store")
	f.Add(uint32(imgMetaRoot), []byte{0xff, 0xff, 0, 1})
	f.Add(uint32(ps+imgMetaRoot), []byte{2, 0, 0, 0, 0, 0, 0, 0})
	f.Add(uint32(2*ps+8), []byte{0x10, 0, 0xff, 0xff})
	f.Add(uint32(3*ps+16), []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(uint32(4*ps+2), []byte{0x01, 0x00})
	f.Add(uint32(len(img)/2), []byte{0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a})
	f.Fuzz(func(t *testing.T, off uint32, patch []byte) {
		b := slices.Clone(img)
		copy(b[int(off)%len(b):], patch)
		path := filepath.Join(t.TempDir(), dbFile)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := walkRecordsFile(path)
		if err != nil {
			return
		}
		good, noVec, _, _ := salvageable(w)
		if len(good)+len(noVec) > fuzzRecords {
			t.Fatalf("salvaged %d+%d records from a store of %d", len(good), len(noVec), fuzzRecords)
		}
	})
}
