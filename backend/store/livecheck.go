package store

import (
	"context"
	"errors"
	"fmt"
	"os"

	index "github.com/blevesearch/bleve_index_api"
	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// Check is the package's Check on a store this process holds open (a
// running daemon's: `memtray doctor` asks the daemon when the store's
// lock is held). It makes the same checks and writes nothing: both meta
// pages, read while a write transaction that is rolled back keeps every
// commit away (a commit rewrites one of them); bbolt's consistency check
// and every bucket decoded in one read transaction; and the text index
// compared with the records from a snapshot taken in step with that
// transaction (records written meanwhile are neither, and those the
// store retries after a failed index update are pending, not missing).
// Writes wait while the meta pages are read, bbolt checks the pages and
// the two snapshots are taken, not while the records are decoded;
// searches never wait.
func (s *Store) Check(ctx context.Context) (*CheckReport, error) {
	if err := s.checkOpen(); err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	path := s.db.Path()
	r := &CheckReport{Dir: s.dir, File: path, Problems: []Problem{}, Notes: []string{}, Opened: true}
	c := &checker{r: r, dir: s.dir}
	// The text index's snapshot is read until the end: RebuildText does
	// not close the index under it.
	s.textMu.RLock()
	defer s.textMu.RUnlock()
	tx, ir, retry, err := s.checkSnapshot(c)
	if err != nil {
		return nil, fmt.Errorf("check store %s: %w", s.dir, err)
	}
	defer ir.Close()
	err = guardFault(path, func() error {
		defer func() { _ = tx.Rollback() }()
		return c.checkBuckets(ctx, tx)
	})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, memory.ErrNewerFormat) {
			return nil, fmt.Errorf("check store %s: %w", s.dir, err)
		}
		r.damage("records", fmt.Sprintf("reading the records file failed: %v", err), fixSalvage)
	}
	if r.Damaged() && r.pagesDamaged {
		r.countReadable(path)
	}
	if c.recs != nil {
		r.compareText(ctx, ir, c.recs, c.dels, retry, "the daemon indexes them with its next write")
	}
	return r, nil
}

// checkSnapshot reads the records file's size and meta pages and runs
// bbolt's consistency check of every page with every commit held off (it
// compares the pages with the file's free list, which a commit changes),
// and opens a read transaction of the records file and a snapshot of the
// text index at the same point (s.wmu, which every write of a record
// holds from its commit to its text index update, then the write lock of
// bbolt, which every commit holds). retry is the ids whose text index
// update failed and waits for the next write.
func (s *Store) checkSnapshot(c *checker) (*bolt.Tx, index.IndexReader, map[string]bool, error) {
	r := c.r
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var tx *bolt.Tx
	var ir index.IndexReader
	err := guardFault(s.db.Path(), func() error {
		wtx, err := s.db.Begin(true) // holds off every commit; rolled back, it writes nothing
		if err != nil {
			return err
		}
		defer func() { _ = wtx.Rollback() }()
		fi, err := os.Stat(s.db.Path())
		if err != nil {
			return err
		}
		r.Bytes = fi.Size()
		r.checkMetas(s.db.Path())
		if tx, err = s.db.Begin(false); err != nil {
			return err
		}
		c.checkPages(tx)
		ai, err := s.text.Advanced()
		if err == nil {
			ir, err = ai.Reader()
		}
		if err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("text index: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	retry := make(map[string]bool, len(s.pending))
	for id := range s.pending {
		retry[id] = true
	}
	return tx, ir, retry, nil
}
