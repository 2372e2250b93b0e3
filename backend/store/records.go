package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// ErrDamaged is wrapped by the error of Open, and of any read or write,
// that finds the records file (memtray.db) damaged: a page bbolt cannot
// read, or one that points past the end of the file. The file is left as
// it was found.
var ErrDamaged = errors.New("records file is damaged")

// DamagedError says which records file is damaged, how, and what the user
// can do. It matches ErrDamaged.
type DamagedError struct {
	Path   string // the records file
	Detail string // what was found
}

// Error names the file, the damage and the way out: the doctor, never an
// empty store in its place (a user who saw one would write into it).
func (e *DamagedError) Error() string {
	return fmt.Sprintf("records file %s is damaged (%s): memtray left it as it is and does not start over it; "+
		"run `memtray doctor` to see what can still be read, then `memtray doctor --salvage` to copy every readable "+
		"record into a new store (the damaged file is kept beside it), or `memtray import FILE` with your last export", e.Path, e.Detail)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// guardFault runs fn, which reads or writes the records file, turning a
// fault reading its memory map and a panic inside bbolt into a
// *DamagedError for path. bbolt reads pages straight from the map: a page
// id or count that points past the end of the file faults (SIGSEGV or
// SIGBUS), which kills the process unless the goroutine has
// debug.SetPanicOnFault; garbled pages make bbolt panic. A View or Update
// that panics is rolled back by bbolt's own deferred rollback before the
// panic reaches here, so its locks are released and nothing was written.
func guardFault(path string, fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			detail := fmt.Sprint(v)
			if f, ok := v.(interface{ Addr() uintptr }); ok {
				detail = fmt.Sprintf("a page points past the end of the file: reading it faulted at %#x", f.Addr())
			}
			err = &DamagedError{Path: path, Detail: detail}
		}
	}()
	return fn()
}

// view is s.db.View guarded by guardFault: every read of the records file
// after Open goes through it (and update), so that a damaged page met by
// any caller (the daemon's request handlers, the capture and write
// pipeline, the steward, the CLI) is an error, not a dead process. This is
// the narrowest place that covers them all: the store is the only package
// that touches bbolt, and bbolt's memory map is read only inside a
// transaction.
func (s *Store) view(fn func(*bolt.Tx) error) error {
	return guardFault(s.db.Path(), func() error { return s.db.View(fn) })
}

// update is s.db.Update guarded by guardFault (see view). When it fails,
// the reads waiting for a commit bbolt showed them are told (see
// abandonVisible).
func (s *Store) update(fn func(*bolt.Tx) error) error {
	err := guardFault(s.db.Path(), func() error { return s.db.Update(fn) })
	if err != nil {
		s.abandonVisible()
	}
	return err
}

// openBolt opens the records file at path. bbolt reads the meta pages and
// the freelist through its memory map as it opens: a fault or panic there
// closes the file (releasing its lock) and is a *DamagedError, as is a file
// bbolt refuses as invalid. Once the lock is held, checkRecordsFile reads
// what bbolt trusts without checking (meta, freelist and root pages) with
// plain reads. A fault inside bolt.Open leaks its memory map (bbolt did
// not return the handle that unmaps it): Open fails and the process is
// about to report it.
func openBolt(path string, opts *bolt.Options) (*bolt.DB, error) {
	var f *os.File
	o := *opts
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		var err error
		f, err = os.OpenFile(name, flag, perm)
		return f, err
	}
	var db *bolt.DB
	err := guardFault(path, func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &o)
		return err
	})
	var de *DamagedError
	if errors.As(err, &de) {
		if f != nil {
			if cerr := checkRecordsFile(f); cerr != nil {
				de.Detail = cerr.Error() + "; " + de.Detail
			}
			_ = f.Close()
		}
		return nil, err
	}
	if errors.Is(err, bolterrors.ErrInvalid) || errors.Is(err, bolterrors.ErrChecksum) || errors.Is(err, bolterrors.ErrVersionMismatch) {
		detail := err.Error()
		if fi, serr := os.Stat(path); serr == nil {
			detail = fmt.Sprintf("%v; the file has %d bytes", err, fi.Size())
		}
		return nil, &DamagedError{Path: path, Detail: detail}
	}
	if err != nil {
		return nil, err
	}
	if err := checkRecordsFile(f); err != nil {
		_ = db.Close()
		return nil, &DamagedError{Path: path, Detail: err.Error()}
	}
	return db, nil
}

// metaWarning reads both meta pages of the records file at path and, when
// exactly one is invalid, says so: bbolt then reads the other without a
// word, and the transaction the invalid one committed, if it was the
// newer, is lost. A meta write cut short (its transaction was never
// acknowledged) and a page damaged after the write (a disk error, a file
// system that lied about fsync) look the same; the doctor tells more.
func metaWarning(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() == 0 {
		return ""
	}
	m0, m1, _, err0, err1 := readBoltMetas(f)
	switch {
	case err0 != nil && err1 == nil:
		return fmt.Sprintf("meta page 0 of %s is invalid: the store reads transaction %d from meta page 1; a write committed after it may be lost (run `memtray doctor`)", path, m1.txid)
	case err1 != nil && err0 == nil:
		return fmt.Sprintf("meta page 1 of %s is invalid: the store reads transaction %d from meta page 0; a write committed after it may be lost (run `memtray doctor`)", path, m0.txid)
	}
	return ""
}

// bbolt's on-disk layout (go.etcd.io/bbolt v1, internal/common): every
// page starts with a header (id u64, flags u16, count u16, overflow u32);
// pages 0 and 1 each hold a meta after the header: magic, version, page
// size, flags (u32), the root bucket (root page id, sequence), the
// freelist page id, the high-water mark (page ids in use are below it),
// the txid and an FNV-64a checksum of the fields before it (u64, little
// endian).
const (
	boltHeader       = 16
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	boltMetaSize     = 64
	boltBranchPage   = 0x01
	boltLeafPage     = 0x02
	boltFreelistPage = 0x10
	boltNoFreelist   = ^uint64(0)
)

// boltMeta is a meta page's fields that checkRecordsFile uses.
type boltMeta struct {
	pageSize                   int
	root, freelist, pgid, txid uint64
}

// readBoltMetas reads both meta pages of f: page 0 at the system's page
// size, page 1 at the page size page 0 names (the system's when page 0 is
// invalid), which is ps.
func readBoltMetas(f io.ReaderAt) (m0, m1 boltMeta, ps int, err0, err1 error) {
	ps = os.Getpagesize()
	m0, err0 = readBoltMeta(f, 0, ps)
	if err0 == nil {
		ps = m0.pageSize
	}
	m1, err1 = readBoltMeta(f, 1, ps)
	return m0, m1, ps, err0, err1
}

// readBoltMeta reads and validates the meta of page n, assuming pageSize
// (page 0's meta sits at offset 0 whatever the size).
func readBoltMeta(f io.ReaderAt, n, pageSize int) (boltMeta, error) {
	b := make([]byte, boltMetaSize)
	if _, err := f.ReadAt(b, int64(n*pageSize+boltHeader)); err != nil {
		return boltMeta{}, fmt.Errorf("meta page %d cannot be read: %w", n, err)
	}
	le := binary.LittleEndian
	h := fnv.New64a()
	_, _ = h.Write(b[:56])
	if le.Uint32(b) != boltMagic || le.Uint32(b[4:]) != boltVersion || h.Sum64() != le.Uint64(b[56:]) {
		return boltMeta{}, fmt.Errorf("meta page %d is invalid", n)
	}
	return boltMeta{pageSize: int(le.Uint32(b[8:])), root: le.Uint64(b[16:]),
		freelist: le.Uint64(b[32:]), pgid: le.Uint64(b[40:]), txid: le.Uint64(b[48:])}, nil
}

// checkRecordsFile checks, with plain reads of f (a bbolt file whose lock
// the caller holds), what bbolt follows through its memory map without
// checking it against the file's size: that the file holds every page
// below the high-water mark of the meta bbolt uses (a truncated file does
// not), that the root and freelist pages lie below it with the right page
// type, and that every free page id does too. It reads a few pages,
// whatever the store's size. An empty file (a new store) passes.
func checkRecordsFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	m0, m1, _, err0, err1 := readBoltMetas(f)
	m := m0
	switch {
	case err0 != nil && err1 != nil:
		return fmt.Errorf("%v, %v; the file has %d bytes", err0, err1, size)
	case err0 != nil || (err1 == nil && m1.txid > m0.txid):
		m = m1
	}
	if m.pageSize < 512 || m.pageSize&(m.pageSize-1) != 0 {
		return fmt.Errorf("the meta page names a page size of %d", m.pageSize)
	}
	pages := uint64(size) / uint64(m.pageSize)
	if m.pgid < 3 || m.pgid > pages {
		return fmt.Errorf("truncated: the meta page counts %d pages, the file holds %d (%d bytes)", m.pgid, pages, size)
	}
	if m.root < 2 || m.root >= m.pgid {
		return fmt.Errorf("the root page id %d is not between 2 and %d", m.root, m.pgid)
	}
	hdr := make([]byte, boltHeader)
	readHeader := func(id uint64, what string) (flags uint16, count int, err error) {
		if _, err := f.ReadAt(hdr, int64(id)*int64(m.pageSize)); err != nil {
			return 0, 0, fmt.Errorf("%s page %d cannot be read: %w", what, id, err)
		}
		return binary.LittleEndian.Uint16(hdr[8:]), int(binary.LittleEndian.Uint16(hdr[10:])), nil
	}
	if flags, _, err := readHeader(m.root, "root"); err != nil {
		return err
	} else if flags != boltBranchPage && flags != boltLeafPage {
		return fmt.Errorf("the root page %d has page type %#x", m.root, flags)
	}
	if m.freelist == boltNoFreelist {
		return nil
	}
	if m.freelist < 2 || m.freelist >= m.pgid {
		return fmt.Errorf("the freelist page id %d is not between 2 and %d", m.freelist, m.pgid)
	}
	flags, count, err := readHeader(m.freelist, "freelist")
	if err != nil {
		return err
	}
	if flags != boltFreelistPage {
		return fmt.Errorf("the freelist page %d has page type %#x", m.freelist, flags)
	}
	off := int64(m.freelist)*int64(m.pageSize) + boltHeader
	n := uint64(count)
	if count == 0xFFFF { // the count does not fit: the first id holds it
		b := make([]byte, 8)
		if _, err := f.ReadAt(b, off); err != nil {
			return fmt.Errorf("freelist page %d cannot be read: %w", m.freelist, err)
		}
		n, off = binary.LittleEndian.Uint64(b), off+8
	}
	if n > m.pgid || off+int64(n)*8 > size {
		return fmt.Errorf("the freelist page %d counts %d free pages, past the end of the file (%d pages)", m.freelist, n, pages)
	}
	ids := make([]byte, n*8)
	if _, err := f.ReadAt(ids, off); err != nil {
		return fmt.Errorf("freelist page %d cannot be read: %w", m.freelist, err)
	}
	for i := uint64(0); i < n; i++ {
		if id := binary.LittleEndian.Uint64(ids[i*8:]); id < 2 || id >= m.pgid {
			return fmt.Errorf("the freelist names page %d, outside 2..%d", id, m.pgid-1)
		}
	}
	return nil
}
