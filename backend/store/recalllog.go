package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// The recall log: what each recall gave an agent, what it withheld and
// why, and what the agent said of it later (package recall writes it):
//
//   - bucketRecalls holds the entries, key: the entry's Seq (8 bytes,
//     big-endian, from the bucket's sequence); value: RecallEntry as JSON.
//     Bounded by RecallLimits, the oldest dropped first.
//   - bucketRecallGiven maps a memory id to the Seq of the newest entry
//     that gave it, so feedback on a memory finds the recall it answers.
//
// Both are created by the first AddRecall.
var (
	bucketRecalls     = []byte("recalls")
	bucketRecallGiven = []byte("recall_given")
)

// Bounds of one recall log entry.
const (
	// MaxRecallPrompt bounds RecallEntry.Prompt, in bytes.
	MaxRecallPrompt = 4096
	// MaxRecallMemories bounds RecallEntry.Given and Withheld each.
	MaxRecallMemories = 100
	// MaxRecallFeedback bounds RecallEntry.Feedback; later feedback is
	// not recorded in the entry.
	MaxRecallFeedback = 50
	// MaxRecallPreview bounds a memory's preview, in bytes.
	MaxRecallPreview = 1024
	maxRecallWord    = 256 // a session id, event, project, reason or op
)

// RecallEntry is one recall in the log.
type RecallEntry struct {
	// Seq orders the entries (AddRecall sets it): newer is higher.
	Seq uint64    `json:"seq"`
	At  time.Time `json:"at"`
	// SessionID is the agent session that asked.
	SessionID string `json:"session_id"`
	// Event is what made it ask (search.EventPrompt, EventSessionStart,
	// EventSearch).
	Event   string `json:"event"`
	Project string `json:"project,omitempty"`
	// Prompt is the prompt or query, redacted by the caller.
	Prompt string `json:"prompt,omitempty"`
	// Given are the memories given, best first.
	Given []RecallMemory `json:"given"`
	// Withheld are candidates not given, with why (Reason).
	Withheld []RecallMemory `json:"withheld,omitempty"`
	// Skipped says why nothing was given, when nothing was.
	Skipped string `json:"skipped,omitempty"`
	// Feedback is what the agent or the user said later of the memories
	// given, oldest first.
	Feedback []RecallFeedback `json:"feedback,omitempty"`
}

// RecallMemory is a memory a recall gave or withheld.
type RecallMemory struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	Kind  string  `json:"kind,omitempty"`
	// Preview is the start of the memory's text when it was recalled.
	Preview string `json:"preview,omitempty"`
	// Reason is why a withheld memory was not given (search.Withheld*).
	Reason string `json:"reason,omitempty"`
}

// RecallFeedback is feedback on a memory a recall gave.
type RecallFeedback struct {
	ID string    `json:"id"`
	At time.Time `json:"at"`
	// Op is "reinforced" or "rated".
	Op string `json:"op"`
	// Score is +1 (helped) or -1 (misled); a reinforcement is +1.
	Score int `json:"score"`
}

// RecallLimits bound the recall log. Zero fields are the defaults.
type RecallLimits struct {
	// Keep is how many entries are kept (default 10000).
	Keep int
	// MaxAge drops entries older than this (default 30 days).
	MaxAge time.Duration
}

// Defaults of RecallLimits.
const (
	DefaultRecallKeep   = 10000
	DefaultRecallMaxAge = 30 * 24 * time.Hour
)

func (l RecallLimits) withDefaults() RecallLimits {
	if l.Keep <= 0 {
		l.Keep = DefaultRecallKeep
	}
	if l.MaxAge <= 0 {
		l.MaxAge = DefaultRecallMaxAge
	}
	return l
}

// RecallLogQuery selects entries of the recall log, newest first.
type RecallLogQuery struct {
	// SessionID keeps one session's entries; empty: every session.
	SessionID string
	// Before keeps the entries older than this Seq; 0: from the newest.
	Before uint64
	// Limit is how many entries at most (1..MaxRecallLogLimit; 0: 50).
	Limit int
}

// MaxRecallLogLimit bounds RecallLogQuery.Limit.
const MaxRecallLogLimit = 1000

// validate checks an entry's sizes and text.
func (e *RecallEntry) validate() error {
	var problems []string
	word := func(name, v string, required bool) {
		if (required && v == "") || len(v) > maxRecallWord || !utf8.ValidString(v) {
			problems = append(problems, fmt.Sprintf("%s must be %s UTF-8 of at most %d bytes", name, map[bool]string{true: "non-empty", false: "valid"}[required], maxRecallWord))
		}
	}
	word("session_id", e.SessionID, true)
	word("event", e.Event, true)
	word("project", e.Project, false)
	if len(e.Prompt) > MaxRecallPrompt || !utf8.ValidString(e.Prompt) || len(e.Skipped) > MaxRecallPrompt || !utf8.ValidString(e.Skipped) {
		problems = append(problems, fmt.Sprintf("prompt and skipped must be UTF-8 of at most %d bytes", MaxRecallPrompt))
	}
	if len(e.Given) > MaxRecallMemories || len(e.Withheld) > MaxRecallMemories {
		problems = append(problems, fmt.Sprintf("at most %d memories given and %d withheld", MaxRecallMemories, MaxRecallMemories))
	}
	for _, m := range append(append([]RecallMemory(nil), e.Given...), e.Withheld...) {
		word("memory id", m.ID, true)
		word("kind", m.Kind, false)
		word("reason", m.Reason, false)
		if len(m.Preview) > MaxRecallPreview || !utf8.ValidString(m.Preview) {
			problems = append(problems, fmt.Sprintf("a preview must be UTF-8 of at most %d bytes", MaxRecallPreview))
		}
	}
	if e.At.IsZero() {
		problems = append(problems, "time is required")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// AddRecall appends e to the recall log (setting its Seq, ignoring its
// Feedback) and drops the entries over lim, oldest first: beyond Keep, or
// older than MaxAge before e.At. It returns e as stored.
func (s *Store) AddRecall(ctx context.Context, e RecallEntry, lim RecallLimits) (RecallEntry, error) {
	if err := ctx.Err(); err != nil {
		return e, err
	}
	if err := s.checkOpen(); err != nil {
		return e, err
	}
	if err := e.validate(); err != nil {
		return e, fmt.Errorf("log recall: %w", err)
	}
	lim = lim.withDefaults()
	e.At, e.Feedback = e.At.UTC(), nil
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRecalls)
		if err != nil {
			return err
		}
		idx, err := tx.CreateBucketIfNotExists(bucketRecallGiven)
		if err != nil {
			return err
		}
		if e.Seq, err = b.NextSequence(); err != nil {
			return err
		}
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if err := b.Put(u64(e.Seq), data); err != nil {
			return err
		}
		for _, m := range e.Given {
			if err := idx.Put([]byte(m.ID), u64(e.Seq)); err != nil {
				return err
			}
		}
		return pruneRecalls(b, idx, e.Seq, e.At.Add(-lim.MaxAge), lim.Keep)
	})
	if err != nil {
		return e, fmt.Errorf("log recall: %w", err)
	}
	return e, nil
}

// pruneRecalls drops the oldest entries while more than keep are left
// (counted as the span of their Seqs, which only the oldest leave) or
// they are older than cutoff, with the given-index keys that point to
// them.
func pruneRecalls(b, idx *bolt.Bucket, last uint64, cutoff time.Time, keep int) error {
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.First() {
		var old RecallEntry
		bad := json.Unmarshal(v, &old) != nil
		seq := getU64(k)
		if !bad && last-seq < uint64(keep) && !old.At.Before(cutoff) {
			return nil
		}
		if err := c.Delete(); err != nil {
			return err
		}
		for _, m := range old.Given {
			if getU64(idx.Get([]byte(m.ID))) == seq {
				if err := idx.Delete([]byte(m.ID)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RecallLog returns the entries q selects, newest first. An entry that
// cannot be decoded is skipped.
func (s *Store) RecallLog(ctx context.Context, q RecallLogQuery) ([]RecallEntry, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	switch {
	case q.Limit < 0 || q.Limit > MaxRecallLogLimit:
		return nil, fmt.Errorf("%w: limit must be within 1..%d", memory.ErrInvalid, MaxRecallLogLimit)
	case len(q.SessionID) > maxRecallWord:
		return nil, fmt.Errorf("%w: session id longer than %d bytes", memory.ErrInvalid, maxRecallWord)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	out := []RecallEntry{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecalls)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		var k, v []byte
		if q.Before > 0 {
			k, v = c.Seek(u64(q.Before))
			if k == nil {
				k, v = c.Last()
			}
			for k != nil && getU64(k) >= q.Before {
				k, v = c.Prev()
			}
		} else {
			k, v = c.Last()
		}
		for ; k != nil && len(out) < q.Limit; k, v = c.Prev() {
			if err := ctx.Err(); err != nil {
				return err
			}
			var e RecallEntry
			if json.Unmarshal(v, &e) != nil {
				continue
			}
			if q.SessionID == "" || e.SessionID == q.SessionID {
				out = append(out, e)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read recall log: %w", err)
	}
	return out, nil
}

// EachRecall calls fn with each entry at or after since, oldest first,
// until fn returns an error (returned).
func (s *Store) EachRecall(ctx context.Context, since time.Time, fn func(RecallEntry) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecalls)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			var e RecallEntry
			if json.Unmarshal(v, &e) != nil || e.At.Before(since) {
				return nil
			}
			return fn(e)
		})
	})
}

// AddRecallFeedback records fb on each of ids in the newest entry that
// gave that memory. It returns how many entries took it: a memory no
// entry gave (or whose entry was dropped) is not an error. fb.ID is set
// from ids.
func (s *Store) AddRecallFeedback(ctx context.Context, ids []string, fb RecallFeedback) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	if len(fb.Op) == 0 || len(fb.Op) > maxRecallWord || (fb.Score != 1 && fb.Score != -1) {
		return 0, fmt.Errorf("%w: recall feedback needs an op and a score of +1 or -1", memory.ErrInvalid)
	}
	fb.At = fb.At.UTC()
	n := 0
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, idx := tx.Bucket(bucketRecalls), tx.Bucket(bucketRecallGiven)
		if b == nil || idx == nil {
			return nil
		}
		for _, id := range ids {
			key := idx.Get([]byte(id))
			if key == nil {
				continue
			}
			key = append([]byte(nil), key...)
			v := b.Get(key)
			var e RecallEntry
			if v == nil || json.Unmarshal(v, &e) != nil {
				if err := idx.Delete([]byte(id)); err != nil {
					return err
				}
				continue
			}
			if len(e.Feedback) >= MaxRecallFeedback {
				continue
			}
			f := fb
			f.ID = id
			e.Feedback = append(e.Feedback, f)
			data, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := b.Put(key, data); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("log recall feedback: %w", err)
	}
	return n, nil
}

// RecallLogStats summarises the recall log over some days (package
// recall computes it).
type RecallLogStats struct {
	// Days are the days asked for, oldest first, each one (with none
	// missing) in the daemon's time zone.
	Days []RecallDay `json:"days"`
	// Recalls, Gave and Empty add up Days.
	Recalls int `json:"recalls"`
	Gave    int `json:"gave"`
	Empty   int `json:"empty"`
	// Top are the memories given most often, most first.
	Top []RecallTop `json:"top"`
}

// RecallDay counts one day's recalls.
type RecallDay struct {
	// Date is the day, YYYY-MM-DD.
	Date string `json:"date"`
	// Recalls is every logged recall; Gave those that gave at least one
	// memory, Empty those that gave none; Memories the memories given.
	Recalls  int `json:"recalls"`
	Gave     int `json:"gave"`
	Empty    int `json:"empty"`
	Memories int `json:"memories"`
}

// RecallTop is a memory given often, and what it proved worth.
type RecallTop struct {
	ID      string `json:"id"`
	Kind    string `json:"kind,omitempty"`
	Preview string `json:"preview,omitempty"`
	// Given is how many recalls gave it; Helped how many of those it was
	// rated +1 or reinforced for, Misled rated -1 for.
	Given  int `json:"given"`
	Helped int `json:"helped"`
	Misled int `json:"misled"`
	// HitRate is Helped / Given.
	HitRate float64 `json:"hit_rate"`
}
