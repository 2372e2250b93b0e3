package store

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// A trash entry that does not decode (its own bytes, or the record it
// holds, a field of the wrong type included: the rule every read of the
// trash decodes by, decodeTrashed) is left out of the trash's list, as
// List leaves out an unreadable record: Open notes every such entry
// (Info.TrashUnreadable, its id in Info.TrashUnreadableIDs and a warning
// naming it), and so does a listing
// that meets one after. It cannot be restored (an *unreadableTrashError,
// which is ErrUnreadable and memory.ErrNotFound); purging it (PurgeTrashed
// naming it, PurgeTrash, PurgeAllTrash) deletes it and takes it off.

// decodeTrashed decodes trash value v whole: the entry and the record it
// holds (its embedding too when withVector; the other fields by
// decodeFields, the one rule by which a record is readable).
func decodeTrashed(v []byte, withVector bool) (trashEntry, recHeader, memory.Memory, error) {
	var m memory.Memory
	te, err := decodeTrash(v)
	if err != nil {
		return te, recHeader{}, m, err
	}
	h, js, emb, err := splitRecord(te.rec, nil)
	if err != nil {
		return te, h, m, err
	}
	if err := decodeFields(js, &m); err != nil {
		return te, h, m, err
	}
	if withVector {
		m.Embedding = unpackVector(emb)
	}
	return te, h, m, nil
}

// unreadableTrashError is a restore's error for trash entry id, which
// does not decode (err says why): it is ErrUnreadable and
// memory.ErrNotFound, and names what deletes it.
type unreadableTrashError struct {
	id  string
	err error
}

// Error names the entry, why it cannot be read and what deletes it.
func (e *unreadableTrashError) Error() string {
	return fmt.Sprintf("trash entry %s cannot be read (%v), so it cannot be restored: `memtray trash purge %s` deletes it for good", e.id, e.err, e.id)
}

// Is makes the error ErrUnreadable and memory.ErrNotFound.
func (e *unreadableTrashError) Is(target error) bool {
	return target == ErrUnreadable || target == memory.ErrNotFound
}

// Unwrap is the decode error.
func (e *unreadableTrashError) Unwrap() error { return e.err }

// trashWarningPrefix begins the warning about trash entry id.
func trashWarningPrefix(id string) string { return "trash entry " + id + " is unreadable" }

// trashWarning is the warning about trash entry id, unreadable for err.
func trashWarning(id string, err error) string {
	return fmt.Sprintf("%s (%v): left out of the trash's list; `memtray trash purge %s` deletes it", trashWarningPrefix(id), err, id)
}

// badTrashSet is the set of trash entries noted unreadable (read only;
// nil when there is none).
func (s *Store) badTrashSet() map[string]struct{} {
	if p := s.badTrash.Load(); p != nil {
		return *p
	}
	return nil
}

// badTrashIDs are the ids of the trash entries noted unreadable, sorted
// (nil when there is none): Info.TrashUnreadableIDs.
func (s *Store) badTrashIDs() []string {
	set := s.badTrashSet()
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

// loadBadTrash notes, at Open (no lock needed), every trash entry of tx
// that does not decode.
func (s *Store) loadBadTrash(tx *bolt.Tx) error {
	b := tx.Bucket(bucketTrash)
	if b == nil {
		return nil
	}
	bad := map[string]error{}
	err := b.ForEach(func(k, v []byte) error {
		if _, _, _, err := decodeTrashed(v, false); err != nil {
			bad[string(k)] = err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("trash: %w", err)
	}
	s.addBadTrash(bad)
	return nil
}

// noteBadTrash notes trash entries a listing found unreadable (by id,
// with why), those not noted yet, with s.mu held for the warnings.
func (s *Store) noteBadTrash(bad map[string]error) {
	if len(bad) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addBadTrash(bad)
}

// addBadTrash adds bad to the set and its warnings (s.mu held, or Open).
func (s *Store) addBadTrash(bad map[string]error) {
	set := maps.Clone(s.badTrashSet())
	if set == nil {
		set = map[string]struct{}{}
	}
	added := false
	for _, id := range slices.Sorted(maps.Keys(bad)) {
		if _, ok := set[id]; ok {
			continue
		}
		set[id], added = struct{}{}, true
		s.warnings = append(s.warnings, trashWarning(id, bad[id]))
	}
	if added {
		s.badTrash.Store(&set)
	}
}

// recheckBadTrash takes off the set (and its warnings) the entries noted
// unreadable that a write has since removed or replaced with a readable
// one (a purge, a trash of a live record of that id, a team pull). Called
// under s.wmu after the write, not s.mu; nothing to do on a sound trash.
func (s *Store) recheckBadTrash() {
	set := s.badTrashSet()
	if len(set) == 0 {
		return
	}
	var gone []string
	_ = s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTrash)
		for id := range set {
			var v []byte
			if b != nil {
				v = b.Get([]byte(id))
			}
			if v == nil {
				gone = append(gone, id)
			} else if _, _, _, err := decodeTrashed(v, false); err == nil {
				gone = append(gone, id)
			}
		}
		return nil
	})
	if len(gone) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set = maps.Clone(s.badTrashSet())
	for _, id := range gone {
		delete(set, id)
		s.warnings = slices.DeleteFunc(s.warnings, func(w string) bool {
			return strings.HasPrefix(w, trashWarningPrefix(id)+" (")
		})
	}
	s.badTrash.Store(&set)
}
