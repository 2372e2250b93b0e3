package store

import (
	bolt "go.etcd.io/bbolt"
)

// A write is published in three steps, all under s.wmu: its bbolt commit,
// then its words in the text index (indexText), then its entries and
// vectors in memory together with the store's sequence number s.seq
// (under s.mu, which signals s.pub). The entries are what List, Count
// and both legs of a search read (the text leg keeps only the hits the
// entries hold), so a record they show has its words indexed already.
//
// bbolt is ahead of all three: a reader's transaction sees a commit from
// the moment bbolt writes its meta page, during the commit's last fsync,
// before the writer has control back. So the reads of records (Get,
// GetMany, Iterate, FindByHash, Export, the team push's Outbox, and the
// trash's Trash and TrashGet) note the sequence number their transaction
// saw and, before they return, wait until the store has published it
// (waitPublished): a record one of them returns is in the text and vector
// indexes, and a record the trash lists is out of them. The other reads
// of the records bucket are not waited for: those under the write lock
// (planInserts, a re-embedding's stageTodo and swapStaged, indexRecords
// from the write paths) see no write in flight, and the rest return no
// record (Import's planDuplicates, a conflict copy's restoreConflicts,
// RepairVectors' damagedTexts and TurnMarks read records only to decide,
// and the write that follows rechecks under the lock; Open and the doctor
// read before or beside any write). A read waits only when it caught a write in
// flight, for that write's tail (its fsync, its text batch and its
// in-memory step); no lock is held while it waits, and writers hold
// nothing a reader needs across their slow work (s.mu only for the
// in-memory step).

// viewPublished is s.view for a read of records that returns them to the
// caller: fn runs in a read transaction, and viewPublished returns once
// every write that transaction saw is published (see above).
func (s *Store) viewPublished(fn func(*bolt.Tx) error) error {
	var seen uint64
	err := s.view(func(tx *bolt.Tx) error {
		seen = seqOf(tx)
		return fn(tx)
	})
	s.waitPublished(seen)
	return err
}

// seqOf is the store sequence number the transaction tx sees (0 for a
// file without its meta bucket).
func seqOf(tx *bolt.Tx) uint64 {
	if meta := tx.Bucket(bucketMeta); meta != nil {
		return getU64(meta.Get(keySeq))
	}
	return 0
}

// waitPublished waits until the store has published the writes up to
// sequence number seq (s.seq >= seq), or given up on them (s.abandoned),
// or is closed.
func (s *Store) waitPublished(seq uint64) {
	s.mu.RLock()
	for s.seq < seq && s.abandoned < seq && !s.closed {
		s.pub.Wait()
	}
	s.mu.RUnlock()
}

// abandonVisible is called when a commit failed. bbolt shows a commit's
// meta page to readers before its last fsync, and does not take it back
// when that fsync fails: a read may have seen a seq the writer will
// never publish. The seq the file shows now, if above the published one,
// is given up on (s.abandoned), so that such a read returns what it saw
// instead of waiting for ever.
func (s *Store) abandonVisible() {
	var shown uint64
	_ = s.view(func(tx *bolt.Tx) error {
		shown = seqOf(tx)
		return nil
	})
	s.mu.Lock()
	if shown > s.seq {
		s.abandoned = max(s.abandoned, shown)
		s.pub.Broadcast()
	}
	s.mu.Unlock()
}

// setSeq publishes the store's sequence number seq: the writes up to it
// are in the entries, the vector index and (or pending for) the text
// index. Called with s.mu held.
func (s *Store) setSeq(seq uint64) {
	s.seq = seq
	s.pub.Broadcast()
}

// committed is called by every write path once its bbolt commit has
// returned, before anything of it is published: tests pause a write
// there (afterCommit) to look at it from a reader's side.
func (s *Store) committed() {
	if s.afterCommit != nil {
		s.afterCommit()
	}
}
