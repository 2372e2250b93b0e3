package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/blevesearch/bleve/v2"
)

// rebuildSuffix names the folder beside the text index where RebuildText
// builds the new one; a leftover of a kill is removed by the next.
const rebuildSuffix = ".rebuild"

// rebuildChunk is the number of records per batch (and per progress
// call) of RebuildText's build; tests lower it.
var rebuildChunk = reindexChunk

// RebuildText rebuilds the text index of the open store from the records
// while the store serves (what RebuildTextIndex does to a closed one):
// the new index is built beside the old one from a snapshot of the live
// records, searches using the old one meanwhile and writes going on; then,
// with writes held off (s.wmu), the records written or deleted since the
// snapshot are brought into the new index, and it replaces the old one
// (searches wait only for the swap), which is then removed. No write is
// lost: each is in the records, read either by the snapshot or by the
// catch-up. progress, if not nil, is called with the records indexed and
// their number as the build goes. It returns the documents the new index
// holds.
func (s *Store) RebuildText(ctx context.Context, progress func(done, total int)) (int, error) {
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	live, seq, err := s.ChangedSince(ctx, 0)
	if err != nil {
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	ids := make([]string, 0, len(live))
	for id := range live {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	path := filepath.Join(s.dir, textDir)
	tmp := path + rebuildSuffix
	if err := os.RemoveAll(tmp); err != nil {
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	idx, err := s.createTextIndex(tmp)
	if err != nil {
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	abandon := func(err error) (int, error) {
		closeQuietly(idx)
		_ = os.RemoveAll(tmp)
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	for start := 0; start < len(ids); start += rebuildChunk {
		if err := ctx.Err(); err != nil {
			return abandon(err)
		}
		end := min(start+rebuildChunk, len(ids))
		if err := s.indexInto(idx, ids[start:end], nil, nil); err != nil {
			return abandon(err)
		}
		if progress != nil {
			progress(end, len(ids))
		}
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return abandon(err)
	}
	changed, now, err := s.ChangedSince(ctx, seq)
	if err != nil {
		return abandon(err)
	}
	var dels []string
	s.mu.RLock()
	for _, id := range ids {
		if _, ok := s.entries[id]; !ok {
			dels = append(dels, id)
		}
	}
	s.mu.RUnlock()
	tokens := s.tokensKey()
	more := make([]string, 0, len(changed))
	for id := range changed {
		more = append(more, id)
	}
	slices.Sort(more)
	marks := map[string][]byte{internalWatermark: u64(now), internalTokens: tokens}
	if err := s.indexInto(idx, more, dels, marks); err != nil {
		return abandon(err)
	}
	n, err := idx.DocCount()
	if err == nil {
		err = idx.Close()
	}
	if err != nil {
		return abandon(err)
	}
	if err := s.swapText(path, tmp); err != nil {
		return 0, fmt.Errorf("rebuild text index: %w", err)
	}
	s.textLast = now
	clear(s.pending) // the new index holds every record: nothing is left to retry
	return int(n), nil
}

// indexInto indexes the records ids (from bbolt) into idx, deletes dels
// and sets the internal values marks, in one batch. With marks (the last
// batch), it waits until the index has persisted everything, as flushText
// does, so that the index moved into place is complete on disk.
func (s *Store) indexInto(idx bleve.Index, ids, dels []string, marks map[string][]byte) error {
	b := idx.NewBatch()
	if err := s.indexRecords(b, ids); err != nil {
		return err
	}
	for _, id := range dels {
		b.Delete(id)
	}
	if len(marks) == 0 {
		return idx.Batch(b)
	}
	for k, v := range marks {
		b.SetInternal([]byte(k), v)
	}
	done := make(chan error, 1)
	b.SetPersistedCallback(func(err error) {
		select {
		case done <- err:
		default:
		}
	})
	if err := idx.Batch(b); err != nil {
		return err
	}
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		return errors.New("timed out waiting for the new text index to persist")
	}
}

// swapText replaces the text index at path with the one built, closed,
// at built: the old one is closed, moved aside and removed, the new one
// moved into place and opened. Searches wait meanwhile (s.textMu); the
// caller holds s.wmu. If the new one cannot be put in place or opened,
// the old one is put back.
func (s *Store) swapText(path, built string) error {
	s.textMu.Lock()
	defer s.textMu.Unlock()
	if err := s.text.Close(); err != nil {
		return fmt.Errorf("close the old index: %w", err)
	}
	aside := path + ".old-" + time.Now().UTC().Format(salvageTimeFormat)
	reopenOld := func(cause error) error {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			_ = os.Rename(aside, path)
		}
		idx, err := bleve.OpenUsing(path, textConfig())
		if err != nil {
			return errors.Join(cause, fmt.Errorf("reopen the old index: %w", err))
		}
		s.text = idx
		_ = os.RemoveAll(built)
		return cause
	}
	if err := os.Rename(path, aside); err != nil {
		return reopenOld(fmt.Errorf("move the old index aside: %w", err))
	}
	if err := os.Rename(built, path); err != nil {
		return reopenOld(fmt.Errorf("move the new index into place: %w", err))
	}
	idx, err := bleve.OpenUsing(path, textConfig())
	if err != nil {
		_ = os.Rename(path, built)
		return reopenOld(fmt.Errorf("open the new index: %w", err))
	}
	s.text = idx
	tightenModes(path)
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	_ = os.RemoveAll(aside)
	return nil
}
