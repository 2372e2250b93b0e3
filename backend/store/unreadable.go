package store

import (
	"bytes"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// A record whose stored bytes do not decode (Open found it unreadable:
// skipUnreadableOnOpen) is skipped by every read. The writes treat it the
// same way: a write that would change it (Update, RecordAccess, a batch's
// Put, a supersession of it) fails with an *unreadableError, which is
// memory.ErrNotFound to its callers and names `memtray doctor`; a write
// whose precondition names it (Batch.IfUpdatedAt) finds it changed, as a
// gone record; a write that reads it only to decide about other records
// (exact-text dedup, a re-embedding, a conflict copy's restore) passes it
// by. A delete of it (Delete, or a move to the trash, Batch.Trash: what a
// user's delete does) removes it for good: the trash keeps nothing of it,
// since nothing could restore bytes that do not decode, and a salvage
// could not save it either.

// deleteUnreadableTx deletes record id, whose value v does not decode, in
// tx with store sequence seq: the record, its insertion-order and
// content-hash index entries (found by its header when that decodes,
// else by a scan of the index, which only such a rare delete pays), and a
// tombstone for the text index. Nothing goes to the team outbox: whether
// it was a team memory is in the bytes that do not decode (an entry
// already queued for it is pushed as a delete, the record being gone). The
// caller adjusts the record count.
func deleteUnreadableTx(tx *bolt.Tx, id string, v []byte, seq uint64) error {
	key := []byte(id)
	order := tx.Bucket(bucketOrder)
	var orderKeys [][]byte
	if h, _, _, err := splitRecord(v, nil); err == nil && bytes.Equal(order.Get(u64(h.ord)), key) {
		orderKeys = append(orderKeys, u64(h.ord))
	} else if err := order.ForEach(func(k, ov []byte) error {
		if bytes.Equal(ov, key) {
			orderKeys = append(orderKeys, slices.Clone(k))
		}
		return nil
	}); err != nil {
		return fmt.Errorf("delete unreadable %s: %w", id, err)
	}
	hashes := tx.Bucket(bucketHash)
	var hashKeys [][]byte
	if err := hashes.ForEach(func(k, _ []byte) error {
		if len(k) == hashLen+len(key) && bytes.HasSuffix(k, key) {
			hashKeys = append(hashKeys, slices.Clone(k))
		}
		return nil
	}); err != nil {
		return fmt.Errorf("delete unreadable %s: %w", id, err)
	}
	for _, k := range orderKeys {
		if err := order.Delete(k); err != nil {
			return err
		}
	}
	for _, k := range hashKeys {
		if err := hashes.Delete(k); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketRecs).Delete(key); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDels).Put(key, u64(seq)); err != nil {
		return err
	}
	return forgetRecalledTx(tx, id) // recalllog.go
}

// unreadableWarningPrefix begins Open's warning about record id.
func unreadableWarningPrefix(id string) string { return "record " + id + " is unreadable" }
