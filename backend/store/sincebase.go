package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// SinceBase counts what EnqueueSinceBase queued, by what became of the
// copy since its base.
type SinceBase struct {
	// Edited: a shared field differs from the base (an edit, a decay run
	// by hand): queued as a put, which the team applies onto the base.
	Edited int `json:"edited"`
	// Left: made personal here (or given a type or project the team's
	// projects do not share): queued as a delete from the team.
	Left int `json:"left"`
	// Deleted: deleted here (in the trash, or purged from it): queued as
	// a delete from the team.
	Deleted int `json:"deleted"`
	// Back: a copy kept apart (TeamBase.Apart) that is a team memory here
	// again: queued as a restore.
	Back int `json:"back"`
}

// Total is how many memories were queued.
func (c SinceBase) Total() int { return c.Edited + c.Left + c.Deleted + c.Back }

// EnqueueSinceBase queues every team memory whose copy here changed from
// its base (the team's version this store last synced) while nothing
// queued the change: the writes made while team memory was off, when the
// store had no policy and no outbox. For each stored base whose memory
// has nothing waiting in the outbox, the copy is compared with the base:
//
//   - gone from the live records (deleted here, in the trash or purged):
//     a delete, which the team applies only while its text is the base's
//     (team.Store.DeleteFrom), as a delete made online;
//   - personal here (its own scope, or an edit of its type or project the
//     policy does not share, where the base's would be shared): a delete
//     of the team's copy, as a move to personal made online; a change of
//     team.projects alone moves nothing, as online;
//   - a team memory whose shared fields differ from the base: a put, with
//     the base, which the team merges, refuses as stale or takes, as any
//     edit; its counters go as a baseline when none wait (what they exceed
//     the team's sums by);
//   - a copy kept apart (Apart) that is a team memory again: a restore,
//     as a move back into the team made online.
//
// A copy kept apart is otherwise left alone: the team answered its delete
// already. The base itself is not changed here: the push's answer sets it
// (AckOutbox), so a restart before the push queues the same again. A
// memory with no base is EnqueueTeamScoped's.
//
// The pass records the store's sequence number it ran at (in the same
// transaction), and the next one compares only the records written since
// (a record's header holds the sequence number of its last write): a
// record written before was compared then, or written with the policy on,
// which queued the write itself. Every base is still looked up, for the
// records deleted since (a key lookup each). Records are compared by the
// fields of their JSON the team shares, without decoding the rest; one
// that does not decode is skipped. It returns what it queued.
func (s *Store) EnqueueSinceBase(ctx context.Context) (SinceBase, error) {
	var out SinceBase
	if err := s.checkOpen(); err != nil {
		return out, err
	}
	if s.opts.Shared == nil {
		return out, fmt.Errorf("enqueue since base: the store has no team policy")
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	seq := s.seq
	err := s.update(func(tx *bolt.Tx) error {
		out = SinceBase{}
		meta := tx.Bucket(bucketMeta)
		var since uint64
		if v := meta.Get(keyTeamSinceBase); len(v) == 8 {
			since = binary.BigEndian.Uint64(v)
		}
		todo, err := s.changedSinceBase(ctx, tx, since)
		if err != nil {
			return err
		}
		if err := meta.Put(keyTeamSinceBase, u64(seq)); err != nil {
			return err
		}
		pending := pendingDeltas(tx.Bucket(bucketOutboxDeltas))
		recs := tx.Bucket(bucketRecs)
		for _, c := range todo {
			if c.op == outboxDelete {
				if err := dropDeltas(tx, c.id); err != nil {
					return err
				}
				if err := putOutbox(tx, c.id, outboxDelete, seq); err != nil {
					return err
				}
				*c.count(&out)++
				continue
			}
			_, m, err := decodeRecord(recs.Get([]byte(c.id)))
			if err != nil || !s.shared(&m) {
				continue
			}
			if err := putOutbox(tx, c.id, c.op, seq); err != nil {
				return err
			}
			_, waiting := pending[c.id]
			if c.op == outboxRestore && waiting {
				// Entering the team again: its counters go as a baseline,
				// replacing what waits (as a write moving it back does).
				if err := dropDeltas(tx, c.id); err != nil {
					return err
				}
				waiting = false
			}
			if !waiting {
				d := counterDelta(nil, &m)
				d.Baseline = true
				if err := putDelta(tx, d); err != nil {
					return err
				}
			}
			*c.count(&out)++
		}
		return nil
	})
	if err != nil {
		return SinceBase{}, fmt.Errorf("enqueue since base: %w", err)
	}
	return out, nil
}

// sinceBase is one memory EnqueueSinceBase queues: op, and which count of
// SinceBase it adds to.
type sinceBase struct {
	id   string
	op   byte
	kind int // 0 edited, 1 left, 2 deleted, 3 back
}

func (c sinceBase) count(out *SinceBase) *int {
	return [...]*int{&out.Edited, &out.Left, &out.Deleted, &out.Back}[c.kind]
}

// sharedJSON is what EnqueueSinceBase reads of a record's JSON: the fields
// the team shares (the text by its content hash) and the scope.
type sharedJSON struct {
	Kind        memory.Kind       `json:"kind"`
	KindOrigin  memory.KindOrigin `json:"kind_origin"`
	Type        memory.Type       `json:"type"`
	Project     string            `json:"project"`
	Source      string            `json:"source"`
	Surface     string            `json:"surface"`
	Importance  float64           `json:"importance"`
	Supersedes  string            `json:"supersedes"`
	ContentHash string            `json:"content_hash"`
	Scope       memory.Scope      `json:"scope"`
}

// memory is j as a memory the policy can judge (no text).
func (j sharedJSON) memory() memory.Memory {
	return memory.Memory{Kind: j.Kind, KindOrigin: j.KindOrigin, Type: j.Type, Project: j.Project, Source: j.Source,
		Surface: j.Surface, Importance: j.Importance, Supersedes: j.Supersedes, ContentHash: j.ContentHash, Scope: j.Scope}
}

// base is j's shared version as a TeamBase.
func (j sharedJSON) base() TeamBase {
	return TeamBase{ContentHash: j.ContentHash, Kind: j.Kind, KindOrigin: j.KindOrigin, Type: j.Type,
		Project: j.Project, Source: j.Source, Surface: j.Surface, Importance: j.Importance, Supersedes: j.Supersedes}
}

// readShared reads the shared fields and scope of stored record v.
func readShared(v []byte) (sharedJSON, error) {
	var j sharedJSON
	_, js, _, err := splitRecord(v, nil)
	if err != nil {
		return j, err
	}
	if err := json.Unmarshal(js, &j); err != nil {
		return j, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if j.ContentHash == "" {
		// Written without its hash (never, by this store): the text's.
		_, m, err := decodeRecord(v)
		if err != nil {
			return j, err
		}
		j.ContentHash = memory.ContentHash(m.Text)
	}
	return j, nil
}

// keyTeamSinceBase holds the store's sequence number at the last
// EnqueueSinceBase (8 bytes, big-endian).
var keyTeamSinceBase = []byte("team_since_base")

// recordSeq is the sequence number of the last write of stored record v.
func recordSeq(v []byte) (uint64, bool) {
	if len(v) < 2 || v[0] != recVersion {
		return 0, false
	}
	seq, n := binary.Uvarint(v[1:])
	return seq, n > 0
}

// changedSinceBase lists the memories EnqueueSinceBase queues, looking up
// every stored base's record once and comparing those written after
// sequence number since (0: all).
func (s *Store) changedSinceBase(ctx context.Context, tx *bolt.Tx, since uint64) ([]sinceBase, error) {
	bases := tx.Bucket(bucketTeamBase)
	if bases == nil {
		return nil, nil
	}
	outbox, recs := tx.Bucket(bucketOutbox), tx.Bucket(bucketRecs)
	var todo []sinceBase
	c := bases.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if outbox != nil && outbox.Get(k) != nil {
			continue // a write waits: the push sends the copy as it is
		}
		rv := recs.Get(k)
		if rv != nil && since > 0 {
			if seq, ok := recordSeq(rv); ok && seq <= since {
				continue // not written since the last pass
			}
		}
		var tb TeamBase
		if json.Unmarshal(v, &tb) != nil || tb.Unknown {
			continue
		}
		if rv == nil {
			if !tb.Apart {
				todo = append(todo, sinceBase{id: string(k), op: outboxDelete, kind: 2})
			}
			continue
		}
		j, err := readShared(rv)
		if err != nil {
			continue // unreadable: skipped, as by every read
		}
		m := j.memory()
		shared := s.shared(&m)
		changed := j.base() != tb.Team()
		switch {
		case tb.Apart:
			if shared {
				todo = append(todo, sinceBase{id: string(k), op: outboxRestore, kind: 3})
			}
		case !shared:
			if m.Scope == memory.ScopePersonal || changed && s.sharedAsBase(m, tb) {
				todo = append(todo, sinceBase{id: string(k), op: outboxDelete, kind: 1})
			}
		case changed:
			todo = append(todo, sinceBase{id: string(k), op: outboxPut, kind: 0})
		}
	}
	return todo, nil
}

// sharedAsBase says whether the policy shares m as it was at base tb (its
// type and project then, its scope now): a copy the policy shares no
// longer left the team by an edit of its own, not by a change of
// team.projects.
func (s *Store) sharedAsBase(m memory.Memory, tb TeamBase) bool {
	m.Type, m.Project = tb.Type, tb.Project
	return s.shared(&m)
}

// TeamCopies are the ids of the memories this store holds a copy of a
// team memory of: a base is stored (it synced with a team) and the copy
// is not kept apart. With team memory off, the daemon's scheduled steward
// leaves them alone: their maintenance is the team steward's, and a
// change of them would reach the team at the next first connection
// (EnqueueSinceBase).
func (s *Store) TeamCopies(ctx context.Context) (map[string]bool, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTeamBase)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var tb TeamBase
			if json.Unmarshal(v, &tb) == nil && !tb.Apart {
				out[string(k)] = true
			}
			return ctx.Err()
		})
	})
	if err != nil {
		return nil, fmt.Errorf("team copies: %w", err)
	}
	return out, nil
}
