package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blevesearch/bleve/v2"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Check reads a closed store and says what is damaged, changing nothing
// (`memtray doctor`): both meta pages of the records file, bbolt's own
// consistency check of every page, every record decoded and validated,
// the other buckets decoded and agreeing with the records (the content
// hashes, the insertion order, the trash, the team outbox), the vector
// index (built from the records at every Open: the records whose vector
// it leaves out) and the text index (opened read-only: the ids it holds
// against the records). A records file bbolt refuses is read page by page
// (see walkRecordsFile) to count what a salvage would save.
//
// The error is for a store that cannot be checked at all (no store in
// dir, another process holding it: memory.ErrLocked); damage is in the
// report.
func Check(ctx context.Context, dir string) (*CheckReport, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	path := filepath.Join(dir, dbFile)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("check store %s: %w", dir, err)
	}
	r := &CheckReport{Dir: dir, File: path, Bytes: fi.Size(), Problems: []Problem{}, Notes: []string{}}
	r.checkMetas(path)
	db, err := openBolt(path, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("check store: %w: quit memtray (the app, `memtray serve`) first", lockedError(dir))
	}
	if err != nil {
		what := err.Error()
		var de *DamagedError
		if errors.As(err, &de) {
			what = de.Detail
		}
		r.damage("records", "bbolt cannot open the records file: "+what, fixSalvage)
		r.countReadable(path)
		return r, nil
	}
	r.Opened = true
	c := &checker{r: r, dir: dir}
	err = guardFault(path, func() error {
		return db.View(func(tx *bolt.Tx) error { return c.checkTx(ctx, tx) })
	})
	_ = db.Close()
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, memory.ErrNewerFormat) {
			return nil, fmt.Errorf("check store %s: %w", dir, err)
		}
		r.damage("records", fmt.Sprintf("reading the records file failed: %v", err), fixSalvage)
	}
	if r.Damaged() && r.pagesDamaged {
		r.countReadable(path)
	}
	if c.recs != nil {
		r.checkText(ctx, dir, c.recs, c.dels)
	}
	return r, nil
}

// CheckReport is what Check found. Problems are damage (the doctor
// exits non-zero); Notes are facts that need nothing done.
type CheckReport struct {
	Dir   string `json:"dir"`
	File  string `json:"file"`
	Bytes int64  `json:"bytes"`
	// Opened says bbolt opened the records file.
	Opened bool `json:"opened"`
	// Records counts the records that decode and validate; Unreadable the
	// others.
	Records    int `json:"records"`
	Unreadable int `json:"unreadable"`
	// Vectors counts the records the vector index holds (a vector of the
	// store's dimension).
	Vectors int `json:"vectors"`
	// TextIndexed is the text index's document count (-1: not opened).
	TextIndexed int `json:"text_indexed"`
	// Trash and Outbox count the trash's entries and the team outbox's.
	Trash  int `json:"trash"`
	Outbox int `json:"outbox"`
	// Readable is, when the records file is damaged, how many records a
	// salvage would save (-1: not counted).
	Readable int `json:"readable"`
	// Model and Dim are the store's embedding model and dimension.
	Model    string    `json:"model,omitempty"`
	Dim      int       `json:"dim,omitempty"`
	Problems []Problem `json:"problems"`
	Notes    []string  `json:"notes"`

	pagesDamaged bool // the file's pages (not a record's bytes) are damaged
}

// Problem is one piece of damage: where, what, and the command that
// repairs it.
type Problem struct {
	// Area is records, meta, vectors, text or a bucket's name.
	Area string `json:"area"`
	What string `json:"what"`
	Fix  string `json:"fix"`
}

// The repairs a Problem names.
const (
	fixSalvage = "memtray doctor --salvage"
	fixText    = "memtray doctor --rebuild-index"
	// fixVectors embeds anew the records whose stored vector is damaged
	// (RepairDamagedVectors), what the daemon does at start.
	fixVectors = "memtray doctor --reembed-damaged"
	fixNone    = "none needed"
)

// maxListed bounds the problems listed of one kind; the rest are counted.
const maxListed = 20

// Damaged says the store has at least one problem.
func (r *CheckReport) Damaged() bool { return len(r.Problems) > 0 }

func (r *CheckReport) damage(area, what, fix string) {
	r.Problems = append(r.Problems, Problem{Area: area, What: what, Fix: fix})
}

func (r *CheckReport) note(format string, a ...any) {
	r.Notes = append(r.Notes, fmt.Sprintf(format, a...))
}

// checkMetas reads both meta pages: bbolt uses the valid one with the
// higher transaction id and says nothing when the other is invalid, so a
// torn write of the newest meta loses the last transaction silently.
func (r *CheckReport) checkMetas(path string) {
	r.Readable, r.TextIndexed = -1, -1
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if r.Bytes == 0 {
		return
	}
	m0, m1, ps, err0, err1 := readBoltMetas(f)
	switch {
	case err0 != nil && err1 != nil:
		r.pagesDamaged = true // openBolt refuses it; its error says the rest
	case err0 != nil || err1 != nil:
		bad, good := 0, m1
		if err1 != nil {
			bad, good = 1, m0
		}
		lost := "If the invalid page held a newer transaction, the write it committed is lost"
		if b := make([]byte, 8); ps == good.pageSize {
			// The txid field may have survived what garbled the rest.
			if _, err := f.ReadAt(b, int64(bad*ps+boltHeader+48)); err == nil && binary.LittleEndian.Uint64(b) == good.txid+1 {
				lost = fmt.Sprintf("It held transaction %d, the newest: the write it committed is lost", good.txid+1)
			}
		}
		r.damage("meta", fmt.Sprintf("meta page %d is invalid; bbolt reads meta page %d (transaction %d) instead, without a word. "+
			"%s; the next write rewrites the page", bad, 1-bad, good.txid, lost), fixNone)
	}
}

// countReadable walks the records file page by page and sets Readable.
func (r *CheckReport) countReadable(path string) {
	w, err := walkRecordsFile(path)
	if err != nil {
		r.Readable = 0
		r.note("no record can be read page by page: %v", err)
		return
	}
	good, noVec, bad, _ := salvageable(w)
	r.Readable = len(good) + len(noVec)
	r.note("read page by page, %d records can be saved (%d of them with a damaged vector, made anew) and %d cannot (`%s` copies them into a new store; %d pages unreadable)",
		r.Readable, len(noVec), bad, fixSalvage, len(w.bad))
}

// checker is one Check's state across the buckets of one transaction.
type checker struct {
	r    *CheckReport
	dir  string
	recs map[string]uint64 // id -> tseq of each readable record
	dels map[string]uint64 // tombstones
	// pageErrs counts the errors of bbolt's consistency check.
	pageErrs int
}

// checkTx runs bbolt's consistency check, then decodes every bucket.
func (c *checker) checkTx(ctx context.Context, tx *bolt.Tx) error {
	c.checkPages(tx)
	return c.checkBuckets(ctx, tx)
}

// checkPages runs bbolt's consistency check of every page. On a read
// transaction, no other transaction may commit meanwhile: it compares the
// transaction's pages with the file's current free list.
func (c *checker) checkPages(tx *bolt.Tx) {
	r := c.r
	n := 0
	for err := range tx.Check() {
		r.pagesDamaged = true
		if n++; n <= maxListed {
			r.damage("records", "bbolt's consistency check: "+err.Error(), fixSalvage)
		}
	}
	if n > maxListed {
		r.damage("records", fmt.Sprintf("bbolt's consistency check: %d more", n-maxListed), fixSalvage)
	}
	c.pageErrs = n
}

// checkBuckets decodes every bucket, unless checkPages found the pages
// damaged.
func (c *checker) checkBuckets(ctx context.Context, tx *bolt.Tx) error {
	r := c.r
	if r.pagesDamaged && c.pageErrs > 0 {
		return nil // the buckets' pages are not to be trusted: the walk counts what can be read
	}
	for _, b := range storeBuckets {
		if tx.Bucket(b) == nil {
			r.damage(string(b), "the bucket is missing", fixSalvage)
		}
	}
	meta, recs := tx.Bucket(bucketMeta), tx.Bucket(bucketRecs)
	if meta == nil || recs == nil {
		return nil
	}
	if err := c.checkMeta(meta); err != nil {
		return err
	}
	if err := c.checkRecords(ctx, recs); err != nil {
		return err
	}
	c.checkIndexes(tx)
	return nil
}

// checkMeta reads the format version, the model and the dimension.
func (c *checker) checkMeta(meta *bolt.Bucket) error {
	r := c.r
	fv := getU64(meta.Get(keyFormat))
	switch {
	case fv == 0:
		r.damage("meta", "the format version is missing or corrupt", fixSalvage)
	case fv > FormatVersion:
		return fmt.Errorf("format version %d: %w (this build reads up to %d): use a newer memtray", fv, memory.ErrNewerFormat, FormatVersion)
	}
	r.Model, r.Dim = string(meta.Get(keyModel)), int(getU64(meta.Get(keyDim)))
	if r.Dim <= 0 || r.Dim > maxDim || r.Model == "" {
		r.damage("meta", fmt.Sprintf("the embedding model %q or dimension %d is corrupt", r.Model, r.Dim), fixSalvage)
	}
	return nil
}

// checkRecords decodes and validates every record and counts those the
// vector index holds.
func (c *checker) checkRecords(ctx context.Context, recs *bolt.Bucket) error {
	r := c.r
	c.recs = map[string]uint64{}
	probe := Store{model: r.Model, dim: r.Dim}
	var damaged []string // records whose vector is damaged
	cur := recs.Cursor()
	for k, v := cur.First(); k != nil; k, v = cur.Next() {
		if len(c.recs)%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		h, m, err := decodeRecord(v)
		if err == nil && m.ID != string(k) {
			err = fmt.Errorf("it holds the id %q", m.ID)
		}
		if err == nil {
			err = probe.checkAllButVector(&m)
		}
		switch {
		case err != nil:
		case checkVector(m.Embedding, r.Dim) != nil:
			damaged = append(damaged, string(k))
		default:
			r.Vectors++
		}
		if err != nil {
			if r.Unreadable++; r.Unreadable <= maxListed {
				r.damage("records", fmt.Sprintf("record %q cannot be read: %v", clipID(string(k)), err), fixSalvage)
			}
			continue
		}
		r.Records++
		c.recs[string(k)] = h.tseq
	}
	if r.Unreadable > maxListed {
		r.damage("records", fmt.Sprintf("%d more records cannot be read", r.Unreadable-maxListed), fixSalvage)
	}
	if len(damaged) > 0 {
		r.damage("vectors", damagedVectorProblem(damaged, r.Dim), fixVectors)
	}
	r.note("vector index: rebuilt from the records at every start; it holds %d of %d records", r.Vectors, r.Records+r.Unreadable)
	return nil
}

// damagedVectorProblem says what the records ids, whose stored vector is
// damaged, are to memtray now and what repairs them.
func damagedVectorProblem(ids []string, dim int) string {
	named := make([]string, 0, min(len(ids), maxListed))
	for _, id := range ids[:min(len(ids), maxListed)] {
		named = append(named, clipID(id))
	}
	if len(ids) > maxListed {
		named = append(named, "…")
	}
	return fmt.Sprintf("%d records have a damaged vector (NaN or Inf, or not %d numbers long: %s): they are read, listed and found by "+
		"their words, never by vector; memtray's daemon embeds them anew when it starts and its embedder answers, "+
		"and an export writes them without it (an import embeds them anew)", len(ids), dim, strings.Join(named, ", "))
}

// checkIndexes decodes the buckets that index the records (content
// hashes, insertion order), the tombstones, the trash and the team
// outbox, and checks that the indexes name stored records.
func (c *checker) checkIndexes(tx *bolt.Tx) {
	r := c.r
	bucketErr := func(name []byte, n int, what string) {
		if n > 0 {
			r.damage(string(name), fmt.Sprintf("%d entries %s", n, what), fixSalvage)
		}
	}
	c.dels = map[string]uint64{}
	if b := tx.Bucket(bucketHash); b != nil {
		var orphans, bad int
		_ = b.ForEach(func(k, _ []byte) error {
			if len(k) <= 64 {
				bad++
			} else if _, ok := c.recs[string(k[64:])]; !ok {
				orphans++
			}
			return nil
		})
		bucketErr(bucketHash, bad, "are not a content hash and an id")
		bucketErr(bucketHash, orphans, "name a record that is not stored or cannot be read")
	}
	if b := tx.Bucket(bucketOrder); b != nil {
		var n, orphans int
		_ = b.ForEach(func(_, v []byte) error {
			n++
			if _, ok := c.recs[string(v)]; !ok {
				orphans++
			}
			return nil
		})
		bucketErr(bucketOrder, orphans, "name a record that is not stored or cannot be read (reads skip those Open found unreadable)")
		if missing := len(c.recs) - (n - orphans); missing > 0 {
			r.damage(string(bucketOrder), fmt.Sprintf("%d records are missing from the insertion order (export fails on them)", missing), fixSalvage)
		}
	}
	if b := tx.Bucket(bucketDels); b != nil {
		_ = b.ForEach(func(k, v []byte) error {
			c.dels[string(k)] = getU64(v)
			return nil
		})
	}
	if b := tx.Bucket(bucketTrash); b != nil {
		var bad int
		_ = b.ForEach(func(_, v []byte) error {
			r.Trash++
			if _, _, _, err := decodeTrashed(v, false); err != nil {
				bad++ // as the trash's list leaves it out (trashbad.go)
			}
			return nil
		})
		bucketErr(bucketTrash, bad, "cannot be read: those trashed memories cannot be restored")
	}
	if b := tx.Bucket(bucketOutbox); b != nil {
		var bad int
		_ = b.ForEach(func(_, v []byte) error {
			r.Outbox++
			if _, _, err := decodeOutbox(v); err != nil {
				bad++
			}
			return nil
		})
		bucketErr(bucketOutbox, bad, "cannot be read: those team writes are not pushed")
	}
	if b := tx.Bucket(bucketOutboxDeltas); b != nil {
		var bad int
		_ = b.ForEach(func(_, v []byte) error {
			var d CounterDelta
			if json.Unmarshal(v, &d) != nil || d.Validate() != nil {
				bad++
			}
			return nil
		})
		bucketErr(bucketOutboxDeltas, bad, "cannot be read: those counter changes are not pushed")
	}
	c.checkLogs(tx)
}

// checkLogs decodes the recall log, the similarity calibrations and the
// turn marks by the rules a salvage keeps them by (salvagekeep.go): an
// entry they fail is skipped where it is used, silently, and left out by
// a salvage, which keeps the others.
func (c *checker) checkLogs(tx *bolt.Tx) {
	r := c.r
	// count counts the entries of bucket name (keys entry picks) and
	// those readable fails.
	count := func(name []byte, entry func(k []byte) bool, readable func(k, v []byte) bool) (n, bad int) {
		if b := tx.Bucket(name); b != nil {
			_ = b.ForEach(func(k, v []byte) error {
				if v == nil || !entry(k) {
					return nil // a nested bucket (none is expected), or not an entry
				}
				n++
				if !readable(k, v) {
					bad++
				}
				return nil
			})
		}
		return n, bad
	}
	every := func([]byte) bool { return true }
	recalls, badRecalls := count(bucketRecalls, every, func(k, v []byte) bool {
		_, err := recallEntryOf(k, v)
		return err == nil
	})
	calibs, badCalibs := count(bucketCalib, every, calibrationReadable)
	marks, badMarks := count(bucketTurns, func(k []byte) bool {
		return bytes.IndexByte(k, 0) > 0 // not the prune's own key (keyTurnsPruned)
	}, func(_, v []byte) bool {
		_, err := turnMarkOf(v)
		return err == nil
	})
	if badRecalls > 0 {
		r.damage(string(bucketRecalls), fmt.Sprintf("%d of %d recall log entries cannot be read: the recall log skips them (what those recalls gave is not shown); a salvage keeps the others", badRecalls, recalls), fixSalvage)
	}
	if badCalibs > 0 {
		r.damage(string(bucketCalib), fmt.Sprintf("%d of %d similarity calibrations cannot be read: the daemon calibrates those models again; a salvage keeps the others", badCalibs, calibs), fixSalvage)
	}
	if badMarks > 0 {
		r.damage(string(bucketTurns), fmt.Sprintf("%d of %d turn marks cannot be read: a turn captured again places those statements again (they are found as duplicates); a salvage keeps the marks of the other turns", badMarks, marks), fixSalvage)
	}
	r.note("recall log: %d entries; similarity calibrations: %d; turn marks: %d", recalls, calibs, marks)
}

// checkText opens the text index read-only and compares its documents
// with the records: a record written after the index's watermark, or a
// tombstone, is one Open catches up on by itself.
func (r *CheckReport) checkText(ctx context.Context, dir string, recs, dels map[string]uint64) {
	path := filepath.Join(dir, textDir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		r.note("text index: missing; the next start builds it from the records")
		return
	}
	cfg := textConfig()
	cfg["read_only"] = true
	var idx bleve.Index
	err := guardFault(path, func() error {
		var err error
		if idx, err = bleve.OpenUsing(path, cfg); err != nil {
			return err
		}
		return checkTextIndex(idx)
	})
	if err != nil {
		if idx != nil {
			closeQuietly(idx)
		}
		r.damage("text", fmt.Sprintf("the text index (BM25) cannot be read: %v; the next start moves it aside and rebuilds it", err), fixText)
		return
	}
	defer closeQuietly(idx)
	ai, err := idx.Advanced()
	var ir index.IndexReader
	if err == nil {
		ir, err = ai.Reader()
	}
	if err != nil {
		r.damage("text", fmt.Sprintf("the text index cannot be read: %v", err), fixText)
		return
	}
	defer ir.Close()
	r.compareText(ctx, ir, recs, dels, nil, "the next start indexes them")
}

// compareText compares the documents of a snapshot of the text index
// with the records (recs: id -> tseq; dels: tombstones): a record written
// after the index's watermark, or one the store retries (retry), is yet
// to be indexed (by when: catchUp), not missing.
func (r *CheckReport) compareText(ctx context.Context, ir index.IndexReader, recs, dels map[string]uint64, retry map[string]bool, catchUp string) {
	var w uint64
	if v, err := ir.GetInternal([]byte(internalWatermark)); err == nil {
		w = getU64(v)
	}
	n, err := ir.DocCount()
	if err != nil {
		r.damage("text", fmt.Sprintf("the text index cannot count its documents: %v", err), fixText)
		return
	}
	r.TextIndexed = int(n)
	indexed, err := textIDs(ctx, ir, int(n))
	if err != nil {
		r.damage("text", fmt.Sprintf("the text index cannot list its documents: %v", err), fixText)
		return
	}
	var extra int
	for id := range indexed {
		if _, ok := recs[id]; !ok && dels[id] <= w && !retry[id] {
			extra++
		}
	}
	var missing, pending int
	for id, tseq := range recs {
		switch {
		case indexed[id]:
		case tseq > w || retry[id]:
			pending++
		default:
			missing++
		}
	}
	if missing > 0 {
		r.damage("text", fmt.Sprintf("%d records are missing from the text index: keyword search does not find them", missing), fixText)
	}
	if extra > 0 {
		r.damage("text", fmt.Sprintf("the text index holds %d documents that are not records", extra), fixText)
	}
	if pending > 0 {
		r.note("text index: %d records written after its last flush; %s", pending, catchUp)
	}
	r.note("text index: %d documents for %d records", n, len(recs))
}

// textIDs lists the ids of every document of a text index snapshot.
func textIDs(ctx context.Context, ir index.IndexReader, hint int) (map[string]bool, error) {
	dr, err := ir.DocIDReaderAll()
	if err != nil {
		return nil, err
	}
	defer dr.Close()
	ids := make(map[string]bool, hint)
	for {
		if len(ids)%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		iid, err := dr.Next()
		if err != nil {
			return nil, err
		}
		if iid == nil {
			return ids, nil
		}
		id, err := ir.ExternalID(iid)
		if err != nil {
			return nil, err
		}
		ids[id] = true
	}
}
