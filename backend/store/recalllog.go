package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
//   - bucketRecallMentions indexes the entries that show a memory's
//     preview (given or withheld), key: the memory id, a zero byte and the
//     entry's Seq; no value. A delete of the memory finds them there and
//     replaces the preview with DeletedPreview (forgetRecalledTx).
//
// They are created by the first AddRecall (the mentions of a log written
// before them by the first write or delete that needs them).
var (
	bucketRecalls        = []byte("recalls")
	bucketRecallGiven    = []byte("recall_given")
	bucketRecallMentions = []byte("recall_mentions")
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
	// Agent is the agent that asked (claude-code, codex), when it said.
	Agent string `json:"agent,omitempty"`
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
	// Op is "reinforced" or "rated" (the agent or the user said so), or
	// "used" (the turn that followed the recall wrote what the memory
	// names: an implicit reinforcement, package recall's Used).
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
	// Scan, when above 0, is how many of the newest entries (before
	// Before) are read at most, of any session: a search for a session's
	// recent recall stops there rather than read the whole log.
	Scan int
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
	word("agent", e.Agent, false)
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
	out, err := s.AddRecalls(ctx, []RecallEntry{e}, lim)
	if len(out) == 1 {
		return out[0], err
	}
	return e, err
}

// AddRecalls appends es to the recall log in one transaction, in order, as
// AddRecall appends one, and returns those stored. An entry that is not
// valid is left out (the error says which); the others are stored. A
// memory an entry mentions that has been deleted since (in the trash or
// a tombstone) gets DeletedPreview, as ForgetRecalled would have made it.
func (s *Store) AddRecalls(ctx context.Context, es []RecallEntry, lim RecallLimits) ([]RecallEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	var errs []error
	valid := make([]RecallEntry, 0, len(es))
	for i, e := range es {
		if err := e.validate(); err != nil {
			errs = append(errs, fmt.Errorf("log recall %d of %d: %w", i+1, len(es), err))
			continue
		}
		e.At, e.Feedback = e.At.UTC(), nil
		e.Given, e.Withheld = slices.Clone(e.Given), slices.Clone(e.Withheld)
		valid = append(valid, e)
	}
	if len(valid) == 0 {
		return nil, errors.Join(errs...)
	}
	lim = lim.withDefaults()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRecalls)
		if err != nil {
			return err
		}
		idx, err := tx.CreateBucketIfNotExists(bucketRecallGiven)
		if err != nil {
			return err
		}
		men, err := recallMentions(tx)
		if err != nil {
			return err
		}
		trash, dels := tx.Bucket(bucketTrash), tx.Bucket(bucketDels)
		gone := func(id string) bool {
			return (trash != nil && trash.Get([]byte(id)) != nil) || (dels != nil && dels.Get([]byte(id)) != nil)
		}
		for i := range valid {
			e := &valid[i]
			for _, ms := range [][]RecallMemory{e.Given, e.Withheld} {
				for j := range ms {
					if gone(ms[j].ID) {
						ms[j].Preview = DeletedPreview
					}
				}
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
			if err := putMentions(men, e); err != nil {
				return err
			}
		}
		last := valid[len(valid)-1]
		return pruneRecalls(b, idx, men, last.Seq, last.At.Add(-lim.MaxAge), lim.Keep)
	})
	if err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("log recall: %w", err))...)
	}
	return valid, errors.Join(errs...)
}

// DeletedPreview replaces the preview of a deleted memory in the log.
const DeletedPreview = "(deleted)"

// mentionKey is the key of bucketRecallMentions for memory id in entry
// seq: the id, a zero byte, seq (8 bytes, big-endian).
func mentionKey(id string, seq uint64) []byte {
	return append(append([]byte(id), 0), u64(seq)...)
}

// putMentions indexes the memories e gives or withholds, except those
// already forgotten.
func putMentions(men *bolt.Bucket, e *RecallEntry) error {
	for _, ms := range [][]RecallMemory{e.Given, e.Withheld} {
		for _, m := range ms {
			if m.Preview == "" || m.Preview == DeletedPreview {
				continue
			}
			if err := men.Put(mentionKey(m.ID, e.Seq), nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropMentions removes the mention keys of entry e.
func dropMentions(men *bolt.Bucket, e *RecallEntry) error {
	for _, ms := range [][]RecallMemory{e.Given, e.Withheld} {
		for _, m := range ms {
			if err := men.Delete(mentionKey(m.ID, e.Seq)); err != nil {
				return err
			}
		}
	}
	return nil
}

// recallMentions returns bucketRecallMentions, creating it, and filling
// it from the entries a log written before it holds, when it is missing.
func recallMentions(tx *bolt.Tx) (*bolt.Bucket, error) {
	if men := tx.Bucket(bucketRecallMentions); men != nil {
		return men, nil
	}
	men, err := tx.CreateBucket(bucketRecallMentions)
	if err != nil {
		return nil, err
	}
	if b := tx.Bucket(bucketRecalls); b != nil {
		err = b.ForEach(func(k, v []byte) error {
			var e RecallEntry
			if json.Unmarshal(v, &e) != nil {
				return nil
			}
			e.Seq = getU64(k)
			return putMentions(men, &e)
		})
	}
	return men, err
}

// forgetRecalledTx replaces with DeletedPreview the previews of the
// memories ids in every entry of the recall log that mentions them. The
// deletes (Delete, a batch's Trash, PurgeTrash, a team delete) call it in
// their transaction, so a deleted memory's text does not outlive it in
// the log.
func forgetRecalledTx(tx *bolt.Tx, ids ...string) error {
	b := tx.Bucket(bucketRecalls)
	if b == nil || len(ids) == 0 {
		return nil
	}
	men, err := recallMentions(tx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		prefix := append([]byte(id), 0)
		var keys [][]byte
		c := men.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, _ = c.Next() {
			keys = append(keys, append([]byte(nil), k...))
		}
		for _, k := range keys {
			if err := men.Delete(k); err != nil {
				return err
			}
			seq := k[len(prefix):]
			v := b.Get(seq)
			var e RecallEntry
			if v == nil || json.Unmarshal(v, &e) != nil {
				continue
			}
			changed := false
			for _, ms := range [][]RecallMemory{e.Given, e.Withheld} {
				for j := range ms {
					if ms[j].ID == id && ms[j].Preview != DeletedPreview {
						ms[j].Preview, changed = DeletedPreview, true
					}
				}
			}
			if !changed {
				continue
			}
			data, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := b.Put(seq, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// ForgetRecalled replaces with DeletedPreview the previews of the
// memories ids in the recall log (the store's deletes do it themselves;
// this is for a memory deleted elsewhere).
func (s *Store) ForgetRecalled(ctx context.Context, ids ...string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.update(func(tx *bolt.Tx) error { return forgetRecalledTx(tx, ids...) }); err != nil {
		return fmt.Errorf("forget recalled memories: %w", err)
	}
	return nil
}

// ClearRecallLog deletes every entry of the recall log and its indexes,
// and returns how many entries it deleted. Later entries' Seqs go on
// from the last one, so a reader's paging never sees a Seq again.
func (s *Store) ClearRecallLog(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecalls)
		if b == nil {
			return nil
		}
		n = b.Stats().KeyN
		seq := b.Sequence()
		for _, name := range [][]byte{bucketRecalls, bucketRecallGiven, bucketRecallMentions} {
			if tx.Bucket(name) != nil {
				if err := tx.DeleteBucket(name); err != nil {
					return err
				}
			}
		}
		nb, err := tx.CreateBucket(bucketRecalls)
		if err != nil {
			return err
		}
		return nb.SetSequence(seq)
	})
	if err != nil {
		return 0, fmt.Errorf("clear the recall log: %w", err)
	}
	return n, nil
}

// pruneRecalls drops the oldest entries while more than keep are left
// (counted as the span of their Seqs, which only the oldest leave) or
// they are older than cutoff, with the given-index and mention keys that
// point to them.
func pruneRecalls(b, idx, men *bolt.Bucket, last uint64, cutoff time.Time, keep int) error {
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
		old.Seq = seq
		if err := dropMentions(men, &old); err != nil {
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
	case q.Scan < 0:
		return nil, fmt.Errorf("%w: scan must be 0 or more", memory.ErrInvalid)
	case len(q.SessionID) > maxRecallWord:
		return nil, fmt.Errorf("%w: session id longer than %d bytes", memory.ErrInvalid, maxRecallWord)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	out := []RecallEntry{}
	err := s.view(func(tx *bolt.Tx) error {
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
		for read := 0; k != nil && len(out) < q.Limit && (q.Scan <= 0 || read < q.Scan); k, v = c.Prev() {
			read++
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
	return s.view(func(tx *bolt.Tx) error {
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
	err := s.update(func(tx *bolt.Tx) error {
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

// AddRecallFeedbackOnce records fb on entry seq for each of ids that
// entry gave and whose feedback there has no fb.Op yet, and returns the
// ids it recorded it for, in the order of ids: the same feedback on the
// same recall's memory is recorded once however often it is asked for
// (a turn's implicit use, read again). An entry no longer in the log, or
// full (MaxRecallFeedback), takes nothing, which is not an error. fb.ID
// is set from ids.
func (s *Store) AddRecallFeedbackOnce(ctx context.Context, seq uint64, ids []string, fb RecallFeedback) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if len(fb.Op) == 0 || len(fb.Op) > maxRecallWord || (fb.Score != 1 && fb.Score != -1) {
		return nil, fmt.Errorf("%w: recall feedback needs an op and a score of +1 or -1", memory.ErrInvalid)
	}
	fb.At = fb.At.UTC()
	var took []string
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.update(func(tx *bolt.Tx) error {
		took = nil // a retried transaction starts again
		b := tx.Bucket(bucketRecalls)
		if b == nil {
			return nil
		}
		v := b.Get(u64(seq))
		var e RecallEntry
		if v == nil || json.Unmarshal(v, &e) != nil {
			return nil
		}
		for _, id := range ids {
			if len(e.Feedback) >= MaxRecallFeedback {
				break
			}
			given := slices.ContainsFunc(e.Given, func(m RecallMemory) bool { return m.ID == id })
			had := slices.ContainsFunc(e.Feedback, func(f RecallFeedback) bool { return f.ID == id && f.Op == fb.Op })
			if !given || had {
				continue
			}
			f := fb
			f.ID = id
			e.Feedback = append(e.Feedback, f)
			took = append(took, id)
		}
		if len(took) == 0 {
			return nil
		}
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		return b.Put(u64(seq), data)
	})
	if err != nil {
		return nil, fmt.Errorf("log recall feedback on recall %d: %w", seq, err)
	}
	return took, nil
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
	// Dropped counts the recalls the log lost since the daemon started
	// because too many waited to be written (the oldest waiting went);
	// Failed those whose write failed (the daemon's log says why).
	Dropped int64 `json:"dropped"`
	Failed  int64 `json:"failed"`
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
