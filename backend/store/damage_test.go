package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTextIndexDamagedRebuilt damages the text index on disk in the ways a
// crash, a bad disk or a stray tool would, while the store is closed. Open
// must neither fail nor panic (a damaged bbolt page or zap segment makes
// bleve panic): it moves the index aside, rebuilds it from the records and
// says so in Info().Warnings, and text search finds every record again.
func TestTextIndexDamagedRebuilt(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	flip := func(step int) func(b []byte) {
		return func(b []byte) {
			for i := 64; i < len(b)-256; i += step {
				b[i] ^= 0x55
			}
		}
	}
	cases := map[string]func(t *testing.T, path string, zaps []string){
		"root.bolt pages garbled": func(t *testing.T, path string, _ []string) {
			edit(t, filepath.Join(path, "store", "root.bolt"), func(b []byte) {
				for i := 4096; i < len(b); i += 7 {
					b[i] ^= 0x5a
				}
			})
		},
		// A freelist whose count reaches past the file: bbolt copies it out
		// of its memory map and faults (SIGSEGV/SIGBUS), which without
		// debug.SetPanicOnFault kills the process instead of panicking.
		"root.bolt freelist count past the file": func(t *testing.T, path string, _ []string) {
			edit(t, filepath.Join(path, "store", "root.bolt"), func(b []byte) {
				boltFreelistPastEnd(t, b)
			})
		},
		"root.bolt truncated": func(t *testing.T, path string, _ []string) {
			os.Truncate(filepath.Join(path, "store", "root.bolt"), 100)
		},
		"segments garbled (every 3rd byte)": func(t *testing.T, _ string, zaps []string) {
			for _, z := range zaps {
				edit(t, z, flip(3))
			}
		},
		"segments garbled (every 37th byte)": func(t *testing.T, _ string, zaps []string) {
			for _, z := range zaps {
				edit(t, z, flip(37))
			}
		},
		"segments truncated": func(t *testing.T, _ string, zaps []string) {
			for _, z := range zaps {
				fi, _ := os.Stat(z)
				os.Truncate(z, fi.Size()/2)
			}
		},
		"segments removed": func(t *testing.T, _ string, zaps []string) {
			for _, z := range zaps {
				os.Remove(z)
			}
		},
		"index folder replaced by a file": func(t *testing.T, path string, _ []string) {
			os.RemoveAll(path)
			os.WriteFile(path, []byte("not an index"), 0o600)
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			for i := range 40 {
				mustPut(t, s, mem(fmt.Sprintf("damage check %d: service%d reads config/svc-%d.yaml", i, i, i)))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, textDir)
			var zaps []string
			filepath.WalkDir(path, func(p string, _ fs.DirEntry, _ error) error {
				if filepath.Ext(p) == ".zap" {
					zaps = append(zaps, p)
				}
				return nil
			})
			if len(zaps) == 0 && strings.HasPrefix(name, "segments") {
				t.Fatal("no segment files to damage")
			}
			damage(t, path, zaps)
			s2, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testDim})
			if err != nil {
				t.Fatalf("Open after damage: %v", err)
			}
			defer s2.Close()
			info := s2.Info()
			// Either bleve refuses the damaged index (moved aside, rebuilt,
			// with a warning), or it opens it by skipping the snapshots it
			// cannot load ("unable to load snapshot ..., continuing"), which
			// one it does depending on when its persister last wrote: then
			// the index lacks the records and reconciliation puts every one
			// back. Either way all 40 are repaired.
			rebuilt := len(info.Warnings) == 1 && strings.Contains(info.Warnings[0], "rebuilt from the records")
			if info.Count != 40 || info.RepairedOnOpen != 40 || !(rebuilt || len(info.Warnings) == 0) {
				t.Errorf("Info = %d records, %d repaired, warnings %q", info.Count, info.RepairedOnOpen, info.Warnings)
			}
			for _, q := range []string{"service17", "config", "damage check"} {
				if ts, err := s2.TextSearch(ctx, q, 50, Filter{}); err != nil || len(ts) == 0 {
					t.Errorf("search %q after the rebuild: %d hits, %v", q, len(ts), err)
				}
			}
			if ts, _ := s2.TextSearch(ctx, "damage", 100, Filter{}); len(ts) != 40 {
				t.Errorf("the rebuilt index finds %d of 40 records", len(ts))
			}
			mustPut(t, s2, mem("written after the rebuild: service99"))
			if ts, _ := s2.TextSearch(ctx, "service99", 3, Filter{}); len(ts) != 1 {
				t.Errorf("a write after the rebuild is not found: %v", ts)
			}
		})
	}
}

// edit rewrites a file through fn.
func edit(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(b)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// boltFreelistPastEnd points the freelist page of the bbolt file b (both
// meta pages name it) at far more page ids than the file holds: the
// page's count is 0xFFFF, so its first id is the real count.
func boltFreelistPastEnd(t *testing.T, b []byte) {
	t.Helper()
	const metaOff, freelistOff = 16, 16 + 4*4 + 16 // page header; magic, version, page size, flags; root bucket
	pageSize := int(binary.LittleEndian.Uint32(b[metaOff+8:]))
	if pageSize < 1024 || len(b) < 2*pageSize {
		t.Fatalf("not a bbolt file: page size %d, %d bytes", pageSize, len(b))
	}
	for _, meta := range []int{0, pageSize} {
		fl := int(binary.LittleEndian.Uint64(b[meta+freelistOff:])) * pageSize
		if fl+24 > len(b) {
			t.Fatalf("freelist page at %d past the file (%d bytes)", fl, len(b))
		}
		binary.LittleEndian.PutUint16(b[fl+10:], 0xFFFF) // count: the first id holds it
		binary.LittleEndian.PutUint64(b[fl+16:], 1<<24)  // 16M ids: 128 MiB past a file of a few pages
	}
}
