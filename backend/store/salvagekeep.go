package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// SalvageKept counts what a salvage carried over from the damaged file
// besides the records: every entry of the other buckets that could be
// read and is valid, and still true of the new store. Dropped says, one
// line per kind, what was left out and why.
type SalvageKept struct {
	// Trash counts the trashed memories kept (restorable as before), and
	// TrashConflicts those of them that are team conflict copies.
	Trash          int `json:"trash"`
	TrashConflicts int `json:"trash_conflicts"`
	// Outbox counts the team writes kept waiting to be pushed,
	// OutboxDeltas the counter changes, TeamBases the team versions the
	// local copies are based on.
	Outbox       int `json:"outbox"`
	OutboxDeltas int `json:"outbox_deltas"`
	TeamBases    int `json:"team_bases"`
	// TeamCursor: the team's change-feed cursor is kept (only when the
	// salvage lost nothing: see carryTeamMeta). TeamMachine and
	// TeamRefusals: this machine's name in the team and the writes the
	// team refused are kept.
	TeamCursor   bool `json:"team_cursor"`
	TeamMachine  bool `json:"team_machine"`
	TeamRefusals bool `json:"team_refusals"`
	// Recalls counts the recall log's entries kept (the indexes of the
	// memories they gave and mention are made from them).
	Recalls int `json:"recalls"`
	// Calibrations counts the similarity calibrations kept (one per model).
	Calibrations int `json:"calibrations"`
	// Decisions and DecisionHours count the write pipeline's decision log
	// and its hourly counters kept.
	Decisions     int `json:"decisions"`
	DecisionHours int `json:"decision_hours"`
	// TurnMarks counts the capture's turn marks kept.
	TurnMarks int      `json:"turn_marks"`
	Dropped   []string `json:"dropped"`
}

// salvageLostAny says whether a salvage may have lost a record the damaged
// file held: one unreadable, on an unreadable page, found only by
// scanning (perhaps an older version), merged as a duplicate (its id is
// gone), or counted by the meta beyond those found.
func salvageLostAny(rep *SalvageReport) bool {
	return rep.Lost > 0 || len(rep.Pages) > 0 || rep.Scanned > 0 || rep.Duplicates > 0 ||
		(rep.Counted > 0 && rep.Counted > rep.Saved+rep.Duplicates+rep.Lost)
}

// carryOver copies into s, the new store a salvage built from the records
// of w, every entry of w's other buckets that is readable, valid and
// still true of s (see each carry function), in one transaction. lostAny
// (salvageLostAny) keeps the team's cursor out. What it leaves out:
// tombstones (the text index is built anew), the staging area of a
// re-embedding cut short (`memtray reindex` starts it again), and the
// content-hash and insertion-order indexes (made anew with the records).
func (s *Store) carryOver(w *walkedFile, lostAny bool) (SalvageKept, error) {
	var k SalvageKept
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	seq := s.seq
	live := make(map[string]bool, len(s.entries))
	for id := range s.entries {
		live[id] = true
	}
	s.mu.RUnlock()
	newSeq := seq
	err := s.update(func(tx *bolt.Tx) error {
		k = SalvageKept{}
		c := &carrier{tx: tx, w: w, k: &k, live: live, seq: seq, trashed: map[string]bool{}}
		for _, step := range []func() error{c.keepTrash, c.conflicts, c.outbox, c.teamBases, c.calib, c.decisions, c.turns, c.recalls} {
			if err := step(); err != nil {
				return err
			}
		}
		c.teamMeta(lostAny)
		newSeq = c.seq
		if c.seq == seq {
			return nil
		}
		return tx.Bucket(bucketMeta).Put(keySeq, u64(c.seq))
	})
	if err != nil {
		return SalvageKept{}, fmt.Errorf("carry over the other buckets: %w", err)
	}
	s.mu.Lock()
	s.setSeq(max(s.seq, newSeq))
	s.mu.Unlock()
	return k, nil
}

// carrier is one carryOver's transaction and what it knows.
type carrier struct {
	tx      *bolt.Tx
	w       *walkedFile
	k       *SalvageKept
	live    map[string]bool // the ids of the new store's records
	trashed map[string]bool // the ids of the kept trash
	seq     uint64          // the new store's sequence number, advanced by the trash kept
}

// drop notes that n entries of a kind were left out, and why.
func (c *carrier) drop(n int, what, why string) {
	if n > 0 {
		c.k.Dropped = append(c.k.Dropped, fmt.Sprintf("%d %s: %s", n, what, why))
	}
}

// entries is the walked entries of bucket name.
func (c *carrier) entries(name []byte) []kv { return c.w.buckets[string(name)] }

// bucket creates bucket name in the new store.
func (c *carrier) bucket(name []byte) (*bolt.Bucket, error) {
	return c.tx.CreateBucketIfNotExists(name)
}

// keepTrash keeps every trash entry whose record decodes and validates and
// whose id no record of the new store holds (a live record wins: it may
// be the newer version, found by the scan). Each gets a new place in the
// insertion order, beyond the new store's (the old one may be another
// record's now), so that a restore puts it back at the end.
func (c *carrier) keepTrash() error {
	b, err := c.bucket(bucketTrash)
	if err != nil {
		return err
	}
	var bad, clash int
	for _, e := range c.entries(bucketTrash) {
		id := string(e.k)
		te, err := decodeTrash(e.v)
		var m memory.Memory
		if err == nil {
			_, m, err = decodeRecord(te.rec)
		}
		if err == nil && (m.ID != id || !ValidID(id)) {
			err = fmt.Errorf("it holds the id %q", m.ID)
		}
		if err == nil {
			err = m.Validate()
		}
		switch {
		case err != nil:
			bad++
			continue
		case c.live[id]:
			clash++
			continue
		}
		c.seq++
		rec, err := encodeRecord(recHeader{seq: c.seq, tseq: c.seq, ord: c.seq}, &m)
		if err != nil {
			return fmt.Errorf("trash entry %s: %w", id, err)
		}
		if err := b.Put(e.k, encodeTrash(te.at, te.reason, rec)); err != nil {
			return err
		}
		c.trashed[id] = true
		c.k.Trash++
	}
	c.drop(bad, "trashed memories", "unreadable")
	c.drop(clash, "trashed memories", "a saved memory has the same id")
	return nil
}

// conflicts keeps the conflict records of the kept trash entries.
func (c *carrier) conflicts() error {
	var bad int
	var b *bolt.Bucket
	for _, e := range c.entries(bucketTrashConflicts) {
		var cr conflictRecord
		if !c.trashed[string(e.k)] || json.Unmarshal(e.v, &cr) != nil || !ValidID(cr.Of) {
			bad++
			continue
		}
		if b == nil {
			var err error
			if b, err = c.bucket(bucketTrashConflicts); err != nil {
				return err
			}
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
		c.k.TrashConflicts++
	}
	c.drop(bad, "conflict copy records", "unreadable, or their trash entry is not kept (restored as plain memories then)")
	return nil
}

// outbox keeps the team writes waiting to be pushed that are still true:
// a put of a memory the new store holds, a delete of one it does not (a
// put of a lost memory would be pushed as a delete: the sync pushes what
// the store holds, and takes a missing record for a deleted one). Each
// gets the new store's sequence number (an acknowledgement compares it).
// Counter deltas are kept when valid: the counts were made.
func (c *carrier) outbox() error {
	var bad, lost int
	for _, e := range c.entries(bucketOutbox) {
		op, _, err := decodeOutbox(e.v)
		id := string(e.k)
		switch {
		case err != nil || !ValidID(id):
			bad++
			continue
		case (op == outboxDelete) == c.live[id]:
			lost++
			continue
		}
		if err := putOutbox(c.tx, id, op, c.seq); err != nil {
			return err
		}
		c.k.Outbox++
	}
	c.drop(bad, "team outbox entries", "unreadable")
	c.drop(lost, "team outbox entries", "their memory is lost (a put) or back (a delete): the next change of the memory queues it again")
	bad = 0
	for _, e := range c.entries(bucketOutboxDeltas) {
		var d CounterDelta
		if json.Unmarshal(e.v, &d) != nil || d.Validate() != nil || d.ID != string(e.k) {
			bad++
			continue
		}
		b, err := c.bucket(bucketOutboxDeltas)
		if err != nil {
			return err
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
		c.k.OutboxDeltas++
	}
	c.drop(bad, "team counter changes", "unreadable")
	return nil
}

// teamBases keeps the team versions the saved memories' copies are based
// on.
func (c *carrier) teamBases() error {
	var bad, gone int
	for _, e := range c.entries(bucketTeamBase) {
		var tb TeamBase
		switch {
		case json.Unmarshal(e.v, &tb) != nil:
			bad++
			continue
		case !c.live[string(e.k)]:
			gone++
			continue
		}
		b, err := c.bucket(bucketTeamBase)
		if err != nil {
			return err
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
		c.k.TeamBases++
	}
	c.drop(bad, "team bases", "unreadable")
	c.drop(gone, "team bases", "of memories not saved")
	return nil
}

// teamMeta keeps this machine's name in the team and the team's refusals,
// and the team's change-feed cursor only when the salvage lost nothing
// (lostAny false): the cursor says every change up to it is applied
// here, so a team memory lost with a damaged page would never be pulled
// again; without it, the next pull reads the team anew and brings every
// team memory back.
func (c *carrier) teamMeta(lostAny bool) {
	meta := c.tx.Bucket(bucketMeta)
	for _, e := range c.entries(bucketMeta) {
		var keep *bool
		switch {
		case bytes.Equal(e.k, keyTeamMachine) && ValidID(string(e.v)):
			keep = &c.k.TeamMachine
		case bytes.Equal(e.k, keyTeamRefusals) && len(e.v) <= MaxTeamRefusals:
			keep = &c.k.TeamRefusals
		case bytes.Equal(e.k, keyTeamCursor) && len(e.v) > 0:
			if lostAny {
				c.drop(1, "team sync cursor", "records were lost: the next pull reads the team anew, so team memories among them come back")
				continue
			}
			keep = &c.k.TeamCursor
		default:
			continue
		}
		if meta.Put(slices.Clone(e.k), slices.Clone(e.v)) == nil {
			*keep = true
		}
	}
}

// calib keeps the similarity calibrations (per model) that are JSON of an
// allowed size.
func (c *carrier) calib() error {
	var bad int
	for _, e := range c.entries(bucketCalib) {
		if !calibrationReadable(e.k, e.v) {
			bad++
			continue
		}
		b, err := c.bucket(bucketCalib)
		if err != nil {
			return err
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
		c.k.Calibrations++
	}
	c.drop(bad, "similarity calibrations", "unreadable (the daemon calibrates again)")
	return nil
}

// decisions keeps the decision log's entries and hourly counters that
// decode.
func (c *carrier) decisions() error {
	var bad int
	for _, e := range c.entries(bucketDecisions) {
		if len(e.k) <= 8 || len(e.k) > 8+maxDecisionID || len(e.v) > maxDecisionData {
			bad++
			continue
		}
		b, err := c.bucket(bucketDecisions)
		if err != nil {
			return err
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
		c.k.Decisions++
	}
	for _, e := range c.entries(bucketDecisionHours) {
		var dc DecisionCounts
		if len(e.k) != 8 || json.Unmarshal(e.v, &dc) != nil {
			bad++
			continue
		}
		b, err := c.bucket(bucketDecisionHours)
		if err != nil {
			return err
		}
		if err := b.Put(e.k, e.v); err != nil {
			return err
		}
		c.k.DecisionHours++
	}
	c.drop(bad, "decision log entries", "unreadable")
	return nil
}

// turns keeps the turn marks, but those of a turn with a mark that
// cannot be read or that names a lost memory (one the damaged file's
// insertion order or content hashes name, which the new store does not
// hold, live or trashed): captured again, such a turn is placed again
// (its statements stored already are found as duplicates) instead of
// being skipped as done. A mark naming a memory deleted before the
// damage is kept: the turn stays done, and the memory stays deleted.
func (c *carrier) turns() error {
	lost := liveIDs(c.w)
	for id := range lost {
		if c.live[id] || c.trashed[id] {
			delete(lost, id)
		}
	}
	byTurn := map[string][]kv{}
	bad := map[string]bool{}
	var order []string
	var unreadable int
	for _, e := range c.entries(bucketTurns) {
		i := bytes.IndexByte(e.k, 0)
		if i <= 0 {
			continue // keyTurnsPruned: made again by the next prune
		}
		turn := string(e.k[:i])
		if _, seen := byTurn[turn]; !seen {
			order = append(order, turn)
		}
		byTurn[turn] = append(byTurn[turn], e)
		tv, err := turnMarkOf(e.v)
		if err != nil {
			unreadable++
			bad[turn] = true
		} else if lost[tv.MemoryID] {
			bad[turn] = true
		}
	}
	var dropped int
	for _, turn := range order {
		if bad[turn] {
			dropped += len(byTurn[turn])
			continue
		}
		b, err := c.bucket(bucketTurns)
		if err != nil {
			return err
		}
		for _, e := range byTurn[turn] {
			if err := b.Put(e.k, e.v); err != nil {
				return err
			}
			c.k.TurnMarks++
		}
	}
	c.drop(dropped, "turn marks", fmt.Sprintf("of turns with a mark unreadable (%d) or naming a lost memory: such a turn is placed again if captured again", unreadable))
	return nil
}

// recalls keeps the recall log's entries that decode and validate, and
// makes its two indexes anew from them (recall_given: the newest entry
// that gave each memory; recall_mentions: the entries showing a memory's
// preview). The bucket's sequence goes on from the newest entry's.
func (c *carrier) recalls() error {
	type entry struct {
		seq uint64
		e   RecallEntry
		v   []byte
	}
	var es []entry
	var bad int
	for _, e := range c.entries(bucketRecalls) {
		re, err := recallEntryOf(e.k, e.v)
		if err != nil {
			bad++
			continue
		}
		es = append(es, entry{re.Seq, re, e.v})
	}
	c.drop(bad, "recall log entries", "unreadable")
	if len(es) == 0 {
		return nil
	}
	sort.Slice(es, func(i, j int) bool { return es[i].seq < es[j].seq })
	b, err := c.bucket(bucketRecalls)
	if err != nil {
		return err
	}
	given, err := c.bucket(bucketRecallGiven)
	if err != nil {
		return err
	}
	men, err := c.bucket(bucketRecallMentions)
	if err != nil {
		return err
	}
	for i := range es {
		e := &es[i]
		if err := b.Put(u64(e.seq), e.v); err != nil {
			return err
		}
		for _, m := range e.e.Given {
			if err := given.Put([]byte(m.ID), u64(e.seq)); err != nil {
				return err
			}
		}
		if err := putMentions(men, &e.e); err != nil {
			return err
		}
		c.k.Recalls++
	}
	return b.SetSequence(es[len(es)-1].seq)
}

// salvageDroppedAlways says what no salvage carries over, and why.
var salvageDroppedAlways = strings.Join([]string{
	"tombstones (the text index is built anew)",
	"a re-embedding's staging area (`memtray reindex` starts it again)",
	"the content-hash and insertion-order indexes (made anew with the records)",
}, "; ")

// The rules by which an entry of the recall log, the calibrations or the
// turn marks is readable: a salvage keeps the entries they pass (carrier)
// and `memtray doctor` counts those they fail (checker.checkLogs), so the
// doctor names what a salvage would leave out.

// recallEntryOf decodes and validates the recall log entry (k, v).
func recallEntryOf(k, v []byte) (RecallEntry, error) {
	var re RecallEntry
	if len(k) != 8 {
		return re, fmt.Errorf("%w: recall log key of %d bytes", errCorrupt, len(k))
	}
	if err := json.Unmarshal(v, &re); err != nil {
		return re, fmt.Errorf("%w: recall log entry: %v", errCorrupt, err)
	}
	if err := re.validate(); err != nil {
		return re, fmt.Errorf("%w: recall log entry: %v", errCorrupt, err)
	}
	re.Seq = getU64(k)
	return re, nil
}

// calibrationReadable says whether (k, v) is a calibration SetCalibration
// could have stored: a model's name and JSON of an allowed size (its
// fields are the calib package's, which decodes it at use and calibrates
// again when it cannot).
func calibrationReadable(k, v []byte) bool {
	return len(k) > 0 && len(k) <= maxModel && len(v) > 0 && len(v) <= maxCalibration && json.Valid(v)
}

// turnMarkOf decodes a turn mark's value (TurnMarks reads a mark that
// does not decode as no mark).
func turnMarkOf(v []byte) (turnMarkValue, error) {
	var tv turnMarkValue
	if err := json.Unmarshal(v, &tv); err != nil {
		return tv, fmt.Errorf("%w: turn mark: %v", errCorrupt, err)
	}
	return tv, nil
}
