package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// TeamChanges are changes pulled from the team database for ApplyTeam.
type TeamChanges struct {
	// Put are team memories as the team holds them now, each with an
	// embedding of the store's model; their counters are the team's sums.
	Put []memory.Memory
	// Delete are memories the team deleted, or local copies being
	// relinked to the team memory holding the same text: moved to the
	// trash with Reason, their outbox entries and deltas dropped.
	Delete []TeamDelete
	// Cursor, when not nil, is stored as the team cursor (TeamCursor) in
	// the same transaction.
	Cursor []byte
	// Conflicts keep the local copies of some puts' memories as conflict
	// copies in the trash (conflict.go) when the put replaces them and
	// they differ from it in what the team shares: this machine's edits
	// the team refused as stale, taken back as the team's version.
	Conflicts []TeamConflict
}

// TeamDelete is one memory ApplyTeam removes.
type TeamDelete struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// TeamApplied counts what ApplyTeam did.
type TeamApplied struct {
	// Put counts the memories added or updated.
	Put int `json:"put"`
	// Kept counts the puts left alone because a local write of the memory
	// waits in the outbox (the push decides, by UpdatedAt), and the deletes
	// left alone because a local restore of it waits too, or because it is
	// personal here.
	Kept int `json:"kept"`
	// KeptPuts are the ids of the puts left alone for a waiting local
	// write (the team sync keeps a refused edit held for them, see
	// teamsync's refusals.go); not reported.
	KeptPuts []string `json:"-"`
	// Skipped counts new memories whose text another live local memory
	// holds already.
	Skipped int `json:"skipped"`
	// Deleted counts the memories moved to the trash.
	Deleted int `json:"deleted"`
	// Invalid counts puts this store cannot hold (an id or field its rules
	// refuse): skipped, so one bad row never stops a pull.
	Invalid int `json:"invalid,omitempty"`
	// InvalidWhy says why the first of them was refused (its id and the
	// rule, e.g. an embedding with NaN or Inf), for the sync's log; "" when
	// none was. Not reported.
	InvalidWhy string `json:"-"`
	// Unreadable counts the changes that met a local record Open could
	// not decode (Info.Unreadable): the team's version replaced it (a
	// put), or its delete removed it; both are in Put or Deleted too.
	// UnreadableIDs names them, for the sync's log (not reported).
	Unreadable    int      `json:"unreadable,omitempty"`
	UnreadableIDs []string `json:"-"`
	// ScopeUnknown names the puts among them whose local record was
	// too garbled to say whether the user had made it personal here
	// (see localOfUnreadable): they took the team's copy and its scope,
	// and a personal scope chosen here, if there was one, is lost. For
	// the sync's log; not reported.
	ScopeUnknown []string `json:"-"`
	// PutIDs and DeletedIDs are the ids of the memories written (added or
	// updated: Put) and moved to the trash (Deleted), for the team sync to
	// announce; not the puts and deletes left alone. Not reported.
	PutIDs     []string `json:"-"`
	DeletedIDs []string `json:"-"`
}

// ApplyTeam applies changes pulled from the team in one transaction, as
// the store's other writes do (the one writer; the indexes follow), without
// enqueueing them in the outbox. A put keeps the record's local fields
// (pin, snooze, hits, last access, superseded-by, a personal scope the
// user chose here) and takes the team's
// text, metadata and counters, plus the deltas of this store still waiting
// to be pushed; it marks the memory it supersedes as superseded. A put of
// a memory with a local write waiting in the outbox is left to the push;
// a delete wins over such a write, unless the write is a restore from the
// trash (the user's undo), which the push takes to the team. A put of a
// memory that is in the trash here (this member's delete of it refused by
// the team, or its owner's restore) takes it out of the trash. A delete
// leaves a memory made personal here alone. A put named in Conflicts
// keeps the local version it replaces, if it differs, as a conflict copy
// in the trash. A put the store's rules refuse is skipped and counted
// (TeamApplied.Invalid): the team database is outside input. A change of
// a local record that does not decode (Info.Unreadable: skipped by every
// read) is applied to it, and counted (TeamApplied.Unreadable): a put's
// version replaces the unreadable bytes, whatever local write waits in
// the outbox (it can never be pushed, except a move out of the team,
// which needs no record), keeping what can still be read of the local
// record (localOfUnreadable: its personal scope and local fields), and a
// delete removes them (not to the trash, which holds readable records) —
// the team holds the good copy, or deleted it. So one bad row stops no
// pull, and the change is not lost behind the cursor.
func (s *Store) ApplyTeam(ctx context.Context, ch TeamChanges) (TeamApplied, error) {
	var res TeamApplied
	if err := s.checkOpen(); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	puts := make([]memory.Memory, 0, len(ch.Put))
	invalid, why := 0, ""
	refuse := func(id string, err error) {
		if invalid++; why == "" {
			why = fmt.Sprintf("%q: %v", id, err)
		}
	}
	for _, m := range ch.Put {
		if !ValidID(m.ID) {
			refuse(m.ID, fmt.Errorf("id is invalid: %w", memory.ErrInvalid))
			continue
		}
		m.Embedding = slices.Clone(m.Embedding)
		m.Hits = nil
		m.Scope = memory.ScopeTeam
		if m.Kind == "" {
			m.Kind = memory.KindFact
		}
		if m.Type == "" {
			m.Type = memory.TypeProject
		}
		if err := s.checkFields(&m); err != nil {
			refuse(m.ID, err)
			continue
		}
		m.ContentHash = memory.ContentHash(m.Text)
		normalizeTimes(&m)
		puts = append(puts, m)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return res, err
	}
	s.remote = true
	defer func() { s.remote = false }()
	// Each write takes its own sequence number, as putBatchLocked's do: a
	// new record's is its place in the insertion order (the order bucket).
	var seq uint64
	next := func() uint64 { seq++; return seq }
	now := s.now().UTC()
	var written []memory.Memory
	var heads []recHeader
	var tdels []string
	err := s.update(func(tx *bolt.Tx) error {
		res = TeamApplied{Invalid: invalid, InvalidWhy: why}
		written, heads, tdels = nil, nil, nil
		unreadable := func(id string) {
			res.Unreadable++
			res.UnreadableIDs = append(res.UnreadableIDs, id)
		}
		seq = s.seq
		trash, err := tx.CreateBucketIfNotExists(bucketTrash)
		if err != nil {
			return err
		}
		recs, hashes, order, dels := tx.Bucket(bucketRecs), tx.Bucket(bucketHash), tx.Bucket(bucketOrder), tx.Bucket(bucketDels)
		outbox, deltas := tx.Bucket(bucketOutbox), tx.Bucket(bucketOutboxDeltas)
		pending := pendingDeltas(deltas)
		conflicts := make(map[string]TeamConflict, len(ch.Conflicts))
		for _, c := range ch.Conflicts {
			conflicts[c.ID] = c
		}
		count := 0
		for _, d := range ch.Delete {
			id := []byte(d.ID)
			if outbox != nil {
				if op, _, err := decodeOutbox(outbox.Get(id)); err == nil && op == outboxRestore && recs.Get(id) != nil {
					// The user's undo waits to be pushed: it restores the
					// team's copy, so the delete (older) does not apply.
					res.Kept++
					continue
				}
				if err := outbox.Delete(id); err != nil {
					return err
				}
			}
			for _, did := range pending[d.ID].ids {
				if err := deltas.Delete([]byte(did)); err != nil {
					return err
				}
			}
			if err := dropBase(tx, id); err != nil {
				return err
			}
			v := recs.Get(id)
			if v == nil {
				continue
			}
			oh, om, err := decodeRecord(v)
			switch {
			case errors.Is(err, errCorrupt):
				// Unreadable here: removed, its index keys with it.
				if _, err := dropUnreadableKeys(tx, id); err != nil {
					return fmt.Errorf("record %s: %w", d.ID, err)
				}
				unreadable(d.ID)
			case err != nil:
				return fmt.Errorf("record %s: %w", d.ID, err)
			case om.Scope == memory.ScopePersonal:
				// Moved to personal here (by the user, or a refused
				// restore): the team's delete is not this copy's.
				res.Kept++
				continue
			default:
				if err := trash.Put(id, encodeTrash(now, d.Reason, v)); err != nil {
					return err
				}
				if err := hashes.Delete(hashKey(om.ContentHash, d.ID)); err != nil {
					return err
				}
				if err := order.Delete(u64(oh.ord)); err != nil {
					return err
				}
			}
			if err := recs.Delete(id); err != nil {
				return err
			}
			if err := dels.Put(id, u64(next())); err != nil {
				return err
			}
			if err := forgetRecalledTx(tx, d.ID); err != nil { // recalllog.go
				return err
			}
			tdels = append(tdels, d.ID)
			res.Deleted++
			res.DeletedIDs = append(res.DeletedIDs, d.ID)
			count--
		}
		for i := range puts {
			m := puts[i]
			id := []byte(m.ID)
			v := recs.Get(id)
			var (
				oh  recHeader
				om  memory.Memory
				bad bool // the local record is unreadable
			)
			if v != nil {
				var err error
				oh, om, err = decodeRecord(v)
				if bad = errors.Is(err, errCorrupt); err != nil && !bad {
					return fmt.Errorf("record %s: %w", m.ID, err)
				}
			}
			var local unreadableLocal
			if bad {
				local = localOfUnreadable(v, outbox, id)
			}
			if outbox != nil && outbox.Get(id) != nil {
				if !bad {
					res.Kept++
					res.KeptPuts = append(res.KeptPuts, m.ID)
					continue
				}
				// A write of the unreadable record: it can never be
				// pushed, except its move out of the team, which is
				// pushed as a delete and needs no record.
				if !local.leaving {
					if err := outbox.Delete(id); err != nil {
						return err
					}
				}
			}
			p := pending[m.ID]
			if p.base != nil {
				// What the baseline will add once pushed.
				g := p.base.Growth(CounterDelta{Access: int64(m.AccessCount), Reinforced: int64(m.ReinforcedCount),
					FeedbackSum: m.FeedbackSum, FeedbackN: int64(m.FeedbackN)})
				p.sum.Access += g.Access
				p.sum.Reinforced += g.Reinforced
				p.sum.FeedbackN += g.FeedbackN
				p.sum.FeedbackSum += g.FeedbackSum
			}
			m.AccessCount += int(p.sum.Access)
			m.ReinforcedCount += int(p.sum.Reinforced)
			m.FeedbackN += int(p.sum.FeedbackN)
			m.FeedbackSum += p.sum.FeedbackSum
			n := next()
			h := recHeader{seq: n, tseq: n, ord: n}
			if bad {
				// The team's version replaces bytes no read decodes:
				// what of them can still be read is kept (the local
				// fields, a personal scope), and their place in the order.
				ord, err := dropUnreadableKeys(tx, id)
				if err != nil {
					return fmt.Errorf("record %s: %w", m.ID, err)
				}
				h.ord = cmp.Or(ord, n)
				unreadable(m.ID)
				if local.fields != nil {
					keepLocalFields(&m, local.fields)
				}
				if local.leaving {
					m.Scope = memory.ScopePersonal
				}
				if !local.scopeKnown() {
					res.ScopeUnknown = append(res.ScopeUnknown, m.ID)
				}
			} else if v != nil {
				keepLocalFields(&m, &om)
				h.ord = oh.ord
				if c, ok := conflicts[m.ID]; ok && sharedChanged(&om, &m) {
					if err := keepConflictCopy(tx, trash, c, &om, &m, next(), now); err != nil {
						return err
					}
				}
				if m.ContentHash != om.ContentHash {
					if err := hashes.Delete(hashKey(om.ContentHash, m.ID)); err != nil {
						return err
					}
				} else if len(m.Embedding) == 0 || slices.Equal(m.Embedding, om.Embedding) {
					m.Embedding = om.Embedding
				}
			} else {
				other, err := liveHolder(tx, m.ContentHash, m.Project)
				if err != nil {
					return fmt.Errorf("record %s: %w", m.ID, err)
				}
				if other != "" {
					res.Skipped++
					continue
				}
				// Back from the team (a member's delete of it refused, or
				// its owner's restore): its trash entry here is stale.
				if err := trash.Delete(id); err != nil {
					return err
				}
				count++
			}
			if err := writeRecord(tx, h, &m); err != nil {
				return fmt.Errorf("write %s: %w", m.ID, err)
			}
			if err := dels.Delete(id); err != nil {
				return err
			}
			if err := putBase(tx, &m); err != nil {
				return err
			}
			written, heads = append(written, m), append(heads, h)
			res.Put++
			res.PutIDs = append(res.PutIDs, m.ID)
			if m.Supersedes == "" {
				continue
			}
			if v := recs.Get([]byte(m.Supersedes)); v != nil {
				oh, om, err := decodeRecord(v)
				if err != nil || om.SupersededBy != "" {
					continue
				}
				om.SupersededBy = m.ID
				oh.seq = next()
				if err := writeRecord(tx, oh, &om); err != nil {
					return fmt.Errorf("write %s: %w", om.ID, err)
				}
				written, heads = append(written, om), append(heads, oh)
			}
		}
		if ch.Cursor != nil {
			if err := tx.Bucket(bucketMeta).Put(keyTeamCursor, ch.Cursor); err != nil {
				return err
			}
		}
		return putSeqCount(tx, seq, count)
	})
	if err != nil {
		return TeamApplied{}, fmt.Errorf("apply team changes: %w", err)
	}
	s.committed()
	tputs := make([]textPut, 0, len(written))
	for i := range written {
		tputs = append(tputs, textPut{m: &written[i], tseq: heads[i].tseq})
	}
	terr := s.indexText(tputs, tdels, seq)
	s.mu.Lock()
	for _, id := range tdels {
		s.dropEntry(id)
		s.unindexVector(id)
	}
	for i := range written {
		m := &written[i]
		e := entryFromMemory(heads[i], m, s.intern)
		s.setEntry(m.ID, e)
		s.indexVector(m.ID, m.Embedding, e)
	}
	s.forgetUnreadable(res.UnreadableIDs)
	s.setSeq(seq)
	s.mu.Unlock()
	s.recheckBadTrash() // a put takes its trash entry out, a delete puts one in
	if terr != nil {
		return res, fmt.Errorf("apply team changes: %w", terr)
	}
	return res, nil
}

// liveHolder is the id of a record of project (live or superseded, not
// trashed) holding content hash hash, or "": a teammate's memory is
// skipped when this store holds its text in its project already (per
// project, as FindByHash).
func liveHolder(tx *bolt.Tx, hash, project string) (string, error) {
	m, ok, err := holderOf(tx, hash, project, "")
	if err != nil || !ok {
		return "", err
	}
	return m.ID, nil
}

// memoryDeltas are the outbox deltas of one memory: their ids, the sum
// of the growths and the baseline, if one waits.
type memoryDeltas struct {
	ids  []string
	sum  CounterDelta
	base *CounterDelta
}

// pendingDeltas sums the outbox's deltas per memory (b may be nil).
func pendingDeltas(b *bolt.Bucket) map[string]memoryDeltas {
	out := map[string]memoryDeltas{}
	if b == nil {
		return out
	}
	_ = b.ForEach(func(k, v []byte) error {
		var d CounterDelta
		if json.Unmarshal(v, &d) != nil {
			return nil
		}
		md := out[d.MemoryID]
		md.ids = append(md.ids, string(k))
		if d.Baseline {
			md.base = &d
			out[d.MemoryID] = md
			return nil
		}
		md.sum.Access += d.Access
		md.sum.Reinforced += d.Reinforced
		md.sum.FeedbackN += d.FeedbackN
		md.sum.FeedbackSum += d.FeedbackSum
		out[d.MemoryID] = md
		return nil
	})
	return out
}

// ReserveTeam makes room in the in-memory vector index for n more
// memories, so a daemon joining a team of n memories grows it once
// instead of copying it at each ApplyTeam page as it grows. A hint: the
// index grows as needed either way; n is capped at 1<<24.
func (s *Store) ReserveTeam(n int) {
	if n <= 0 || s.checkOpen() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.vec.grow(min(n, 1<<24))
}

// dropUnreadableKeys deletes the index keys of record id, whose stored
// value does not decode, before a team pull replaces or deletes it: its
// content-hash keys (the hash is in the fields that do not decode, so
// every key naming id is read) and its insertion-order key (the
// header's, if the header decodes and the key names id; else every key
// naming id). It returns the record's place in the order when the header
// gave it, else 0.
func dropUnreadableKeys(tx *bolt.Tx, id []byte) (ord uint64, err error) {
	hashes, order := tx.Bucket(bucketHash), tx.Bucket(bucketOrder)
	hashLen := len(memory.ContentHash(""))
	var stale [][]byte
	if err := hashes.ForEach(func(k, _ []byte) error {
		if len(k) == hashLen+len(id) && bytes.HasSuffix(k, id) {
			stale = append(stale, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range stale {
		if err := hashes.Delete(k); err != nil {
			return 0, err
		}
	}
	if h, _, _, err := splitRecord(tx.Bucket(bucketRecs).Get(id), nil); err == nil && bytes.Equal(order.Get(u64(h.ord)), id) {
		return h.ord, order.Delete(u64(h.ord))
	}
	stale = stale[:0]
	if err := order.ForEach(func(k, v []byte) error {
		if bytes.Equal(v, id) {
			stale = append(stale, bytes.Clone(k))
		}
		return nil
	}); err != nil {
		return 0, err
	}
	for _, k := range stale {
		if err := order.Delete(k); err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// keepLocalFields gives a pulled put m the fields of its local copy om
// that are this machine's (pin, snooze, hits, last access,
// superseded-by, a personal scope the user chose here).
func keepLocalFields(m, om *memory.Memory) {
	m.Pinned, m.Hits, m.LastAccessed, m.LastReinforcedAt = om.Pinned, om.Hits, om.LastAccessed, om.LastReinforcedAt
	m.CooldownUntil, m.SupersededBy, m.ExtendsSource = om.CooldownUntil, om.SupersededBy, om.ExtendsSource
	if om.Scope == memory.ScopePersonal {
		m.Scope = om.Scope // kept here by the user's choice
	}
}

// unreadableLocal is what a team pull can still read of a local record
// that does not decode.
type unreadableLocal struct {
	// fields are the record's fields when its JSON is valid and only a
	// field of the wrong type failed it (as Go's decoder reads the rest:
	// that field left zero); nil otherwise.
	fields *memory.Memory
	// leaving: a move of it out of the team waits in the outbox (a delete
	// queued while the record stays): the user made it personal here.
	leaving bool
}

// scopeKnown says whether the local record's scope could be read.
func (l unreadableLocal) scopeKnown() bool { return l.fields != nil || l.leaving }

// localOfUnreadable reads what it can of local record id, whose value v
// does not decode, and of its outbox entry (outbox may be nil): its
// fields when only a field's type is wrong, and whether it was made
// personal here and that waits to be pushed. A record whose header or
// JSON is garbled says nothing of its scope unless that move waits; a
// personal scope chosen here and already pushed is then lost (the team
// deleted its copy when it was pushed, so such a put is rare).
func localOfUnreadable(v []byte, outbox *bolt.Bucket, id []byte) unreadableLocal {
	var l unreadableLocal
	if outbox != nil {
		op, _, err := decodeOutbox(outbox.Get(id))
		l.leaving = err == nil && op == outboxDelete
	}
	_, js, _, err := splitRecord(v, nil)
	if err != nil || !json.Valid(js) {
		return l
	}
	var m memory.Memory
	var te *json.UnmarshalTypeError
	if err := json.Unmarshal(js, &m); err == nil || errors.As(err, &te) && te.Field != "scope" {
		l.fields = &m
	}
	return l
}
