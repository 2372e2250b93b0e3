//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestPayloadOffset(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	rt := builtRuntime(t)
	st, err := os.Stat(rt)
	if err != nil {
		t.Fatal(err)
	}
	img, err := openImage(ai)
	if err != nil {
		t.Fatalf("openImage: %v", err)
	}
	defer img.Close()
	if img.offset != st.Size() {
		t.Errorf("offset %d, want the runtime's size %d", img.offset, st.Size())
	}

	// The runtime alone, or without its mark, is no AppImage.
	raw, _ := os.ReadFile(ai)
	unmarked := append([]byte{}, raw...)
	copy(unmarked[8:], "\x00\x00\x00")
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"runtime without an image", raw[:st.Size()], "no squashfs image after the runtime"},
		{"no type-2 mark", unmarked, "not a type-2 AppImage"},
		{"damaged image", append(append([]byte{}, raw[:st.Size()+4]...), bytes.Repeat([]byte{0xff}, 200)...), "read the squashfs image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.AppImage")
			if err := os.WriteFile(p, tc.data, 0o755); err != nil {
				t.Fatal(err)
			}
			img, err := openImage(p)
			if err == nil {
				img.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("openImage: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestExtractAll(t *testing.T) {
	files := fixtureTree()
	img, err := openImage(makeAppImage(t, files))
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	dest := filepath.Join(t.TempDir(), "squashfs-root")
	t.Cleanup(func() { makeWritable(dest) })
	var progress bytes.Buffer
	if err := extract(img.fs, dest, nil, &progress, "squashfs-root"); err != nil {
		t.Fatalf("extract: %v", err)
	}
	checkTree(t, dest, files, true)
	if lines := strings.Count(progress.String(), "\n"); lines != len(files) {
		t.Errorf("progress has %d lines for %d entries:\n%s", lines, len(files), progress.String())
	}
	if !strings.Contains(progress.String(), "squashfs-root/usr/share/big.bin\n") {
		t.Errorf("progress does not name squashfs-root/usr/share/big.bin:\n%s", progress.String())
	}

	// Again over the same directory: files are replaced, nothing else changes.
	if err := extract(img.fs, dest, nil, nil, ""); err != nil {
		t.Fatalf("extract over an earlier extraction: %v", err)
	}
	checkTree(t, dest, files, true)
}

// TestExtractNoFollow: a symlink left where the image has a directory or a
// file is replaced, never written through.
func TestExtractNoFollow(t *testing.T) {
	files := fixtureTree()
	img, err := openImage(makeAppImage(t, files))
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(tmp, "squashfs-root")
	t.Cleanup(func() { makeWritable(dest) })
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	// squashfs-root/usr -> outside, squashfs-root/AppRun -> outside/AppRun
	if err := os.Symlink(outside, filepath.Join(dest, "usr")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "AppRun"), filepath.Join(dest, "AppRun")); err != nil {
		t.Fatal(err)
	}
	if err := extract(img.fs, dest, nil, nil, ""); err != nil {
		t.Fatalf("extract: %v", err)
	}
	if des, _ := os.ReadDir(outside); len(des) != 0 {
		t.Errorf("extract wrote through a symlink into %s: %v", outside, des)
	}
	checkTree(t, dest, files, true)
}

func TestMatcher(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		path    string
		want    bool
	}{
		{"usr", "usr", true},
		{"usr", "usr/share/data.txt", true},
		{"usr/share", "usr/share/ro/file", true},
		{"usr/share", "usr/lib/a", false},
		{"*.desktop", "memtray.desktop", true},
		{"*.desktop", "usr/share/applications/memtray.desktop", false},
		{"usr/*/data.txt", "usr/share/data.txt", true},
		{"./AppRun", "AppRun", true},
		{"/AppRun", "AppRun", true},
		{"AppRun", "AppRunner", false},
	} {
		m, err := matcher(tc.pattern)
		if err != nil {
			t.Fatalf("matcher(%q): %v", tc.pattern, err)
		}
		if got := m(tc.path); got != tc.want {
			t.Errorf("matcher(%q)(%q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
	if m, err := matcher(""); m != nil || err != nil {
		t.Errorf("matcher(\"\") = %v, %v; want nil (everything)", m != nil, err)
	}
	if _, err := matcher("usr/["); err == nil {
		t.Error("matcher(\"usr/[\") accepted a bad pattern")
	}
}

func TestExtractPattern(t *testing.T) {
	files := fixtureTree()
	img, err := openImage(makeAppImage(t, files))
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	dest := t.TempDir()
	m, _ := matcher("usr/lib/a")
	if err := extract(img.fs, dest, m, nil, ""); err != nil {
		t.Fatal(err)
	}
	want := map[string]fixtureFile{}
	for _, p := range []string{"usr", "usr/lib", "usr/lib/a", "usr/lib/a/b", "usr/lib/a/b/deep.txt"} {
		want[p] = files[p]
	}
	// usr and usr/lib were created as parents only: default modes.
	checkTree(t, dest, want, true)
}

func TestCachedAppDir(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	root := filepath.Join(t.TempDir(), "cache")
	t.Cleanup(func() { makeWritable(root) })
	img, err := openImage(ai)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()

	// A temporary extraction left by a killed run: old ones are removed.
	if err := os.MkdirAll(filepath.Join(root, ".extract-old-1"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleExtraction)
	os.Chtimes(filepath.Join(root, ".extract-old-1"), old, old)
	if err := os.MkdirAll(filepath.Join(root, ".extract-recent-1"), 0o700); err != nil {
		t.Fatal(err)
	}

	dir, reused, err := cachedAppDir(img, root)
	if err != nil {
		t.Fatalf("cachedAppDir: %v", err)
	}
	sum, _ := img.hash()
	if reused || dir != filepath.Join(root, sum) || len(sum) != 64 {
		t.Errorf("first cachedAppDir = %s (reused %v), want a new %s", dir, reused, filepath.Join(root, sum))
	}
	checkTree(t, dir, fixtureTree(), true)
	if _, err := os.Stat(filepath.Join(root, ".extract-old-1")); err == nil {
		t.Error("a stale temporary extraction was not removed")
	}
	if _, err := os.Stat(filepath.Join(root, ".extract-recent-1")); err != nil {
		t.Error("a recent temporary extraction (maybe another run's) was removed")
	}
	os.Remove(filepath.Join(root, ".extract-recent-1"))
	before, _ := os.Stat(filepath.Join(dir, "usr/share/big.bin"))

	again, reused, err := cachedAppDir(img, root)
	if err != nil || again != dir || !reused {
		t.Fatalf("second cachedAppDir = %s, reused %v, %v; want %s reused", again, reused, err, dir)
	}
	after, _ := os.Stat(filepath.Join(dir, "usr/share/big.bin"))
	if before.Sys().(*syscall.Stat_t).Ino != after.Sys().(*syscall.Stat_t).Ino {
		t.Error("the cached files were written again")
	}

	// A directory at the final name without an AppRun is replaced.
	if err := os.Remove(filepath.Join(dir, "AppRun")); err != nil {
		t.Fatal(err)
	}
	if d, reused, err := cachedAppDir(img, root); err != nil || reused || d != dir {
		t.Fatalf("cachedAppDir over an incomplete entry = %s, reused %v, %v", d, reused, err)
	}
	checkTree(t, dir, fixtureTree(), true)
	if des, _ := os.ReadDir(root); len(des) != 1 {
		t.Errorf("the cache holds %d entries, want 1: %v", len(des), des)
	}
}

// TestCachedAppDirConcurrent: runs that start together on an empty cache
// all get the one complete directory.
func TestCachedAppDirConcurrent(t *testing.T) {
	ai := makeAppImage(t, fixtureTree())
	root := filepath.Join(t.TempDir(), "cache")
	t.Cleanup(func() { makeWritable(root) })
	const n = 4
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			img, err := openImage(ai)
			if err != nil {
				errs[i] = err
				return
			}
			defer img.Close()
			dirs[i], _, errs[i] = cachedAppDir(img, root)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("run %d: %s, %v; run 0 got %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	checkTree(t, dirs[0], fixtureTree(), true)
	if des, _ := os.ReadDir(root); len(des) != 1 {
		t.Errorf("the cache holds %d entries after %d concurrent runs, want 1: %v", len(des), n, des)
	}
}
