//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// cacheTimeout is how long the kernel may cache names and attributes: the
// image never changes while mounted.
const cacheTimeout = time.Hour

// mount is the image mounted read-only with FUSE at dir.
type mount struct {
	dir    string
	server *fuse.Server
}

// mountImage mounts img read-only at a new directory .mount_<name>XXXXXX in
// the temporary directory (as the reference runtime names it). The tree of
// names is read before mounting (an AppDir has a few dozen entries); file
// contents are read on demand.
func mountImage(img *image) (*mount, error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("no /dev/fuse: %w", err)
	}
	root := &dirNode{}
	var nodes []struct {
		dir  string
		name string
		node fs.InodeEmbedder
		mode uint32
	}
	err := walk(img.fs, func(e entry) error {
		var n fs.InodeEmbedder
		var mode uint32
		attr := fuse.Attr{Size: uint64(e.size), Mode: uint32(e.perm), Nlink: 1, Owner: fuse.Owner{Uid: e.uid, Gid: e.gid}}
		attr.SetTimes(nil, &e.mtime, &e.mtime)
		switch e.kind {
		case kindDir:
			attr.Nlink, mode = 2, syscall.S_IFDIR
			n = &dirNode{attr: attr}
		case kindFile:
			mode = syscall.S_IFREG
			n = &fileNode{entry: e, attr: attr}
		case kindSymlink:
			mode = syscall.S_IFLNK
			attr.Size = uint64(len(e.target))
			n = &fs.MemSymlink{Data: []byte(e.target), Attr: attr}
		default:
			return nil
		}
		nodes = append(nodes, struct {
			dir  string
			name string
			node fs.InodeEmbedder
			mode uint32
		}{path.Dir(e.path), path.Base(e.path), n, mode})
		return nil
	})
	if err != nil {
		return nil, err
	}
	root.build = func(ctx context.Context) {
		dirs := map[string]*fs.Inode{".": root.EmbeddedInode()}
		for _, n := range nodes {
			parent := dirs[n.dir]
			if parent == nil { // its directory was skipped
				continue
			}
			child := parent.NewPersistentInode(ctx, n.node, fs.StableAttr{Mode: n.mode})
			parent.AddChild(n.name, child, false)
			if n.mode == syscall.S_IFDIR {
				dirs[path.Join(n.dir, n.name)] = child
			}
		}
	}
	if fi, err := img.fs.Stat("."); err == nil {
		root.attr = fuse.Attr{Mode: uint32(fi.Mode().Perm()), Nlink: 2}
		mt := fi.ModTime()
		root.attr.SetTimes(nil, &mt, &mt)
	}

	name := filepath.Base(img.path)
	if len(name) > 6 {
		name = name[:6]
	}
	dir, err := os.MkdirTemp("", ".mount_"+name)
	if err != nil {
		return nil, fmt.Errorf("create a mount point: %w", err)
	}
	timeout := cacheTimeout
	opts := &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName:               img.path,
			Name:                 "appimage",
			Options:              []string{"ro"},
			DirectMount:          os.Geteuid() == 0, // root mounts without fusermount
			DisableXAttrs:        true,
			EnableSymlinkCaching: true,
			MaxReadAhead:         1 << 20,
		},
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		NullPermissions: true, // the image's own modes, not go-fuse's defaults
	}
	server, err := fs.Mount(dir, root, opts)
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("mount at %s: %w", dir, err)
	}
	closeOnExecFUSE()
	return &mount{dir: dir, server: server}, nil
}

// closeOnExecFUSE marks this process's /dev/fuse descriptors close-on-exec.
// go-fuse's direct mount (as root) opens /dev/fuse without it, and a child
// holding the descriptor keeps the connection alive after this process is
// gone: whoever then touches the mount waits for an answer forever.
func closeOnExecFUSE() {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, de := range des {
		if target, err := os.Readlink("/proc/self/fd/" + de.Name()); err == nil && target == "/dev/fuse" {
			if fd, err := strconv.Atoi(de.Name()); err == nil {
				syscall.CloseOnExec(fd)
			}
		}
	}
}

// unmount unmounts the image and removes the mount point. When the mount is
// still busy it retries for a second, then detaches it lazily, as
// `fusermount -u -z` does (whoever still uses it then gets errors once this
// process is gone).
func (m *mount) unmount() error {
	var err error
	for i := 0; i < 10; i++ {
		if err = m.server.Unmount(); err == nil {
			m.server.Wait()
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		if lerr := lazyUnmount(m.dir); lerr != nil {
			return fmt.Errorf("unmount %s: %w (lazily: %v)", m.dir, err, lerr)
		}
	}
	if err := os.Remove(m.dir); err != nil {
		return fmt.Errorf("remove the mount point: %w", err)
	}
	return nil
}

// detach unmounts now (lazily if busy) and returns the exit code.
func (m *mount) detach() int {
	if err := m.unmount(); err != nil {
		return 1
	}
	return 0
}

func lazyUnmount(dir string) error {
	if os.Geteuid() == 0 {
		return syscall.Unmount(dir, syscall.MNT_DETACH)
	}
	for _, tool := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(tool); err == nil {
			if out, err := exec.Command(p, "-u", "-z", dir).CombinedOutput(); err != nil {
				return fmt.Errorf("%s -u -z: %w: %s", tool, err, out)
			}
			return nil
		}
	}
	return errors.New("neither fusermount3 nor fusermount is installed")
}

// dirNode is a directory of the image; the root builds the whole tree when
// the file system is mounted.
type dirNode struct {
	fs.Inode
	attr  fuse.Attr
	build func(context.Context)
}

var (
	_ fs.NodeOnAdder    = (*dirNode)(nil)
	_ fs.NodeGetattrer  = (*dirNode)(nil)
	_ fs.NodeOpener     = (*fileNode)(nil)
	_ fs.NodeReader     = (*fileNode)(nil)
	_ fs.NodeGetattrer  = (*fileNode)(nil)
	_ fs.NodeStatfser   = (*dirNode)(nil)
	_ fs.InodeEmbedder  = (*fs.MemSymlink)(nil)
	_ fs.NodeReadlinker = (*fs.MemSymlink)(nil)
)

func (d *dirNode) OnAdd(ctx context.Context) {
	if d.build != nil {
		d.build(ctx)
	}
}

func (d *dirNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Attr = d.attr
	out.Mode |= syscall.S_IFDIR
	return 0
}

// Statfs answers statfs(2) (df): a read-only file system with no free space.
func (d *dirNode) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize = 4096
	out.NameLen = 255
	return 0
}

// fileNode is a regular file of the image, read on demand.
type fileNode struct {
	fs.Inode
	entry entry
	attr  fuse.Attr

	mu sync.Mutex
	f  io.ReadSeekCloser // opened on first read; kept: the image is immutable
}

func (n *fileNode) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Attr = n.attr
	out.Mode |= syscall.S_IFREG
	return 0
}

// Open allows reading only; the kernel may keep the pages cached across opens.
func (n *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND) != 0 {
		return nil, 0, syscall.EROFS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (n *fileNode) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= n.entry.size {
		return fuse.ReadResultData(nil), 0
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.f == nil {
		r, err := n.entry.open()
		if err != nil {
			return nil, syscall.EIO
		}
		n.f = r
	}
	if _, err := n.f.Seek(off, io.SeekStart); err != nil {
		return nil, syscall.EIO
	}
	want := min(int64(len(dest)), n.entry.size-off)
	got, err := io.ReadFull(n.f, dest[:want])
	if err != nil && !(errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return nil, syscall.EIO
	}
	return fuse.ReadResultData(dest[:got]), 0
}
