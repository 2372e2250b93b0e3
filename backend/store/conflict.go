package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// Conflict copies. When the team refuses an edit of a team memory as
// stale (it holds another edit of the same field, made on another machine
// and pushed first, or the edit was queued without a base), this machine
// takes the team's version; its own version is not dropped but kept in
// the trash as a conflict copy, under an id of its own, as Dropbox and
// Syncthing keep a "conflicted copy" beside the file that won: not
// recalled or searched (two versions of one fact would both be given),
// not pushed (the team would hold two copies of the memory), listed with
// the reason and the team's text it lost to (both sides, as git shows),
// and restored in one action: Restore of a conflict copy applies its edit
// onto the live memory it is a copy of (the team's version now) as a new
// edit, which the outbox pushes as usual (see restoreConflicts).
//
// Bucket trash_conflicts: copy id -> JSON conflictRecord, for the trash
// entries that are conflict copies; dropped with the entry (restore,
// purge).
var bucketTrashConflicts = []byte("trash_conflicts")

// TrashConflict marks a trashed record as a conflict copy (see above).
type TrashConflict struct {
	// Of is the memory the copy is a version of: live, it holds the
	// team's version the copy lost to.
	Of string `json:"of"`
	// Theirs is the text of the team's version the copy lost to.
	Theirs string `json:"theirs"`
}

// conflictRecord is a conflict copy's value in trash_conflicts.
type conflictRecord struct {
	TrashConflict
	// Base is the version the copy was an edit of: its fields that
	// differ from it are what a restore applies (nil: not known, every
	// shared field of the copy is applied).
	Base *TeamBase `json:"base,omitempty"`
}

// TeamConflict asks ApplyTeam to keep this store's copy of a team memory
// as a conflict copy when the put of the team's version replaces it and
// the two differ in what the team shares.
type TeamConflict struct {
	// ID is the memory; CopyID the id the copy gets in the trash.
	ID     string `json:"id"`
	CopyID string `json:"copy_id"`
	// Reason is the trash entry's reason.
	Reason string `json:"reason"`
}

// keepConflictCopy moves old, the live record of a team memory that the
// team's version m replaces, to the trash as the conflict copy c asks
// for, with the base its edit was made on (a copy of that id kept already
// is left as it is). ord is the copy's place in the
// insertion order, should it come back as a memory of its own.
func keepConflictCopy(tx *bolt.Tx, trash *bolt.Bucket, c TeamConflict, old, m *memory.Memory, ord uint64, now time.Time) error {
	if trash.Get([]byte(c.CopyID)) != nil {
		return nil // kept already (a take repeated after a stop)
	}
	if !ValidID(c.CopyID) || c.CopyID == m.ID || tx.Bucket(bucketRecs).Get([]byte(c.CopyID)) != nil {
		return fmt.Errorf("conflict copy of %s: id %q is not free", m.ID, c.CopyID)
	}
	cp := *old
	cp.ID = c.CopyID
	cp.SupersededBy, cp.Hits, cp.Pinned = "", nil, false
	v, err := encodeRecord(recHeader{seq: ord, tseq: ord, ord: ord}, &cp)
	if err != nil {
		return err
	}
	reason := c.Reason
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	if err := trash.Put([]byte(c.CopyID), encodeTrash(now, reason, v)); err != nil {
		return err
	}
	rec := conflictRecord{TrashConflict: TrashConflict{Of: m.ID, Theirs: m.Text}, Base: teamBase(tx, []byte(m.ID))}
	js, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("conflict copy of %s: %w", m.ID, err)
	}
	b, err := tx.CreateBucketIfNotExists(bucketTrashConflicts)
	if err != nil {
		return err
	}
	return b.Put([]byte(c.CopyID), js)
}

// trashConflict is the conflict record of trash entry id (nil: not a
// conflict copy, or unreadable: then it is restored as any record).
func trashConflict(tx *bolt.Tx, id []byte) *conflictRecord {
	b := tx.Bucket(bucketTrashConflicts)
	if b == nil {
		return nil
	}
	v := b.Get(id)
	if v == nil {
		return nil
	}
	var c conflictRecord
	if json.Unmarshal(v, &c) != nil || c.Of == "" {
		return nil
	}
	return &c
}

// dropConflict forgets the conflict record of trash entry id.
func dropConflict(tx *bolt.Tx, id []byte) error {
	if b := tx.Bucket(bucketTrashConflicts); b != nil {
		if err := b.Delete(id); err != nil {
			return fmt.Errorf("trash conflicts: %w", err)
		}
	}
	return nil
}

// conflictEdit is a conflict copy's restore: the edit Put carries of the
// live memory it is a copy of.
type conflictEdit struct {
	copyID string
	edit   memory.Memory
	was    time.Time // the live memory's UpdatedAt the edit was made on
	none   bool      // the live memory holds the copy's version already
}

// restoreConflicts splits ids, to restore from the trash, into the
// conflict copies whose memory is live (their edits) and the rest (rest:
// restored as records of their own, a conflict copy of a memory gone
// since included). vecs are new embeddings of trashed texts, by id
// (RestoreEmbeddings).
func (s *Store) restoreConflicts(ctx context.Context, ids []string, vecs map[string][]float32) (edits []conflictEdit, rest []string, err error) {
	type found struct {
		rec  conflictRecord
		live memory.Memory
	}
	var conflicts map[string]found
	err = s.view(func(tx *bolt.Tx) error {
		for _, id := range ids {
			c := trashConflict(tx, []byte(id))
			if c == nil {
				continue
			}
			v := tx.Bucket(bucketRecs).Get([]byte(c.Of))
			if v == nil {
				continue
			}
			_, live, err := decodeRecord(v)
			if errors.Is(err, errCorrupt) {
				continue // unreadable: as a memory gone since, the copy comes back as a record of its own
			}
			if err != nil {
				return fmt.Errorf("record %s: %w", c.Of, err)
			}
			if conflicts == nil {
				conflicts = map[string]found{}
			}
			conflicts[id] = found{*c, live}
		}
		return nil
	})
	if err != nil || len(conflicts) == 0 {
		return nil, ids, err
	}
	var cids []string
	for _, id := range ids {
		if _, ok := conflicts[id]; ok {
			cids = append(cids, id)
		} else {
			rest = append(rest, id)
		}
	}
	copies, err := s.TrashGet(ctx, cids)
	if err != nil {
		return nil, nil, err
	}
	for _, id := range cids {
		f := conflicts[id]
		cp, ok := copies[id]
		if _, bad := s.badTrashSet()[id]; !ok && bad {
			// Unreadable: Apply's restore of it says so.
			rest = append(rest, id)
			continue
		}
		if !ok {
			return nil, nil, fmt.Errorf("restore %s: not in the trash: %w", id, memory.ErrNotFound)
		}
		if v, ok := vecs[id]; ok {
			cp.Memory.Embedding, cp.Memory.EmbeddingModel = v, ""
		}
		e := conflictEdit{copyID: id, was: f.live.UpdatedAt}
		e.edit = mine(f.live, cp.Memory, f.rec.Base)
		e.none = !sharedChanged(&f.live, &e.edit)
		e.edit.UpdatedAt = s.now().UTC()
		edits = append(edits, e)
	}
	return edits, rest, nil
}

// mine is live with the fields copy changed from base applied (base nil
// or unknown: every shared field of copy): the edit a conflict copy's
// restore makes of the live memory, on top of the team's version.
func mine(live, copy memory.Memory, base *TeamBase) memory.Memory {
	out := live
	unknown := base == nil || base.Unknown
	take := func(changed bool) bool { return unknown || changed }
	if take(memory.ContentHash(copy.Text) != base.contentHash()) && copy.Text != live.Text {
		out.Text, out.ContentHash = copy.Text, memory.ContentHash(copy.Text)
		out.Embedding, out.EmbeddingModel = copy.Embedding, copy.EmbeddingModel
	}
	if unknown {
		out.Kind, out.KindOrigin, out.Type = copy.Kind, copy.KindOrigin, copy.Type
		out.Project, out.Source, out.Surface = copy.Project, copy.Source, copy.Surface
		out.Importance, out.Supersedes = copy.Importance, copy.Supersedes
		return out
	}
	if copy.Kind != base.Kind || copy.KindOrigin != base.KindOrigin {
		out.Kind, out.KindOrigin = copy.Kind, copy.KindOrigin
	}
	pick(&out.Type, copy.Type, base.Type)
	pick(&out.Project, copy.Project, base.Project)
	pick(&out.Source, copy.Source, base.Source)
	pick(&out.Surface, copy.Surface, base.Surface)
	pick(&out.Importance, copy.Importance, base.Importance)
	pick(&out.Supersedes, copy.Supersedes, base.Supersedes)
	return out
}

// pick sets *dst to mine when mine changed the field from base.
func pick[T comparable](dst *T, mine, base T) {
	if mine != base {
		*dst = mine
	}
}

// contentHash is b's content hash ("" for nil).
func (b *TeamBase) contentHash() string {
	if b == nil {
		return ""
	}
	return b.ContentHash
}

// conflictBatch adds the conflict copies' edits to b (as puts, with their
// preconditions) and the copies to b.resolved.
func conflictBatch(b *Batch, edits []conflictEdit) {
	for _, e := range edits {
		b.resolved = append(b.resolved, e.copyID)
		if e.none {
			continue
		}
		b.Put = append(b.Put, e.edit)
		if b.IfUpdatedAt == nil {
			b.IfUpdatedAt = map[string]time.Time{}
		}
		b.IfUpdatedAt[e.edit.ID] = e.was
	}
}
