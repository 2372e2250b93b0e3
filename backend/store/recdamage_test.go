package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// boltImage is a bbolt file read whole, with the on-disk layout of
// go.etcd.io/bbolt v1 (internal/common): every page starts with a 16-byte
// header (id u64, flags u16, count u16, overflow u32); pages 0 and 1 hold
// a meta (magic, version, page size, flags u32; root bucket {page id,
// sequence}; freelist page id; page high-water mark; txid; checksum, all
// u64 little endian) at offset 16.
type boltImage struct {
	b        []byte
	pageSize int
}

// Offsets of a meta's fields from the start of its page.
const (
	imgMetaRoot     = 16 + 16
	imgMetaFreelist = 16 + 32
	imgMetaPgid     = 16 + 40
	imgMetaTxid     = 16 + 48
	imgMetaChecksum = 16 + 56
)

func readBoltImage(t *testing.T, path string) *boltImage {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.LittleEndian.Uint32(b[16+8:]))
	if ps < 1024 || len(b) < 4*ps {
		t.Fatalf("%s: not a bbolt file (page size %d, %d bytes)", path, ps, len(b))
	}
	return &boltImage{b: b, pageSize: ps}
}

func (im *boltImage) write(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, im.b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (im *boltImage) u64(off int) uint64 { return binary.LittleEndian.Uint64(im.b[off:]) }

// current is the page (0 or 1) of the meta bbolt uses: the higher txid.
func (im *boltImage) current() int {
	if im.u64(im.pageSize+imgMetaTxid) > im.u64(imgMetaTxid) {
		return 1
	}
	return 0
}

// setMeta sets a u64 field of both metas and seals each with its checksum
// (FNV-64a of the meta before the checksum), so that bbolt trusts them.
func (im *boltImage) setMeta(field int, v uint64) {
	for _, p := range []int{0, im.pageSize} {
		binary.LittleEndian.PutUint64(im.b[p+field:], v)
		h := fnv.New64a()
		h.Write(im.b[p+16 : p+imgMetaChecksum])
		binary.LittleEndian.PutUint64(im.b[p+imgMetaChecksum:], h.Sum64())
	}
}

// page returns the offset of page id.
func (im *boltImage) page(id uint64) int { return int(id) * im.pageSize }

// bucketRoot returns the page id of a top-level bucket's root page, as the
// current meta's root bucket page names it (0 for an inline bucket).
func (im *boltImage) bucketRoot(t *testing.T, name []byte) uint64 {
	t.Helper()
	root := im.page(im.u64(im.current()*im.pageSize + imgMetaRoot))
	im.leaf(t, root)
	count := int(binary.LittleEndian.Uint16(im.b[root+10:]))
	for i := range count {
		e := root + 16 + 16*i // leaf element: flags, pos, ksize, vsize (u32)
		pos := int(binary.LittleEndian.Uint32(im.b[e+4:]))
		ks := int(binary.LittleEndian.Uint32(im.b[e+8:]))
		if bytes.Equal(im.b[e+pos:e+pos+ks], name) {
			return im.u64(e + pos + ks) // the bucket header's root page id
		}
	}
	t.Fatalf("no bucket %q in the root bucket", name)
	return 0
}

// leaf checks that off is a leaf page.
func (im *boltImage) leaf(t *testing.T, off int) {
	t.Helper()
	if flags := binary.LittleEndian.Uint16(im.b[off+8:]); flags != 0x02 {
		t.Fatalf("page at %d has flags %#x, want a leaf page", off, flags)
	}
}

// firstLeaf descends from page id through the first child of every branch
// page (branch element: pos, ksize u32, child page id u64) to a leaf.
func (im *boltImage) firstLeaf(t *testing.T, id uint64) int {
	t.Helper()
	if id == 0 {
		t.Fatal("the bucket is inline: no page of its own to damage")
	}
	for {
		off := im.page(id)
		switch flags := binary.LittleEndian.Uint16(im.b[off+8:]); flags {
		case 0x01:
			id = im.u64(off + 16 + 8)
		case 0x02:
			return off
		default:
			t.Fatalf("page %d has flags %#x", id, flags)
		}
	}
}

// damagedStore writes a store of n records in a temporary folder, closes it
// and returns the folder and the path of its records file.
func damagedStore(t *testing.T, n int) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	tmpl := storeTemplate(t, n)
	if err := os.CopyFS(dir, os.DirFS(tmpl)); err != nil {
		t.Fatalf("copy the template store of %d records: %v", n, err)
	}
	path = filepath.Join(dir, dbFile)
	if sum := fileSum(t, path); sum != templateSum(n) {
		t.Fatalf("the template store of %d records (%s) changed since it was written: a test opened or wrote it in place "+
			"(use a copy: damagedStore, or its texts: templateTexts)", n, tmpl)
	}
	return dir, path
}

// fileSum is the SHA-256 of the file at path.
func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// templateSum is the SHA-256 of the records file of the template store
// of n records as storeTemplate wrote it.
func templateSum(n int) [sha256.Size]byte {
	templates.Lock()
	defer templates.Unlock()
	return templates.sums[n]
}

// templateTexts is every record's id and text in the template store of n
// records (storeTemplate), as written: read without opening the template,
// which any Open would change (it commits a transaction) under the tests
// that copy it next.
func templateTexts(t *testing.T, n int) map[string]string {
	t.Helper()
	storeTemplate(t, n)
	templates.Lock()
	defer templates.Unlock()
	return maps.Clone(templates.texts[n])
}

// TestMain runs the package's tests and removes the template stores
// (storeTemplate) they wrote.
func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range templates.dirs {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// templates holds, per size, a closed store of that many records, written
// once per test binary: each damage case copies it rather than putting
// its records one transaction at a time again. A template is never opened
// after it is written (an Open commits a transaction, so the copies of a
// template opened in place would differ from the first ones): texts holds
// what it stores, and sums its records file, which damagedStore checks.
var templates struct {
	sync.Mutex
	dirs  map[int]string
	texts map[int]map[string]string // id -> text of each record
	sums  map[int][sha256.Size]byte // the records file's SHA-256
}

// storeTemplate returns the folder of a closed store of n records (see
// templates), writing it the first time; TestMain removes it.
func storeTemplate(t *testing.T, n int) string {
	t.Helper()
	templates.Lock()
	defer templates.Unlock()
	if dir, ok := templates.dirs[n]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "memtray-recdamage-")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		t.Fatal(err)
	}
	texts := make(map[string]string, n)
	for i := range n {
		m := mustPut(t, s, mem(fmt.Sprintf("record damage %d: module%d keeps its state in cache/m-%d.json", i, i, i)))
		texts[m.ID] = m.Text
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if templates.dirs == nil {
		templates.dirs, templates.texts, templates.sums = map[int]string{}, map[int]map[string]string{}, map[int][sha256.Size]byte{}
	}
	templates.dirs[n], templates.texts[n], templates.sums[n] = dir, texts, fileSum(t, filepath.Join(dir, dbFile))
	return dir
}

// metaPastEnd sets a page id of both metas (a meta field) 1000 pages past
// the end of the file.
func metaPastEnd(field int) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		im := readBoltImage(t, path)
		im.setMeta(field, uint64(len(im.b)/im.pageSize)+1000)
		im.write(t, path)
	}
}

// recsLeaf rewrites the first leaf page of the records bucket (at offset
// leaf of the file b) through fn.
func recsLeaf(fn func(b []byte, leaf int)) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		im := readBoltImage(t, path)
		fn(im.b, im.firstLeaf(t, im.bucketRoot(t, bucketRecs)))
		im.write(t, path)
	}
}

// recordsDamages are the damaged records files Open must refuse, each
// made from a real store by rewriting the bytes bbolt's layout names.
// Without the checks and the fault guard, each one kills the test binary
// (a fault reading the memory map) or panics inside bbolt.
var recordsDamages = []struct {
	name   string
	damage func(t *testing.T, path string)
	detail string // in Open's error
}{
	{"both meta pages garbled", func(t *testing.T, path string) {
		im := readBoltImage(t, path)
		for i := 16; i < 2*im.pageSize; i++ {
			im.b[i] ^= 0x5a
		}
		im.write(t, path)
	}, "invalid"},
	{"freelist count past the file", func(t *testing.T, path string) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		boltFreelistPastEnd(t, b)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}, "freelist"},
	{"freelist page id past the file", metaPastEnd(imgMetaFreelist), "freelist"},
	{"root page id past the file", metaPastEnd(imgMetaRoot), "root"},
	{"high-water mark past the file", metaPastEnd(imgMetaPgid), "truncated"},
	{"truncated to half", func(t *testing.T, path string) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		im := readBoltImage(t, path)
		if err := os.Truncate(path, fi.Size()/2/int64(im.pageSize)*int64(im.pageSize)); err != nil {
			t.Fatal(err)
		}
	}, "truncated"},
	{"truncated to 100 bytes", func(t *testing.T, path string) {
		if err := os.Truncate(path, 100); err != nil {
			t.Fatal(err)
		}
	}, "100 bytes"},
	{"records leaf: an element points past the file", recsLeaf(func(b []byte, leaf int) {
		binary.LittleEndian.PutUint32(b[leaf+16+4:], 1<<30) // the first element's pos
	}), "past the end of the file"},
	{"records leaf: page type garbled", recsLeaf(func(b []byte, leaf int) { binary.LittleEndian.PutUint16(b[leaf+8:], 0x40) }), "unexpected type"},
	{"records leaf: element count garbled", recsLeaf(func(b []byte, leaf int) { binary.LittleEndian.PutUint16(b[leaf+10:], 0xFFF0) }), "damaged"},
}

// TestRecordsDamagedRefused: Open of a damaged records file returns an
// error wrapping ErrDamaged that names the file and says what to do,
// never crashes, and leaves every byte of the file as it found it.
func TestRecordsDamagedRefused(t *testing.T) {
	for _, tc := range recordsDamages {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, 200)
			tc.damage(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
			if err == nil {
				s.Close()
				t.Fatal("Open of a damaged records file succeeded")
			}
			t.Log(err)
			msg := err.Error()
			if !errors.Is(err, ErrDamaged) || !strings.HasPrefix(msg, "open store "+dir+": ") || !strings.Contains(msg, path) || !strings.Contains(msg, tc.detail) ||
				!strings.Contains(msg, "memtray doctor --salvage") || strings.Contains(msg, "empty store") {
				t.Errorf("Open: %v\nwant ErrDamaged, the path, %q and what to do", err, tc.detail)
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before, after) {
				t.Errorf("Open changed the damaged file (%d bytes before, %d after)", len(before), len(after))
			}
			// The lock is released: the file can be moved aside and a new
			// store opened in its place.
			if err := os.Rename(path, path+".damaged"); err != nil {
				t.Fatal(err)
			}
			s, err = Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
			if err != nil {
				t.Fatalf("Open after moving the damaged file aside: %v", err)
			}
			s.Close()
		})
	}
}

// TestRecordsOneMetaGarbled: bbolt falls back to the other meta page when
// one fails its checksum (a torn meta write); Open accepts that.
func TestRecordsOneMetaGarbled(t *testing.T) {
	dir, path := damagedStore(t, 50)
	im := readBoltImage(t, path)
	cur := im.current() * im.pageSize
	for i := cur + 16; i < cur+imgMetaChecksum+8; i++ {
		im.b[i] ^= 0x5a
	}
	im.write(t, path)
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		t.Fatalf("Open with one meta page garbled: %v", err)
	}
	defer s.Close()
	if n := s.Count(); n < 49 {
		t.Errorf("%d records after falling back to the previous meta, want 49 or 50", n)
	}
	// bbolt says nothing of the fallback: the store does (the daemon logs
	// its warnings and the UI's overview shows them).
	if w := strings.Join(s.Info().Warnings, "\n"); !strings.Contains(w, "meta page") || !strings.Contains(w, "memtray doctor") {
		t.Errorf("Info().Warnings = %q, want the invalid meta page and the doctor", w)
	}
}

// TestRecordsDamagedAfterOpen damages a page Open does not read (the
// content-hash bucket's first leaf) while the store is closed: Open
// succeeds, and the write that reaches the page returns an error wrapping
// ErrDamaged instead of killing the process; reads of what is intact go on.
func TestRecordsDamagedAfterOpen(t *testing.T) {
	cases := []struct {
		name   string
		damage func(im *boltImage, leaf int)
	}{
		{"element past the file", func(im *boltImage, leaf int) {
			for i := range int(binary.LittleEndian.Uint16(im.b[leaf+10:])) {
				binary.LittleEndian.PutUint32(im.b[leaf+16+16*i+4:], 1<<30)
			}
		}},
		{"page type garbled", func(im *boltImage, leaf int) {
			binary.LittleEndian.PutUint16(im.b[leaf+8:], 0x40)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, 200)
			im := readBoltImage(t, path)
			tc.damage(im, im.firstLeaf(t, im.bucketRoot(t, bucketHash)))
			im.write(t, path)
			s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			_, err = s.Put(context.Background(), mem("record damage 0: module0 keeps its state in cache/m-0.json"))
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
				t.Errorf("Put reaching the damaged page: %v, want ErrDamaged naming %s", err, path)
			}
			ids, _, err := s.List(context.Background(), ListQuery{Limit: 5})
			if err != nil || len(ids) == 0 {
				t.Fatalf("List after the damaged write: %d, %v", len(ids), err)
			}
			if _, err := s.Get(context.Background(), ids[0]); err != nil {
				t.Errorf("Get of an intact record after the damaged write: %v", err)
			}
		})
	}
}

// BenchmarkOpenRecordsCheck measures, on the cached bench store, what
// checking the records file costs next to Open in the same process:
// checkRecordsFile (which Open runs: meta, root and freelist pages with
// plain reads) and bbolt's full consistency check tx.Check (which Open
// does not run: it walks every page). Each is reported in ms and as a
// ratio of one Open.
func BenchmarkOpenRecordsCheck(b *testing.B) {
	dir := benchStoreDir(b, 100000)
	var open, check, txCheck time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s, err := Open(context.Background(), Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		open += time.Since(start)
		f, err := os.Open(filepath.Join(dir, dbFile))
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := checkRecordsFile(f); err != nil {
			b.Fatal(err)
		}
		check += time.Since(start)
		f.Close()
		start = time.Now()
		err = s.view(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		txCheck += time.Since(start)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(open), "open-ms")
	b.ReportMetric(ms(check), "check-ms")
	b.ReportMetric(ms(txCheck), "txcheck-ms")
	b.ReportMetric(float64(check)/float64(open), "check/open")
	b.ReportMetric(float64(txCheck)/float64(open), "txcheck/open")
}

// fuzzRecordsImage is the records file of a store of fuzzRecords
// memories (texts led by label), and its page size: the image the fuzz
// targets patch.
func fuzzRecordsImage(f *testing.F, label string) (img []byte, pageSize int) {
	dir := f.TempDir()
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		f.Fatal(err)
	}
	for i := range fuzzRecords {
		if _, err := s.Put(context.Background(), mem(fmt.Sprintf("%s %d: worker%d reads queue/q-%d", label, i, i, i))); err != nil {
			f.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		f.Fatal(err)
	}
	img, err = os.ReadFile(filepath.Join(dir, dbFile))
	if err != nil {
		f.Fatal(err)
	}
	return img, int(binary.LittleEndian.Uint32(img[16+8:]))
}

// fuzzRecords is how many memories fuzzRecordsImage stores.
const fuzzRecords = 60

// FuzzOpenRecordsFile opens a real records file with bytes overwritten at
// one offset: Open either fails with an error (ErrDamaged for what bbolt
// cannot read) or succeeds, and then reads and a write either work or
// fail with an error; nothing panics or faults, and a file Open refused as
// damaged is left as it was.
func FuzzOpenRecordsFile(f *testing.F) {
	img, ps := fuzzRecordsImage(f, "fuzzed store")
	f.Add(uint32(imgMetaRoot), []byte{0xff, 0xff, 0, 1})
	f.Add(uint32(ps+imgMetaFreelist), []byte{0x40})
	f.Add(uint32(2*ps+8), []byte{0x10, 0, 0xff, 0xff})
	f.Add(uint32(3*ps+16), []byte{0xff, 0xff, 0xff, 0x7f})
	f.Add(uint32(len(img)/2), bytes.Repeat([]byte{0x5a}, 64))
	f.Fuzz(func(t *testing.T, off uint32, patch []byte) {
		b := slices.Clone(img)
		copy(b[int(off)%len(b):], patch)
		dir := t.TempDir()
		path := filepath.Join(dir, dbFile)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
		if err != nil {
			if after, _ := os.ReadFile(path); errors.Is(err, ErrDamaged) && !bytes.Equal(after, b) {
				t.Fatalf("Open refused the file (%v) and changed it", err)
			}
			return
		}
		defer s.Close()
		ids, _, err := s.List(context.Background(), ListQuery{})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			_, _ = s.Get(context.Background(), id)
		}
		_, _ = s.Put(context.Background(), mem("written after the fuzzed open: worker99"))
	})
}
