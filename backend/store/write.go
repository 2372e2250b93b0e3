package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// maxRefLen bounds source, surface and the id-valued link fields.
const maxRefLen = 256

// checkFields validates what memory.Validate does not: the other strings,
// counters and the embedding. It fills an empty EmbeddingModel.
func (s *Store) checkFields(m *memory.Memory) error {
	if err := s.checkAllButVector(m); err != nil {
		return err
	}
	return checkVector(m.Embedding, s.dim)
}

// checkRewrite is checkFields for a write of m over old, the record as
// stored: a damaged vector (NaN or Inf, or not the store's dimension: see
// packedState) that m keeps from old bit for bit is let through, so that
// a user's action on such a memory (an edit of its fields, an access, a
// reinforcement, a snooze, a supersession, a move to the trash and back)
// never fails for want of a vector only an embedder can make. The vector
// stays as it was, out of the vector index (see indexVector) and on the
// list RepairVectors and `memtray doctor --reembed-damaged` embed anew.
// A new vector must be a sound one, and a changed text a new vector.
func (s *Store) checkRewrite(m, old *memory.Memory) error {
	if err := s.checkAllButVector(m); err != nil {
		return err
	}
	if keepsDamagedVector(m, old, s.dim) {
		return nil
	}
	return checkVector(m.Embedding, s.dim)
}

// keepsDamagedVector reports whether old's vector is damaged for a store
// of dimension dim and m carries it unchanged (bit for bit).
func keepsDamagedVector(m, old *memory.Memory, dim int) bool {
	return old != nil && checkVector(old.Embedding, dim) != nil && sameVector(m.Embedding, old.Embedding)
}

// sameVector reports whether a and b hold the same numbers: equal, or the
// same bits (a NaN equals no number, itself included, but a NaN kept is
// the same vector).
func sameVector(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// checkAllButVector is checkFields without the vector's check.
func (s *Store) checkAllButVector(m *memory.Memory) error {
	if err := m.Validate(); err != nil {
		return err
	}
	var problems []string
	for name, v := range map[string]string{"source": m.Source, "surface": m.Surface, "supersedes": m.Supersedes,
		"superseded_by": m.SupersededBy, "extends_source": m.ExtendsSource} {
		if len(v) > maxRefLen || !memory.ValidUTF8(v) {
			problems = append(problems, name+" is longer than 256 bytes or not UTF-8")
		}
	}
	if m.AccessCount < 0 || m.ReinforcedCount < 0 || m.FeedbackN < 0 {
		problems = append(problems, "counters must not be negative")
	}
	if math.IsNaN(m.FeedbackSum) || math.IsInf(m.FeedbackSum, 0) {
		problems = append(problems, "feedback_sum must be finite")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	if m.EmbeddingModel == "" {
		m.EmbeddingModel = s.model
	}
	if m.EmbeddingModel != s.model {
		return fmt.Errorf("embedding of model %q, the store uses %q: %w", m.EmbeddingModel, s.model, memory.ErrModelMismatch)
	}
	return nil
}

// normalizeTimes puts every timestamp in UTC (so exports are stable) and
// keeps the newest memory.MaxHits hits.
func normalizeTimes(m *memory.Memory) {
	utc := func(t *time.Time) {
		if !t.IsZero() {
			*t = t.UTC()
		}
	}
	utc(&m.CreatedAt)
	utc(&m.UpdatedAt)
	utc(&m.LastAccessed)
	utc(&m.LastReinforcedAt)
	utc(&m.CooldownUntil)
	if len(m.Hits) > memory.MaxHits {
		m.Hits = m.Hits[len(m.Hits)-memory.MaxHits:]
	}
	for i := range m.Hits {
		utc(&m.Hits[i])
	}
}

// prepare completes and validates a memory for insertion. With keep
// (import), importance and timestamps are taken as they are. With
// noVector the memory is stored without a vector (Insert.withoutVector):
// every other field is checked.
func (s *Store) prepare(m memory.Memory, now time.Time, keep, noVector bool) (memory.Memory, error) {
	if m.ID == "" {
		m.ID = s.NewID()
	} else if !ValidID(m.ID) {
		return m, &memory.ValidationError{Problems: []string{fmt.Sprintf("id %q is not 1..64 characters of letters, digits and -_.:", m.ID)}}
	}
	if keep {
		if m.Kind == "" {
			m.Kind = memory.KindFact
		}
		if m.Type == "" {
			m.Type = memory.TypeProject
		}
	} else {
		m.ApplyDefaults()
	}
	m.Embedding = slices.Clone(m.Embedding)
	m.Hits = slices.Clone(m.Hits)
	check := s.checkFields
	if noVector {
		m.Embedding, m.EmbeddingModel = nil, ""
		check = s.checkAllButVector
	}
	if err := check(&m); err != nil {
		return m, err
	}
	m.ContentHash = memory.ContentHash(m.Text)
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	normalizeTimes(&m)
	return m, nil
}

// writeRecord stores m under h with its hash and order index entries.
func writeRecord(tx *bolt.Tx, h recHeader, m *memory.Memory) error {
	if err := enqueueWrite(tx, m, h.seq); err != nil {
		return err
	}
	v, err := encodeRecord(h, m)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketRecs).Put([]byte(m.ID), v); err != nil {
		return err
	}
	if err := tx.Bucket(bucketHash).Put(hashKey(m.ContentHash, m.ID), nil); err != nil {
		return err
	}
	return tx.Bucket(bucketOrder).Put(u64(h.ord), []byte(m.ID))
}

// Put stores a new memory and returns the stored record. It assigns an id
// (random 128-bit hex) unless m has a valid one (an id already stored is an
// error wrapping memory.ErrInvalid), sets CreatedAt (kept if given) and
// UpdatedAt (CreatedAt if not given), the content hash and the defaults
// (memory.ApplyDefaults), validates, and requires an embedding of the
// store's dimension and model (an empty EmbeddingModel is set to the
// store's; another gives memory.ErrModelMismatch). The record is durable
// (fsync'd) when Put returns without error; an error wrapping
// ErrIndexPending means it is stored but the text index lags.
func (s *Store) Put(ctx context.Context, m memory.Memory) (memory.Memory, error) {
	out, _, err := s.Insert(ctx, Insert{Memory: m})
	return out, err
}

// Insert is one new memory (or new version) for Store.Insert.
type Insert struct {
	// Memory is prepared as Put prepares a new memory.
	Memory memory.Memory
	// Supersedes, when set, is the live memory the new one replaces (see
	// Supersede). Only a lone Insert may supersede (not one of a batch).
	Supersedes string
	// Unique makes a live memory of the same project holding the same text
	// (content hash) win: Insert returns it and writes nothing (a memory of
	// another project holding it does not count: FindByHash). The check and the write are one
	// step under the store's write lock, so two writers of one text store it
	// once whichever path they take (the write pipeline, Import).
	Unique bool
	// Restore takes the record as it was stored elsewhere (an export file
	// being imported): its kind, type, importance, counters and times are
	// kept, not defaulted, and an id already used here gets a new id
	// instead of failing.
	Restore bool
	// Marks are turn marks written in the transaction that stores the
	// memory, so that a placement and its record are on disk together or
	// not at all; when Unique finds the text stored, nothing is written,
	// the marks neither. A mark naming the memory stored needs its id
	// before the write: give Memory an ID (NewID).
	Marks []TurnMark
	// withoutVector stores the record with no vector, which Open and the
	// index treat as a damaged one (out of the vector index, on the list
	// RepairVectors embeds anew): a salvaged record whose vector was
	// damaged, when no embedder of the store's model answered.
	withoutVector bool
}

// Inserted is what InsertBatch did with one Insert: the stored record, or
// with Unique the live record already holding the text and Existed true.
type Inserted struct {
	Memory  memory.Memory
	Existed bool
}

// Insert is the store's one entry point for a new memory (InsertBatch of
// one): Put, PutBatch, Supersede and Import are Insert. It returns the
// stored record, or with in.Unique the live record already holding the
// text and existed true. Errors are those of Put and Supersede.
func (s *Store) Insert(ctx context.Context, in Insert) (stored memory.Memory, existed bool, err error) {
	res, err := s.InsertBatch(ctx, []Insert{in})
	if len(res) == 1 {
		return res[0].Memory, res[0].Existed, err
	}
	return memory.Memory{}, false, err
}

// InsertBatch stores several Inserts in one transaction: either every one
// that is not Existed is stored or none is. The results are in the order
// of ins. A Unique Insert whose text an earlier one of the batch holds
// gets that one's record, Existed. An error wrapping ErrIndexPending comes
// with the results: they are stored, the text index lags.
func (s *Store) InsertBatch(ctx context.Context, ins []Insert) ([]Inserted, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, nil
	}
	for i := range ins {
		if len(ins[i].Marks) > 0 {
			if err := checkTurnMarks(ins[i].Marks); err != nil {
				return nil, fmt.Errorf("insert: record %d: %w", i, err)
			}
		}
	}
	if len(ins) > 1 {
		for i := range ins {
			if ins[i].Supersedes != "" {
				return nil, fmt.Errorf("insert batch: record %d supersedes %s: only a lone insert may supersede: %w", i, ins[i].Supersedes, memory.ErrInvalid)
			}
		}
	}
	ins = slices.Clone(ins) // planInserts may give a Restore a new id
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	res, write, err := s.planInserts(ins)
	if err != nil {
		return nil, err
	}
	if len(write) == 0 {
		return res, nil
	}
	if len(ins) == 1 && ins[0].Supersedes != "" && len(write) == 1 {
		m, err := s.supersedeLocked(ins[0].Supersedes, ins[0].Memory, ins[0].Marks)
		if err != nil && m.ID == "" {
			return nil, err
		}
		return []Inserted{{Memory: m}}, err
	}
	batch := make([]Insert, len(write))
	for k, i := range write {
		batch[k] = ins[i]
	}
	out, err := s.putBatchLocked(batch)
	if len(out) != len(write) {
		return nil, err
	}
	byHash := make(map[string]memory.Memory, len(out))
	for k, i := range write {
		res[i] = Inserted{Memory: out[k]}
		byHash[projectHash(out[k].Project, out[k].ContentHash)] = out[k]
	}
	for i := range res {
		if res[i].Existed && res[i].Memory.ID == "" {
			res[i].Memory = byHash[projectHash(ins[i].Memory.Project, memory.ContentHash(ins[i].Memory.Text))]
		}
	}
	return res, err
}

// planInserts decides, under the write lock, which Inserts are written
// (their indexes in write) and which find their text stored (res marked
// Existed; the record is filled in here, or after the write when an earlier
// Insert of the batch holds the text); a Restore whose id is taken gets a
// new one.
func (s *Store) planInserts(ins []Insert) (res []Inserted, write []int, err error) {
	res = make([]Inserted, len(ins))
	inBatch := make(map[string]bool)
	err = s.view(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		for i := range ins {
			in := &ins[i]
			h := memory.ContentHash(in.Memory.Text)
			key := projectHash(in.Memory.Project, h)
			if in.Unique {
				if inBatch[key] {
					res[i].Existed = true
					continue
				}
				old, ok, err := liveByHash(tx, h, in.Memory.Project)
				if err != nil {
					return err
				}
				if ok {
					res[i] = Inserted{Memory: old, Existed: true}
					continue
				}
			}
			if in.Restore && in.Memory.ID != "" && recs.Get([]byte(in.Memory.ID)) != nil {
				in.Memory.ID = s.NewID()
			}
			inBatch[key] = true
			write = append(write, i)
		}
		return nil
	})
	return res, write, err
}

// liveByHash returns a live (not superseded) record of project whose
// content hash is hash.
func liveByHash(tx *bolt.Tx, hash, project string) (memory.Memory, bool, error) {
	m, ok, err := holderOf(tx, hash, project, "")
	if err != nil {
		return memory.Memory{}, false, fmt.Errorf("find live: %w", err)
	}
	if !ok || m.Superseded() {
		return memory.Memory{}, false, nil
	}
	return m, true, nil
}

// projectHash keys a text within its project: exact-text dedup is per
// project (FindByHash).
func projectHash(project, hash string) string { return project + "\x00" + hash }

// PutBatch stores several new memories as Put does, in one transaction:
// either all are stored or none is.
func (s *Store) PutBatch(ctx context.Context, ms []memory.Memory) ([]memory.Memory, error) {
	ins := make([]Insert, len(ms))
	for i, m := range ms {
		ins[i] = Insert{Memory: m}
	}
	res, err := s.InsertBatch(ctx, ins)
	if res == nil {
		return nil, err
	}
	out := make([]memory.Memory, len(res))
	for i, r := range res {
		out[i] = r.Memory
	}
	return out, err
}

// putBatchLocked writes new records in one transaction, with s.wmu held.
func (s *Store) putBatchLocked(ins []Insert) ([]memory.Memory, error) {
	now := s.now()
	out := make([]memory.Memory, len(ins))
	ids := make(map[string]bool, len(ins))
	for i, in := range ins {
		p, err := s.prepare(in.Memory, now, in.Restore, in.withoutVector)
		if err != nil {
			if len(ins) == 1 {
				return nil, fmt.Errorf("put: %w", err)
			}
			return nil, fmt.Errorf("put batch: record %d: %w", i, err)
		}
		if ids[p.ID] {
			return nil, fmt.Errorf("put batch: record %d: id %q appears twice: %w", i, p.ID, memory.ErrInvalid)
		}
		ids[p.ID] = true
		out[i] = p
	}
	heads := make([]recHeader, len(out))
	seq := s.seq
	for i := range out {
		seq++
		heads[i] = recHeader{seq: seq, tseq: seq, ord: seq}
	}
	err := s.update(func(tx *bolt.Tx) error {
		recs, dels := tx.Bucket(bucketRecs), tx.Bucket(bucketDels)
		for i := range out {
			id := []byte(out[i].ID)
			if recs.Get(id) != nil {
				return fmt.Errorf("id %q is already stored: %w", out[i].ID, memory.ErrInvalid)
			}
			if err := writeRecord(tx, heads[i], &out[i]); err != nil {
				return fmt.Errorf("write %s: %w", out[i].ID, err)
			}
			if err := dels.Delete(id); err != nil {
				return err
			}
			if err := putTurnMarks(tx, ins[i].Marks, now); err != nil {
				return fmt.Errorf("mark turn of %s: %w", out[i].ID, err)
			}
		}
		return putSeqCount(tx, seq, len(out))
	})
	if err != nil {
		return nil, fmt.Errorf("put: %w", err)
	}
	s.committed()
	puts := make([]textPut, len(out))
	for i := range out {
		puts[i] = textPut{m: &out[i], tseq: heads[i].tseq}
	}
	terr := s.indexText(puts, nil, seq)
	s.mu.Lock()
	for i := range out {
		e := entryFromMemory(heads[i], &out[i], s.intern)
		s.setEntry(out[i].ID, e)
		s.vec.add(out[i].ID, out[i].Embedding, e)
		if ins[i].withoutVector {
			s.markDamaged(out[i].ID, true) // as Open finds it: on the list RepairVectors embeds, and its warning
		}
	}
	s.setSeq(seq)
	s.mu.Unlock()
	if terr != nil {
		return out, fmt.Errorf("put: %w", terr)
	}
	return out, nil
}

// Update reads the memory id, lets fn modify it and writes it back, in one
// transaction (fn must not call the Store). ID and CreatedAt are kept,
// UpdatedAt is set, the content hash recomputed and the result validated.
// Changing the text requires a new embedding of it (memory.ErrInvalid
// otherwise). The vector and text indexes are updated when what they hold
// changed. An error from fn aborts the update and is returned.
func (s *Store) Update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error) {
	return s.UpdateMarked(ctx, id, fn, nil)
}

// UpdateMarked is Update that also writes marks (turn marks, see
// Insert.Marks) in the update's transaction: both are on disk or neither
// (an error from fn, or a memory not found, writes no mark).
func (s *Store) UpdateMarked(ctx context.Context, id string, fn func(*memory.Memory) error, marks []TurnMark) (memory.Memory, error) {
	if err := s.checkOpen(); err != nil {
		return memory.Memory{}, err
	}
	if err := ctx.Err(); err != nil {
		return memory.Memory{}, err
	}
	if err := checkTurnMarks(marks); err != nil {
		return memory.Memory{}, fmt.Errorf("update %q: %w", id, err)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return memory.Memory{}, err
	}
	now := s.now()
	var (
		m                       memory.Memory
		h                       recHeader
		textChanged, vecChanged bool
	)
	seq := s.seq + 1
	err := s.update(func(tx *bolt.Tx) error {
		var err error
		m, h, textChanged, vecChanged, err = s.updateTx(tx, id, seq, now, fn)
		if err != nil {
			return err
		}
		return putTurnMarks(tx, marks, now)
	})
	if err != nil {
		return memory.Memory{}, fmt.Errorf("update %q: %w", id, err)
	}
	s.committed()
	var terr error
	if textChanged {
		terr = s.indexText([]textPut{{m: &m, tseq: h.tseq}}, nil, seq)
	}
	s.mu.Lock()
	e := entryFromMemory(h, &m, s.intern)
	s.setEntry(id, e)
	if vecChanged {
		s.indexVector(id, m.Embedding, e)
	} else {
		s.vec.setMeta(id, e)
	}
	s.setSeq(seq)
	s.mu.Unlock()
	if terr != nil {
		return m, fmt.Errorf("update %q: %w", id, terr)
	}
	return m, nil
}

// updateTx is Update's work within tx: it reads the memory id, lets fn
// modify it, checks the result and writes it under sequence number seq.
// An error of the record itself (not found, unreadable, fn's, invalid) is
// an errRecord, returned before anything is written; any other is the
// transaction's.
func (s *Store) updateTx(tx *bolt.Tx, id string, seq uint64, now time.Time, fn func(*memory.Memory) error) (m memory.Memory, h recHeader, textChanged, vecChanged bool, err error) {
	v := tx.Bucket(bucketRecs).Get([]byte(id))
	if v == nil {
		return m, h, false, false, errRecord{memory.ErrNotFound}
	}
	oh, om, err := decodeForWrite(id, v)
	if err != nil {
		return m, h, false, false, errRecord{err}
	}
	m = om
	m.Embedding = slices.Clone(om.Embedding)
	m.Hits = slices.Clone(om.Hits)
	if err := fn(&m); err != nil {
		return m, h, false, false, errRecord{err}
	}
	if m.ID != om.ID {
		return m, h, false, false, errRecord{&memory.ValidationError{Problems: []string{"update may not change the id"}}}
	}
	m.CreatedAt = om.CreatedAt
	m.UpdatedAt = now
	if m.Kind == "" {
		m.Kind = memory.KindFact
	}
	if m.Type == "" {
		m.Type = memory.TypeProject
	}
	m.Embedding = slices.Clone(m.Embedding)
	if err := s.checkRewrite(&m, &om); err != nil {
		return m, h, false, false, errRecord{err}
	}
	m.ContentHash = memory.ContentHash(m.Text)
	sameVec := sameVector(m.Embedding, om.Embedding)
	if m.ContentHash != om.ContentHash && sameVec {
		return m, h, false, false, errRecord{&memory.ValidationError{Problems: []string{"text changed but the embedding did not: embed the new text"}}}
	}
	normalizeTimes(&m)
	textChanged = m.Text != om.Text || m.Project != om.Project || m.Kind != om.Kind || m.Source != om.Source
	vecChanged = !sameVec
	h = recHeader{seq: seq, tseq: oh.tseq, ord: oh.ord}
	if textChanged {
		h.tseq = seq
	}
	if m.ContentHash != om.ContentHash {
		if err := tx.Bucket(bucketHash).Delete(hashKey(om.ContentHash, id)); err != nil {
			return m, h, false, false, err
		}
	}
	if err := writeRecord(tx, h, &m); err != nil {
		return m, h, false, false, err
	}
	return m, h, textChanged, vecChanged, tx.Bucket(bucketMeta).Put(keySeq, u64(seq))
}

// errRecord is an error of one record that updateTx wrote nothing of: a
// transaction over several records may go on with the others. It reads
// and unwraps as the error it holds.
type errRecord struct{ err error }

func (e errRecord) Error() string { return e.err.Error() }
func (e errRecord) Unwrap() error { return e.err }

// MaxAccessIDs bounds the ids of one RecordAccess.
const MaxAccessIDs = 1000

// RecordAccess counts each memory of ids as accessed at at (a recall gave
// it): access_count + 1, last_accessed at, at appended to its hits (the
// newest memory.MaxHits kept), each record written as Update writes it
// (UpdatedAt set, a new sequence number). All of them are written in one
// transaction, one fsync: durable when RecordAccess returns, and a kill
// leaves all of them recorded or none. An id given twice counts once. It
// returns the records as stored, keyed by id. An id that is not live (a
// memory deleted since it was found) is left out and named in an error
// wrapping memory.ErrNotFound, and a record that cannot be written (one
// unreadable, or invalid as stored) in an error of its own; the others
// are recorded all the same.
func (s *Store) RecordAccess(ctx context.Context, at time.Time, ids ...string) (map[string]memory.Memory, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(ids) > MaxAccessIDs {
		return nil, fmt.Errorf("record access: %d ids, at most %d: %w", len(ids), MaxAccessIDs, memory.ErrInvalid)
	}
	if at.IsZero() {
		return nil, fmt.Errorf("record access: no time: %w", memory.ErrInvalid)
	}
	at = at.UTC()
	ids = uniqueIDs(ids)
	if len(ids) == 0 {
		return map[string]memory.Memory{}, nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	now := s.now()
	seq := s.seq + 1
	access := func(m *memory.Memory) error {
		m.AccessCount++
		m.LastAccessed = at
		m.Hits = append(m.Hits, at)
		return nil
	}
	type written struct {
		m memory.Memory
		h recHeader
	}
	var (
		done    []written
		missing []string
		failed  []error // records that could not be recorded
	)
	err := s.update(func(tx *bolt.Tx) error {
		done, missing, failed = done[:0], missing[:0], failed[:0]
		for _, id := range ids {
			m, h, _, _, err := s.updateTx(tx, id, seq, now, access)
			var rerr errRecord
			switch {
			case errors.Is(err, memory.ErrNotFound):
				missing = append(missing, id)
				continue
			case errors.As(err, &rerr):
				failed = append(failed, fmt.Errorf("record access of %s: %w", id, err))
				continue
			case err != nil:
				return fmt.Errorf("%s: %w", id, err)
			}
			done = append(done, written{m: m, h: h})
		}
		if len(done) == 0 {
			return errNothingWritten
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNothingWritten) {
		return nil, fmt.Errorf("record access of %d memories: %w", len(ids), err)
	}
	out := make(map[string]memory.Memory, len(done))
	if len(done) > 0 {
		s.committed()
		s.mu.Lock()
		for _, w := range done {
			e := entryFromMemory(w.h, &w.m, s.intern)
			s.setEntry(w.m.ID, e)
			s.vec.setMeta(w.m.ID, e)
			out[w.m.ID] = w.m
		}
		s.setSeq(seq)
		s.mu.Unlock()
	}
	if len(missing) > 0 {
		failed = append(failed, fmt.Errorf("record access of %s: %w", strings.Join(missing, ", "), memory.ErrNotFound))
	}
	return out, errors.Join(failed...)
}

// errNothingWritten rolls back a transaction that found nothing to write
// (bbolt would commit, and fsync, an empty one).
var errNothingWritten = errors.New("nothing written")

// uniqueIDs returns ids without repeats, in their first order.
func uniqueIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Delete removes the memory id (memory.ErrNotFound if there is none). A
// record that does not decode (Open skipped it) is deleted too, for good
// (see deleteUnreadableTx).
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	seq := s.seq + 1
	err := s.update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		v := recs.Get([]byte(id))
		if v == nil {
			return memory.ErrNotFound
		}
		oh, om, err := decodeForWrite(id, v)
		if errors.Is(err, ErrUnreadable) {
			if err := deleteUnreadableTx(tx, id, v, seq); err != nil { // unreadable.go
				return err
			}
			return putSeqCount(tx, seq, -1)
		}
		if err != nil {
			return err
		}
		if err := enqueueDelete(tx, &om, seq); err != nil {
			return err
		}
		if err := tx.Bucket(bucketHash).Delete(hashKey(om.ContentHash, id)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOrder).Delete(u64(oh.ord)); err != nil {
			return err
		}
		if err := recs.Delete([]byte(id)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketDels).Put([]byte(id), u64(seq)); err != nil {
			return err
		}
		if err := forgetRecalledTx(tx, id); err != nil { // recalllog.go
			return err
		}
		return putSeqCount(tx, seq, -1)
	})
	if err != nil {
		return fmt.Errorf("delete %q: %w", id, err)
	}
	s.committed()
	terr := s.indexText(nil, []string{id}, seq)
	s.mu.Lock()
	s.dropEntry(id)
	s.unindexVector(id)
	s.forgetUnreadable([]string{id})
	s.setSeq(seq)
	s.mu.Unlock()
	if terr != nil {
		return fmt.Errorf("delete %q: %w", id, terr)
	}
	return nil
}

// putSeqCount records the store's new sequence number and adjusts the
// record-count hint by delta.
func putSeqCount(tx *bolt.Tx, seq uint64, delta int) error {
	meta := tx.Bucket(bucketMeta)
	if err := meta.Put(keySeq, u64(seq)); err != nil {
		return err
	}
	n := int64(getU64(meta.Get(keyCount))) + int64(delta)
	return meta.Put(keyCount, u64(uint64(max(n, 0))))
}

// Supersede stores next as a new memory that replaces the memory oldID, in
// one transaction: next gets Supersedes = oldID, the old record
// SupersededBy = next's id and stays stored (the history), hidden from
// searches by default. next is prepared as Put prepares a new memory. An
// unknown oldID is memory.ErrNotFound; one already superseded is an error
// wrapping memory.ErrInvalid (supersede its successor instead).
func (s *Store) Supersede(ctx context.Context, oldID string, next memory.Memory) (memory.Memory, error) {
	m, _, err := s.Insert(ctx, Insert{Memory: next, Supersedes: oldID})
	return m, err
}

// supersedeLocked is Supersede with s.wmu held; marks are written in its
// transaction (Insert.Marks).
func (s *Store) supersedeLocked(oldID string, next memory.Memory, marks []TurnMark) (memory.Memory, error) {
	now := s.now()
	next.Supersedes = oldID
	m, err := s.prepare(next, now, false, false)
	if err != nil {
		return memory.Memory{}, fmt.Errorf("supersede: %w", err)
	}
	var old memory.Memory
	nh := recHeader{seq: s.seq + 1, tseq: s.seq + 1, ord: s.seq + 1}
	oh := recHeader{seq: s.seq + 2}
	err = s.update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		if recs.Get([]byte(m.ID)) != nil {
			return fmt.Errorf("id %q is already stored: %w", m.ID, memory.ErrInvalid)
		}
		v := recs.Get([]byte(oldID))
		if v == nil {
			return memory.ErrNotFound
		}
		h, om, err := decodeForWrite(oldID, v)
		if err != nil {
			return err
		}
		if om.SupersededBy != "" {
			return fmt.Errorf("%q is already superseded by %q: %w", oldID, om.SupersededBy, memory.ErrInvalid)
		}
		old = om
		old.SupersededBy = m.ID
		old.UpdatedAt = now
		normalizeTimes(&old)
		oh.tseq, oh.ord = h.tseq, h.ord
		if err := writeRecord(tx, nh, &m); err != nil {
			return fmt.Errorf("write %s: %w", m.ID, err)
		}
		if err := writeRecord(tx, oh, &old); err != nil {
			return fmt.Errorf("write %s: %w", oldID, err)
		}
		if err := tx.Bucket(bucketDels).Delete([]byte(m.ID)); err != nil {
			return err
		}
		if err := putTurnMarks(tx, marks, now); err != nil {
			return fmt.Errorf("mark turn of %s: %w", m.ID, err)
		}
		return putSeqCount(tx, oh.seq, 1)
	})
	if err != nil {
		return memory.Memory{}, fmt.Errorf("supersede %q: %w", oldID, err)
	}
	s.committed()
	terr := s.indexText([]textPut{{m: &m, tseq: nh.tseq}}, nil, oh.seq)
	s.mu.Lock()
	ne := entryFromMemory(nh, &m, s.intern)
	s.setEntry(m.ID, ne)
	s.vec.add(m.ID, m.Embedding, ne)
	oe := entryFromMemory(oh, &old, s.intern)
	s.setEntry(oldID, oe)
	s.vec.setMeta(oldID, oe)
	s.setSeq(oh.seq)
	s.mu.Unlock()
	if terr != nil {
		return m, fmt.Errorf("supersede %q: %w", oldID, terr)
	}
	return m, nil
}
