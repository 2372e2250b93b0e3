package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// Get returns the memory with id (embedding included), or an error
// wrapping memory.ErrNotFound (also for a record Open found unreadable
// and skipped: every read leaves it out).
func (s *Store) Get(ctx context.Context, id string) (memory.Memory, error) {
	if err := s.checkOpen(); err != nil {
		return memory.Memory{}, err
	}
	var m memory.Memory
	err := s.viewPublished(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRecs).Get([]byte(id))
		if v == nil {
			return fmt.Errorf("get %q: %w", id, memory.ErrNotFound)
		}
		var err error
		_, m, err = decodeRecord(v)
		if s.skipUnreadable([]byte(id), err) {
			return fmt.Errorf("get %q: unreadable, skipped at open (%v; `memtray doctor --salvage` saves what can be read): %w", id, err, memory.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("get %q: %w", id, err)
		}
		return nil
	})
	return m, err
}

// GetMany returns the memories among ids (embeddings included); missing
// ids are simply absent from the map, and so are the records Open found
// unreadable and skipped (Info.Unreadable).
func (s *Store) GetMany(ctx context.Context, ids []string) (map[string]memory.Memory, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	out := make(map[string]memory.Memory, len(ids))
	err := s.viewPublished(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		for _, id := range ids {
			v := recs.Get([]byte(id))
			if v == nil {
				continue
			}
			_, m, err := decodeRecord(v)
			if s.skipUnreadable([]byte(id), err) {
				continue // skipped at Open: as if missing
			}
			if err != nil {
				return fmt.Errorf("get %q: %w", id, err)
			}
			out[id] = m
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// iterateChunk is how many records Iterate reads per read transaction; fn
// runs outside any transaction, so it may call the Store.
const iterateChunk = 256

// Iterate calls fn with each memory matching f (embedding included), in
// insertion order (the records Open found unreadable left out, as Open
// left them out), and stops at the first error fn returns (which Iterate
// returns). Writes made during the walk may or may not be seen.
func (s *Store) Iterate(ctx context.Context, f Filter, fn func(memory.Memory) error) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return fmt.Errorf("iterate: %w", err)
	}
	now := s.now().UnixNano()
	var after []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var batch []memory.Memory
		done := true
		err := s.viewPublished(func(tx *bolt.Tx) error {
			recs := tx.Bucket(bucketRecs)
			c := tx.Bucket(bucketOrder).Cursor()
			var k, v []byte
			if after == nil {
				k, v = c.First()
			} else {
				k, v = c.Seek(after)
				if k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil; k, v = c.Next() {
				if len(batch) == iterateChunk {
					done = false
					return nil
				}
				after = append(after[:0], k...)
				rv := recs.Get(v)
				if rv == nil {
					continue
				}
				_, m, err := decodeRecord(rv)
				if s.skipUnreadable(v, err) {
					continue // skipped at Open, with its warning
				}
				if err != nil {
					return fmt.Errorf("iterate: record %s: %w", v, err)
				}
				if f.matchMemory(&m, now) {
					batch = append(batch, m)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, m := range batch {
			if err := fn(m); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
	}
}

// FindByHash returns a memory of project ("" for the memories of no
// project) whose content hash is hash (a live one in preference to a
// superseded one), and whether there is one. Exact-text dedup is per
// project, as near-duplicate dedup is (a sentence said in project B that
// project A stored first is B's memory too, not a reinforcement of A's,
// which B's prompts never reach): a memory of another project holding the
// text is not found.
func (s *Store) FindByHash(ctx context.Context, hash, project string) (memory.Memory, bool, error) {
	if err := s.checkOpen(); err != nil {
		return memory.Memory{}, false, err
	}
	var found memory.Memory
	ok := false
	err := s.viewPublished(func(tx *bolt.Tx) error {
		var err error
		found, ok, err = holderOf(tx, hash, project, "")
		if err != nil {
			return fmt.Errorf("find by hash: %w", err)
		}
		return nil
	})
	return found, ok, err
}

// holderOf returns a record of project whose content hash is hash, other
// than the record skip: a live one in preference to a superseded one. It
// is the one reading of the content-hash index that the store's
// exact-text dedup makes (FindByHash, Insert.Unique, Import, a team pull, a
// restore), so that every one of them is per project.
func holderOf(tx *bolt.Tx, hash, project, skip string) (memory.Memory, bool, error) {
	recs := tx.Bucket(bucketRecs)
	c := tx.Bucket(bucketHash).Cursor()
	prefix := []byte(hash)
	var found memory.Memory
	ok := false
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		id := k[len(prefix):]
		if string(id) == skip {
			continue
		}
		v := recs.Get(id)
		if v == nil {
			continue
		}
		if h, _, _, err := splitRecord(v, nil); err == nil && h.project != project {
			continue // another project's: its header says so, nothing decoded
		}
		_, m, err := decodeRecord(v)
		if errors.Is(err, errCorrupt) {
			continue // unreadable (Open skipped it): as if missing, never a reason to refuse a write
		}
		if err != nil {
			return memory.Memory{}, false, fmt.Errorf("record %s: %w", id, err)
		}
		if m.Project != project {
			continue
		}
		if !ok || (found.Superseded() && !m.Superseded()) {
			found, ok = m, true
		}
		if !m.Superseded() {
			break
		}
	}
	return found, ok, nil
}

// hashKey is the content-hash index key of a record.
func hashKey(hash, id string) []byte { return []byte(hash + id) }

// VectorSearch returns up to n memories matching f nearest to vec by
// cosine similarity, best first. vec must have the store's dimension; the
// zero vector returns nothing, and records with a zero embedding are never
// returned. A caller holding a vector from an embedder names its model in
// f.Model: a vector of another model than the store's fails with
// memory.ErrModelMismatch (see VectorSearchMany).
func (s *Store) VectorSearch(ctx context.Context, vec []float32, n int, f Filter) ([]Scored, error) {
	out, err := s.VectorSearchMany(ctx, [][]float32{vec}, n, f)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// VectorSearchMany is VectorSearch for several query vectors at once (the
// parts of a segmented embedder's query), in one pass over the index: the
// result lists are in the order of vecs.
//
// When f.Model is set and is not the store's model, it fails with
// memory.ErrModelMismatch: the vectors were embedded before the store
// switched models, and their similarities to the new model's vectors mean
// nothing. It returns that error only once the switch is complete (its
// ReembedOptions.Switched has returned), so a caller that embeds again
// with its (swappable) embedder gets the new model.
func (s *Store) VectorSearchMany(ctx context.Context, vecs [][]float32, n int, f Filter) ([][]Scored, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if err := checkSearchArgs(n, &f); err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	now := s.now().UnixNano()
	qs := make([][]float32, len(vecs))
	s.mu.RLock()
	if f.Model != "" && f.Model != s.model {
		s.mu.RUnlock()
		err := s.CheckModel(f.Model) // the error, once the switch is complete
		if err == nil {
			// Switched back meanwhile: still not the vectors the search began with.
			err = fmt.Errorf("the store switched models during the search: %w", memory.ErrModelMismatch)
		}
		return nil, fmt.Errorf("vector search: %w", err)
	}
	for i, vec := range vecs {
		if err := checkVector(vec, s.dim); err != nil {
			s.mu.RUnlock()
			return nil, fmt.Errorf("vector search: %w", err)
		}
		if !isZero(vec) { // a query without a usable token is similar to nothing
			qs[i] = normalized(vec)
		}
	}
	rf := s.vec.compile(&f, now)
	out := s.vec.queryMany(qs, n, &rf)
	s.mu.RUnlock()
	for _, o := range out {
		sortScored(o)
	}
	return out, nil
}

// CheckModel fails with memory.ErrModelMismatch when model (of vectors a
// caller embedded) is not the store's model once the write in progress,
// if any, is done: the store switched models (ReembedWith), and those
// vectors must not be compared with its records'. A switch writes the
// records' new vectors before the store's model and index change, and
// holds the write lock until its Switched callback has returned: so a
// caller that read a record of another model than its vectors' calls
// CheckModel, which waits for the lock, and gets the error once the switch
// is complete. An empty model passes. It waits for any write: call it
// when a model switch is likely, not on every read.
func (s *Store) CheckModel(model string) error {
	if model == "" {
		return nil
	}
	s.wmu.Lock()
	s.wmu.Unlock() //nolint:staticcheck // SA2001: waiting for a write in progress is the point
	s.mu.RLock()
	cur := s.model
	s.mu.RUnlock()
	if model == cur {
		return nil
	}
	return fmt.Errorf("vectors of model %q, the store uses %q: %w", model, cur, memory.ErrModelMismatch)
}

// sortScored orders results best first, ties by id, so equal scores come
// back in a stable order.
func sortScored(sc []Scored) {
	slices.SortStableFunc(sc, func(a, b Scored) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// clampSim turns a float32 cosine into a float64 within -1..1.
func clampSim(f float32) float64 {
	v := float64(f)
	if math.IsNaN(v) {
		return 0
	}
	return math.Max(-1, math.Min(1, v))
}
