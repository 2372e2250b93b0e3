package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// The team outbox (issue 23). When Options.Shared is set, every write of a
// team memory records, in the write's own bbolt transaction, that the
// memory must be pushed to the team database: a write acknowledged
// locally is never lost to a crash between the write and the push. The
// hook sits in writeRecord and in the two deletes (Delete, Batch.Trash),
// which every write path goes through.
//
// Bucket outbox: memory id -> [1]op | uvarint seq. One entry per memory:
// the latest write wins (the sync loop pushes the record's current state,
// not a diff); a write that changes nothing the team shares (an access)
// queues no entry, only its counters' delta. op is outboxPut (push the
// record) or outboxDelete (delete it from the team: deleted, trashed, or moved to the personal scope).
// seq is the store sequence number of the write, so an acknowledgement
// removes the entry only when no newer write came since it was read.
//
// Bucket outbox_deltas: delta id -> JSON CounterDelta. Counters (access,
// reinforcement, feedback) are merged by deltas in the team, never by
// value: each write that makes a team memory's counters grow adds one
// delta with a fresh id (the push is idempotent by it). A memory entering
// the team scope brings its counters as one delta.
//
// Bucket team_base: memory id -> JSON TeamBase, the team's version this
// store's copy of a team memory is based on: set when the store takes the
// team's version (ApplyTeam) and when the team holds a pushed version as
// pushed (AckOutbox of an entry marked Accepted); seeded from the record
// before the write when a write finds none and nothing of the memory
// waits to be pushed (a store from before bases, push --all). A push
// carries it (OutboxEntry.Base): the team applies the write onto it.
//
// Writes of changes pulled from the team (ApplyTeam) are not enqueued.
var (
	bucketOutbox       = []byte("outbox")
	bucketOutboxDeltas = []byte("outbox_deltas")
	bucketTeamBase     = []byte("team_base")
	keyTeamCursor      = []byte("team_cursor")
	keyTeamRefusals    = []byte("team_refusals")
	keyTeamMachine     = []byte("team_machine")
)

const (
	outboxPut     byte = 1
	outboxDelete  byte = 2
	outboxRestore byte = 3 // a put of a record restored from the trash
)

// outboxStores maps the bbolt database of each open store with an outbox
// to its store, so writeRecord (which has only the transaction) finds the
// policy.
var outboxStores sync.Map // *bolt.DB -> *Store

// storeOf returns the store with an outbox that tx belongs to, or nil.
func storeOf(tx *bolt.Tx) *Store {
	v, ok := outboxStores.Load(tx.DB())
	if !ok {
		return nil
	}
	return v.(*Store)
}

// OutboxEntry is one memory waiting to be pushed to the team.
type OutboxEntry struct {
	ID string `json:"id"`
	// Delete: delete it from the team (Memory is empty); otherwise push
	// Memory, the record as stored now.
	Delete bool `json:"delete,omitempty"`
	// Restore: the record came back from the trash (an undo): the team's
	// copy, if deleted, must be restored before the push.
	Restore bool          `json:"restore,omitempty"`
	Memory  memory.Memory `json:"memory"`
	// Seq is the store sequence number of the write that queued it.
	Seq uint64 `json:"seq"`
	// Base is the team's version the local copy is based on (nil: none
	// known, e.g. a memory new to the team).
	Base *TeamBase `json:"base,omitempty"`
	// Accepted, set by the pusher before AckOutbox: the team holds
	// Memory's shared fields as pushed, so they become the copy's base;
	// of a delete, the team holds no version, so the base goes.
	Accepted bool `json:"-"`
	// Refused, set by the pusher before AckOutbox of a delete: the team
	// refused it and keeps its version (another member's memory, or an
	// edit of the text made meanwhile elsewhere). The base stays, marked
	// Apart, so EnqueueSinceBase does not send the delete again.
	Refused bool `json:"-"`
}

// TeamBase is a version of a team memory as a base (bucket team_base):
// its shared fields, the text by its content hash. A write of the local
// copy changed the fields where the copy differs from its base; the team
// applies those onto its own version (team.Store.Push).
type TeamBase struct {
	ContentHash string            `json:"content_hash"`
	Kind        memory.Kind       `json:"kind"`
	KindOrigin  memory.KindOrigin `json:"kind_origin,omitempty"`
	Type        memory.Type       `json:"type"`
	Project     string            `json:"project,omitempty"`
	Source      string            `json:"source,omitempty"`
	Surface     string            `json:"surface,omitempty"`
	Importance  float64           `json:"importance"`
	Supersedes  string            `json:"supersedes,omitempty"`
	// Unknown: the base is not known (a put queued by a daemon from
	// before bases, schema 3: its outbox entry has no stored base). It
	// agrees with neither side, so the team takes such a push only where
	// it equals the team's version and refuses it as stale otherwise: the
	// team's version may have changed since the copy's, and the writer's
	// clock cannot say which came first. The other fields are empty.
	Unknown bool `json:"unknown,omitempty"`
	// Apart: this machine keeps its copy out of the team while the team
	// keeps its version (not a field of the team's version: the team
	// never reads it). Set when the team refused this copy's delete or
	// move to personal (another member's memory, or an edit of the text
	// made meanwhile elsewhere: AckOutbox of an entry marked Refused), and
	// when this store takes the team's version into a copy the user made
	// personal here (ApplyTeam). EnqueueSinceBase sends no delete for
	// such a copy: the team answered that one already.
	Apart bool `json:"apart,omitempty"`
}

// Team is b as the team's version alone, without this machine's mark
// (Apart): what a copy's shared fields are compared with.
func (b TeamBase) Team() TeamBase {
	b.Apart = false
	return b
}

// UnknownBase is the base of a put queued without one (TeamBase.Unknown).
var UnknownBase = TeamBase{Unknown: true}

// BaseOf is m's shared version as a TeamBase.
func BaseOf(m memory.Memory) TeamBase {
	return TeamBase{ContentHash: memory.ContentHash(m.Text), Kind: m.Kind, KindOrigin: m.KindOrigin, Type: m.Type,
		Project: m.Project, Source: m.Source, Surface: m.Surface, Importance: m.Importance, Supersedes: m.Supersedes}
}

// teamBase is the stored base of memory id (nil: none).
func teamBase(tx *bolt.Tx, id []byte) *TeamBase {
	b := tx.Bucket(bucketTeamBase)
	if b == nil {
		return nil
	}
	v := b.Get(id)
	if v == nil {
		return nil
	}
	var tb TeamBase
	if json.Unmarshal(v, &tb) != nil {
		return nil // unreadable: as if none (the push falls back to the team's order by time)
	}
	return &tb
}

// putBase stores m's shared version as the base of its copy, marked
// Apart when m is personal here (a team version taken into a copy the
// user keeps out of the team: ApplyTeam).
func putBase(tx *bolt.Tx, m *memory.Memory) error {
	tb := BaseOf(*m)
	tb.Apart = m.Scope == memory.ScopePersonal
	return storeBase(tx, m.ID, tb)
}

// storeBase stores tb as the base of memory id's copy.
func storeBase(tx *bolt.Tx, id string, tb TeamBase) error {
	b, err := tx.CreateBucketIfNotExists(bucketTeamBase)
	if err != nil {
		return fmt.Errorf("team base: %w", err)
	}
	js, err := json.Marshal(tb)
	if err != nil {
		return fmt.Errorf("team base: %w", err)
	}
	if err := b.Put([]byte(id), js); err != nil {
		return fmt.Errorf("team base: %w", err)
	}
	return nil
}

// markApart marks the stored base of memory id (if any) Apart.
func markApart(tx *bolt.Tx, id []byte) error {
	tb := teamBase(tx, id)
	if tb == nil || tb.Apart {
		return nil
	}
	tb.Apart = true
	return storeBase(tx, string(id), *tb)
}

// dropBase forgets the base of memory id.
func dropBase(tx *bolt.Tx, id []byte) error {
	if b := tx.Bucket(bucketTeamBase); b != nil {
		if err := b.Delete(id); err != nil {
			return fmt.Errorf("team base: %w", err)
		}
	}
	return nil
}

// seedBase stores old as the base of its copy when none is stored and
// nothing of it waits to be pushed: the copy is as this store last
// synced it, so old is the version a write of it now is based on.
func seedBase(tx *bolt.Tx, old *memory.Memory) error {
	id := []byte(old.ID)
	if ob := tx.Bucket(bucketOutbox); ob != nil && ob.Get(id) != nil {
		return nil
	}
	if teamBase(tx, id) != nil {
		return nil
	}
	return putBase(tx, old)
}

// CounterDelta is what one daemon counted for one team memory (access,
// reinforcement, feedback) since its last push: the one definition of a
// counter delta, for the outbox here and for the team database
// (team.Store.AddCounters). Counters merge by adding deltas, never by the
// last writer's value, so two members' accesses both count.
type CounterDelta struct {
	// ID names the delta (a fresh id per outbox entry): pushing the same
	// ID twice counts it once.
	ID          string  `json:"id"`
	MemoryID    string  `json:"memory_id"`
	Access      int64   `json:"access"`
	Reinforced  int64   `json:"reinforced"`
	FeedbackSum float64 `json:"feedback_sum"`
	FeedbackN   int64   `json:"feedback_n"`
	// Baseline: the counts are the memory's whole local counters as it
	// entered the team scope (again), not a growth. The local counters of
	// a memory that was a team memory before hold the team's sums of back
	// then, so the pusher sends only what they exceed the team's sums by
	// (Growth); a baseline itself is never pushed.
	Baseline bool `json:"baseline,omitempty"`
}

// Zero reports whether d counts nothing.
func (d CounterDelta) Zero() bool {
	return d.Access == 0 && d.Reinforced == 0 && d.FeedbackN == 0 && d.FeedbackSum == 0
}

// Validate checks a delta before it is pushed or applied: an id of 1-128
// bytes, a memory id (ValidID), counts not negative and a feedback sum
// the ratings can make (within ±FeedbackN).
func (d CounterDelta) Validate() error {
	switch {
	case d.ID == "" || len(d.ID) > 128:
		return fmt.Errorf("counter delta: id %q is not 1-128 bytes", clipID(d.ID))
	case !ValidID(d.MemoryID):
		return fmt.Errorf("counter delta %s: memory id %q is not an id", clipID(d.ID), clipID(d.MemoryID))
	case d.Access < 0 || d.Reinforced < 0 || d.FeedbackN < 0:
		return fmt.Errorf("counter delta %s: counts are negative", clipID(d.ID))
	case math.IsNaN(d.FeedbackSum) || math.IsInf(d.FeedbackSum, 0) || math.Abs(d.FeedbackSum) > float64(d.FeedbackN):
		return fmt.Errorf("counter delta %s: feedback sum %v is not within ±%d ratings", clipID(d.ID), d.FeedbackSum, d.FeedbackN)
	}
	return nil
}

// Growth is what baseline d adds to a memory whose counters are team
// (the team's sums now): each count's excess over the team's, never
// negative, with the same id. A delta that is not a baseline is its own
// growth.
func (d CounterDelta) Growth(team CounterDelta) CounterDelta {
	if !d.Baseline {
		return d
	}
	g := CounterDelta{ID: d.ID, MemoryID: d.MemoryID,
		Access: max(0, d.Access-team.Access), Reinforced: max(0, d.Reinforced-team.Reinforced),
		FeedbackN: max(0, d.FeedbackN-team.FeedbackN)}
	if g.FeedbackN > 0 {
		g.FeedbackSum = max(-float64(g.FeedbackN), min(float64(g.FeedbackN), d.FeedbackSum-team.FeedbackSum))
	}
	return g
}

func clipID(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// counterDelta is what grew from old to new (old nil: everything new has);
// a counter that shrank (the steward's merges move counts) adds nothing.
func counterDelta(old, m *memory.Memory) CounterDelta {
	d := CounterDelta{MemoryID: m.ID, Access: int64(m.AccessCount), Reinforced: int64(m.ReinforcedCount),
		FeedbackSum: m.FeedbackSum, FeedbackN: int64(m.FeedbackN)}
	if old != nil {
		d.Access = max(0, d.Access-int64(old.AccessCount))
		d.Reinforced = max(0, d.Reinforced-int64(old.ReinforcedCount))
		d.FeedbackN = max(0, d.FeedbackN-int64(old.FeedbackN))
		d.FeedbackSum = m.FeedbackSum - old.FeedbackSum
		if d.FeedbackN == 0 {
			d.FeedbackSum = 0
		}
	}
	// A sum the ratings cannot make is clipped (the team checks it).
	d.FeedbackSum = max(-float64(d.FeedbackN), min(float64(d.FeedbackN), d.FeedbackSum))
	return d
}

// shared says whether m is a team memory under the store's policy.
func (s *Store) shared(m *memory.Memory) bool {
	return m != nil && s.opts.Shared != nil && s.opts.Shared(m)
}

// enqueueWrite is writeRecord's hook: m is about to replace the record
// stored under its id (if any), at store sequence seq.
func enqueueWrite(tx *bolt.Tx, m *memory.Memory, seq uint64) error {
	s := storeOf(tx)
	if s == nil || s.remote {
		return nil
	}
	var old *memory.Memory
	if v := tx.Bucket(bucketRecs).Get([]byte(m.ID)); v != nil {
		_, om, err := decodeRecord(v)
		if err != nil {
			return fmt.Errorf("outbox: record %s: %w", m.ID, err)
		}
		old = &om
	}
	oldShared := s.shared(old)
	switch {
	case s.shared(m):
		op := outboxPut
		switch {
		case old == nil:
			if tb := tx.Bucket(bucketTrash); tb != nil && tb.Get([]byte(m.ID)) != nil {
				op = outboxRestore
			}
		case !oldShared:
			// Moved (back) into the team: if the team deleted it when it
			// left, the push restores it rather than taking the delete
			// as the last word.
			op = outboxRestore
		default:
			// A write after a restore still restores, once pushed.
			if v := tx.Bucket(bucketOutbox); v != nil {
				if o, _, err := decodeOutbox(v.Get([]byte(m.ID))); err == nil && o == outboxRestore {
					op = outboxRestore
				}
			}
		}
		changed := old != nil && sharedChanged(old, m)
		if old != nil {
			// The team keeps the newest version by UpdatedAt: a write
			// here never makes a team memory older, and an edit is newer
			// than the version it edits, whatever this machine's clock
			// says (one behind the clock of the daemon that wrote that
			// version would lose the edit).
			if m.UpdatedAt.Before(old.UpdatedAt) {
				m.UpdatedAt = old.UpdatedAt
			}
			if !m.UpdatedAt.After(old.UpdatedAt) && changed {
				m.UpdatedAt = old.UpdatedAt.Add(time.Millisecond)
			}
		}
		if old != nil && oldShared {
			if err := seedBase(tx, old); err != nil {
				return err
			}
			// A write that changes nothing the team shares (an access, a
			// reinforcement, feedback, a local field) sends its counters
			// alone: queued as a put, it pushed this copy's text as the
			// newest version (the write moved UpdatedAt), over an edit
			// made elsewhere that this machine has not pulled yet.
			if op != outboxPut || changed {
				if err := putOutbox(tx, m.ID, op, seq); err != nil {
					return err
				}
			}
			return putDelta(tx, counterDelta(old, m))
		}
		if err := putOutbox(tx, m.ID, op, seq); err != nil {
			return err
		}
		// Entering the team scope (new, restored from the trash, or moved
		// from personal): the counters hold what the team counted before,
		// if it knew the memory, so they go as a baseline (the push sends
		// their excess over the team's sums), replacing the deltas still
		// waiting for this memory.
		if old != nil || op == outboxRestore { // a new id has none waiting
			if err := dropDeltas(tx, m.ID); err != nil {
				return err
			}
		}
		d := counterDelta(nil, m)
		d.Baseline = true
		return putDelta(tx, d)
	case oldShared:
		// Leaving the team: a personal memory sends nothing, not even
		// the counts waiting (moved back, its baseline brings them).
		if err := dropDeltas(tx, m.ID); err != nil {
			return err
		}
		return putOutbox(tx, m.ID, outboxDelete, seq)
	}
	return nil
}

// sharedChanged reports whether m differs from old in what the team
// shares (a change of counters or local fields alone does not count).
func sharedChanged(old, m *memory.Memory) bool {
	return old.Text != m.Text || old.Kind != m.Kind || old.KindOrigin != m.KindOrigin || old.Type != m.Type ||
		old.Project != m.Project || old.Source != m.Source || old.Surface != m.Surface ||
		old.Importance != m.Importance || old.Supersedes != m.Supersedes
}

// dropDeltas removes the outbox's deltas of memory id.
func dropDeltas(tx *bolt.Tx, id string) error {
	b := tx.Bucket(bucketOutboxDeltas)
	if b == nil {
		return nil
	}
	for _, did := range pendingDeltas(b)[id].ids {
		if err := b.Delete([]byte(did)); err != nil {
			return fmt.Errorf("outbox: %w", err)
		}
	}
	return nil
}

// enqueueDelete is the deletes' hook: the record om leaves the live
// records at store sequence seq.
func enqueueDelete(tx *bolt.Tx, om *memory.Memory, seq uint64) error {
	s := storeOf(tx)
	if s == nil || s.remote || !s.shared(om) {
		return nil
	}
	return putOutbox(tx, om.ID, outboxDelete, seq)
}

func putOutbox(tx *bolt.Tx, id string, op byte, seq uint64) error {
	b, err := tx.CreateBucketIfNotExists(bucketOutbox)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	if err := b.Put([]byte(id), binary.AppendUvarint([]byte{op}, seq)); err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return nil
}

func putDelta(tx *bolt.Tx, d CounterDelta) error {
	if d.Zero() {
		return nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketOutboxDeltas)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	d.ID = newID()
	js, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	return b.Put([]byte(d.ID), js)
}

func decodeOutbox(v []byte) (op byte, seq uint64, err error) {
	if len(v) < 2 || v[0] < outboxPut || v[0] > outboxRestore {
		return 0, 0, fmt.Errorf("%w: outbox entry", errCorrupt)
	}
	seq, n := binary.Uvarint(v[1:])
	if n <= 0 {
		return 0, 0, fmt.Errorf("%w: outbox entry", errCorrupt)
	}
	return v[0], seq, nil
}

// Outbox returns up to limit memories and limit counter deltas waiting to
// be pushed (limit <= 0: all), from one snapshot. A put entry comes with
// the record as stored now; an entry whose record is gone meanwhile is a
// delete. An unreadable entry is skipped and counted in bad (it is
// dropped by the next AckOutbox naming its id).
// It returns once every write its snapshot saw is published
// (viewPublished): a record it gives the push is searchable here too.
func (s *Store) Outbox(ctx context.Context, limit int) (entries []OutboxEntry, deltas []CounterDelta, err error) {
	if err := s.checkOpen(); err != nil {
		return nil, nil, err
	}
	err = s.viewPublished(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketOutbox); b != nil {
			recs := tx.Bucket(bucketRecs)
			c := b.Cursor()
			for k, v := c.First(); k != nil && (limit <= 0 || len(entries) < limit); k, v = c.Next() {
				op, seq, err := decodeOutbox(v)
				if err != nil {
					return fmt.Errorf("outbox %s: %w", k, err)
				}
				e := OutboxEntry{ID: string(k), Seq: seq, Delete: op == outboxDelete, Restore: op == outboxRestore, Base: teamBase(tx, k)}
				if e.Delete && recs.Get(k) != nil {
					// Moved to the personal scope: it leaves the team
					// whatever the team changed since (no base).
					e.Base = nil
				}
				if !e.Delete {
					rv := recs.Get(k)
					if rv == nil {
						e.Delete, e.Restore = true, false
					} else {
						_, m, err := decodeRecord(rv)
						if s.skipUnreadable(k, err) {
							continue // skipped at Open: not pushed (nor as a delete) until salvaged
						}
						if err != nil {
							return fmt.Errorf("outbox %s: %w", k, err)
						}
						e.Memory = m
					}
				}
				entries = append(entries, e)
			}
		}
		if b := tx.Bucket(bucketOutboxDeltas); b != nil {
			c := b.Cursor()
			for k, v := c.First(); k != nil && (limit <= 0 || len(deltas) < limit); k, v = c.Next() {
				var d CounterDelta
				if err := json.Unmarshal(v, &d); err != nil {
					return fmt.Errorf("outbox delta %s: %w: %v", k, errCorrupt, err)
				}
				deltas = append(deltas, d)
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read outbox: %w", err)
	}
	return entries, deltas, nil
}

// OutboxLen is the number of memories waiting to be pushed: a queued
// write, or counters not yet pushed.
func (s *Store) OutboxLen() (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketOutbox)
		if b != nil {
			n = b.Stats().KeyN
		}
		// A memory whose counters alone wait (an access queues no
		// entry) is waiting too: until they are pushed, the team's
		// counts are behind this machine's.
		for id := range pendingDeltas(tx.Bucket(bucketOutboxDeltas)) {
			if b == nil || b.Get([]byte(id)) == nil {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("outbox: %w", err)
	}
	return n, nil
}

// AckOutbox removes pushed entries (each only if no write queued it again
// since Outbox read it: its Seq is unchanged) and pushed deltas (by id).
func (s *Store) AckOutbox(ctx context.Context, entries []OutboxEntry, deltaIDs []string) error {
	return s.AckOutboxRefusals(ctx, entries, deltaIDs, nil)
}

// AckOutboxRefusals is AckOutbox that also stores refusals for
// TeamRefusals (as SetTeamRefusals; nil leaves them as they are), in the
// same transaction: the team sync records the writes the team refused as
// it removes their entries, so a crash neither loses the record nor
// pushes them again. An entry marked Accepted (the team holds its Memory
// as pushed) makes that version the copy's base, whether or not a newer
// write keeps the entry: the newer write is based on it.
func (s *Store) AckOutboxRefusals(ctx context.Context, entries []OutboxEntry, deltaIDs []string, refusals []byte) error {
	if len(refusals) > MaxTeamRefusals {
		return fmt.Errorf("ack outbox: team refusals: %d bytes, at most %d: %w", len(refusals), MaxTeamRefusals, memory.ErrInvalid)
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(entries) == 0 && len(deltaIDs) == 0 && refusals == nil {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		if refusals != nil {
			if err := tx.Bucket(bucketMeta).Put(keyTeamRefusals, slices.Clone(refusals)); err != nil {
				return err
			}
		}
		if b := tx.Bucket(bucketOutbox); b != nil {
			for _, e := range entries {
				switch {
				case e.Accepted && e.Delete:
					if err := dropBase(tx, []byte(e.ID)); err != nil {
						return err
					}
				case e.Accepted:
					if err := putBase(tx, &e.Memory); err != nil {
						return err
					}
				}
				v := b.Get([]byte(e.ID))
				if v == nil {
					continue
				}
				if _, seq, err := decodeOutbox(v); err == nil && seq != e.Seq {
					continue
				}
				if err := b.Delete([]byte(e.ID)); err != nil {
					return err
				}
				if e.Refused && e.Delete {
					// No write since: the copy stays out of the team here
					// while the team keeps its version.
					if err := markApart(tx, []byte(e.ID)); err != nil {
						return err
					}
				}
			}
		}
		if b := tx.Bucket(bucketOutboxDeltas); b != nil {
			for _, id := range deltaIDs {
				if err := b.Delete([]byte(id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ack outbox: %w", err)
	}
	return nil
}

// EnqueueShared queues every live team memory for a push again (memtray
// team push: after the team's projects changed, or a database was
// replaced); the push is idempotent, so what the team holds already is
// unchanged. A memory without counter deltas waiting gets its counters as
// a baseline (CounterDelta.Baseline): the push sends what they exceed the
// team's sums by, so the counts of a memory the team never had (its
// project just shared) reach it, and those it has are not sent again. It
// returns how many it queued.
func (s *Store) EnqueueShared(ctx context.Context) (int, error) {
	return s.enqueueWhere(ctx, "enqueue", outboxPut, nil, nil, func(*bolt.Tx, *memory.Memory) bool { return true })
}

// EnqueueTeamScoped queues, as EnqueueShared does, every live memory whose
// own scope is team (memtray scope ID team, Share with team) that the team
// was never sent: no team base is stored for it and nothing of it waits in
// the outbox. Those are the memories shared while team memory was off (no
// policy, so the scope write queued nothing). Queuing one seeds its base
// in the same transaction, so it is queued once: a later call, after a
// restart or a refusal, finds the base and leaves it. Each is queued as a
// restore, as a write moving a memory into the team is: the user's share
// is the last word over a delete of the team's copy (one this machine
// pushed when it was made personal, which drops the base). Default-scope
// memories are left to the policy at their next write (or push --all), and
// personal ones are never shared. It returns how many it queued.
func (s *Store) EnqueueTeamScoped(ctx context.Context) (int, error) {
	return s.enqueueWhere(ctx, "enqueue team-scoped", outboxRestore, teamScopeJSON, sentOrWaiting, neverSent)
}

// teamScopeJSON is how a record's JSON says scope team: a record without
// it is not decoded by EnqueueTeamScoped (most are not team-scoped, and the
// pass runs at every daemon's first connection).
var teamScopeJSON = []byte(`"scope":"team"`)

// neverSent says whether m's own scope is team and the team was never sent
// it (no base, nothing waiting): EnqueueTeamScoped's choice.
func neverSent(tx *bolt.Tx, m *memory.Memory) bool {
	return m.Scope == memory.ScopeTeam && !sentOrWaiting(tx, []byte(m.ID))
}

// sentOrWaiting says whether memory id has a base or waits in the outbox:
// by key, so EnqueueTeamScoped skips a pulled memory (its scope is team)
// without decoding its record.
func sentOrWaiting(tx *bolt.Tx, id []byte) bool {
	if ob := tx.Bucket(bucketOutbox); ob != nil && ob.Get(id) != nil {
		return true
	}
	return teamBase(tx, id) != nil
}

// enqueueWhere queues every live team memory (under the policy) that pick
// takes for a push as it is, with op (outboxPut or outboxRestore); a
// record whose bytes lack hint (when set), or whose id skip (when set)
// names, is skipped undecoded; what names it in errors.
func (s *Store) enqueueWhere(ctx context.Context, what string, op byte, hint []byte, skip func(*bolt.Tx, []byte) bool, pick func(*bolt.Tx, *memory.Memory) bool) (int, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if s.opts.Shared == nil {
		return 0, fmt.Errorf("%s: the store has no team policy", what)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n := 0
	seq := s.seq
	err := s.update(func(tx *bolt.Tx) error {
		n = 0
		pending := pendingDeltas(tx.Bucket(bucketOutboxDeltas))
		c := tx.Bucket(bucketRecs).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if err := ctx.Err(); err != nil {
				return err
			}
			if hint != nil && !bytes.Contains(v, hint) || skip != nil && skip(tx, k) {
				continue
			}
			_, m, err := decodeRecord(v)
			if err != nil || !s.shared(&m) || !pick(tx, &m) {
				continue
			}
			// Pushed again as it is: based on itself unless a base is
			// known, so a copy older than the team's changes nothing.
			if err := seedBase(tx, &m); err != nil {
				return err
			}
			if err := putOutbox(tx, m.ID, op, seq); err != nil {
				return err
			}
			if _, waiting := pending[m.ID]; !waiting {
				d := counterDelta(nil, &m)
				d.Baseline = true
				if err := putDelta(tx, d); err != nil {
					return err
				}
			}
			n++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return n, nil
}

// TeamCursor is the team change-feed cursor stored with the last applied
// changes (ApplyTeam), empty before the first.
func (s *Store) TeamCursor() ([]byte, error) {
	return s.metaValue(keyTeamCursor, "team cursor")
}

// metaValue returns a copy of the value of key in the store's metadata
// (empty when there is none); what names it in an error.
func (s *Store) metaValue(key []byte, what string) ([]byte, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = append(out, tx.Bucket(bucketMeta).Get(key)...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// TeamMachine is this store's name as a machine of the team (the team
// records it with the versions this daemon pushes, so that a conflict a
// later push of another machine meets is told here): a random id made at
// the first call and kept in the store's metadata.
func (s *Store) TeamMachine(ctx context.Context) (string, error) {
	b, err := s.metaValue(keyTeamMachine, "team machine")
	if err != nil || len(b) > 0 {
		return string(b), err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return "", err
	}
	var id string
	err = s.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyTeamMachine); len(v) > 0 {
			id = string(v)
			return nil
		}
		id = newID()
		return meta.Put(keyTeamMachine, []byte(id))
	})
	if err != nil {
		return "", fmt.Errorf("team machine: %w", err)
	}
	return id, nil
}

// MaxTeamRefusals bounds what SetTeamRefusals keeps (bytes).
const MaxTeamRefusals = 64 << 10

// TeamRefusals is what SetTeamRefusals stored last (the team sync's list
// of the writes the team refused, kept across restarts), empty before.
func (s *Store) TeamRefusals() ([]byte, error) {
	return s.metaValue(keyTeamRefusals, "team refusals")
}

// SetTeamRefusals stores b (at most MaxTeamRefusals bytes) in the store's
// metadata for TeamRefusals; it is not a memory, and not enqueued.
func (s *Store) SetTeamRefusals(ctx context.Context, b []byte) error {
	if len(b) > MaxTeamRefusals {
		return fmt.Errorf("team refusals: %d bytes, at most %d: %w", len(b), MaxTeamRefusals, memory.ErrInvalid)
	}
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
	err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyTeamRefusals, slices.Clone(b))
	})
	if err != nil {
		return fmt.Errorf("team refusals: %w", err)
	}
	return nil
}
