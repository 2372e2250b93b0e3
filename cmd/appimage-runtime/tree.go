//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"path"
	"strings"
	"time"

	"github.com/diskfs/go-diskfs/filesystem"
	"github.com/diskfs/go-diskfs/filesystem/squashfs"
)

// maxDepth bounds how deep walk descends: a damaged image could make a
// directory contain one of its ancestors.
const maxDepth = 128

// kind is what an entry of the image is.
type kind int

const (
	kindDir kind = iota
	kindFile
	kindSymlink
	kindOther // devices, fifos, sockets: an AppDir has none; skipped
)

// entry is one file, directory or symlink of the image.
type entry struct {
	path   string // slash-separated, relative to the image's root
	kind   kind
	perm   iofs.FileMode // permission bits only
	size   int64
	mtime  time.Time
	uid    uint32
	gid    uint32
	target string // a symlink's target
	info   iofs.FileInfo
}

// open opens a regular file of the image for reading. go-diskfs's directory
// entry (the FileInfo) opens its inode directly, without a path lookup.
func (e entry) open() (io.ReadSeekCloser, error) {
	o, ok := e.info.(interface {
		Open() (filesystem.File, error)
	})
	if !ok {
		return nil, fmt.Errorf("%s: the squashfs reader cannot open this entry (%T)", e.path, e.info)
	}
	f, err := o.Open()
	if err != nil {
		return nil, fmt.Errorf("open %s in the image: %w", e.path, err)
	}
	return f, nil
}

// validName rejects entry names that would escape their directory when
// joined to a path: the image is outside input.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("invalid entry name %q", name)
	}
	return nil
}

// walk calls fn for every entry of the image, parents before children, in
// the image's (sorted) order.
func walk(fsys *squashfs.FileSystem, fn func(entry) error) error {
	return walkDir(fsys, ".", 0, fn)
}

func walkDir(fsys *squashfs.FileSystem, dir string, depth int, fn func(entry) error) error {
	if depth > maxDepth {
		return fmt.Errorf("%s: directories nested deeper than %d", dir, maxDepth)
	}
	des, err := fsys.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read directory %s of the image: %w", dir, err)
	}
	seen := make(map[string]bool, len(des))
	for _, de := range des {
		if err := validName(de.Name()); err != nil {
			return fmt.Errorf("directory %s of the image: %w", dir, err)
		}
		if seen[de.Name()] {
			return fmt.Errorf("directory %s of the image: %q twice", dir, de.Name())
		}
		seen[de.Name()] = true
		e, err := newEntry(path.Join(dir, de.Name()), de)
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		if e.kind == kindDir {
			if err := walkDir(fsys, e.path, depth+1, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func newEntry(p string, de iofs.DirEntry) (entry, error) {
	info, err := de.Info()
	if err != nil {
		return entry{}, fmt.Errorf("%s: %w", p, err)
	}
	e := entry{path: p, perm: info.Mode().Perm(), size: info.Size(), mtime: info.ModTime(), info: info}
	if st, ok := info.Sys().(*squashfs.StatT); ok {
		e.uid, e.gid = st.UID, st.GID
		e.target = st.LinkTarget
	}
	switch m := info.Mode(); {
	case m.IsDir():
		e.kind = kindDir
	case m.IsRegular():
		e.kind = kindFile
	case m&iofs.ModeSymlink != 0:
		e.kind = kindSymlink
		if e.target == "" {
			return entry{}, errors.New(p + ": symlink without a target")
		}
	default:
		e.kind = kindOther
	}
	return e, nil
}
