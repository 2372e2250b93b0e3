package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// Batch is a set of changes Apply makes in one transaction: all of them or
// none. An id may appear only once across Put, Trash and Restore.
type Batch struct {
	// Put replaces live records entirely. Each record is stored as given:
	// the store only fills an empty kind, type and embedding model,
	// recomputes the content hash, puts timestamps in UTC and keeps the
	// newest memory.MaxHits hits, exactly as for any write. UpdatedAt in
	// particular is NOT set by the store (the caller owns it, so an undo can
	// put a record back byte for byte). CreatedAt is taken as given too.
	// Changing the text requires a new embedding of it.
	Put []memory.Memory
	// Trash moves live records to the trash (see Trash) with a reason. A
	// record that does not decode (Open skipped it) is deleted for good
	// instead: the trash could not restore it (unreadable.go).
	Trash []TrashRequest
	// Restore brings records back from the trash as live records, exactly
	// as they were when trashed.
	Restore []string
	// RestoreEmbeddings, keyed by ids of Restore, give records trashed
	// before a change of embedding model (Reembed) a new vector: their text
	// embedded by the store's model now. They come back with it, and the
	// store's model, instead of the vector they were trashed with (which
	// the store no longer accepts). See RestoreWith.
	RestoreEmbeddings map[string][]float32
	// IfUpdatedAt are preconditions: id -> the UpdatedAt the live record
	// must still have. If one does not hold, nothing is applied and the
	// error is a *ConflictError naming every id that changed.
	IfUpdatedAt map[string]time.Time
	// resolved are conflict copies in the trash whose edit Put carries
	// (Restore of a conflict copy, conflict.go): they leave the trash.
	resolved []string
}

// TrashRequest moves one live record to the trash.
type TrashRequest struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// maxReason bounds a trash reason.
const maxReason = 1024

// ErrConflict is wrapped by the errors of a batch whose preconditions no
// longer hold, or whose restore would clash with a live record.
var ErrConflict = errors.New("conflict")

// ConflictError names the records that made a batch fail: they changed
// since the caller read them (IfUpdatedAt), or a record to restore has the
// same text (content hash) or id as a live one.
type ConflictError struct {
	// Changed lists ids whose UpdatedAt no longer matches (or that are gone).
	Changed []string
	// Clashes maps a restored id to the live id holding the same text.
	Clashes map[string]string
}

// Error describes the conflict.
func (e *ConflictError) Error() string {
	var parts []string
	if len(e.Changed) > 0 {
		parts = append(parts, "changed since read: "+strings.Join(e.Changed, ", "))
	}
	if len(e.Clashes) > 0 {
		keys := make([]string, 0, len(e.Clashes))
		for k := range e.Clashes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("restoring %s would duplicate the live memory %s (same text): delete or edit that one first, or leave %s in the trash", k, e.Clashes[k], k))
		}
	}
	return "conflict: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// Apply applies b in one bbolt transaction (one fsync): a kill -9 at any
// moment leaves the store either before or after the whole batch. Then it
// brings the vector and text indexes in step as Put, Update and Delete do;
// an error wrapping ErrIndexPending means the batch is stored durably but
// the text index lags (it catches up at the next write or at Open, which
// reconciles it from the records' sequence numbers and the tombstones of
// trashed records).
//
// Everything is checked before anything changes: records valid (memory
// .ErrInvalid, memory.ErrModelMismatch), ids known (memory.ErrNotFound for
// a Put or Trash id that is not live, or a Restore id not in the trash),
// preconditions and clashes (*ConflictError, ErrConflict).
func (s *Store) Apply(ctx context.Context, b Batch) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(b.Put) == 0 && len(b.Trash) == 0 && len(b.Restore) == 0 && len(b.resolved) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.applyLocked(b)
}

// applyLocked is Apply with s.wmu held. It runs in four steps: validate
// the batch (no transaction needed), commit it in one bbolt transaction
// (load and check everything, then write), bring the text index in step,
// then the in-memory entries and vector index (publish.go).
func (s *Store) applyLocked(b Batch) error {
	p, err := s.planBatch(b)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if err := s.update(p.commit); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	s.committed()
	tputs, tdels := p.textChanges()
	terr := s.indexText(tputs, tdels, p.seq)
	s.applyInMemory(p)
	s.recheckBadTrash() // a trash of a live record over an unreadable entry of its id
	if terr != nil {
		return fmt.Errorf("apply: %w", terr)
	}
	return nil
}

// batchPlan is a validated batch on its way through applyLocked: the
// records to put as they will be stored, and what the transaction found
// and wrote, for the index updates that follow it.
type batchPlan struct {
	s   *Store
	b   Batch
	now time.Time
	seq uint64 // the store sequence number the batch writes
	// puts are b.Put normalised as any write is; putState, filled by the
	// transaction, says for each what changed.
	puts     []memory.Memory
	putState []batchPut
	// restored are the records of b.Restore as they come back, with their
	// headers.
	restored []memory.Memory
	rheads   []recHeader
}

// batchPut is what the transaction decided for one put record.
type batchPut struct {
	h                       recHeader
	textChanged, vecChanged bool
}

// batchBuckets are the buckets a batch reads and writes.
type batchBuckets struct {
	recs, hashes, order, dels, trash *bolt.Bucket
}

// planBatch validates what needs no transaction: ids valid and used once,
// put records' fields, trash reasons, restore embeddings for restored ids
// only. It normalises the put records as every write does.
func (s *Store) planBatch(b Batch) (*batchPlan, error) {
	seen := make(map[string]string, len(b.Put)+len(b.Trash)+len(b.Restore))
	once := func(id, what string) error {
		if !ValidID(id) {
			return &memory.ValidationError{Problems: []string{fmt.Sprintf("%s: id %q is not valid", what, id)}}
		}
		if prev, ok := seen[id]; ok {
			return &memory.ValidationError{Problems: []string{fmt.Sprintf("id %q appears in %s and %s", id, prev, what)}}
		}
		seen[id] = what
		return nil
	}
	puts := make([]memory.Memory, len(b.Put))
	for i, m := range b.Put {
		if err := once(m.ID, "put"); err != nil {
			return nil, err
		}
		m.Embedding = slices.Clone(m.Embedding)
		m.Hits = slices.Clone(m.Hits)
		if m.Kind == "" {
			m.Kind = memory.KindFact
		}
		if m.Type == "" {
			m.Type = memory.TypeProject
		}
		// The vector is checked against the stored record's (checkRewrite)
		// once the transaction has read it: loadPutOlds.
		if err := s.checkAllButVector(&m); err != nil {
			return nil, fmt.Errorf("put %s: %w", m.ID, err)
		}
		m.ContentHash = memory.ContentHash(m.Text)
		normalizeTimes(&m)
		puts[i] = m
	}
	for _, t := range b.Trash {
		if err := once(t.ID, "trash"); err != nil {
			return nil, err
		}
		if len(t.Reason) > maxReason || !memory.ValidUTF8(t.Reason) {
			return nil, fmt.Errorf("trash %s: %w", t.ID, &memory.ValidationError{Problems: []string{"reason is longer than 1 KiB or not UTF-8"}})
		}
	}
	for _, id := range b.Restore {
		if err := once(id, "restore"); err != nil {
			return nil, err
		}
	}
	for _, id := range b.resolved {
		if err := once(id, "restore"); err != nil {
			return nil, err
		}
	}
	for id := range b.RestoreEmbeddings {
		if seen[id] != "restore" {
			return nil, &memory.ValidationError{Problems: []string{fmt.Sprintf("a restore embedding for %q, which is not restored", id)}}
		}
	}
	return &batchPlan{
		s: s, b: b, now: s.now().UTC(), seq: s.seq + 1,
		puts:     puts,
		putState: make([]batchPut, len(puts)),
		restored: make([]memory.Memory, len(b.Restore)),
		rheads:   make([]recHeader, len(b.Restore)),
	}, nil
}

// commit is the batch's bbolt transaction. Every precondition and every
// record is loaded and checked before anything is written; a restored
// record that would duplicate a live one's text in the end state undoes
// the whole transaction.
func (p *batchPlan) commit(tx *bolt.Tx) error {
	trash, err := tx.CreateBucketIfNotExists(bucketTrash)
	if err != nil {
		return err
	}
	bk := batchBuckets{recs: tx.Bucket(bucketRecs), hashes: tx.Bucket(bucketHash), order: tx.Bucket(bucketOrder), dels: tx.Bucket(bucketDels), trash: trash}
	changed, err := p.changedSinceRead(bk)
	if err != nil {
		return err
	}
	olds, oheads, err := p.loadPutOlds(bk)
	if err != nil {
		return err
	}
	trashVals, err := p.loadTrashed(bk)
	if err != nil {
		return err
	}
	if err := p.loadRestored(bk); err != nil {
		return err
	}
	if len(changed) > 0 {
		sort.Strings(changed)
		return &ConflictError{Changed: changed}
	}
	if err := p.writePuts(tx, bk, olds, oheads); err != nil {
		return err
	}
	if err := p.writeTrash(bk, trashVals); err != nil {
		return err
	}
	if err := p.writeRestored(tx, bk); err != nil {
		return err
	}
	if err := p.dropResolved(tx, bk); err != nil {
		return err
	}
	clashes, err := p.restoreClashes(tx)
	if err != nil {
		return err
	}
	if len(clashes) > 0 {
		return &ConflictError{Clashes: clashes}
	}
	return putSeqCount(tx, p.seq, len(p.restored)-len(p.b.Trash))
}

// changedSinceRead lists the ids of b.IfUpdatedAt whose live record is gone
// or has another UpdatedAt.
func (p *batchPlan) changedSinceRead(bk batchBuckets) ([]string, error) {
	var changed []string
	for id, want := range p.b.IfUpdatedAt {
		v := bk.recs.Get([]byte(id))
		if v == nil {
			changed = append(changed, id)
			continue
		}
		_, om, err := decodeForWrite(id, v)
		if errors.Is(err, ErrUnreadable) {
			changed = append(changed, id) // skipped by every read: as if gone
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", id, err)
		}
		if !om.UpdatedAt.Equal(want) {
			changed = append(changed, id)
		}
	}
	return changed, nil
}

// loadPutOlds loads the live records the puts replace; a put whose text
// changed must bring a new embedding.
func (p *batchPlan) loadPutOlds(bk batchBuckets) ([]memory.Memory, []recHeader, error) {
	olds := make([]memory.Memory, len(p.puts))
	oheads := make([]recHeader, len(p.puts))
	for i := range p.puts {
		v := bk.recs.Get([]byte(p.puts[i].ID))
		var old *memory.Memory
		if v != nil {
			var err error
			oheads[i], olds[i], err = decodeForWrite(p.puts[i].ID, v)
			if err != nil {
				return nil, nil, fmt.Errorf("record %s: %w", p.puts[i].ID, err)
			}
			old = &olds[i]
		}
		if err := p.s.checkRewrite(&p.puts[i], old); err != nil {
			return nil, nil, fmt.Errorf("put %s: %w", p.puts[i].ID, err)
		}
		if v == nil {
			return nil, nil, fmt.Errorf("put %s: %w", p.puts[i].ID, memory.ErrNotFound)
		}
		if p.puts[i].ContentHash != olds[i].ContentHash && sameVector(p.puts[i].Embedding, olds[i].Embedding) {
			return nil, nil, fmt.Errorf("put %s: %w", p.puts[i].ID, &memory.ValidationError{Problems: []string{"text changed but the embedding did not: embed the new text"}})
		}
	}
	return olds, oheads, nil
}

// loadTrashed returns the encoded live records b.Trash moves to the trash.
func (p *batchPlan) loadTrashed(bk batchBuckets) ([][]byte, error) {
	vals := make([][]byte, len(p.b.Trash))
	for i, t := range p.b.Trash {
		v := bk.recs.Get([]byte(t.ID))
		if v == nil {
			return nil, fmt.Errorf("trash %s: %w", t.ID, memory.ErrNotFound)
		}
		vals[i] = v
	}
	return vals, nil
}

// loadRestored fills p.restored and p.rheads from the trash entries of
// b.Restore, with their new embeddings if given; a restored id must not be
// live.
func (p *batchPlan) loadRestored(bk batchBuckets) error {
	for i, id := range p.b.Restore {
		v := bk.trash.Get([]byte(id))
		if v == nil {
			return fmt.Errorf("restore %s: not in the trash: %w", id, memory.ErrNotFound)
		}
		_, h, m, err := decodeTrashed(v, true)
		if err != nil {
			return &unreadableTrashError{id: id, err: err}
		}
		stored := m // as trashed: a damaged vector comes back as it went (checkRewrite)
		if v, ok := p.b.RestoreEmbeddings[id]; ok {
			m.Embedding, m.EmbeddingModel = v, ""
		}
		if err := p.s.checkRewrite(&m, &stored); err != nil {
			return fmt.Errorf("restore %s (trashed before a change of embedding model?): %w", id, err)
		}
		if bk.recs.Get([]byte(id)) != nil {
			return fmt.Errorf("restore %s: %w", id, &ConflictError{Clashes: map[string]string{id: id}})
		}
		p.restored[i] = m
		p.rheads[i] = recHeader{seq: p.seq, tseq: p.seq, ord: h.ord}
	}
	return nil
}

// writePuts writes the put records over the old ones, recording in
// p.putState what changed for the indexes.
func (p *batchPlan) writePuts(tx *bolt.Tx, bk batchBuckets, olds []memory.Memory, oheads []recHeader) error {
	for i := range p.puts {
		m, om, oh := &p.puts[i], &olds[i], oheads[i]
		st := &p.putState[i]
		st.textChanged = m.Text != om.Text || m.Project != om.Project || m.Kind != om.Kind || m.Source != om.Source
		st.vecChanged = !sameVector(m.Embedding, om.Embedding)
		st.h = recHeader{seq: p.seq, tseq: oh.tseq, ord: oh.ord}
		if st.textChanged {
			st.h.tseq = p.seq
		}
		if m.ContentHash != om.ContentHash {
			if err := bk.hashes.Delete(hashKey(om.ContentHash, m.ID)); err != nil {
				return err
			}
		}
		if err := writeRecord(tx, st.h, m); err != nil {
			return fmt.Errorf("write %s: %w", m.ID, err)
		}
	}
	return nil
}

// writeTrash moves the records of b.Trash (encoded in vals) to the trash,
// leaving a tombstone for the text index.
func (p *batchPlan) writeTrash(bk batchBuckets, vals [][]byte) error {
	for i, t := range p.b.Trash {
		oh, om, err := decodeForWrite(t.ID, vals[i])
		if errors.Is(err, ErrUnreadable) {
			// Nothing the trash could restore: deleted for good (unreadable.go).
			if err := deleteUnreadableTx(bk.recs.Tx(), t.ID, vals[i], p.seq); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("record %s: %w", t.ID, err)
		}
		if err := enqueueDelete(bk.recs.Tx(), &om, p.seq); err != nil {
			return err
		}
		id := []byte(t.ID)
		if err := bk.trash.Put(id, encodeTrash(p.now, t.Reason, vals[i])); err != nil {
			return err
		}
		if err := bk.hashes.Delete(hashKey(om.ContentHash, t.ID)); err != nil {
			return err
		}
		if err := bk.order.Delete(u64(oh.ord)); err != nil {
			return err
		}
		if err := bk.recs.Delete(id); err != nil {
			return err
		}
		if err := bk.dels.Put(id, u64(p.seq)); err != nil {
			return err
		}
		if err := forgetRecalledTx(bk.recs.Tx(), t.ID); err != nil { // recalllog.go
			return err
		}
	}
	return nil
}

// writeRestored writes the restored records back as live ones and takes
// them out of the trash and the tombstones.
func (p *batchPlan) writeRestored(tx *bolt.Tx, bk batchBuckets) error {
	for i := range p.restored {
		m := &p.restored[i]
		if err := writeRecord(tx, p.rheads[i], m); err != nil {
			return fmt.Errorf("write %s: %w", m.ID, err)
		}
		if err := bk.trash.Delete([]byte(m.ID)); err != nil {
			return err
		}
		if err := bk.dels.Delete([]byte(m.ID)); err != nil {
			return err
		}
		if err := dropConflict(tx, []byte(m.ID)); err != nil {
			return err
		}
	}
	return nil
}

// dropResolved takes the conflict copies whose edit the batch puts out
// of the trash.
func (p *batchPlan) dropResolved(tx *bolt.Tx, bk batchBuckets) error {
	for _, id := range p.b.resolved {
		if bk.trash.Get([]byte(id)) == nil {
			return fmt.Errorf("restore %s: not in the trash: %w", id, memory.ErrNotFound)
		}
		if err := bk.trash.Delete([]byte(id)); err != nil {
			return err
		}
		if err := dropConflict(tx, []byte(id)); err != nil {
			return err
		}
	}
	return nil
}

// restoreClashes maps each restored id whose text (content hash) another
// record of its project holds in the batch's end state to that record's
// id (per project, as FindByHash).
func (p *batchPlan) restoreClashes(tx *bolt.Tx) (map[string]string, error) {
	var clashes map[string]string
	for i := range p.restored {
		r := &p.restored[i]
		other, ok, err := holderOf(tx, r.ContentHash, r.Project, r.ID)
		if err != nil {
			return nil, fmt.Errorf("restore %s: %w", r.ID, err)
		}
		if ok {
			if clashes == nil {
				clashes = map[string]string{}
			}
			clashes[r.ID] = other.ID
		}
	}
	return clashes, nil
}

// textChanges are the committed batch's changes to the text index: the
// puts whose text changed and the restored records, and the trashed ids.
func (p *batchPlan) textChanges() ([]textPut, []string) {
	tputs := make([]textPut, 0, len(p.puts)+len(p.restored))
	tdels := make([]string, 0, len(p.b.Trash))
	for i := range p.puts {
		if st := p.putState[i]; st.textChanged {
			tputs = append(tputs, textPut{m: &p.puts[i], tseq: st.h.tseq})
		}
	}
	for _, t := range p.b.Trash {
		tdels = append(tdels, t.ID)
	}
	for i := range p.restored {
		tputs = append(tputs, textPut{m: &p.restored[i], tseq: p.rheads[i].tseq})
	}
	return tputs, tdels
}

// applyInMemory brings the entries and the vector index in step with the
// committed batch and publishes its sequence number.
func (s *Store) applyInMemory(p *batchPlan) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range p.puts {
		m, st := &p.puts[i], p.putState[i]
		e := entryFromMemory(st.h, m, s.intern)
		s.setEntry(m.ID, e)
		if st.vecChanged {
			s.indexVector(m.ID, m.Embedding, e)
		} else {
			s.vec.setMeta(m.ID, e)
		}
	}
	for _, t := range p.b.Trash {
		s.dropEntry(t.ID)
		s.unindexVector(t.ID)
		s.forgetUnreadable([]string{t.ID})
	}
	for i := range p.restored {
		m := &p.restored[i]
		e := entryFromMemory(p.rheads[i], m, s.intern)
		s.setEntry(m.ID, e)
		s.indexVector(m.ID, m.Embedding, e)
	}
	s.setSeq(p.seq)
}
