package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/whitespace"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// Fields of a text-index document.
const (
	fieldText    = "text"
	fieldProject = "project"
	fieldKind    = "kind"
	fieldSource  = "source"
	fieldSeq     = "seq" // the record's tseq, stored (not indexed) for reconciliation
	// fieldNames holds the names a memory writes by a form the English
	// analyzer splits or strips ("--firmware", "examples/", "slice()":
	// memory.NameTerms), each one term, as written and lowercased.
	fieldNames = "names"
)

// namesAnalyzer splits fieldNames' text at spaces only: memory.NameTerms
// writes each term lowercased, with no space inside.
const namesAnalyzer = "memtray_names"

// Internal keys of the text index.
const (
	// internalWatermark holds the store seq up to which every write is
	// reflected in the index; set in the same batch as the writes.
	internalWatermark = "memtray_seq"
	// internalTokens holds the watermark and the number of tokens of
	// every text the index holds at it (bm25stats.go), set with the
	// watermark when the store closes, so that Open after a clean Close
	// need not count them.
	internalTokens = "memtray_tokens"
	// internalNames holds each record's names count as Close left them
	// (namecount.go).
	internalNames = "memtray_names"
	// internalMapping names the version of newTextMapping the index was built with.
	internalMapping = "memtray_mapping"
	// Version 2 adds fieldNames; version 3 reads into it the names
	// written inside punctuation marks of any script (“--export-gcode”,
	// «assets/»: memory.NameTerms, exp-quote), which version 2 left out.
	// An index of version 1 or 2 serves while the store builds the
	// current one in the background (servableMapping, upgrade.go); an
	// index of any other version is rebuilt at Open.
	mappingVersion = TextMappingVersion
)

// TextMappingVersion is the version of the text index's mapping this
// build writes; an index of another version is rebuilt from the records,
// in the background while it serves if it can (servableMapping), at Open
// if not. Caches of built stores (the benchmarks') key on it, so that
// builds of two versions never rebuild each other's.
const TextMappingVersion = "3"

// maxQueryTerms bounds the distinct analysed terms of one TextSearchTerms
// query; terms past it are ignored.
const maxQueryTerms = 1024

// maxAnalyzeBytes bounds the text Analyze looks at.
const maxAnalyzeBytes = 1 << 20

// reindexChunk is the number of records per bleve batch when reconciling.
const reindexChunk = 1000

// newTextMapping is the text index's mapping: BM25 scoring; the English
// analyzer (unicode tokenizer, possessives, lowercase, English stop words,
// Porter stemmer) on text; keywords for filtering.
func newTextMapping() *mapping.IndexMappingImpl {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = en.AnalyzerName
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false

	text := bleve.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store = false
	text.IncludeTermVectors = false
	text.IncludeInAll = false
	text.DocValues = false

	kw := func() *mapping.FieldMapping {
		f := bleve.NewKeywordFieldMapping()
		f.Store = false
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	seq := bleve.NewKeywordFieldMapping()
	seq.Index = false
	seq.Store = true
	seq.IncludeTermVectors = false
	seq.IncludeInAll = false
	seq.DocValues = false

	if err := im.AddCustomAnalyzer(namesAnalyzer, map[string]interface{}{
		"type":      custom.Name,
		"tokenizer": whitespace.Name,
	}); err != nil {
		panic(fmt.Sprintf("text mapping: %v", err)) // a constant definition: cannot fail
	}
	names := bleve.NewTextFieldMapping()
	names.Analyzer = namesAnalyzer
	names.Store = false
	names.IncludeTermVectors = false
	names.IncludeInAll = false
	names.DocValues = false

	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldText, text)
	dm.AddFieldMappingsAt(fieldNames, names)
	dm.AddFieldMappingsAt(fieldProject, kw())
	dm.AddFieldMappingsAt(fieldKind, kw())
	dm.AddFieldMappingsAt(fieldSource, kw())
	dm.AddFieldMappingsAt(fieldSeq, seq)
	im.DefaultMapping = dm
	return im
}

// textConfig is bleve's runtime configuration: fail fast if another process
// holds the index; do not wait for each batch to reach the disk (bbolt is
// the store of record and the watermark tells what bleve has).
func textConfig() map[string]interface{} {
	return map[string]interface{}{
		"bolt_timeout": "1s",
		"unsafe_batch": true,
	}
}

func textDoc(m *memory.Memory, tseq uint64) map[string]interface{} {
	d := map[string]interface{}{
		fieldText: m.Text,
		fieldKind: string(m.Kind),
		fieldSeq:  strconv.FormatUint(tseq, 10),
	}
	if names := memory.NameTerms(m.Text); len(names) > 0 {
		d[fieldNames] = strings.Join(names, " ")
	}
	if m.Project != "" {
		d[fieldProject] = m.Project
	}
	if m.Source != "" {
		d[fieldSource] = m.Source
	}
	return d
}

// textOpening is what openTextFiles found, for openText.
type textOpening struct {
	fresh bool   // the index was just created: it holds nothing
	why   string // why it was created
}

// openTextFiles opens (or creates) the text index, before the records are
// loaded, which read the name counts Close stored in it (internalNames).
func (s *Store) openTextFiles() (textOpening, error) {
	s.tmap = newTextMapping()
	path := filepath.Join(s.dir, textDir)
	fresh := false
	why := "there was none"
	idx, err := s.openTextIndex(path)
	if errors.Is(err, errOldMapping) {
		why = "it was built by an older version"
		// Not damaged: built by an older version. Its terms are
		// rebuilt from the records, as RebuildText would.
		if rerr := os.RemoveAll(path); rerr != nil {
			return textOpening{}, fmt.Errorf("open text index: %v; removing it failed: %w", err, rerr)
		}
		s.warnings = append(s.warnings, fmt.Sprintf("text index rebuilt from the records: %v", err))
		idx, err = nil, nil
	}
	if err != nil {
		aside := path + brokenSuffix + time.Now().UTC().Format("20060102T150405.000000000")
		if rerr := os.Rename(path, aside); rerr != nil {
			return textOpening{}, fmt.Errorf("open text index: %v; moving it aside failed: %w", err, rerr)
		}
		s.warnings = append(s.warnings, fmt.Sprintf("text index could not be opened (%v): moved to %s and rebuilt from the records", err, aside))
		idx = nil
		why = "it could not be opened"
	}
	if w := pruneBrokenText(path); w != "" {
		s.warnings = append(s.warnings, w)
	}
	if idx == nil {
		fresh = true
		if idx, err = s.createTextIndex(path); err != nil {
			return textOpening{}, err
		}
	}
	s.text = idx
	tightenModes(path)
	if !fresh {
		if v, err := idx.GetInternal([]byte(internalMapping)); err == nil && string(v) != mappingVersion {
			s.textOld = string(v)
			s.warnings = append(s.warnings, fmt.Sprintf("text index of mapping version %s (want %s): it serves searches, %s, while the current one is built from the records in the background", v, mappingVersion, oldNames(string(v))))
		}
	}
	return textOpening{fresh: fresh, why: why}, nil
}

// openText reconciles the text index openTextFiles opened with the
// records load read.
func (s *Store) openText(ctx context.Context, lr *loadResult, to textOpening) error {
	fresh := to.fresh
	done := s.logRebuild(fresh, to.why, len(lr.tseq))
	if err := s.reconcile(ctx, lr, fresh); err != nil {
		return err
	}
	if err := s.countIndexTokens(ctx, fresh); err != nil {
		return err
	}
	s.countNames()
	done()
	return nil
}

// logRebuild tells Options.Logger that Open builds the text index again
// from n records (fresh; why says why), which takes minutes on a large
// store (100k memories: 417 s against 13 s for an Open with nothing to
// rebuild, on a loaded 2-core machine; docs/benchmarks.md, exp-rank2): a
// daemon answers nobody meanwhile. (An index of an older version that
// can serve is rebuilt in the background instead: upgrade.go.) The
// returned func logs that it is done and how long it took.
func (s *Store) logRebuild(fresh bool, why string, n int) func() {
	log := s.opts.Logger
	if log == nil || !fresh || n == 0 {
		return func() {}
	}
	start := time.Now()
	log.Warn("building the text index again from the records; the store opens when it is done", "why", why, "memories", n, "dir", s.dir)
	return func() {
		log.Info("text index built", "memories", n, "took", time.Since(start).Round(time.Millisecond))
	}
}

// brokenSuffix, then the time in UTC (a name that sorts by time), names a
// text index Open could not open and moved aside.
const brokenSuffix = ".broken-"

// pruneBrokenText removes every text index moved aside beside path but
// the newest: each can be as big as the index, and a store that keeps
// failing would pile them up. One is kept for a post-mortem (the records
// file holds everything it held: it is never needed to recover). It
// returns a warning when one could not be removed, else "".
func pruneBrokenText(path string) string {
	old, err := filepath.Glob(path + brokenSuffix + "*")
	if err != nil || len(old) < 2 {
		return ""
	}
	slices.Sort(old)
	var failed []string
	for _, p := range old[:len(old)-1] {
		if err := os.RemoveAll(p); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", p, err))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return "could not remove old text indexes moved aside: " + strings.Join(failed, "; ")
}

// textNewSuffix names the folder a new text index is built in before it
// is renamed into place.
const textNewSuffix = ".new"

// createTextIndex makes a new, empty text index at path. bleve writes its
// metadata, then its mapping, then we add ours, and with unsafe_batch
// they reach the disk later still: a kill in between would leave an index
// that fails to open and reads as damaged (moved aside, with a warning,
// at the next Open). So the index is made in a folder beside path, closed
// once on disk and renamed into place; a leftover of a kill is removed.
func (s *Store) createTextIndex(path string) (bleve.Index, error) {
	tmp := path + textNewSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("create text index %s: %w", path, err)
	}
	// Without unsafe_batch, so that every write waits until it is on disk
	// and Close leaves a complete index.
	cfg := textConfig()
	delete(cfg, "unsafe_batch")
	idx, err := bleve.NewUsing(tmp, s.tmap, bleve.Config.DefaultIndexType, bleve.Config.DefaultKVStore, cfg)
	if err != nil {
		return nil, fmt.Errorf("create text index %s: %w", path, err)
	}
	err = idx.SetInternal([]byte(internalMapping), []byte(mappingVersion))
	if cerr := idx.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, fmt.Errorf("create text index %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	idx, err = bleve.OpenUsing(path, textConfig())
	if err != nil {
		return nil, fmt.Errorf("open the new text index %s: %w", path, err)
	}
	return idx, nil
}

// tightenModes makes the text index's files private (bleve writes
// index_meta.json world-readable).
func tightenModes(path string) {
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if d.Type().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
				_ = os.Chmod(p, 0o600)
			} else if d.IsDir() && fi.Mode().Perm()&0o077 != 0 {
				_ = os.Chmod(p, 0o700)
			}
		}
		return nil
	})
}

// openTextIndex opens an existing index and checks it can be read; (nil,
// nil) when there is none. A damaged index makes bleve (and the bbolt
// file inside it) panic rather than fail: that is an error here too. So
// is a fault reading the bbolt file's memory map (a damaged page that
// points past the file, as a freelist count can): with SetPanicOnFault
// this goroutine panics on it instead of the process dying.
func (s *Store) openTextIndex(path string) (idx bleve.Index, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("damaged: %v", v)
			if idx != nil {
				closeQuietly(idx)
				idx = nil
			}
		}
	}()
	idx, err = bleve.OpenUsing(path, textConfig())
	if err != nil {
		return nil, err
	}
	v, err := idx.GetInternal([]byte(internalMapping))
	if err == nil && string(v) != mappingVersion && !servableMapping(string(v)) {
		err = fmt.Errorf("%w: version %q, want %q", errOldMapping, v, mappingVersion)
	}
	if err == nil {
		err = checkTextIndex(idx)
	}
	if err != nil {
		closeQuietly(idx)
		return nil, err
	}
	return idx, nil
}

// checkTextIndex reads every segment of the index once: the watermark,
// the document count, and a search matching every document, with the
// stored seq of the first ones (what reconciliation reads).
func checkTextIndex(idx bleve.Index) error {
	if _, err := idx.GetInternal([]byte(internalWatermark)); err != nil {
		return err
	}
	n, err := idx.DocCount()
	if err != nil {
		return err
	}
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 16, 0, false)
	req.Fields = []string{fieldSeq}
	res, err := idx.Search(req)
	if err != nil {
		return err
	}
	if res.Total != n {
		return fmt.Errorf("%d documents counted, %d found", n, res.Total)
	}
	return nil
}

// servableMapping reports whether an index of mapping version v, older
// than this build's, can serve searches while the store builds the
// current one in the background (upgradeText): version 1 lacks only the
// names field, which its own mapping, stored in it, leaves out of the
// documents written meanwhile; a search's name terms find nothing in it,
// its words rank as before the upgrade. Version 2 has the mapping of
// this build and lacks only the names written inside punctuation marks
// (“--export-gcode”) in the documents written before the upgrade: a
// search's name terms find the others.
func servableMapping(v string) bool {
	return v == "1" || v == "2"
}

// oldNames says what an index of servable mapping version v
// (servableMapping) serves of the names field.
func oldNames(v string) string {
	if v == "1" {
		return "without the names"
	}
	return "without the names written inside punctuation marks"
}

// errOldMapping is openTextIndex's error for an index built with another
// version of newTextMapping than this one (mappingVersion).
var errOldMapping = errors.New("text index mapping of another version")

// closeQuietly closes a damaged index, whose Close may panic too.
func closeQuietly(idx bleve.Index) {
	defer func() { _ = recover() }()
	_ = idx.Close()
}

// reconcile brings the text index in line with the records: every record
// written after the index's watermark is re-indexed, every tombstone after
// it deleted; if the document count still differs, every document's seq is
// compared with its record's.
func (s *Store) reconcile(ctx context.Context, lr *loadResult, fresh bool) error {
	var w uint64
	if !fresh {
		v, err := s.text.GetInternal([]byte(internalWatermark))
		if err != nil {
			return fmt.Errorf("read text index watermark: %w", err)
		}
		w = getU64(v)
	}
	var ids, dels []string
	for id, t := range lr.tseq {
		if fresh || t > w {
			ids = append(ids, id)
		}
	}
	if !fresh {
		for id, sq := range lr.dels {
			if _, live := lr.tseq[id]; sq > w && !live {
				dels = append(dels, id)
			}
		}
	}
	sort.Strings(ids)
	if err := s.reindex(ctx, ids, dels, true); err != nil {
		return err
	}
	s.repaired = len(ids) + len(dels)

	dc, err := s.text.DocCount()
	if err != nil {
		return fmt.Errorf("text index document count: %w", err)
	}
	if int(dc) != len(lr.tseq) {
		n, err := s.fullReconcile(ctx, lr)
		if err != nil {
			return err
		}
		s.repaired += n
	}
	return s.pruneTombstones(lr.dels, w, fresh)
}

// pruneTombstones deletes the tombstones the persisted text index already
// reflects (at or below its watermark w, or every one when the index was
// built afresh): they are no longer needed. It writes only when there is
// one to delete, so that opening a store with nothing to do commits no
// transaction (a write and an fsync of the records file at every start,
// and a damaged file is left as it was found: see initMeta).
func (s *Store) pruneTombstones(dels map[string]uint64, w uint64, fresh bool) error {
	var stale [][]byte
	for id, sq := range dels {
		if fresh || sq <= w {
			stale = append(stale, []byte(id))
		}
	}
	if len(stale) == 0 {
		return nil
	}
	return s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDels)
		for _, id := range stale {
			if err := b.Delete(id); err != nil {
				return err
			}
		}
		return nil
	})
}

// reindex (re)indexes the records ids from bbolt and deletes dels, in
// chunks; the last batch (if final) sets the watermark to the store's seq.
func (s *Store) reindex(ctx context.Context, ids, dels []string, final bool) error {
	for start := 0; start < len(ids) || (start == 0 && len(dels) > 0); start += reindexChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		end := min(start+reindexChunk, len(ids))
		b := s.text.NewBatch()
		err := s.indexRecords(b, ids[start:end])
		if err != nil {
			return fmt.Errorf("reindex text: %w", err)
		}
		if start == 0 {
			for _, id := range dels {
				b.Delete(id)
			}
		}
		if final && end >= len(ids) {
			b.SetInternal([]byte(internalWatermark), u64(s.seq))
		}
		if err := s.text.Batch(b); err != nil {
			return fmt.Errorf("reindex text: %w", err)
		}
		if end >= len(ids) {
			break
		}
	}
	if final {
		s.textLast = s.seq
	}
	return nil
}

// fullReconcile compares every text-index document's stored seq with its
// record's and repairs the differences; it returns how many it repaired.
func (s *Store) fullReconcile(ctx context.Context, lr *loadResult) (int, error) {
	have := make(map[string]uint64, len(lr.tseq))
	var after []string
	for {
		req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 10000, 0, false)
		req.Fields = []string{fieldSeq}
		req.SortBy([]string{"_id"})
		req.Score = "none"
		if after != nil {
			req.SearchAfter = after
		}
		res, err := s.text.SearchInContext(ctx, req)
		if err != nil {
			return 0, fmt.Errorf("scan text index: %w", err)
		}
		for _, h := range res.Hits {
			var sq uint64
			if v, ok := h.Fields[fieldSeq].(string); ok {
				sq, _ = strconv.ParseUint(v, 10, 64)
			}
			have[h.ID] = sq
		}
		if len(res.Hits) < 10000 {
			break
		}
		after = []string{res.Hits[len(res.Hits)-1].ID}
	}
	var ids, dels []string
	for id, t := range lr.tseq {
		if sq, ok := have[id]; !ok || sq != t {
			ids = append(ids, id)
		}
	}
	for id := range have {
		if _, ok := lr.tseq[id]; !ok {
			dels = append(dels, id)
		}
	}
	sort.Strings(ids)
	if err := s.reindex(ctx, ids, dels, true); err != nil {
		return 0, err
	}
	return len(ids) + len(dels), nil
}

// textPut is one record to (re)index after a committed write.
type textPut struct {
	m    *memory.Memory
	tseq uint64
}

// indexRecords adds to b, from one read transaction, each record of ids
// as it is stored now: its document, or a delete when it is gone. A record
// that does not decode is passed by (skipped by every read, counted by
// stats).
func (s *Store) indexRecords(b *bleve.Batch, ids []string) error {
	return s.view(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		for _, id := range ids {
			v := recs.Get([]byte(id))
			if v == nil {
				b.Delete(id)
				continue
			}
			h, m, err := decodeRecord(v)
			if err != nil {
				continue
			}
			if err := b.Index(id, textDoc(&m, h.tseq)); err != nil {
				return fmt.Errorf("index %s: %w", id, err)
			}
		}
		return nil
	})
}

// indexText applies committed writes to the text index, with any ids left
// pending by an earlier failure, and advances the watermark to seq, the
// store's sequence number once they are published. Called with s.wmu
// held, after the commit and before the writes are published in memory
// (publish.go).
func (s *Store) indexText(puts []textPut, dels []string, seq uint64) error {
	if len(puts) == 0 && len(dels) == 0 && len(s.pending) == 0 {
		return nil
	}
	b := s.text.NewBatch()
	if len(s.pending) > 0 {
		err := s.indexRecords(b, slices.Collect(maps.Keys(s.pending)))
		if err != nil {
			s.addPending(puts, dels)
			return fmt.Errorf("%w: %v", ErrIndexPending, err)
		}
	}
	for _, p := range puts {
		if err := b.Index(p.m.ID, textDoc(p.m, p.tseq)); err != nil {
			s.addPending(puts, dels)
			return fmt.Errorf("%w: %v", ErrIndexPending, err)
		}
	}
	for _, id := range dels {
		b.Delete(id)
	}
	b.SetInternal([]byte(internalWatermark), u64(seq))
	if err := s.text.Batch(b); err != nil {
		s.addPending(puts, dels)
		return fmt.Errorf("%w: %v", ErrIndexPending, err)
	}
	clear(s.pending)
	s.textLast = seq
	return nil
}

func (s *Store) addPending(puts []textPut, dels []string) {
	for _, p := range puts {
		s.pending[p.m.ID] = struct{}{}
	}
	for _, id := range dels {
		s.pending[id] = struct{}{}
	}
}

// flushText writes the watermark and waits until the text index has
// persisted everything, so a clean Close needs no repair at the next Open.
func (s *Store) flushText() error {
	if err := s.indexText(nil, nil, s.seq); err != nil {
		return err
	}
	b := s.text.NewBatch()
	b.SetInternal([]byte(internalWatermark), u64(s.seq))
	b.SetInternal([]byte(internalTokens), s.tokensKey())
	if v := s.nameCountsValue(); v != nil {
		b.SetInternal([]byte(internalNames), v)
	}
	done := make(chan error, 1)
	b.SetPersistedCallback(func(err error) {
		select {
		case done <- err:
		default:
		}
	})
	if err := s.text.Batch(b); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("timed out waiting for the text index to persist")
	}
}

// Analyze returns the terms the text index makes of text, in order,
// duplicates kept: the English analyzer (lowercase, English stop words
// removed, Porter stemming). Text past 1 MiB is ignored.
func (s *Store) Analyze(text string) []string {
	if len(text) > maxAnalyzeBytes {
		text = text[:maxAnalyzeBytes]
	}
	ts, err := s.tmap.AnalyzeText(en.AnalyzerName, []byte(text))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, string(t.Term))
	}
	return out
}

// DocFreq returns, for each term (already analysed, as Analyze returns
// them), the number of stored memories whose text contains it. Unknown
// terms map to 0.
func (s *Store) DocFreq(ctx context.Context, terms []string) (map[string]int, error) {
	return s.fieldDocFreq(ctx, fieldText, terms)
}

// NameDocFreq returns, for each name (as memory.NameTerms writes it:
// "-a", "./out"), the number of stored memories whose text writes it.
// Unknown names map to 0.
func (s *Store) NameDocFreq(ctx context.Context, names []string) (map[string]int, error) {
	return s.fieldDocFreq(ctx, fieldNames, names)
}

// fieldDocFreq returns, for each term, the number of documents whose
// field holds it.
func (s *Store) fieldDocFreq(ctx context.Context, field string, terms []string) (map[string]int, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	s.textMu.RLock()
	defer s.textMu.RUnlock()
	ai, err := s.text.Advanced()
	if err != nil {
		return nil, fmt.Errorf("doc freq: %w", err)
	}
	r, err := ai.Reader()
	if err != nil {
		return nil, fmt.Errorf("doc freq: %w", err)
	}
	defer r.Close()
	out := make(map[string]int, len(terms))
	for _, t := range terms {
		if _, ok := out[t]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tfr, err := r.TermFieldReader(ctx, []byte(t), field, false, false, false)
		if err != nil {
			return nil, fmt.Errorf("doc freq %q: %w", t, err)
		}
		out[t] = int(tfr.Count())
		_ = tfr.Close()
	}
	return out, nil
}

// textFilterQuery is the part of f the text index can apply itself;
// reach is reachQuery's for f.Projects (nil: applied after bleve).
func textFilterQuery(f *Filter, reach query.Query) query.Query {
	var conj []query.Query
	if f.Project != "" {
		q := bleve.NewTermQuery(f.Project)
		q.SetField(fieldProject)
		conj = append(conj, q)
	}
	if reach != nil {
		conj = append(conj, reach)
	}
	if len(f.Kinds) > 0 {
		var dis []query.Query
		for _, k := range f.Kinds {
			q := bleve.NewTermQuery(string(k))
			q.SetField(fieldKind)
			dis = append(dis, q)
		}
		conj = append(conj, bleve.NewDisjunctionQuery(dis...))
	}
	if f.Source != "" {
		if f.sourcePrefix() {
			q := bleve.NewPrefixQuery(f.Source)
			q.SetField(fieldSource)
			conj = append(conj, q)
		} else {
			q := bleve.NewTermQuery(f.Source)
			q.SetField(fieldSource)
			conj = append(conj, q)
		}
	}
	if len(conj) == 0 {
		return nil
	}
	if len(conj) == 1 {
		return conj[0]
	}
	return bleve.NewConjunctionQuery(conj...)
}

// maxReachIDs is the share of the store above which reachQuery leaves
// the memories of no project and of Filter.PlusTypes to the filter after
// bleve: so many ids cost bleve more than the few candidates they rule
// out.
const maxReachIDs = 0.25

// reachQuery is f.Projects (and PlusTypes) as a text index query: its
// named projects by their project field, the memories of no project ("")
// and of PlusTypes by id, read from the entries. Without Projects, or
// when those ids are more than maxReachIDs of the store, it returns nil
// and the filter applies after bleve alone; none says nothing is in reach.
func (s *Store) reachQuery(f *Filter) (q query.Query, none bool) {
	if len(f.Projects) == 0 {
		return nil, false
	}
	var dis []query.Query
	for _, p := range f.Projects {
		if p != "" {
			tq := bleve.NewTermQuery(p)
			tq.SetField(fieldProject)
			dis = append(dis, tq)
		}
	}
	if noProject := slices.Contains(f.Projects, ""); noProject || len(f.PlusTypes) > 0 {
		var ids []string
		s.mu.RLock()
		limit := int(maxReachIDs * float64(len(s.entries)))
		if s.vec.count() == len(s.entries) {
			ids = s.vec.looseIDs(noProject, f.NoProjectBut, f.PlusTypes, limit) // the rows' fields: no map walk
		} else {
			for id, e := range s.entries {
				if (noProject && e.project == "" && !slices.Contains(f.NoProjectBut, e.source)) || slices.Contains(f.PlusTypes, e.typ) {
					if ids = append(ids, id); len(ids) > limit {
						break
					}
				}
			}
		}
		s.mu.RUnlock()
		if len(ids) > limit {
			return nil, false
		}
		if len(ids) > 0 {
			dis = append(dis, bleve.NewDocIDQuery(ids))
		}
	}
	switch len(dis) {
	case 0:
		return nil, true
	case 1:
		return dis[0], false
	}
	return bleve.NewDisjunctionQuery(dis...), false
}

// Term is one analysed term of a text query (as Analyze returns them) and
// its weight in the BM25 score: a memory's score is the sum over the terms
// it contains of Boost x the term's BM25 score.
type Term struct {
	Text  string
	Boost float64
	// Name makes Text a term of the names a memory writes by their form
	// (memory.NameTerms: "--firmware", as written and lowercased) rather
	// than an analysed word.
	Name bool
}

// TextSearchTerms returns up to n memories matching f ranked by BM25
// against the query terms, best first: terms as Analyze makes them from
// free text, each with its weight (e.g. a query expanded with synonyms at a
// lower weight), OR-ed. A term repeated keeps its first weight; at most
// 1024 distinct terms are used; weights must be finite and positive. No
// term returns nothing.
func (s *Store) TextSearchTerms(ctx context.Context, qterms []Term, n int, f Filter) ([]Scored, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := checkSearchArgs(n, &f); err != nil {
		return nil, fmt.Errorf("text search: %w", err)
	}
	seen := make(map[string]bool)
	var terms []query.Query
	for _, t := range qterms {
		if !(t.Boost > 0) || math.IsInf(t.Boost, 1) || !utf8.ValidString(t.Text) {
			return nil, fmt.Errorf("text search: %w", &memory.ValidationError{Problems: []string{fmt.Sprintf("term %q: weight %v (want finite and positive, text UTF-8)", t.Text, t.Boost)}})
		}
		key := t.Text
		if t.Name {
			key = "\x00" + key // a name and a word of the same text are two terms
		}
		if t.Text == "" || seen[key] || len(terms) >= maxQueryTerms {
			continue
		}
		seen[key] = true
		tq := bleve.NewTermQuery(t.Text)
		tq.SetField(fieldText)
		if t.Name {
			tq.SetField(fieldNames)
		}
		if t.Boost != 1 {
			tq.SetBoost(t.Boost)
		}
		terms = append(terms, tq)
	}
	if len(terms) == 0 {
		return nil, nil
	}
	reach, none := s.reachQuery(&f)
	if none {
		return nil, nil
	}
	var bq query.Query = bleve.NewDisjunctionQuery(terms...)
	if fq := textFilterQuery(&f, reach); fq != nil {
		b := bleve.NewBooleanQuery()
		b.AddMust(bq)
		b.AddFilter(fq)
		bq = b
	}
	now := s.now().UnixNano()
	s.textMu.RLock()
	defer s.textMu.RUnlock()
	stats, err := s.bm25Stats()
	if err != nil {
		return nil, fmt.Errorf("text search: %w", err)
	}
	k := firstFetch(n, &f, reach != nil)
	for {
		req := bleve.NewSearchRequestOptions(bq, k, 0, false)
		req.PreSearchData = map[string]interface{}{search.BM25PreSearchDataKey: stats}
		res, err := s.text.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("text search: %w", err)
		}
		out := make([]Scored, 0, min(len(res.Hits), n))
		s.mu.RLock()
		for _, h := range res.Hits {
			if e, ok := s.entries[h.ID]; ok && f.match(e, now) {
				out = append(out, Scored{ID: h.ID, Score: roundScore(h.Score)})
			}
		}
		s.mu.RUnlock()
		sortScored(out)
		more := len(res.Hits) == k && uint64(k) < res.Total
		// bleve orders equal scores by where the documents sit in its
		// segments, which changes from run to run: when the n-th best
		// ties with the last hit fetched, the tie may go on past it, so
		// fetch on until it ends and break it by id (sortScored).
		if more && (len(out) < n || roundScore(res.Hits[len(res.Hits)-1].Score) >= out[n-1].Score) {
			k *= 4
			continue
		}
		return out[:min(len(out), n)], nil
	}
}

// MaxResults is the most results VectorSearch and TextSearchTerms return.
const MaxResults = 10000

func checkSearchArgs(n int, f *Filter) error {
	if n < 1 || n > MaxResults {
		return &memory.ValidationError{Problems: []string{fmt.Sprintf("n must be within 1..%d", MaxResults)}}
	}
	return f.validate()
}

// firstFetch is how many candidates the text leg asks bleve for at first:
// bleve applies project, kinds and source itself, and Projects when
// reachQuery could (inBleve); a few snoozed or superseded ones may drop out
// after, and a time range or Projects applied after bleve drop more.
func firstFetch(n int, f *Filter, inBleve bool) int {
	if f.Since.IsZero() && f.Until.IsZero() && (len(f.Projects) == 0 || inBleve) {
		return n + n/4 + 4
	}
	return 2*n + 16
}
