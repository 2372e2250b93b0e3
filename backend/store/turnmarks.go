package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/memtray/memtray/backend/memory"
)

// Turn marks. A captured turn that fails partway (a store error, the
// embedder gone, the daemon killed) is run again by its capture path; so
// is a turn read twice. The write pipeline records, per turn, what it did
// with each statement, so that a second run skips the statements stored
// the first time (instead of reinforcing them as their own duplicates) and
// a turn decided whole is skipped entirely (package ingest, ProcessTurn).

// bucketTurns holds the turn marks, key: turn key, 0, statement hash
// ("" for the whole turn); value: turnMarkValue as JSON. Created by the
// first MarkTurn.
var bucketTurns = []byte("turns")

// keyTurnsPruned, in bucketTurns, holds when expired marks were last
// removed (a key no turn key can have: turn keys are not empty).
var keyTurnsPruned = []byte("\x00pruned")

// TurnMarkTTL is how long a turn mark is kept: far longer than a turn is
// ever retried (a live turn a kill left on disk is decided at the next
// start; a headless session is held for hours, not weeks). A mark that
// records a memory stored of no project lasts longer (lastingMark).
const TurnMarkTTL = 30 * 24 * time.Hour

// A turn's marks are also how a session ingested when its project could
// not be told finds, read again once it can, the memories its first run
// stored (package ingest, relabel.go), to file them under the project:
// that second reading may come months later (a history imported, the
// repository cloned since). So a mark that records a memory stored or
// updated by a turn (outcome stored or updated) outlives TurnMarkTTL while
// that memory is in the store and of no project, and the turn's decided
// mark (hash "") with it: the marks kept are bounded by the memories of
// no project, not by time. Once the memory is filed under a project,
// moved, or deleted, they expire as any other.

// Bounds of a turn mark.
const (
	maxTurnKey   = 256
	maxTurnMarks = 4096 // per MarkTurn
)

// TurnMark is what the write pipeline did with one statement of a turn, or
// (Hash "") with the whole turn.
type TurnMark struct {
	// Turn names the turn (the caller's key, 1..256 bytes).
	Turn string
	// Hash is the statement's content hash; "" marks the whole turn.
	Hash string
	// Outcome is the verdict the statement (or turn) got; "" marks a
	// statement about to be placed whose outcome is not recorded yet
	// (pending: a kill may have cut its placement short, or not).
	Outcome string
	// MemoryID is the memory the statement was stored as, merged into or
	// updated.
	MemoryID string
	// At is when the mark was written (set by the store).
	At time.Time
	// Atomic, on a pending mark, says the placement it guards records its
	// outcome in its own transaction (Insert.Marks, UpdateMarked): while
	// it stays pending, the statement was not placed. A pending mark
	// without it (older writers marked the outcome after the placement)
	// may have been placed or not.
	Atomic bool
}

type turnMarkValue struct {
	Outcome  string    `json:"o,omitempty"`
	MemoryID string    `json:"m,omitempty"`
	At       time.Time `json:"at"`
	Atomic   bool      `json:"a,omitempty"`
}

func turnMarkKey(turn, hash string) []byte {
	return append(append([]byte(turn), 0), hash...)
}

// TurnMarks returns the marks recorded for turn, keyed by statement hash
// ("" for the whole turn). Expired marks are left out.
func (s *Store) TurnMarks(ctx context.Context, turn string) (map[string]TurnMark, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := map[string]TurnMark{}
	if turn == "" {
		return out, nil
	}
	cutoff := s.now().Add(-TurnMarkTTL)
	prefix := turnMarkKey(turn, "")
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTurns)
		if b == nil {
			return nil
		}
		recs := tx.Bucket(bucketRecs)
		var decided *TurnMark // the turn's decided mark, when expired
		lasting := false
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			tv, err := turnMarkOf(v)
			if err != nil {
				continue // a damaged mark is no mark: the statement is placed as new
			}
			h := string(k[len(prefix):])
			mk := TurnMark{Turn: turn, Hash: h, Outcome: tv.Outcome, MemoryID: tv.MemoryID, At: tv.At, Atomic: tv.Atomic}
			if tv.At.Before(cutoff) {
				switch {
				case h == "":
					decided = &mk
					continue
				case !lastingMark(recs, tv):
					continue
				}
				lasting = true
			}
			out[h] = mk
		}
		if decided != nil && lasting {
			out[""] = *decided
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the marks of turn %s: %w", turn, err)
	}
	return out, nil
}

// MarkTurn records marks in one transaction (a mark replaces the one of
// the same turn and hash), and about once an hour removes the marks older
// than TurnMarkTTL. Marks that record a write go in that write's
// transaction instead (Insert.Marks, UpdateMarked).
func (s *Store) MarkTurn(ctx context.Context, marks []TurnMark) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(marks) == 0 {
		return nil
	}
	if err := checkTurnMarks(marks); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	now := s.now().UTC()
	err := s.update(func(tx *bolt.Tx) error {
		return putTurnMarks(tx, marks, now)
	})
	if err != nil {
		return fmt.Errorf("mark turn %s: %w", marks[0].Turn, err)
	}
	return nil
}

// checkTurnMarks validates marks before a write carries them.
func checkTurnMarks(marks []TurnMark) error {
	if len(marks) > maxTurnMarks {
		return fmt.Errorf("mark a turn: %d marks, at most %d", len(marks), maxTurnMarks)
	}
	for _, m := range marks {
		if m.Turn == "" || len(m.Turn) > maxTurnKey || bytes.IndexByte([]byte(m.Turn), 0) >= 0 || len(m.Hash) > maxTurnKey || len(m.MemoryID) > maxTurnKey || len(m.Outcome) > 64 {
			return fmt.Errorf("mark a turn: turn key of %d bytes (1..%d, no NUL), hash %d, memory id %d, outcome %d", len(m.Turn), maxTurnKey, len(m.Hash), len(m.MemoryID), len(m.Outcome))
		}
	}
	return nil
}

// putTurnMarks writes marks (checked) in tx, stamped now, in order (a
// later mark of the same turn and hash replaces an earlier one), and
// removes the expired marks about once an hour.
func putTurnMarks(tx *bolt.Tx, marks []TurnMark, now time.Time) error {
	if len(marks) == 0 {
		return nil
	}
	now = now.UTC()
	b, err := tx.CreateBucketIfNotExists(bucketTurns)
	if err != nil {
		return err
	}
	for _, m := range marks {
		v, err := json.Marshal(turnMarkValue{Outcome: m.Outcome, MemoryID: m.MemoryID, At: now, Atomic: m.Atomic && m.Outcome == ""})
		if err != nil {
			return err
		}
		if err := b.Put(turnMarkKey(m.Turn, m.Hash), v); err != nil {
			return err
		}
	}
	return pruneTurnMarks(tx, b, now)
}

// pruneTurnMarks removes the expired marks of b (the turns bucket of tx),
// at most once an hour; lasting ones (lastingMark) and their turns'
// decided marks stay.
func pruneTurnMarks(tx *bolt.Tx, b *bolt.Bucket, now time.Time) error {
	var last time.Time
	if v := b.Get(keyTurnsPruned); v != nil && last.UnmarshalText(v) == nil && now.Sub(last) < time.Hour && !now.Before(last) {
		return nil
	}
	cutoff := now.Add(-TurnMarkTTL)
	recs := tx.Bucket(bucketRecs)
	var old [][]byte
	decided := map[string][]byte{} // turn -> its expired decided mark's key
	lasting := map[string]bool{}   // turns with a lasting mark
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if bytes.Equal(k, keyTurnsPruned) {
			continue
		}
		var tv turnMarkValue
		if json.Unmarshal(v, &tv) != nil {
			old = append(old, append([]byte(nil), k...))
			continue
		}
		if !tv.At.Before(cutoff) {
			continue
		}
		turn, hash, _ := bytes.Cut(k, []byte{0})
		switch {
		case len(hash) == 0:
			decided[string(turn)] = append([]byte(nil), k...)
		case lastingMark(recs, tv):
			lasting[string(turn)] = true
		default:
			old = append(old, append([]byte(nil), k...))
		}
	}
	for turn, k := range decided {
		if !lasting[turn] {
			old = append(old, k)
		}
	}
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	stamp, err := now.MarshalText()
	if err != nil {
		return err
	}
	return b.Put(keyTurnsPruned, stamp)
}

// lastingMark reports whether a mark older than TurnMarkTTL is kept: it
// records a memory a turn stored or updated that is in the store (recs)
// and of no project, which a later reading of the turn with its project
// files under it.
func lastingMark(recs *bolt.Bucket, tv turnMarkValue) bool {
	if tv.MemoryID == "" || (tv.Outcome != string(memory.VerdictStored) && tv.Outcome != string(memory.VerdictUpdated)) || recs == nil {
		return false
	}
	v := recs.Get([]byte(tv.MemoryID))
	if v == nil {
		return false
	}
	h, _, _, err := splitRecord(v, nil)
	return err == nil && h.project == ""
}
