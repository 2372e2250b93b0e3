package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The write pipeline's decisions, kept for the feed across restarts
// (package feed's DecisionLog is their reader and writer):
//
//   - bucketDecisions holds the newest decisions, key: the decision's time
//     (8 bytes, big-endian Unix nanoseconds) then its id; value: the
//     caller's encoding of the entry. Bounded by DecisionLimits.Keep and
//     MaxAge, the oldest dropped first.
//   - bucketDecisionHours holds the per-hour counters of every decision
//     added, key: the hour (8 bytes, big-endian Unix seconds, UTC); value:
//     DecisionCounts as JSON. They are small and kept for CountsAge, so the
//     charts and today's counts outlive the entries.
//
// Both are created by the first AddDecision.
var (
	bucketDecisions     = []byte("decisions")
	bucketDecisionHours = []byte("decision_hours")
)

// Bounds of one decision record.
const (
	maxDecisionID   = 256
	maxDecisionData = 1 << 20
	maxDecisionWord = 64 // a verdict's or a stage's length
)

// DecisionRecord is one stored decision: when, its id, and the caller's
// encoding of it.
type DecisionRecord struct {
	At   time.Time
	ID   string
	Data []byte
}

// DecisionCounts counts the decisions of one hour (UTC).
type DecisionCounts struct {
	Hour time.Time `json:"-"`
	// Verdicts counts the decisions by verdict.
	Verdicts map[string]int `json:"verdicts"`
	// Rejected counts the rejections by the stage that rejected them.
	Rejected map[string]int `json:"rejected,omitempty"`
}

// DecisionLimits bound the stored decisions. Zero fields are the defaults.
type DecisionLimits struct {
	// Keep is how many decisions are kept (default 5000).
	Keep int
	// MaxAge drops decisions older than this (default 14 days).
	MaxAge time.Duration
	// CountsAge drops hourly counters older than this (default 400 days).
	CountsAge time.Duration
}

// withDefaults fills the zero fields of l.
func (l DecisionLimits) withDefaults() DecisionLimits {
	if l.Keep <= 0 {
		l.Keep = 5000
	}
	if l.MaxAge <= 0 {
		l.MaxAge = 14 * 24 * time.Hour
	}
	if l.CountsAge <= 0 {
		l.CountsAge = 400 * 24 * time.Hour
	}
	return l
}

// decisionKey is rec's key in bucketDecisions.
func decisionKey(at time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(at.UnixNano()))
	return append(k, id...)
}

// hourKey is the key of the hour of at in bucketDecisionHours.
func hourKey(at time.Time) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, uint64(at.UTC().Truncate(time.Hour).Unix()))
	return k
}

// DecisionAdd is one decision for AddDecisions: the record, its verdict
// and, for a rejection, the stage that rejected it ("" when not rejected).
type DecisionAdd struct {
	Record  DecisionRecord
	Verdict string
	Stage   string
}

// Validate checks a's bounds: an id of 1..256 bytes, at most 1 MiB of
// data, a verdict of 1..64 bytes and a stage of at most 64, a time.
func (a DecisionAdd) Validate() error {
	rec := a.Record
	switch {
	case rec.ID == "" || len(rec.ID) > maxDecisionID:
		return fmt.Errorf("store decision: id of %d bytes, want 1..%d", len(rec.ID), maxDecisionID)
	case len(rec.Data) > maxDecisionData:
		return fmt.Errorf("store decision %s: %d bytes, at most %d", rec.ID, len(rec.Data), maxDecisionData)
	case a.Verdict == "" || len(a.Verdict) > maxDecisionWord || len(a.Stage) > maxDecisionWord:
		return fmt.Errorf("store decision %s: verdict %q or stage %q empty or too long", rec.ID, a.Verdict, a.Stage)
	case rec.At.IsZero() || rec.At.Year() < 1970:
		return fmt.Errorf("store decision %s: no time", rec.ID)
	}
	return nil
}

// AddDecision stores rec, counts it under its hour with verdict and, for a
// rejection, stage ("" when not rejected), and drops what lim no longer
// keeps: the oldest decisions beyond lim.Keep or older than lim.MaxAge, and
// hourly counters older than lim.CountsAge (both measured from the store's
// clock). It is AddDecisions of one.
func (s *Store) AddDecision(rec DecisionRecord, verdict, stage string, lim DecisionLimits) error {
	return s.AddDecisions([]DecisionAdd{{Record: rec, Verdict: verdict, Stage: stage}}, lim)
}

// AddDecisions stores adds as AddDecision stores one, all of them in one
// transaction (one fsync): on disk when it returns without error, and a
// kill leaves all of them stored or none. Every add is validated first
// (DecisionAdd.Validate); one invalid stores none.
func (s *Store) AddDecisions(adds []DecisionAdd, lim DecisionLimits) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	for _, a := range adds {
		if err := a.Validate(); err != nil {
			return err
		}
	}
	if len(adds) == 0 {
		return nil
	}
	lim = lim.withDefaults()
	now := s.clock.Now()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketDecisions)
		if err != nil {
			return err
		}
		for _, a := range adds {
			if err := b.Put(decisionKey(a.Record.At, a.Record.ID), a.Record.Data); err != nil {
				return err
			}
		}
		if err := pruneDecisions(b, lim.Keep, now.Add(-lim.MaxAge)); err != nil {
			return err
		}
		h, err := tx.CreateBucketIfNotExists(bucketDecisionHours)
		if err != nil {
			return err
		}
		counts := map[string]*DecisionCounts{} // by hour key, read once
		var order []string
		for _, a := range adds {
			hk := string(hourKey(a.Record.At))
			c := counts[hk]
			if c == nil {
				c = &DecisionCounts{Verdicts: map[string]int{}, Rejected: map[string]int{}}
				if v := h.Get([]byte(hk)); v != nil {
					if err := json.Unmarshal(v, c); err != nil {
						return fmt.Errorf("hour counters: %w", err)
					}
					if c.Verdicts == nil {
						c.Verdicts = map[string]int{}
					}
					if c.Rejected == nil {
						c.Rejected = map[string]int{}
					}
				}
				counts[hk] = c
				order = append(order, hk)
			}
			c.Verdicts[a.Verdict]++
			if a.Stage != "" {
				c.Rejected[a.Stage]++
			}
		}
		for _, hk := range order {
			v, err := json.Marshal(counts[hk])
			if err != nil {
				return err
			}
			if err := h.Put([]byte(hk), v); err != nil {
				return err
			}
		}
		return pruneBefore(h, hourKey(now.Add(-lim.CountsAge)))
	})
	if err != nil {
		if len(adds) == 1 {
			return fmt.Errorf("store decision %s: %w", adds[0].Record.ID, err)
		}
		return fmt.Errorf("store %d decisions (%s and others): %w", len(adds), adds[0].Record.ID, err)
	}
	return nil
}

// pruneDecisions drops the oldest decisions of b beyond keep, and those
// before cutoff.
func pruneDecisions(b *bolt.Bucket, keep int, cutoff time.Time) error {
	var old [8]byte
	binary.BigEndian.PutUint64(old[:], uint64(cutoff.UnixNano()))
	// The newest keep keys stay unless too old: first is the oldest of them.
	c := b.Cursor()
	first, _ := c.Last()
	for i := 1; i < keep && first != nil; i++ {
		if k, _ := c.Prev(); k != nil {
			first = k
		} else {
			break
		}
	}
	if first != nil && bytes.Compare(first, old[:]) < 0 {
		first = old[:]
	}
	return pruneBefore(b, bytes.Clone(first))
}

// pruneBefore drops the keys of b that sort before first.
func pruneBefore(b *bolt.Bucket, first []byte) error {
	c := b.Cursor()
	for k, _ := c.First(); k != nil && bytes.Compare(k, first) < 0; k, _ = c.First() {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// Decisions returns at most limit stored decisions, the newest first.
func (s *Store) Decisions(limit int) ([]DecisionRecord, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var out []DecisionRecord
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDecisions)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			if len(k) < 8 {
				continue // not ours: skip
			}
			at := time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))
			out = append(out, DecisionRecord{At: at, ID: string(k[8:]), Data: bytes.Clone(v)})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read decisions: %w", err)
	}
	return out, nil
}

// DecisionHours returns the hourly counters from the hour of since on,
// oldest first, their maps never nil; hours without decisions are absent.
func (s *Store) DecisionHours(since time.Time) ([]DecisionCounts, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var out []DecisionCounts
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDecisionHours)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.First()
		if since.Unix() > 0 {
			k, v = c.Seek(hourKey(since))
		}
		for ; k != nil; k, v = c.Next() {
			if len(k) != 8 {
				continue
			}
			var dc DecisionCounts
			if err := json.Unmarshal(v, &dc); err != nil {
				return fmt.Errorf("hour counters: %w", err)
			}
			dc.Hour = time.Unix(int64(binary.BigEndian.Uint64(k)), 0).UTC()
			if dc.Verdicts == nil {
				dc.Verdicts = map[string]int{}
			}
			if dc.Rejected == nil {
				dc.Rejected = map[string]int{}
			}
			out = append(out, dc)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read decision counters: %w", err)
	}
	return out, nil
}
