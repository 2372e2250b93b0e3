package store

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// pagewalk reads a bbolt file's B+trees with plain, bounds-checked reads
// (the layout is described above boltHeader, records.go), without bbolt:
// a records file bbolt cannot open, or whose pages make it fault, still
// yields every key and value of every page that can be read. It follows
// the tree from the newest valid meta page, so it returns what the last
// committed transaction holds and nothing that was deleted before it
// (a scan of every page would bring back freed pages, deleted records
// among them). Pages that cannot be read are counted and skipped.

// bbolt's element layouts: a branch element is pos, ksize (u32) and the
// child page id (u64); a leaf element is flags, pos, ksize, vsize (u32),
// pos counted from the element itself. A leaf element with the bucket flag
// holds a bucket header (root page id, sequence: u64) followed, when the
// root is 0 (an inline bucket), by the bucket's one leaf page.
const (
	boltElemSize      = 16
	boltBucketFlag    = 0x01
	boltBucketHdrSize = 16
	pageWalkMaxDepth  = 64
)

// pageWalker reads pages of one bbolt file.
type pageWalker struct {
	f        io.ReaderAt
	size     int64
	pageSize int
	hwm      uint64          // page ids in use are below it (the meta's)
	seen     map[uint64]bool // pages read so far: a cycle is damage
	// bad lists the pages (or inline buckets) that could not be read,
	// each with why.
	bad []string
}

// walkedFile is what walkRecordsFile read from a bbolt file: each
// top-level bucket's keys and values (copied; nested buckets left out),
// the meta it followed, and the damage it met.
type walkedFile struct {
	buckets map[string][]kv
	meta    boltMeta
	metaErr []string // meta pages that failed their checks
	bad     []string // pages that could not be read
	// stray holds, when the walk met unreadable pages, the key and value
	// of every element of every leaf page in the file (scanLeaves): the
	// records below an unreadable branch page are among them, and so are
	// freed pages' stale and deleted ones, which salvageable tells apart.
	stray []kv
}

// kv is one key and value.
type kv struct{ k, v []byte }

// walkRecordsFile reads every top-level bucket of the bbolt file at path
// from its newest valid meta page (the older one when the newer's root
// cannot be read). It fails only when no meta page is valid or the file
// cannot be read at all.
func walkRecordsFile(path string) (*walkedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read records file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read records file: %w", err)
	}
	out := &walkedFile{buckets: map[string][]kv{}}
	var metas []boltMeta
	ps := os.Getpagesize()
	m0, err0 := readBoltMeta(f, 0, ps)
	if err0 == nil {
		ps = m0.pageSize
		metas = append(metas, m0)
	} else {
		out.metaErr = append(out.metaErr, err0.Error())
	}
	// Page 1's meta sits one page in: page 0 gives the page size, or,
	// when page 0 is garbled, the usual sizes are tried.
	sizes := []int{ps}
	if err0 != nil {
		sizes = slices.Compact([]int{ps, 4096, 16384, 65536})
	}
	var err1 error
	for _, size := range sizes {
		var m1 boltMeta
		if m1, err1 = readBoltMeta(f, 1, size); err1 == nil {
			metas = append(metas, m1)
			break
		}
	}
	if err1 != nil {
		out.metaErr = append(out.metaErr, err1.Error())
	}
	if len(metas) == 0 {
		return out, fmt.Errorf("no valid meta page: %v", out.metaErr)
	}
	slices.SortFunc(metas, func(a, b boltMeta) int { return int(b.txid) - int(a.txid) })
	for i, m := range metas {
		w := &pageWalker{f: f, size: fi.Size(), pageSize: m.pageSize, hwm: m.pgid, seen: map[uint64]bool{}}
		if m.pageSize < 512 || m.pageSize&(m.pageSize-1) != 0 {
			out.bad = append(out.bad, fmt.Sprintf("meta (transaction %d) names a page size of %d", m.txid, m.pageSize))
			continue
		}
		buckets := map[string][]kv{}
		rootOK := w.walkTree(m.root, 0, func(k, v []byte, flags uint32) {
			if flags&boltBucketFlag == 0 {
				return
			}
			name := string(k)
			w.walkBucket(name, v, func(k, v []byte, flags uint32) {
				if flags&boltBucketFlag == 0 {
					buckets[name] = append(buckets[name], kv{slices.Clone(k), slices.Clone(v)})
				}
			})
			if _, ok := buckets[name]; !ok {
				buckets[name] = nil
			}
		})
		if !rootOK && i+1 < len(metas) {
			out.bad = append(out.bad, fmt.Sprintf("the root of transaction %d cannot be read (%v): read the previous transaction's", m.txid, w.bad))
			continue
		}
		out.buckets, out.meta = buckets, m
		out.bad = append(out.bad, w.bad...)
		if len(w.bad) > 0 {
			out.stray = scanLeaves(f, fi.Size(), m.pageSize)
		}
		return out, nil
	}
	return out, fmt.Errorf("no meta page leads to a readable root: %v", out.bad)
}

// page reads page id with its overflow pages, checking that it lies
// below the high-water mark and inside the file and was not read before.
func (w *pageWalker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("page id %d is outside 2..%d", id, w.hwm-1)
	}
	if w.seen[id] {
		return nil, fmt.Errorf("page %d is reached twice (a cycle)", id)
	}
	w.seen[id] = true
	off := int64(id) * int64(w.pageSize)
	hdr := make([]byte, boltHeader)
	if _, err := w.f.ReadAt(hdr, off); err != nil {
		return nil, fmt.Errorf("page %d cannot be read: %w", id, err)
	}
	overflow := uint64(binary.LittleEndian.Uint32(hdr[12:]))
	if id+overflow >= w.hwm || off+int64(overflow+1)*int64(w.pageSize) > w.size {
		return nil, fmt.Errorf("page %d runs %d pages past the end of the file", id, overflow)
	}
	b := make([]byte, int(overflow+1)*w.pageSize)
	if _, err := w.f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("page %d cannot be read: %w", id, err)
	}
	if got := binary.LittleEndian.Uint64(b); got != id {
		return nil, fmt.Errorf("page %d says it is page %d", id, got)
	}
	return b, nil
}

// walkTree calls fn for every leaf element of the tree under page id, in
// key order; it reports whether the page id itself could be read (what is
// unreadable below it is in w.bad).
func (w *pageWalker) walkTree(id uint64, depth int, fn func(k, v []byte, flags uint32)) bool {
	b, err := w.page(id)
	if err != nil {
		w.bad = append(w.bad, err.Error())
		return false
	}
	if err := w.walkPage(b, depth, fn); err != nil {
		w.bad = append(w.bad, fmt.Sprintf("page %d: %v", id, err))
		return false
	}
	return true
}

// walkPage walks one branch or leaf page b (its header first).
func (w *pageWalker) walkPage(b []byte, depth int, fn func(k, v []byte, flags uint32)) error {
	if depth > pageWalkMaxDepth {
		return fmt.Errorf("the tree is deeper than %d pages", pageWalkMaxDepth)
	}
	if len(b) < boltHeader {
		return fmt.Errorf("%d bytes: shorter than a page header", len(b))
	}
	flags := binary.LittleEndian.Uint16(b[8:])
	count := int(binary.LittleEndian.Uint16(b[10:]))
	if boltHeader+count*boltElemSize > len(b) {
		return fmt.Errorf("%d elements do not fit in %d bytes", count, len(b))
	}
	le := binary.LittleEndian
	for i := range count {
		e := boltHeader + i*boltElemSize
		switch flags {
		case boltBranchPage:
			pos, ks := int(le.Uint32(b[e:])), int(le.Uint32(b[e+4:]))
			if e+pos+ks > len(b) || pos < 0 || ks < 0 {
				return fmt.Errorf("branch element %d points past the page", i)
			}
			w.walkTree(le.Uint64(b[e+8:]), depth+1, fn)
		case boltLeafPage:
			ef, pos, ks, vs := le.Uint32(b[e:]), int(le.Uint32(b[e+4:])), int(le.Uint32(b[e+8:])), int(le.Uint32(b[e+12:]))
			end := e + pos + ks + vs
			if pos < 0 || ks < 0 || vs < 0 || end > len(b) || end < e {
				return fmt.Errorf("leaf element %d points past the page", i)
			}
			fn(b[e+pos:e+pos+ks], b[e+pos+ks:end], ef)
		default:
			return fmt.Errorf("page type %#x is neither branch nor leaf", flags)
		}
	}
	return nil
}

// walkBucket walks the bucket whose header (a leaf value) is v: its own
// pages, or its inline page.
func (w *pageWalker) walkBucket(name string, v []byte, fn func(k, v []byte, flags uint32)) {
	if len(v) < boltBucketHdrSize {
		w.bad = append(w.bad, fmt.Sprintf("bucket %q: a header of %d bytes", name, len(v)))
		return
	}
	if root := binary.LittleEndian.Uint64(v); root != 0 {
		w.walkTree(root, 1, fn)
		return
	}
	if err := w.walkPage(v[boltBucketHdrSize:], 1, fn); err != nil {
		w.bad = append(w.bad, fmt.Sprintf("inline bucket %q: %v", name, err))
	}
}

// scanLeaves reads every page of the file that reads as a leaf page and
// returns the key and value of each element that is not a bucket. It
// follows no pointer: what lies below an unreadable branch page is found
// all the same, with whatever freed pages still hold.
func scanLeaves(f io.ReaderAt, size int64, pageSize int) []kv {
	var out []kv
	b := make([]byte, pageSize)
	for id := int64(2); (id+1)*int64(pageSize) <= size; id++ {
		if _, err := f.ReadAt(b, id*int64(pageSize)); err != nil {
			break
		}
		if binary.LittleEndian.Uint16(b[8:]) != boltLeafPage || binary.LittleEndian.Uint64(b) != uint64(id) {
			continue
		}
		page := b
		if overflow := int64(binary.LittleEndian.Uint32(b[12:])); overflow > 0 {
			if (id+1+overflow)*int64(pageSize) > size {
				continue
			}
			page = make([]byte, (overflow+1)*int64(pageSize))
			if _, err := f.ReadAt(page, id*int64(pageSize)); err != nil {
				continue
			}
		}
		w := &pageWalker{}
		_ = w.walkPage(page, 0, func(k, v []byte, flags uint32) {
			if flags&boltBucketFlag == 0 {
				out = append(out, kv{slices.Clone(k), slices.Clone(v)})
			}
		})
	}
	return out
}
