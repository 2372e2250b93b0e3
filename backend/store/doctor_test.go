package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// doctorRecords is the size of the stores the doctor's tests damage: big
// enough for the records bucket to span several leaf pages.
const doctorRecords = 200

// recordValue returns a record's value as stored, read with bbolt.
func recordValue(t *testing.T, path, id string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v []byte
	if err := db.View(func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bucketRecs).Get([]byte(id)))
		return nil
	}); err != nil || v == nil {
		t.Fatalf("record %s: %v", id, err)
	}
	return v
}

// firstRecordID is the smallest id of the store in dir.
func firstRecordID(t *testing.T, path string) string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	_ = db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketRecs).Cursor().First()
		id = string(k)
		return nil
	})
	return id
}

// nanVector writes NaN over the last float of one record's vector, in
// place in the file: the bytes a flipped disk sector would change, with
// every page of bbolt's intact.
func nanVector(t *testing.T, path, id string) {
	t.Helper()
	v := recordValue(t, path, id)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, v)
	if at < 0 || bytes.Count(b, v) != 1 {
		t.Fatalf("record %s is not stored once, contiguously, in the file", id)
	}
	binary.LittleEndian.PutUint32(b[at+len(v)-4:], math.Float32bits(float32(math.NaN())))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// garbleNewestMeta garbles the meta page bbolt would read (the newer)
// but its txid field, and returns that txid.
func garbleNewestMeta(t *testing.T, path string) uint64 {
	t.Helper()
	im := readBoltImage(t, path)
	cur := im.current() * im.pageSize
	txid := im.u64(cur + imgMetaTxid)
	for i := cur + imgMetaRoot; i < cur+imgMetaPgid+8; i++ {
		im.b[i] ^= 0x5a
	}
	im.write(t, path)
	return txid
}

// TestCheck: the doctor's check of each kind of damage, made on a real
// store by the test: what it says, and that it changes no byte of the
// records file.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(t *testing.T, dir, path string) string // returns what the problems must say
		opened bool
		// records: the readable records (-1: not counted); readable: the
		// records a salvage would save (-1: not counted).
		records, readable int
		area              string // "" : no damage
	}{
		{"healthy", func(*testing.T, string, string) string { return "" }, true, doctorRecords, -1, ""},
		{"newest meta page garbled", func(t *testing.T, _, path string) string {
			return fmt.Sprintf("transaction %d, the newest", garbleNewestMeta(t, path))
		}, true, doctorRecords - 1, -1, "meta"}, // the last Put was the lost transaction
		{"truncated to half", func(t *testing.T, _, path string) string {
			recordsDamages[5].damage(t, path)
			return "truncated"
		}, false, -1, -2, "records"},
		{"records leaf page type garbled", func(t *testing.T, _, path string) string {
			recsLeaf(func(b []byte, leaf int) { binary.LittleEndian.PutUint16(b[leaf+8:], 0x40) })(t, path)
			return "consistency check"
		}, true, 0, -2, "records"},
		// A damaged vector is read, listed and found by words since
		// exp-vecnan: the record is readable (at 914b286 the doctor
		// called it unreadable, to salvage).
		{"a record's vector is NaN", func(t *testing.T, _, path string) string {
			id := firstRecordID(t, path)
			nanVector(t, path, id)
			return fmt.Sprintf("1 records have a damaged vector (NaN or Inf, or not %d numbers long: %s", testDim, clipID(id))
		}, true, doctorRecords, -1, "vectors"},
		{"a record's vector is a number short", func(t *testing.T, _, path string) string {
			id := firstRecordID(t, path)
			rewriteVector(t, path, id, func(emb []byte) []byte { return emb[:len(emb)-4] })
			return "found by their words, never by vector"
		}, true, doctorRecords, -1, "vectors"},
		{"text index deleted", func(t *testing.T, dir, _ string) string {
			if err := os.RemoveAll(filepath.Join(dir, textDir)); err != nil {
				t.Fatal(err)
			}
			return ""
		}, true, doctorRecords, -1, ""},
		{"text index garbled", func(t *testing.T, dir, _ string) string {
			edit(t, filepath.Join(dir, textDir, "store", "root.bolt"), func(b []byte) {
				for i := 4096; i < len(b); i += 7 {
					b[i] ^= 0x5a
				}
			})
			return "cannot be read"
		}, true, doctorRecords, -1, "text"},
		{"text index lost a document", func(t *testing.T, dir, _ string) string {
			s, err := Open(ctx, Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ids, _, err := s.List(ctx, ListQuery{Limit: 1})
			if err != nil || len(ids) == 0 {
				t.Fatal(err)
			}
			if err := s.text.Delete(ids[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return "1 records are missing from the text index"
		}, true, doctorRecords, -1, "text"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, doctorRecords)
			want := tc.damage(t, dir, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Check(ctx, dir)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			t.Logf("%+v", r)
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("Check changed the records file")
			}
			if r.Opened != tc.opened {
				t.Errorf("Opened = %v, want %v", r.Opened, tc.opened)
			}
			if tc.records >= 0 && tc.area != "records" && r.Records != tc.records {
				t.Errorf("Records = %d, want %d", r.Records, tc.records)
			}
			if tc.area == "records" && tc.opened && tc.records > 0 && (r.Records != tc.records || r.Unreadable != doctorRecords-tc.records) {
				t.Errorf("Records, Unreadable = %d, %d, want %d, %d", r.Records, r.Unreadable, tc.records, doctorRecords-tc.records)
			}
			switch {
			case tc.readable == -2 && (r.Readable <= 0 || r.Readable >= doctorRecords):
				t.Errorf("Readable = %d, want some of the %d records, not all", r.Readable, doctorRecords)
			case tc.readable == -1 && r.Readable != -1 && tc.area != "meta":
				t.Errorf("Readable = %d, want -1 (not counted)", r.Readable)
			}
			if tc.area == "" {
				if r.Damaged() {
					t.Errorf("problems on a store without damage: %+v", r.Problems)
				}
				return
			}
			var found bool
			for _, p := range r.Problems {
				if p.Area == tc.area && strings.Contains(p.What, want) && p.Fix != "" && (tc.area != "vectors" || p.Fix == fixVectors) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s problem saying %q: %+v", tc.area, want, r.Problems)
			}
		})
	}
}

// TestCheckCannot: a store Check cannot read at all is an error, not a
// report: held by an open store, written by a newer memtray.
func TestCheckCannot(t *testing.T) {
	ctx := context.Background()
	dir, _ := damagedStore(t, 10)
	s, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(ctx, dir); !errors.Is(err, memory.ErrLocked) || !strings.Contains(err.Error(), "quit memtray") {
		t.Errorf("Check of an open store: %v, want ErrLocked and what to do", err)
	}
	if _, err := Salvage(ctx, dir, nil); !errors.Is(err, memory.ErrLocked) {
		t.Errorf("Salvage of an open store: %v, want ErrLocked", err)
	}
	if err := s.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, u64(FormatVersion+1)) }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Check(ctx, dir); !errors.Is(err, memory.ErrNewerFormat) {
		t.Errorf("Check of a newer store: %v, want ErrNewerFormat", err)
	}
}

// storeTexts is every record's id and text in the store in dir.
func storeTexts(t *testing.T, dir string) map[string]string {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	ids, _, err := s.List(context.Background(), ListQuery{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, id := range ids {
		m, err := s.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = m.Text
	}
	return out
}

// TestSalvage: each kind of damage to the records file, salvaged into a
// new store: what can be read is saved with its id and text, the count
// of saved and lost adds up, the damaged file is kept byte for byte, and
// the new store opens and checks clean.
func TestSalvage(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	cases := []struct {
		name     string
		damage   func(t *testing.T, path string)
		embedFor EmbedderFor
		// saved: want exactly (>= 0) or some but not all (-1); lost,
		// reembedded: want exactly; counted: what the meta read counts
		// (0: the template's doctorRecords, or unknown; -1: the newest
		// meta's or, when its root lies in what was cut, the one before
		// it, whose last Put is missing: where the root lands depends on
		// the template's page layout, which differs from run to run).
		saved, lost, reembedded, counted int
	}{
		{"healthy", func(*testing.T, string) {}, nil, doctorRecords, 0, 0, 0},
		{"truncated to half", recordsDamages[5].damage, nil, -1, 0, 0, -1},
		{"records leaf page type garbled", recsLeaf(func(b []byte, leaf int) { binary.LittleEndian.PutUint16(b[leaf+8:], 0x40) }), nil, -1, 0, 0, 0},
		{"records leaf element past the file", recordsDamages[7].damage, nil, -1, 0, 0, 0},
		{"freelist past the file", recordsDamages[1].damage, nil, doctorRecords, 0, 0, 0},
		{"root page id past the file (the older meta's root is read)", func(t *testing.T, path string) {
			im := readBoltImage(t, path)
			cur := im.current() * im.pageSize
			binary.LittleEndian.PutUint64(im.b[cur+imgMetaRoot:], uint64(len(im.b)/im.pageSize)+1000)
			sealMeta(im, cur)
			im.write(t, path)
		}, nil, doctorRecords - 1, 0, 0, doctorRecords - 1}, // the older meta is the template's one before its last Put
		{"a record's vector is NaN, re-embedded", func(t *testing.T, path string) { nanVector(t, path, firstRecordID(t, path)) },
			func(context.Context, string) (memory.Embedder, error) { return testEmb, nil }, doctorRecords, 0, 1, 0},
		// Kept as Open keeps it (dc02f48 lost it): saved without a vector,
		// found by words, on the list RepairVectors embeds anew.
		{"a record's vector is NaN, no embedder", func(t *testing.T, path string) { nanVector(t, path, firstRecordID(t, path)) },
			nil, doctorRecords, 0, 0, 0},
		{"a record's vector is NaN, the embedder fails", func(t *testing.T, path string) { nanVector(t, path, firstRecordID(t, path)) },
			func(context.Context, string) (memory.Embedder, error) { return nil, memory.ErrUnavailable }, doctorRecords, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, doctorRecords)
			orig := templateTexts(t, doctorRecords)
			tc.damage(t, path)
			damaged, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Salvage(ctx, dir, tc.embedFor)
			if err != nil {
				t.Fatalf("Salvage: %v", err)
			}
			t.Logf("%+v", rep)
			switch {
			case tc.saved >= 0 && rep.Saved != tc.saved:
				t.Errorf("saved %d, want %d", rep.Saved, tc.saved)
			case tc.saved == -1 && (rep.Saved == 0 || rep.Saved >= doctorRecords):
				t.Errorf("saved %d, want some of %d, not all", rep.Saved, doctorRecords)
			case tc.saved == -2 && (rep.Saved == 0 || rep.Saved > doctorRecords):
				t.Errorf("saved %d, want 1..%d", rep.Saved, doctorRecords)
			}
			if rep.Lost != tc.lost || rep.Reembedded != tc.reembedded || rep.Duplicates != 0 {
				t.Errorf("lost %d, reembedded %d, duplicates %d; want %d, %d, 0", rep.Lost, rep.Reembedded, rep.Duplicates, tc.lost, tc.reembedded)
			}
			if want := cmp.Or(tc.counted, doctorRecords); rep.Counted != 0 && rep.Counted != want &&
				(tc.counted != -1 || rep.Counted != doctorRecords && rep.Counted != doctorRecords-1) {
				t.Errorf("counted %d, want %d", rep.Counted, want)
			}
			if kept, err := os.ReadFile(rep.KeptAs); err != nil || !bytes.Equal(kept, damaged) {
				t.Errorf("the damaged file is not kept as it was at %s: %v", rep.KeptAs, err)
			}
			got := storeTexts(t, dir)
			if len(got) != rep.Saved {
				t.Errorf("the new store holds %d records, the report says %d", len(got), rep.Saved)
			}
			for id, text := range got {
				if orig[id] != text {
					t.Errorf("record %s: text %q, want %q", id, text, orig[id])
				}
			}
			r, err := Check(ctx, dir)
			if rep.NoVector > 0 {
				checkSavedWithoutVector(t, dir, r, err, rep.NoVector)
				return
			}
			if err != nil || r.Damaged() {
				t.Errorf("Check after the salvage: %v %+v", err, r)
			}
		})
	}
}

// checkSavedWithoutVector: the n records a salvage saved without their
// damaged vector are the new store's only problem (the doctor's
// "vectors", as Open's), named by Open's warning, found by words, and
// found by vector once RepairVectors embeds them.
func checkSavedWithoutVector(t *testing.T, dir string, r *CheckReport, err error, n int) {
	t.Helper()
	ctx := context.Background()
	if err != nil || len(r.Problems) != 1 || r.Problems[0].Area != "vectors" {
		t.Fatalf("Check after the salvage: %v %+v, want one vectors problem", err, r)
	}
	texts := storeTexts(t, dir)
	s := openTest(t, dir)
	if w := strings.Join(s.Info().Warnings, "\n"); !strings.Contains(w, fmt.Sprintf("%d memory has a damaged vector", n)) {
		t.Errorf("warnings of the salvaged store: %q", w)
	}
	got, err := s.RepairVectors(ctx, testEmb)
	if err != nil || got != n {
		t.Fatalf("RepairVectors = %d, %v, want %d", got, err, n)
	}
	if w := s.Info().Warnings; len(w) != 0 {
		t.Errorf("warnings after the repair: %q", w)
	}
	for id, text := range texts {
		hits, err := s.VectorSearch(ctx, testEmb.vec(text), 1, Filter{})
		if err != nil || len(hits) != 1 || hits[0].ID != id {
			t.Fatalf("record %s not found by vector after the repair: %v, %v", id, ids(hits), err)
		}
	}
}

// sealMeta recomputes the checksum of the meta at page offset p.
func sealMeta(im *boltImage, p int) {
	h := fnv.New64a()
	h.Write(im.b[p+16 : p+imgMetaChecksum])
	binary.LittleEndian.PutUint64(im.b[p+imgMetaChecksum:], h.Sum64())
}

// TestSalvageNothingReadable: a file with no valid meta page is refused
// and left as it is.
func TestSalvageNothingReadable(t *testing.T) {
	dir, path := damagedStore(t, 20)
	recordsDamages[0].damage(t, path) // both meta pages garbled
	before, _ := os.ReadFile(path)
	if _, err := Salvage(context.Background(), dir, nil); err == nil || !strings.Contains(err.Error(), "nothing can be read") {
		t.Errorf("Salvage: %v, want nothing can be read", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("Salvage changed the file it could not read")
	}
}

// TestRebuildTextIndex: a text index that lost a document, or cannot be
// read, is rebuilt from the records; the records file is not touched
// beyond what Open writes.
func TestRebuildTextIndex(t *testing.T) {
	ctx := context.Background()
	dir, _ := damagedStore(t, doctorRecords)
	edit(t, filepath.Join(dir, textDir, "store", "root.bolt"), func(b []byte) {
		for i := 4096; i < len(b); i += 7 {
			b[i] ^= 0x5a
		}
	})
	if r, err := Check(ctx, dir); err != nil || !r.Damaged() {
		t.Fatalf("Check before: %v %+v", err, r)
	}
	n, err := RebuildTextIndex(ctx, dir)
	if err != nil || n != doctorRecords {
		t.Fatalf("RebuildTextIndex: %d, %v; want %d", n, err, doctorRecords)
	}
	if r, err := Check(ctx, dir); err != nil || r.Damaged() || r.TextIndexed != doctorRecords {
		t.Errorf("Check after: %v %+v", err, r)
	}
	left, _ := filepath.Glob(filepath.Join(dir, textDir+".*"))
	if len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestSalvageScanSkipsDeleted: when the tree above the records' leaves is
// lost (the records bucket's root page, or the file's root page under
// both metas), Salvage reads every leaf page: it saves every live record
// and brings back none of the deleted ones, whose versions freed pages
// may still hold: the insertion order names the live ones, or, when it
// is lost too, the tombstones name the deleted.
func TestSalvageScanSkipsDeleted(t *testing.T) {
	ctx := context.Background()
	const deleted = 20
	garbleType := func(im *boltImage, id uint64) {
		binary.LittleEndian.PutUint16(im.b[im.page(id)+8:], 0x40)
	}
	cases := []struct {
		name   string
		damage func(t *testing.T, im *boltImage)
	}{
		{"records bucket root page garbled", func(t *testing.T, im *boltImage) {
			garbleType(im, im.bucketRoot(t, bucketRecs))
		}},
		{"the file's root page garbled under both metas", func(t *testing.T, im *boltImage) {
			garbleType(im, im.u64(imgMetaRoot))
			garbleType(im, im.u64(im.pageSize+imgMetaRoot))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := damagedStore(t, doctorRecords)
			s, err := Open(ctx, Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ids, _, err := s.List(ctx, ListQuery{Limit: deleted})
			if err != nil || len(ids) != deleted {
				t.Fatalf("list: %d %v", len(ids), err)
			}
			gone := map[string]bool{}
			for _, id := range ids {
				if err := s.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
				gone[id] = true
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			im := readBoltImage(t, path)
			if root := im.bucketRoot(t, bucketRecs); binary.LittleEndian.Uint16(im.b[im.page(root)+8:]) != boltBranchPage {
				t.Fatal("the records bucket's root is a leaf: no tree above the leaves to lose")
			}
			tc.damage(t, im)
			im.write(t, path)
			rep, err := Salvage(ctx, dir, nil)
			if err != nil {
				t.Fatalf("Salvage: %v", err)
			}
			t.Logf("%+v", rep)
			got := storeTexts(t, dir)
			if len(got) != doctorRecords-deleted || rep.Scanned != doctorRecords-deleted {
				t.Errorf("saved %d (%d scanned), want the %d live records", len(got), rep.Scanned, doctorRecords-deleted)
			}
			for id := range got {
				if gone[id] {
					t.Errorf("deleted record %s came back", id)
				}
			}
		})
	}
}

// BenchmarkCheck measures `memtray doctor`'s check (Check: tx.Check of
// every page, every record decoded and validated, the text index listed)
// next to Open of the same store in the same process, on a store of
// MEMTRAY_CHECK_BENCH_N records (default 10000: benchStoreDir builds it
// once), reported in ms and as a ratio of one Open.
func BenchmarkCheck(b *testing.B) {
	n := 10000
	if v := os.Getenv("MEMTRAY_CHECK_BENCH_N"); v != "" {
		fmt.Sscan(v, &n)
	}
	dir := benchStoreDir(b, n)
	ctx := context.Background()
	var open, check time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s, err := Open(ctx, Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		open += time.Since(start)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		r, err := Check(ctx, dir)
		if err != nil || r.Damaged() || r.Records != n {
			b.Fatalf("Check: %v %+v", err, r)
		}
		check += time.Since(start)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(open), "open-ms")
	b.ReportMetric(ms(check), "check-ms")
	b.ReportMetric(float64(check)/float64(open), "check/open")
}
