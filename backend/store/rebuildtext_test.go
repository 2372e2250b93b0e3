package store

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestRebuildTextLive: RebuildText rebuilds the open store's text index
// while writes and searches go on. Writes made while the new index is
// built (here from its progress callback, after the snapshot was read: a
// memory added, one changed, one deleted) are in it; searches run
// throughout (under -race: the index's handle is swapped under them);
// the new index holds every live record and nothing else, the check finds
// no damage, the old index is gone, and a reopened store needs no repair.
func TestRebuildTextLive(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	old := rebuildChunk
	t.Cleanup(func() { rebuildChunk = old })
	rebuildChunk = 10
	const n = 25 // three chunks
	var kept []string
	for i := range n {
		m := mustPut(t, s, mem(fmt.Sprintf("Worker %d retries batch-%d.bin three times", i, i)))
		kept = append(kept, m.ID)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.TextSearch(ctx, "retries batch-7.bin", 5, Filter{}); err != nil {
				t.Errorf("search during the rebuild: %v", err)
				return
			}
		}
	}()
	var calls []int
	var added memory.Memory
	got, err := s.RebuildText(ctx, func(done, total int) {
		calls = append(calls, done)
		if total != n {
			t.Errorf("progress total %d, want %d", total, n)
		}
		if len(calls) == 1 {
			var err error
			if added, err = s.Put(ctx, mem("The nightly logrotate job rotates logs/app.log at 02:00")); err != nil {
				t.Error(err)
			}
			if _, err := s.Update(ctx, kept[1], func(m *memory.Memory) error {
				m.Text = "Worker 1 gives up on quarantined uploads after one try"
				m.Embedding = testEmb.vec(m.Text)
				return nil
			}); err != nil {
				t.Error(err)
			}
			if err := s.Delete(ctx, kept[2]); err != nil {
				t.Error(err)
			}
		}
	})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("RebuildText: %v", err)
	}
	if got != n { // n, one added, one deleted
		t.Errorf("RebuildText: %d documents, want %d", got, n)
	}
	if !slices.Equal(calls, []int{10, 20, 25}) {
		t.Errorf("progress %v", calls)
	}
	find := func(q string) []string {
		t.Helper()
		hits, err := s.TextSearch(ctx, q, 3, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return ids(hits)
	}
	if hits := find("logrotate"); len(hits) == 0 || hits[0] != added.ID {
		t.Errorf("the memory added during the rebuild: %v, want %s first", hits, added.ID)
	}
	if hits := find("quarantined"); len(hits) == 0 || hits[0] != kept[1] {
		t.Errorf("the memory changed during the rebuild: %v, want %s first", hits, kept[1])
	}
	if hits := find("batch-2.bin"); slices.Contains(hits, kept[2]) {
		t.Errorf("the memory deleted during the rebuild is still found: %v", hits)
	}
	mustPut(t, s, mem("A memory written after the rebuild mentions zeppelins"))
	if hits := find("zeppelins"); len(hits) != 1 {
		t.Errorf("a write after the rebuild is not indexed: %v", hits)
	}
	if r, err := s.Check(ctx); err != nil || r.Damaged() || r.TextIndexed != n+1 {
		t.Errorf("Check after the rebuild: %v %+v", err, r)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, textDir+".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if s2.repaired != 0 || len(s2.Info().Warnings) != 0 {
		t.Errorf("reopened after the rebuild: %d repaired, warnings %v", s2.repaired, s2.Info().Warnings)
	}
	if hits, err := s2.TextSearch(ctx, "zeppelins", 3, Filter{}); err != nil || len(hits) != 1 {
		t.Errorf("reopened: %v %v", hits, err)
	}
}
