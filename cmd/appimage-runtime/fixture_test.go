//go:build linux

package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixtureTime is the modification time of every file of the test AppDir.
var fixtureTime = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// fixtureFile is one entry of the test AppDir.
type fixtureFile struct {
	data   []byte
	mode   os.FileMode // permission bits, or os.ModeDir / os.ModeSymlink with them
	target string      // symlinks
}

// bigData spans several 4 KiB blocks (the test image's block size) and ends
// in a fragment.
var bigData = func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 5*4096+1234)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}()

// appRunScript is the test AppRun: it writes what it sees to $OUT, one
// variable a line, then exits with $CODE; with $WAIT it waits for SIGTERM
// first (exiting 42 on it), with $SUICIDE it kills itself with that signal;
// with $LINGER it leaves a job behind in the AppDir, with no file
// descriptor of AppRun's, that reads a file of it a second later into
// $OUT.late (as a daemon started from the AppImage would).
const appRunScript = `#!/bin/sh
{
  echo "PID=$$"
  echo "APPIMAGE=$APPIMAGE"
  echo "APPDIR=$APPDIR"
  echo "ARGV0=$ARGV0"
  echo "OWD=$OWD"
  echo "PWD=$(pwd)"
  echo "ARGC=$#"
  for a in "$@"; do echo "ARG=$a"; done
  echo "DATA=$(cat "$APPDIR/usr/share/data.txt")"
} > "$OUT"
if [ -n "$WAIT" ]; then
  trap 'echo term >> "$OUT"; exit 42' TERM
  echo waiting >> "$OUT"
  while :; do sleep 0.05; done
fi
if [ -n "$SUICIDE" ]; then kill -s "$SUICIDE" $$; sleep 5; fi
if [ -n "$LINGER" ]; then
  cd "$APPDIR" # the job starts in the AppDir: the mount is in use from the fork on
  perl -MPOSIX -e 'POSIX::close($_) for 3..1023; exec @ARGV' sh -c \
    'sleep 1 && cat usr/share/data.txt > "$OUT.late"' </dev/null >/dev/null 2>&1 &
fi
exit "${CODE:-0}"
`

// fixtureTree is the test AppDir: an AppRun, nested directories, an empty
// file, a file over several blocks, a private file, symlinks (relative,
// absolute, to a directory) and a read-only directory.
func fixtureTree() map[string]fixtureFile {
	return map[string]fixtureFile{
		"AppRun":                  {data: []byte(appRunScript), mode: 0o755},
		"memtray.desktop":         {data: []byte("[Desktop Entry]\nName=test\n"), mode: 0o644},
		"usr":                     {mode: os.ModeDir | 0o755},
		"usr/share":               {mode: os.ModeDir | 0o755},
		"usr/share/data.txt":      {data: []byte("payload"), mode: 0o644},
		"usr/share/empty":         {data: nil, mode: 0o644},
		"usr/share/big.bin":       {data: bigData, mode: 0o644},
		"usr/share/private":       {data: []byte("secret"), mode: 0o600},
		"usr/share/ro":            {mode: os.ModeDir | 0o555},
		"usr/share/ro/file":       {data: []byte("in a read-only dir"), mode: 0o444},
		"usr/lib":                 {mode: os.ModeDir | 0o755},
		"usr/lib/a":               {mode: os.ModeDir | 0o755},
		"usr/lib/a/b":             {mode: os.ModeDir | 0o700},
		"usr/lib/a/b/deep.txt":    {data: []byte("deep"), mode: 0o644},
		".DirIcon":                {mode: os.ModeSymlink | 0o777, target: "memtray.desktop"},
		"usr/lib/link-relative":   {mode: os.ModeSymlink | 0o777, target: "../share/data.txt"},
		"usr/lib/link-absolute":   {mode: os.ModeSymlink | 0o777, target: "/etc/hostname"},
		"usr/lib/link-to-dir":     {mode: os.ModeSymlink | 0o777, target: "a"},
		"usr/share/with space.md": {data: []byte("spaces"), mode: 0o644},
	}
}

func needMksquashfs(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("mksquashfs"); err != nil {
		t.Skip("mksquashfs is not installed (Debian package squashfs-tools; build/deps.sh test installs it): the image tests need it")
	}
}

// writeTree writes files under dir (directories first, modes last).
func writeTree(t testing.TB, dir string, files map[string]fixtureFile) {
	t.Helper()
	var dirs []string
	for p, f := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case f.mode&os.ModeDir != 0:
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, p)
		case f.mode&os.ModeSymlink != 0:
			if err := os.Symlink(f.target, full); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(full, f.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(full, f.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(full, fixtureTime, fixtureTime); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, p := range dirs {
		full := filepath.Join(dir, p)
		if err := os.Chmod(full, files[p].mode.Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// squash makes a squashfs image of dir (4 KiB blocks, so that a small file
// spans several; zstd, as build/appimage.sh).
func squash(t testing.TB, dir, out string, extra ...string) {
	t.Helper()
	needMksquashfs(t)
	args := append([]string{dir, out, "-comp", "zstd", "-b", "4096", "-root-owned", "-no-xattrs", "-noappend", "-quiet", "-no-progress"}, extra...)
	cmd := exec.Command("mksquashfs", args...)
	for _, kv := range os.Environ() { // keep the files' times
		if !strings.HasPrefix(kv, "SOURCE_DATE_EPOCH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mksquashfs: %v\n%s", err, out)
	}
}

var (
	runtimeOnce sync.Once
	runtimeBin  string
	runtimeErr  error
	runtimeOut  []byte
)

// builtRuntime builds this command (static, as build/appimage.sh does) once
// for the test binary and returns its path, with the type-2 mark written.
func builtRuntime(t testing.TB) string {
	t.Helper()
	runtimeOnce.Do(func() {
		dir, err := os.MkdirTemp("", "appimage-runtime-test-")
		if err != nil {
			runtimeErr = err
			return
		}
		goCmd, err := exec.LookPath("go")
		if err != nil {
			goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		runtimeBin = filepath.Join(dir, "runtime")
		cmd := exec.Command(goCmd, "build", "-trimpath", "-ldflags", "-s -w -X main.version=test-1.2.3", "-o", runtimeBin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if runtimeOut, runtimeErr = cmd.CombinedOutput(); runtimeErr != nil {
			return
		}
		f, err := os.OpenFile(runtimeBin, os.O_WRONLY, 0)
		if err != nil {
			runtimeErr = err
			return
		}
		_, runtimeErr = f.WriteAt([]byte(appImageMagic), 8)
		if err := f.Close(); runtimeErr == nil {
			runtimeErr = err
		}
	})
	if runtimeErr != nil {
		t.Fatalf("build the runtime: %v\n%s", runtimeErr, runtimeOut)
	}
	return runtimeBin
}

// makeAppImage builds an AppImage of files in a new directory: the runtime
// and the squashfs image. It returns the AppImage's path.
func makeAppImage(t testing.TB, files map[string]fixtureFile) string {
	t.Helper()
	needMksquashfs(t)
	rt := builtRuntime(t)
	dir := t.TempDir()
	appDir := filepath.Join(dir, "AppDir")
	writeTree(t, appDir, files)
	sqfs := filepath.Join(dir, "image.sqfs")
	squash(t, appDir, sqfs)
	t.Cleanup(func() { makeWritable(appDir) })
	head, err := os.ReadFile(rt)
	if err != nil {
		t.Fatal(err)
	}
	img, err := os.ReadFile(sqfs)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "test.AppImage")
	if err := os.WriteFile(out, append(head, img...), 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

// makeWritable lets t.TempDir's cleanup remove read-only directories.
func makeWritable(dir string) {
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// checkTree compares the tree at dir with files (content, modes, symlink
// targets, times); directories may have the owner's rwx added.
func checkTree(t *testing.T, dir string, files map[string]fixtureFile, dirOwnerRWX bool) {
	t.Helper()
	for p, f := range files {
		full := filepath.Join(dir, p)
		fi, err := os.Lstat(full)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		switch {
		case f.mode&os.ModeDir != 0:
			want := f.mode.Perm()
			if dirOwnerRWX {
				want |= 0o700
			}
			if !fi.IsDir() || fi.Mode().Perm() != want {
				t.Errorf("%s: %v, want a directory %v", p, fi.Mode(), want)
			}
		case f.mode&os.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if fi.Mode()&os.ModeSymlink == 0 || err != nil || target != f.target {
				t.Errorf("%s: %v -> %q (%v), want a symlink to %q", p, fi.Mode(), target, err, f.target)
			}
		default:
			data, err := os.ReadFile(full)
			if err != nil || !bytes.Equal(data, f.data) {
				t.Errorf("%s: %d bytes (%v), want %d", p, len(data), err, len(f.data))
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != f.mode {
				t.Errorf("%s: mode %v, want %v", p, fi.Mode(), f.mode)
			}
			if !fi.ModTime().Equal(fixtureTime) {
				t.Errorf("%s: mtime %v, want %v", p, fi.ModTime(), fixtureTime)
			}
		}
	}
	// Nothing else.
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err == nil && rel != "." {
			if _, ok := files[filepath.ToSlash(rel)]; !ok {
				t.Errorf("%s: extracted, but not in the image", rel)
			}
		}
		return nil
	})
}
