//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/diskfs/go-diskfs/filesystem/squashfs"
)

// extract writes the entries of fsys that match (every entry when match is
// nil) under dest, creating dest and the parents of matched entries. It
// replaces files and symlinks already there and never writes through a
// symlink. Directories keep their image permissions plus the owner's rwx,
// so that what it wrote can be removed again. When progress is set, each
// written path is printed to it, prefixed with prefix.
func extract(fsys *squashfs.FileSystem, dest string, match func(string) bool, progress io.Writer, prefix string) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dest, err)
	}
	x := extractor{dest: dest, dirs: map[string]bool{".": true}, buf: make([]byte, 1<<20)}
	var written []entry // directories, to set their modes and times last
	err := walk(fsys, func(e entry) error {
		if match != nil && !match(e.path) {
			return nil
		}
		if err := x.parents(path.Dir(e.path)); err != nil {
			return err
		}
		target := x.target(e.path)
		switch e.kind {
		case kindDir:
			if err := x.dir(e.path); err != nil {
				return err
			}
			written = append(written, e)
		case kindFile:
			if err := x.file(e, target); err != nil {
				return err
			}
		case kindSymlink:
			if err := x.clear(target); err != nil {
				return err
			}
			if err := os.Symlink(e.target, target); err != nil {
				return fmt.Errorf("create symlink %s: %w", target, err)
			}
		case kindOther:
			if progress != nil {
				fmt.Fprintf(progress, "%s: skipped (neither file, directory nor symlink)\n", path.Join(prefix, e.path))
			}
			return nil
		}
		if progress != nil {
			fmt.Fprintln(progress, path.Join(prefix, e.path))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(written) - 1; i >= 0; i-- { // children first: a 0555 dir is set after its content
		e := written[i]
		target := x.target(e.path)
		if err := os.Chmod(target, e.perm|0o700); err != nil {
			return fmt.Errorf("chmod %s: %w", target, err)
		}
		if err := os.Chtimes(target, e.mtime, e.mtime); err != nil {
			return fmt.Errorf("set the times of %s: %w", target, err)
		}
	}
	return nil
}

// extractor holds the state of one extraction.
type extractor struct {
	dest string
	dirs map[string]bool // image paths known to be real directories under dest
	buf  []byte
}

func (x *extractor) target(p string) string { return filepath.Join(x.dest, filepath.FromSlash(p)) }

// parents makes sure every component of the image path dir is a real
// directory under dest (not a symlink someone left there).
func (x *extractor) parents(dir string) error {
	if x.dirs[dir] {
		return nil
	}
	if err := x.parents(path.Dir(dir)); err != nil {
		return err
	}
	return x.dir(dir)
}

// dir creates the directory for image path p, replacing a file or symlink.
func (x *extractor) dir(p string) error {
	if x.dirs[p] {
		return nil
	}
	target := x.target(p)
	fi, err := os.Lstat(target)
	switch {
	case err == nil && fi.IsDir():
	case err == nil:
		if err := os.Remove(target); err != nil {
			return fmt.Errorf("replace %s with a directory: %w", target, err)
		}
		fallthrough
	case errors.Is(err, iofs.ErrNotExist):
		if err := os.Mkdir(target, 0o755); err != nil {
			return fmt.Errorf("create directory %s: %w", target, err)
		}
	default:
		return fmt.Errorf("stat %s: %w", target, err)
	}
	x.dirs[p] = true
	return nil
}

// clear removes what is at target unless it is a directory (an error then).
func (x *extractor) clear(target string) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", target, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory; the image has a file there", target)
	}
	if err := os.Remove(target); err != nil {
		return fmt.Errorf("replace %s: %w", target, err)
	}
	return nil
}

// file writes the regular file e to target.
func (x *extractor) file(e entry, target string) error {
	if err := x.clear(target); err != nil {
		return err
	}
	in, err := e.open()
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", target, err)
	}
	n, err := io.CopyBuffer(out, struct{ io.Reader }{in}, x.buf)
	if err == nil && n != e.size {
		err = fmt.Errorf("read %d of %d bytes", n, e.size)
	}
	if err == nil {
		err = out.Chmod(e.perm)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("extract %s: %w", e.path, err)
	}
	if err := os.Chtimes(target, e.mtime, e.mtime); err != nil {
		return fmt.Errorf("set the times of %s: %w", target, err)
	}
	return nil
}

// matcher returns the filter of `--appimage-extract PATTERN`: a path matches
// when the pattern (path.Match syntax, as fnmatch) matches it or one of its
// leading directories, so "usr" extracts usr/ and all under it. An empty
// pattern matches everything (nil). The pattern is checked here.
func matcher(pattern string) (func(string) bool, error) {
	pattern = strings.TrimPrefix(strings.TrimPrefix(pattern, "./"), "/")
	if pattern == "" {
		return nil, nil
	}
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	return func(p string) bool {
		for q := p; q != "." && q != "/"; q = path.Dir(q) {
			if ok, _ := path.Match(pattern, q); ok {
				return true
			}
		}
		return false
	}, nil
}

// extractCacheName is the directory under the user's cache directory where
// extract-and-run keeps one extracted AppDir per image content.
const extractCacheName = "memtray-appimage"

// staleExtraction is how old a leftover temporary extraction (from a run that
// was killed while extracting) must be before a later run removes it.
const staleExtraction = 24 * time.Hour

// cachedAppDir returns the AppDir of img extracted under root/<hash>,
// extracting it first when absent. The extraction goes to a temporary
// directory beside it and is renamed into place, so a directory at the final
// name is always complete; when two runs race, the first rename wins and the
// other run uses its result.
func cachedAppDir(img *image, root string) (dir string, reused bool, err error) {
	sum, err := img.hash()
	if err != nil {
		return "", false, err
	}
	final := filepath.Join(root, sum)
	if complete(final) {
		return final, true, nil
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", false, fmt.Errorf("create the extract cache %s: %w", root, err)
	}
	removeStale(root)
	if _, err := os.Lstat(final); err == nil { // there, but not an AppDir: replace it
		if err := os.RemoveAll(final); err != nil {
			return "", false, fmt.Errorf("remove the incomplete %s: %w", final, err)
		}
	}
	tmp, err := os.MkdirTemp(root, ".extract-"+sum[:12]+"-")
	if err != nil {
		return "", false, fmt.Errorf("create a directory in the extract cache: %w", err)
	}
	if err := extract(img.fs, tmp, nil, nil, ""); err != nil {
		os.RemoveAll(tmp)
		return "", false, err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if complete(final) { // another run got there first
			return final, true, nil
		}
		return "", false, fmt.Errorf("move the extracted AppDir into the cache: %w", err)
	}
	return final, false, nil
}

// complete reports whether dir is an extracted AppDir (it has an AppRun).
func complete(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, "AppRun"))
	return err == nil
}

// removeStale removes temporary extractions older than staleExtraction.
// Errors are ignored: this only frees space.
func removeStale(root string) {
	des, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".extract-") {
			continue
		}
		if fi, err := de.Info(); err == nil && time.Since(fi.ModTime()) > staleExtraction {
			os.RemoveAll(filepath.Join(root, de.Name()))
		}
	}
}
