package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// FormatVersion is the on-disk format this package writes. A store whose
// meta names a higher version is refused with memory.ErrNewerFormat.
const FormatVersion = 1

// File names inside Options.Dir.
const (
	dbFile   = "memtray.db"  // bbolt: the store of record
	textDir  = "text.bleve"  // bleve: the BM25 index
	pidFile  = "memtray.pid" // pid of the process holding the lock
	maxDim   = 8192
	maxModel = 256
)

// ErrIndexPending is wrapped by a write's error when the record was stored
// durably but updating the text index failed; the index catches up at the
// next write or at the next Open. The returned record is valid.
var ErrIndexPending = errors.New("record stored, but the text index lags behind")

var (
	bucketMeta  = []byte("meta")
	bucketRecs  = []byte("recs")
	bucketHash  = []byte("hash")
	bucketOrder = []byte("order")
	bucketDels  = []byte("dels")
	bucketStage = []byte("stage")
	bucketTrash = []byte("trash") // trashed records: see trash.go

	keyFormat     = []byte("format")
	keyModel      = []byte("model")
	keyDim        = []byte("dim")
	keySeq        = []byte("seq")
	keyCount      = []byte("count") // number of records: a capacity hint for Open, not authoritative
	keyStageModel = []byte("stage_model")
	keyStageDim   = []byte("stage_dim")
)

// Store is an open memtray memory store. It is safe for concurrent use by
// the goroutines of the one process that owns it.
type Store struct {
	dir   string
	opts  Options
	clock memory.Clock
	db    *bolt.DB

	wmu       sync.Mutex // serialises writes: bbolt commit, then bleve, then in-memory state (publish.go)
	reembedMu sync.Mutex // one Reembed at a time
	remote    bool       // ApplyTeam is writing (s.wmu held): nothing goes to the outbox
	// namesSavedAt is the seq the stored name counts (internalNames) were
	// written at, 0 when there are none: Close writes them again only
	// when writes came since. Set by Open, read by Close (s.wmu held).
	namesSavedAt uint64

	mu     sync.RWMutex // guards the fields below
	closed bool
	model  string
	dim    int
	seq    uint64     // the last write published (setSeq)
	pub    *sync.Cond // on s.mu's read lock: broadcast when seq advances or the store closes (publish.go)
	// abandoned is the highest seq a failed commit may have shown readers
	// (abandonVisible): reads stop waiting for it.
	abandoned uint64
	entries   map[string]*entry
	intern    interner
	vec       *vectorIndex
	warnings  []string
	repaired  int
	damaged   []string // records whose stored vector Open found damaged (RepairVectors)
	// unreadable holds the records Open could not decode (skipped with a
	// warning). It is set by load and only ever replaced after (a team
	// pull that replaced or deleted one: forgetUnreadable), never changed
	// in place, so the read paths consult it without a lock
	// (unreadableSet): a record that fails to decode and is in it is
	// skipped as Open skipped it (see skipUnreadable).
	unreadable atomic.Pointer[map[string]struct{}]
	// badTrash holds the trash entries found unreadable (at Open, or by
	// a listing since), replaced as unreadable is (trashbad.go).
	badTrash atomic.Pointer[map[string]struct{}]

	// textMu guards the text index's handle for the reads that do not
	// hold s.wmu (searches, DocFreq, a live check's snapshot): held for
	// reading while they use it, for writing (with s.wmu) only while
	// RebuildText swaps in the index it built.
	textMu   sync.RWMutex
	text     bleve.Index
	rebuild  sync.Mutex // one RebuildText at a time
	tmap     *mapping.IndexMappingImpl
	pending  map[string]struct{} // ids whose text-index update failed; retried with the next batch
	textLast uint64              // watermark last written to bleve
	bm25     bm25Cache           // the text index's BM25 statistics (bm25stats.go)
	tokens   int                 // tokens of every entry's text (bm25stats.go)
	names    int                 // names of every entry's text, as the names field counts them (bm25stats.go)
	// textOld is the mapping version of the index Open found when it is
	// an older one that serves meanwhile (servableMapping), "" otherwise;
	// upgrade is the background rebuild that replaces it (upgrade.go).
	textOld string
	upgrade textUpgrade

	// afterCommit, when set (by tests), is called by every write path
	// once its bbolt commit returned, before anything of it is published.
	afterCommit func()
}

// validate checks Options.
func (o *Options) validate() error {
	var problems []string
	if strings.TrimSpace(o.Dir) == "" {
		problems = append(problems, "store directory is empty")
	}
	if o.Dim < 0 || o.Dim > maxDim {
		problems = append(problems, fmt.Sprintf("embedding dimension %d is out of range 1..%d", o.Dim, maxDim))
	}
	if (o.Model == "") != (o.Dim == 0) {
		problems = append(problems, "embedding model and dimension must be given together")
	}
	if len(o.Model) > maxModel || !memory.ValidUTF8(o.Model) {
		problems = append(problems, "embedding model name is too long or not UTF-8")
	}
	if o.LockTimeout < 0 {
		problems = append(problems, "lock timeout is negative")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// Open opens the store in opts.Dir, creating it if needed (directory mode
// 0700, files 0600). It takes the store's lock (a second process gets an
// error wrapping memory.ErrLocked naming the owner's pid within
// opts.LockTimeout), checks the format version (memory.ErrNewerFormat) and
// the embedding model (memory.ErrModelMismatch), loads the vector index from
// the records and reconciles the text index with them. An unopenable text
// index is moved aside and rebuilt; Info().Warnings says so. A damaged
// records file is refused with a *DamagedError (errors.Is ErrDamaged)
// naming it and left unchanged: see openBolt and guardFault (records.go).
//
// Opening with an empty Model and zero Dim accepts the store's recorded
// model; creating a store needs both.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open store: create directory: %w", err)
	}
	timeout := opts.LockTimeout
	if timeout == 0 {
		timeout = time.Second
	}
	db, err := openBolt(filepath.Join(dir, dbFile), &bolt.Options{
		Timeout:      timeout,
		FreelistType: bolt.FreelistMapType,
	})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, lockedError(dir)
		}
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	// We hold the lock: record who we are for the next one who asks.
	_ = os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600)

	s := &Store{
		dir: dir, opts: opts, clock: opts.Clock, db: db,
		entries: make(map[string]*entry), intern: make(interner), pending: make(map[string]struct{}),
	}
	s.pub = sync.NewCond(s.mu.RLocker())
	if s.clock == nil {
		s.clock = memory.SystemClock{}
	}
	if w := metaWarning(filepath.Join(dir, dbFile)); w != "" {
		s.warnings = append(s.warnings, w)
	}
	fail := func(err error) (*Store, error) {
		if s.text != nil {
			_ = s.text.Close()
		}
		_ = os.Remove(filepath.Join(dir, pidFile))
		outboxStores.Delete(db)
		_ = db.Close()
		return nil, err
	}
	if err := s.initMeta(); err != nil {
		return fail(err)
	}
	if opts.Shared != nil {
		outboxStores.Store(db, s)
	}
	to, err := s.openTextFiles()
	if err != nil {
		return fail(err)
	}
	toIndex, err := s.load(ctx, to.fresh)
	if err != nil {
		return fail(err)
	}
	if err := s.openText(ctx, toIndex, to); err != nil {
		return fail(err)
	}
	if s.textOld != "" {
		s.startTextUpgrade()
	}
	return s, nil
}

// lockedError names the pid that holds the store, as far as it is known.
func lockedError(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	pid := strings.TrimSpace(string(b))
	if err != nil || pid == "" {
		return fmt.Errorf("open store %s: %w (owner pid unknown)", dir, memory.ErrLocked)
	}
	if _, err := strconv.Atoi(pid); err != nil {
		return fmt.Errorf("open store %s: %w (owner pid unknown)", dir, memory.ErrLocked)
	}
	return fmt.Errorf("open store %s: %w (pid %s)", dir, memory.ErrLocked, pid)
}

// storeBuckets are the buckets every store has.
var storeBuckets = [][]byte{bucketMeta, bucketRecs, bucketHash, bucketOrder, bucketDels, bucketStage, bucketTrash}

// initMeta creates the buckets of a new store and checks an existing one's
// format version and model. It reads first and writes only when there is
// something to write (a new store, a missing bucket, an empty store
// adopting another model): opening an existing store with its own model
// leaves the records file untouched, so a damaged file that Open then
// refuses (load) is left as it was found.
func (s *Store) initMeta() error {
	var write bool
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		write, err = s.readMeta(tx)
		return err
	})
	if err != nil || !write {
		return damagedAt(s.dir, err)
	}
	return damagedAt(s.dir, s.update(func(tx *bolt.Tx) error {
		for _, b := range storeBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("open store %s: create bucket %s: %w", s.dir, b, err)
			}
		}
		meta := tx.Bucket(bucketMeta)
		if meta.Get(keyFormat) == nil {
			s.model, s.dim, s.seq = s.opts.Model, s.opts.Dim, 0
			return putMeta(meta, s.model, s.dim, 0, true)
		}
		if s.opts.Model == "" || (s.opts.Model == s.model && s.opts.Dim == s.dim) {
			return nil
		}
		if k, _ := tx.Bucket(bucketRecs).Cursor().First(); k != nil {
			return nil // AllowModelChange: readMeta let it through
		}
		// Nothing to mix with: the store adopts the new model.
		s.model, s.dim = s.opts.Model, s.opts.Dim
		_ = tx.DeleteBucket(bucketStage)
		if _, err := tx.CreateBucket(bucketStage); err != nil {
			return err
		}
		_ = meta.Delete(keyStageModel)
		_ = meta.Delete(keyStageDim)
		return putMeta(meta, s.model, s.dim, s.seq, false)
	}))
}

// damagedAt names the store in err when it is a *DamagedError (the
// errors initMeta makes itself name it already).
func damagedAt(dir string, err error) error {
	if errors.Is(err, ErrDamaged) {
		return fmt.Errorf("open store %s: %w", dir, err)
	}
	return err
}

// readMeta checks an existing store's format version and model and reads
// them into s; it says whether initMeta has something to write.
func (s *Store) readMeta(tx *bolt.Tx) (write bool, err error) {
	meta := tx.Bucket(bucketMeta)
	var fv uint64
	if meta != nil {
		if v := meta.Get(keyFormat); v != nil {
			fv = getU64(v)
			if fv > FormatVersion {
				return false, fmt.Errorf("open store %s: format version %d: %w (this build reads up to %d)",
					s.dir, fv, memory.ErrNewerFormat, FormatVersion)
			}
			if fv == 0 {
				return false, fmt.Errorf("open store %s: meta has a corrupt format version", s.dir)
			}
		}
	}
	for _, b := range storeBuckets {
		if tx.Bucket(b) == nil {
			write = true
		}
	}
	if fv == 0 {
		if s.opts.Model == "" {
			return false, fmt.Errorf("open store %s: a new store needs an embedding model and dimension: %w", s.dir, memory.ErrInvalid)
		}
		return true, nil
	}
	s.model = string(meta.Get(keyModel))
	s.dim = int(getU64(meta.Get(keyDim)))
	s.seq = getU64(meta.Get(keySeq))
	if sm := meta.Get(keyStageModel); sm != nil {
		s.warnings = append(s.warnings, fmt.Sprintf("%s to model %q: run `memtray reindex` with that model to resume", stageWarningPrefix, sm))
	}
	if s.dim <= 0 || s.dim > maxDim {
		return false, fmt.Errorf("open store %s: meta records a corrupt dimension %d", s.dir, s.dim)
	}
	if s.opts.Model == "" || (s.opts.Model == s.model && s.opts.Dim == s.dim) {
		return write, nil
	}
	if recs := tx.Bucket(bucketRecs); recs == nil {
		return true, nil
	} else if k, _ := recs.Cursor().First(); k == nil {
		return true, nil // empty: adopts the new model
	}
	if s.opts.AllowModelChange {
		return write, nil
	}
	return false, fmt.Errorf("open store %s: it holds vectors of model %q (%d dims), opened with %q (%d dims): %w; run `memtray reindex` to re-embed",
		s.dir, s.model, s.dim, s.opts.Model, s.opts.Dim, memory.ErrModelMismatch)
}

func putMeta(meta *bolt.Bucket, model string, dim int, seq uint64, withFormat bool) error {
	if withFormat {
		if err := meta.Put(keyFormat, u64(FormatVersion)); err != nil {
			return err
		}
	}
	if err := meta.Put(keyModel, []byte(model)); err != nil {
		return err
	}
	if err := meta.Put(keyDim, u64(uint64(dim))); err != nil {
		return err
	}
	return meta.Put(keySeq, u64(seq))
}

// load reads every record into the in-memory entries (with List's columns)
// and vector index and returns the ids whose text-index state must be
// checked against bleve's watermark (all of them, with their tseq), plus
// tombstones.
// A fresh text index holds no name counts: every record's are counted.
func (s *Store) load(ctx context.Context, freshText bool) (*loadResult, error) {
	lr := &loadResult{tseq: make(map[string]uint64), dels: make(map[string]uint64)}
	vec, err := newVectorIndex(s.dim)
	if err != nil {
		return nil, err
	}
	s.vec = vec
	err = s.view(func(tx *bolt.Tx) error {
		hint := int(getU64(tx.Bucket(bucketMeta).Get(keyCount)))
		s.vec.grow(min(hint, 1<<24))
		c := tx.Bucket(bucketRecs).Cursor()
		n := 0
		pending := make([]pendingList, 0, min(hint, 1<<24))
		var savedNames []byte
		if !freshText {
			if savedNames, err = s.text.GetInternal([]byte(internalNames)); err != nil {
				return fmt.Errorf("read name counts: %w", err)
			}
		}
		s.namesSavedAt = savedNamesSeq(savedNames)
		names := newNameCounts(savedNames)
		uncounted := 0       // records whose names count is not stored
		var damaged []string // records whose vector is left out of the index as damaged
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			id := string(k)
			h, js, emb, err := splitRecord(v, s.intern)
			if err == nil {
				e := entryFromHeader(h, s.intern)
				s.entries[id] = e
				count := names.lookup(k, h.tseq)
				if count < 0 {
					uncounted++
				}
				pending = append(pending, pendingList{id: id, e: e, js: js, names: count})
				lr.tseq[id] = h.tseq
				if s.vec.addPacked(id, emb, e) == vecDamaged {
					damaged = append(damaged, id)
				}
				continue
			}
			s.skipUnreadableOnOpen(id, err)
		}
		s.damaged = damaged
		if uncounted > 0 {
			s.namesSavedAt = 0 // Close stores them all again
		}
		// List's columns are in the records' JSON, which aliases bbolt's
		// map: decode them before the transaction ends. A record whose
		// JSON does not decode is unreadable as a whole (every read
		// decodes it): out it goes again.
		for _, b := range fillListFields(pending) {
			s.dropUnreadableOnOpen(b.id, b.err, lr)
		}
		if w := damagedVectorWarning(s.damaged, s.dim); w != "" {
			s.warnings = append(s.warnings, w)
		}
		// The vector rows were made before the entries had their type
		// (Filter.PlusTypes reads it from the row).
		for _, p := range pending {
			if _, bad := s.unreadableSet()[p.id]; !bad {
				s.vec.setMeta(p.id, p.e)
			}
		}
		if err := s.loadBadTrash(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketDels).ForEach(func(k, v []byte) error {
			lr.dels[string(k)] = getU64(v)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("open store %s: load records: %w", s.dir, err)
	}
	return lr, nil
}

// skipUnreadableOnOpen records that load could not decode record id
// (err says why): it is left out of every index and every read, with a
// warning naming it; its bytes are left as they are (`memtray doctor
// --salvage` is the repair).
func (s *Store) skipUnreadableOnOpen(id string, err error) {
	set := maps.Clone(s.unreadableSet())
	if set == nil {
		set = make(map[string]struct{})
	}
	set[id] = struct{}{}
	s.unreadable.Store(&set)
	s.warnings = append(s.warnings, fmt.Sprintf("%s (%v): skipped", unreadableWarningPrefix(id), err))
}

// dropUnreadableOnOpen is skipUnreadableOnOpen for a record load had
// already entered (its header decoded, its fields did not): it is taken
// out of the entries, the vector index, the damaged-vector list and the
// text index's reconciliation again.
func (s *Store) dropUnreadableOnOpen(id string, err error, lr *loadResult) {
	delete(s.entries, id)
	delete(lr.tseq, id)
	s.vec.remove(id)
	if i := slices.Index(s.damaged, id); i >= 0 {
		s.damaged = slices.Delete(s.damaged, i, i+1)
	}
	s.skipUnreadableOnOpen(id, err)
}

// skipUnreadable says whether a read that failed to decode record id
// (with err) skips it: Open found it unreadable and skipped it too. Any
// other failure is the read's error.
func (s *Store) skipUnreadable(id []byte, err error) bool {
	if err == nil || !errors.Is(err, errCorrupt) {
		return false
	}
	_, ok := s.unreadableSet()[string(id)]
	return ok
}

// unreadableSet is the set of records Open found unreadable that are
// still stored as they were (read only; nil when there is none).
func (s *Store) unreadableSet() map[string]struct{} {
	if p := s.unreadable.Load(); p != nil {
		return *p
	}
	return nil
}

// forgetUnreadable takes ids, records Open found unreadable that a write
// has since replaced or deleted (a team pull: ApplyTeam; a user's delete:
// Delete, Batch.Trash), off the set and their warnings off Info. Called
// with s.mu held.
func (s *Store) forgetUnreadable(ids []string) {
	if len(ids) == 0 {
		return
	}
	set := maps.Clone(s.unreadableSet())
	for _, id := range ids {
		delete(set, id)
		s.warnings = slices.DeleteFunc(s.warnings, func(w string) bool {
			return strings.HasPrefix(w, unreadableWarningPrefix(id)+" (")
		})
	}
	s.unreadable.Store(&set)
}

// UnreadableCount is how many records Open could not decode and skipped
// (Info.Unreadable): the reads leave them out until `memtray doctor
// --salvage` copies what can be read into a new store.
func (s *Store) UnreadableCount() int { return len(s.unreadableSet()) }

// damagedVectorMarker is in every damaged-vector warning (and nowhere else).
const damagedVectorMarker = " a damaged vector"

// damagedVectorWarning is Open's warning about the records whose stored
// vector is damaged (a NaN or Inf component, or not dim numbers long):
// they are listed, read and found by their words, never by vector, until
// their text is embedded anew. The daemon does that at start with its
// embedder (RepairVectors); `memtray doctor --reembed-damaged` does it
// with memtray quit, and `memtray reindex` too (it embeds every memory's
// text with the configured model and replaces every vector); `memtray
// doctor` names each record. "" when there are none.
func damagedVectorWarning(ids []string, dim int) string {
	if len(ids) == 0 {
		return ""
	}
	const named = 3
	some := strings.Join(ids[:min(len(ids), named)], ", ")
	if len(ids) > named {
		some += ", …"
	}
	noun := "memories have" + damagedVectorMarker
	if len(ids) == 1 {
		noun = "memory has" + damagedVectorMarker
	}
	return fmt.Sprintf("%d %s (NaN or Inf, or not %d numbers long: %s): they are found by their words only, never by vector, "+
		"until they are embedded anew: memtray's daemon does it at start, or later while it runs once its embedder answers, "+
		"or, with memtray quit, `memtray doctor --reembed-damaged`, which names each (`memtray reindex` embeds every memory anew)", len(ids), noun, dim, some)
}

// indexVector indexes vec as id's vector after a write (s.mu held) and
// keeps the list of damaged vectors, and its warning, in step: a damaged
// vector (one a write kept as it was stored: see checkRewrite) stays out
// of the index and goes on the list; a sound one takes id off it.
func (s *Store) indexVector(id string, vec []float32, e *entry) {
	s.vec.add(id, vec, e)
	s.markDamaged(id, checkVector(vec, s.dim) != nil)
}

// unindexVector takes id out of the vector index and off the list of
// damaged vectors (s.mu held): the record is gone.
func (s *Store) unindexVector(id string) {
	s.vec.remove(id)
	s.markDamaged(id, false)
}

// markDamaged puts id on the list of records whose stored vector is
// damaged, or takes it off, and rewrites the warning about them (s.mu
// held). Nothing is done when the list already says so.
func (s *Store) markDamaged(id string, damaged bool) {
	i := slices.Index(s.damaged, id)
	if damaged == (i >= 0) {
		return
	}
	// A new slice: RepairVectors reads the list under s.mu and works on it
	// after (under s.wmu, which every writer holds, but a copy costs
	// nothing at this size).
	if damaged {
		s.damaged = append(slices.Clip(s.damaged), id)
	} else {
		s.damaged = slices.Delete(slices.Clone(s.damaged), i, i+1)
	}
	out := make([]string, 0, len(s.warnings)+1)
	for _, w := range s.warnings {
		if !strings.Contains(w, damagedVectorMarker) {
			out = append(out, w)
		}
	}
	if w := damagedVectorWarning(s.damaged, s.dim); w != "" {
		out = append(out, w)
	}
	s.warnings = out
}

// loadResult carries what load learnt to the text-index reconciliation.
type loadResult struct {
	tseq map[string]uint64 // id -> tseq of every record
	dels map[string]uint64 // tombstones: id -> seq of the delete
}

// Close flushes the text index and releases the store's files and lock.
// Calling it again is a no-op.
func (s *Store) Close() error {
	s.stopTextUpgrade()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.pub.Broadcast()
	s.mu.Unlock()
	var errs []error
	if s.text != nil {
		if err := s.flushText(); err != nil {
			errs = append(errs, fmt.Errorf("close store: flush text index: %w", err))
		}
		if err := s.text.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close store: text index: %w", err))
		}
	}
	_ = os.Remove(filepath.Join(s.dir, pidFile))
	outboxStores.Delete(s.db)
	if err := s.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close store: %w", err))
	}
	return errors.Join(errs...)
}

// errClosed is returned by every operation on a closed store.
var errClosed = errors.New("store is closed")

func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// Info describes the open store.
func (s *Store) Info() Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return Info{
		Dir: s.dir, Model: s.model, Dim: s.dim, Count: len(s.entries), Seq: s.seq,
		FormatVersion: FormatVersion, RepairedOnOpen: s.repaired, Unreadable: len(s.unreadableSet()),
		TrashUnreadable: len(s.badTrashSet()), TrashUnreadableIDs: s.badTrashIDs(),
		Warnings: append([]string(nil), s.warnings...),
	}
}

// Count returns the number of stored memories (snoozed and superseded included).
func (s *Store) Count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.entries)
}

// CountCurrent returns the number of current memories: what a list shows
// by default and recall reads, snoozed ones included and the old versions
// a newer one superseded left out (Count counts those too). One pass over
// the in-memory entries, no record read.
func (s *Store) CountCurrent() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, e := range s.entries {
		if !e.superseded {
			n++
		}
	}
	return n
}

// Projects returns the projects of the stored memories, sorted, "" left
// out. It reads the vector index's rows, one pass without a record read
// (under a millisecond at 100k memories), or every entry when some memory
// has no vector.
func (s *Store) Projects() []string {
	s.mu.RLock()
	var out []string
	if s.vec.count() == len(s.entries) {
		out = s.vec.projects()
	} else {
		seen := map[string]bool{}
		for _, e := range s.entries {
			if e.project != "" && !seen[e.project] {
				seen[e.project] = true
				out = append(out, e.project)
			}
		}
	}
	s.mu.RUnlock()
	slices.Sort(out)
	return out
}

func (s *Store) now() time.Time { return s.clock.Now() }

// Peek reads what a store in dir records (model, dimension, count,
// sequence number, format version) without opening its indexes, so a
// caller can pick the matching embedder before Open. ok is false when dir
// holds no store. It needs the store's lock briefly: while another process
// owns the store it fails with an error wrapping memory.ErrLocked.
func Peek(dir string) (info Info, ok bool, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return info, false, fmt.Errorf("peek store: %w", err)
	}
	path := filepath.Join(dir, dbFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return info, false, nil
	}
	db, err := openBolt(path, &bolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return info, false, lockedError(dir)
		}
		return info, false, fmt.Errorf("peek store %s: %w", dir, err)
	}
	defer db.Close()
	err = guardFault(path, func() error {
		return db.View(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			if meta == nil || meta.Get(keyFormat) == nil {
				return nil
			}
			ok = true
			info = Info{Dir: dir, Model: string(meta.Get(keyModel)), Dim: int(getU64(meta.Get(keyDim))),
				Seq: getU64(meta.Get(keySeq)), FormatVersion: int(getU64(meta.Get(keyFormat)))}
			if info.FormatVersion > FormatVersion {
				return fmt.Errorf("peek store %s: format version %d: %w", dir, info.FormatVersion, memory.ErrNewerFormat)
			}
			if recs := tx.Bucket(bucketRecs); recs != nil {
				info.Count = recs.Stats().KeyN
			}
			return nil
		})
	})
	return info, ok, err
}
