package store

import (
	"bytes"
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
	// Trash moves live records to the trash (see Trash) with a reason.
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
	if len(b.Put) == 0 && len(b.Trash) == 0 && len(b.Restore) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.applyLocked(b)
}

// applyLocked is Apply with s.wmu held.
func (s *Store) applyLocked(b Batch) error {
	// Validate what needs no transaction.
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
			return fmt.Errorf("apply: %w", err)
		}
		m.Embedding = slices.Clone(m.Embedding)
		m.Hits = slices.Clone(m.Hits)
		if m.Kind == "" {
			m.Kind = memory.KindFact
		}
		if m.Type == "" {
			m.Type = memory.TypeProject
		}
		if err := s.checkFields(&m); err != nil {
			return fmt.Errorf("apply: put %s: %w", m.ID, err)
		}
		m.ContentHash = memory.ContentHash(m.Text)
		normalizeTimes(&m)
		puts[i] = m
	}
	for _, t := range b.Trash {
		if err := once(t.ID, "trash"); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		if len(t.Reason) > maxReason || !memory.ValidUTF8(t.Reason) {
			return fmt.Errorf("apply: trash %s: %w", t.ID, &memory.ValidationError{Problems: []string{"reason is longer than 1 KiB or not UTF-8"}})
		}
	}
	for _, id := range b.Restore {
		if err := once(id, "restore"); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	for id := range b.RestoreEmbeddings {
		if seen[id] != "restore" {
			return fmt.Errorf("apply: %w", &memory.ValidationError{Problems: []string{fmt.Sprintf("a restore embedding for %q, which is not restored", id)}})
		}
	}

	now := s.now().UTC()
	seq := s.seq + 1
	type putState struct {
		h                       recHeader
		textChanged, vecChanged bool
	}
	pstate := make([]putState, len(puts))
	restored := make([]memory.Memory, len(b.Restore))
	rheads := make([]recHeader, len(b.Restore))
	err := s.db.Update(func(tx *bolt.Tx) error {
		recs, hashes, order, dels := tx.Bucket(bucketRecs), tx.Bucket(bucketHash), tx.Bucket(bucketOrder), tx.Bucket(bucketDels)
		trash, err := tx.CreateBucketIfNotExists(bucketTrash)
		if err != nil {
			return err
		}
		conflict := &ConflictError{}
		// Check every precondition and existence before writing anything.
		for id, want := range b.IfUpdatedAt {
			v := recs.Get([]byte(id))
			if v == nil {
				conflict.Changed = append(conflict.Changed, id)
				continue
			}
			_, om, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("record %s: %w", id, err)
			}
			if !om.UpdatedAt.Equal(want) {
				conflict.Changed = append(conflict.Changed, id)
			}
		}
		olds := make([]memory.Memory, len(puts))
		oheads := make([]recHeader, len(puts))
		for i := range puts {
			v := recs.Get([]byte(puts[i].ID))
			if v == nil {
				return fmt.Errorf("put %s: %w", puts[i].ID, memory.ErrNotFound)
			}
			oheads[i], olds[i], err = decodeRecord(v)
			if err != nil {
				return fmt.Errorf("record %s: %w", puts[i].ID, err)
			}
			if puts[i].ContentHash != olds[i].ContentHash && slices.Equal(puts[i].Embedding, olds[i].Embedding) {
				return fmt.Errorf("put %s: %w", puts[i].ID, &memory.ValidationError{Problems: []string{"text changed but the embedding did not: embed the new text"}})
			}
		}
		trashVals := make([][]byte, len(b.Trash))
		for i, t := range b.Trash {
			v := recs.Get([]byte(t.ID))
			if v == nil {
				return fmt.Errorf("trash %s: %w", t.ID, memory.ErrNotFound)
			}
			trashVals[i] = v
		}
		for i, id := range b.Restore {
			v := trash.Get([]byte(id))
			if v == nil {
				return fmt.Errorf("restore %s: not in the trash: %w", id, memory.ErrNotFound)
			}
			te, err := decodeTrash(v)
			if err != nil {
				return fmt.Errorf("trash entry %s: %w", id, err)
			}
			h, m, err := decodeRecord(te.rec)
			if err != nil {
				return fmt.Errorf("trash entry %s: %w", id, err)
			}
			if v, ok := b.RestoreEmbeddings[id]; ok {
				m.Embedding, m.EmbeddingModel = v, ""
			}
			if err := s.checkFields(&m); err != nil {
				return fmt.Errorf("restore %s (trashed before a change of embedding model?): %w", id, err)
			}
			if recs.Get([]byte(id)) != nil {
				return fmt.Errorf("restore %s: %w", id, &ConflictError{Clashes: map[string]string{id: id}})
			}
			restored[i] = m
			rheads[i] = recHeader{seq: seq, tseq: seq, ord: h.ord}
		}
		if len(conflict.Changed) > 0 {
			sort.Strings(conflict.Changed)
			return conflict
		}

		// Write.
		for i := range puts {
			m, om, oh := &puts[i], &olds[i], oheads[i]
			st := &pstate[i]
			st.textChanged = m.Text != om.Text || m.Project != om.Project || m.Kind != om.Kind || m.Source != om.Source
			st.vecChanged = !slices.Equal(m.Embedding, om.Embedding)
			st.h = recHeader{seq: seq, tseq: oh.tseq, ord: oh.ord}
			if st.textChanged {
				st.h.tseq = seq
			}
			if m.ContentHash != om.ContentHash {
				if err := hashes.Delete(hashKey(om.ContentHash, m.ID)); err != nil {
					return err
				}
			}
			if err := writeRecord(tx, st.h, m); err != nil {
				return fmt.Errorf("write %s: %w", m.ID, err)
			}
		}
		for i, t := range b.Trash {
			oh, om, err := decodeRecord(trashVals[i])
			if err != nil {
				return fmt.Errorf("record %s: %w", t.ID, err)
			}
			id := []byte(t.ID)
			if err := trash.Put(id, encodeTrash(now, t.Reason, trashVals[i])); err != nil {
				return err
			}
			if err := hashes.Delete(hashKey(om.ContentHash, t.ID)); err != nil {
				return err
			}
			if err := order.Delete(u64(oh.ord)); err != nil {
				return err
			}
			if err := recs.Delete(id); err != nil {
				return err
			}
			if err := dels.Put(id, u64(seq)); err != nil {
				return err
			}
		}
		for i := range restored {
			m := &restored[i]
			if err := writeRecord(tx, rheads[i], m); err != nil {
				return fmt.Errorf("write %s: %w", m.ID, err)
			}
			if err := trash.Delete([]byte(m.ID)); err != nil {
				return err
			}
			if err := dels.Delete([]byte(m.ID)); err != nil {
				return err
			}
		}
		// A restored record must not duplicate a live one's text in the
		// batch's end state.
		for i := range restored {
			prefix := []byte(restored[i].ContentHash)
			c := hashes.Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
				if other := string(k[len(prefix):]); other != restored[i].ID {
					if conflict.Clashes == nil {
						conflict.Clashes = map[string]string{}
					}
					conflict.Clashes[restored[i].ID] = other
					break
				}
			}
		}
		if len(conflict.Clashes) > 0 {
			return conflict
		}
		return putSeqCount(tx, seq, len(restored)-len(b.Trash))
	})
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}

	tputs := make([]textPut, 0, len(puts)+len(restored))
	tdels := make([]string, 0, len(b.Trash))
	s.mu.Lock()
	s.seq = seq
	for i := range puts {
		m, st := &puts[i], pstate[i]
		e := entryFromMemory(st.h, m, s.intern)
		s.entries[m.ID] = e
		if st.vecChanged {
			s.vec.add(m.ID, m.Embedding, e)
		} else {
			s.vec.setMeta(m.ID, e)
		}
		if st.textChanged {
			tputs = append(tputs, textPut{m: m, tseq: st.h.tseq})
		}
	}
	for _, t := range b.Trash {
		delete(s.entries, t.ID)
		s.vec.remove(t.ID)
		tdels = append(tdels, t.ID)
	}
	for i := range restored {
		m := &restored[i]
		e := entryFromMemory(rheads[i], m, s.intern)
		s.entries[m.ID] = e
		s.vec.add(m.ID, m.Embedding, e)
		tputs = append(tputs, textPut{m: m, tseq: rheads[i].tseq})
	}
	s.mu.Unlock()
	if err := s.indexText(tputs, tdels); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	return nil
}
