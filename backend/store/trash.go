package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// The trash holds records moved out of the store by Apply (Batch.Trash):
// the steward's pruned and merged-away memories. A trashed record is not a
// memory of the store any more: it is not searched (vector or text), not
// counted (Count, Info, Peek), not iterated and not exported, and its
// content hash is out of the hash index, so the same text can be stored
// again while it sits in the trash. Restore brings it back exactly as it
// was (same id, fields, embedding and insertion order) unless a live
// record now holds the same text or id (a *ConflictError says which).
// PurgeTrash, PurgeTrashed and PurgeAllTrash delete it for good.
//
// A trash value in the trash bucket is
//
//	[1]trashVersion | varint trashedAt (unix ns) | uvarint len | reason | record
//
// where record is the record's value as it was in the recs bucket.
const trashVersion = 1

// TrashedMemory is one record in the trash.
type TrashedMemory struct {
	// Memory is the record as it was trashed, without its embedding.
	Memory    memory.Memory `json:"memory"`
	TrashedAt time.Time     `json:"trashed_at"`
	Reason    string        `json:"reason"`
	// Conflict marks a conflict copy: this machine's version of a team
	// memory the team refused (conflict.go); its restore is an edit of
	// that memory.
	Conflict *TrashConflict `json:"conflict,omitempty"`
}

// trashEntry is a decoded trash value; rec aliases the value.
type trashEntry struct {
	at     time.Time
	reason string
	rec    []byte
}

func encodeTrash(at time.Time, reason string, rec []byte) []byte {
	buf := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(reason)+len(rec))
	buf = append(buf, trashVersion)
	buf = binary.AppendVarint(buf, at.UnixNano())
	buf = binary.AppendUvarint(buf, uint64(len(reason)))
	buf = append(buf, reason...)
	return append(buf, rec...)
}

func decodeTrash(b []byte) (trashEntry, error) {
	var te trashEntry
	if len(b) < 1 || b[0] != trashVersion {
		return te, fmt.Errorf("%w: unknown trash entry version", errCorrupt)
	}
	r := recReader{p: b[1:]}
	at := r.varint()
	reason := r.bytes(r.uvarint())
	if r.bad {
		return te, fmt.Errorf("%w: truncated trash entry", errCorrupt)
	}
	te.at = time.Unix(0, at).UTC()
	te.reason = string(reason)
	te.rec = r.p
	return te, nil
}

// Trash lists the trashed records, oldest trashed first, without their
// embeddings. An entry that cannot be read is left out and noted
// (Info.TrashUnreadable and a warning naming it: trashbad.go), so one
// never hides the others.
func (s *Store) Trash(ctx context.Context) ([]TrashedMemory, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var out []TrashedMemory
	var bad map[string]error
	err := s.viewPublished(func(tx *bolt.Tx) error {
		out, bad = nil, nil
		b := tx.Bucket(bucketTrash)
		if b == nil {
			return nil
		}
		n := 0
		return b.ForEach(func(k, v []byte) error {
			if n++; n%1024 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			te, _, m, err := decodeTrashed(v, false)
			if err != nil {
				if bad == nil {
					bad = map[string]error{}
				}
				bad[string(k)] = err
				return nil
			}
			out = append(out, TrashedMemory{Memory: m, TrashedAt: te.at, Reason: te.reason, Conflict: conflictOf(tx, k)})
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list trash: %w", err)
	}
	s.noteBadTrash(bad)
	slices.SortFunc(out, func(a, b TrashedMemory) int {
		if c := a.TrashedAt.Compare(b.TrashedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Memory.ID, b.Memory.ID)
	})
	return out, nil
}

// TrashGet returns the trashed records among ids with their embeddings;
// ids not in the trash are absent from the map, and so are entries that
// cannot be read (noted as Trash notes them).
func (s *Store) TrashGet(ctx context.Context, ids []string) (map[string]TrashedMemory, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	out := make(map[string]TrashedMemory, len(ids))
	var bad map[string]error
	err := s.viewPublished(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTrash)
		if b == nil {
			return nil
		}
		for _, id := range ids {
			v := b.Get([]byte(id))
			if v == nil {
				continue
			}
			te, _, m, err := decodeTrashed(v, true)
			if err != nil {
				if bad == nil {
					bad = map[string]error{}
				}
				bad[id] = err
				continue
			}
			out[id] = TrashedMemory{Memory: m, TrashedAt: te.at, Reason: te.reason, Conflict: conflictOf(tx, []byte(id))}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read trash: %w", err)
	}
	s.noteBadTrash(bad)
	return out, nil
}

// Restore brings the trashed records ids back as live records, exactly as
// they were trashed, and indexes them, in one transaction (see Apply). An
// id not in the trash is memory.ErrNotFound; a record whose text (content
// hash) or id is now held by a live memory is a *ConflictError naming it,
// and nothing is restored. A conflict copy (TrashedMemory.Conflict) of a
// live memory does not come back as a record of its own: its edit is
// applied onto that memory, as a new edit of the version it holds now
// (conflict.go), and the copy leaves the trash; the memory changed
// between the two reads is a *ConflictError.
func (s *Store) Restore(ctx context.Context, ids ...string) error {
	_, err := s.restore(ctx, ids, nil)
	return err
}

// Restored says where a restore put the ids it was given: what a caller
// announces (a conflict copy's restore changes the memory it is a copy
// of, and no record of the copy's id comes back).
type Restored struct {
	// IDs came back as live records of their own (a conflict copy of a
	// memory deleted since included).
	IDs []string
	// Edited are the live memories that conflict copies' edits were
	// applied onto (each once), the copies having left the trash.
	Edited []string
}

// restore is Restore with new embeddings of trashed texts (vecs, by id).
func (s *Store) restore(ctx context.Context, ids []string, vecs map[string][]float32) (Restored, error) {
	if len(ids) == 0 {
		return Restored{}, nil
	}
	if err := s.checkOpen(); err != nil {
		return Restored{}, err
	}
	edits, rest, err := s.restoreConflicts(ctx, ids, vecs)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	b := Batch{Restore: rest}
	for id, v := range vecs {
		if slices.Contains(rest, id) {
			if b.RestoreEmbeddings == nil {
				b.RestoreEmbeddings = map[string][]float32{}
			}
			b.RestoreEmbeddings[id] = v
		}
	}
	conflictBatch(&b, edits)
	out := Restored{IDs: rest}
	for _, e := range edits {
		if !slices.Contains(out.Edited, e.edit.ID) {
			out.Edited = append(out.Edited, e.edit.ID)
		}
	}
	if err := s.Apply(ctx, b); err != nil {
		if errors.Is(err, ErrIndexPending) { // written: the index follows
			return out, fmt.Errorf("restore: %w", err)
		}
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	return out, nil
}

// RestoreWith is Restore for records that may have been trashed before a
// change of embedding model: those whose vector is not of the store's
// model now are embedded again with emb (which must make the store's
// model) and come back with that vector (Batch.RestoreEmbeddings). A nil
// emb is Restore. It says where the ids went (Restored).
func (s *Store) RestoreWith(ctx context.Context, emb memory.Embedder, ids ...string) (Restored, error) {
	if len(ids) == 0 {
		return Restored{}, nil
	}
	vecs, err := s.TrashEmbeddings(ctx, emb, ids)
	if err != nil {
		return Restored{}, fmt.Errorf("restore: %w", err)
	}
	return s.restore(ctx, ids, vecs)
}

// TrashEmbeddings embeds again, with emb, the texts of the trashed records
// among ids whose vector is not of the store's model (trashed before a
// change of model), for Batch.RestoreEmbeddings; nil when there are none
// or emb is nil. emb must make the store's model.
func (s *Store) TrashEmbeddings(ctx context.Context, emb memory.Embedder, ids []string) (map[string][]float32, error) {
	if emb == nil {
		return nil, nil
	}
	trashed, err := s.TrashGet(ctx, ids)
	if err != nil {
		return nil, err
	}
	info := s.Info()
	var stale []memory.Memory
	for _, id := range ids {
		if t, ok := trashed[id]; ok && (t.Memory.EmbeddingModel != info.Model || len(t.Memory.Embedding) != info.Dim) {
			stale = append(stale, t.Memory)
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	if emb.Model() != info.Model || emb.Dim() != info.Dim {
		return nil, fmt.Errorf("embedder %s (%d) for a store of %s (%d): %w", emb.Model(), emb.Dim(), info.Model, info.Dim, memory.ErrModelMismatch)
	}
	if err := EmbedInto(ctx, emb, stale); err != nil {
		return nil, fmt.Errorf("embed trashed records of another model: %w", err)
	}
	out := make(map[string][]float32, len(stale))
	for _, m := range stale {
		out[m.ID] = m.Embedding
	}
	return out, nil
}

// PurgeTrash deletes for good the records trashed before before (and any
// trash entry that cannot be read), and returns how many it deleted.
func (s *Store) PurgeTrash(ctx context.Context, before time.Time) (int, error) {
	n, err := s.purgeTrash(ctx, func(b *bolt.Bucket) ([][]byte, error) {
		return trashKeys(b, func(v []byte) bool {
			te, _, _, err := decodeTrashed(v, false)
			return err != nil || te.at.Before(before)
		})
	})
	if err != nil {
		return 0, fmt.Errorf("purge trash: %w", err)
	}
	return n, nil
}

// PurgeTrashed deletes for good the trashed records ids, at once: an id
// not in the trash is memory.ErrNotFound naming it, and nothing is
// deleted. It returns how many it deleted (the distinct ids).
func (s *Store) PurgeTrashed(ctx context.Context, ids ...string) (int, error) {
	ids = uniqueIDs(ids)
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := s.purgeTrash(ctx, func(b *bolt.Bucket) ([][]byte, error) {
		doomed := make([][]byte, 0, len(ids))
		var missing []string
		for _, id := range ids {
			if b == nil || b.Get([]byte(id)) == nil {
				missing = append(missing, id)
				continue
			}
			doomed = append(doomed, []byte(id))
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s not in the trash: %w", strings.Join(missing, ", "), memory.ErrNotFound)
		}
		return doomed, nil
	})
	if err != nil {
		return 0, fmt.Errorf("purge from the trash: %w", err)
	}
	return n, nil
}

// PurgeAllTrash empties the trash for good and returns how many records
// it deleted.
func (s *Store) PurgeAllTrash(ctx context.Context) (int, error) {
	n, err := s.purgeTrash(ctx, func(b *bolt.Bucket) ([][]byte, error) {
		return trashKeys(b, func([]byte) bool { return true })
	})
	if err != nil {
		return 0, fmt.Errorf("empty the trash: %w", err)
	}
	return n, nil
}

// conflictOf is the conflict mark of trash entry id (nil: none).
func conflictOf(tx *bolt.Tx, id []byte) *TrashConflict {
	if c := trashConflict(tx, id); c != nil {
		return &c.TrashConflict
	}
	return nil
}

// trashKeys returns a copy of the keys of the trash entries (b, nil when
// there is no trash bucket yet) whose value doomed picks.
func trashKeys(b *bolt.Bucket, doomed func(v []byte) bool) ([][]byte, error) {
	if b == nil {
		return nil, nil
	}
	var keys [][]byte
	err := b.ForEach(func(k, v []byte) error {
		if doomed(v) {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	return keys, err
}

// purgeTrash deletes for good, in one transaction, the trash entries pick
// names (pick gets the trash bucket, nil when there is none yet; an error
// of pick deletes nothing), with their recall-log previews, and returns
// how many it deleted.
func (s *Store) purgeTrash(ctx context.Context, pick func(b *bolt.Bucket) ([][]byte, error)) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTrash)
		doomed, err := pick(b)
		if err != nil {
			return err
		}
		if len(doomed) == 0 {
			return errNothingWritten
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return err
			}
			if err := forgetRecalledTx(tx, string(k)); err != nil { // recalllog.go
				return err
			}
			if err := dropConflict(tx, k); err != nil {
				return err
			}
		}
		n = len(doomed)
		return nil
	})
	if errors.Is(err, errNothingWritten) {
		return 0, nil
	}
	if err == nil {
		s.recheckBadTrash()
	}
	return n, err
}
