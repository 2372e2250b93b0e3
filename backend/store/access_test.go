package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// TestRecordAccess: each live id is counted once, in one write that a
// reopened store still holds; a gone id is named (memory.ErrNotFound)
// without stopping the others; bad input writes nothing.
func TestRecordAccess(t *testing.T) {
	at := t0.Add(time.Hour)
	tests := []struct {
		name    string
		ids     func(live []string) []string
		at      time.Time
		counted []int // indexes of live counted once
		err     error
	}{
		{"all", func(l []string) []string { return l }, at, []int{0, 1, 2}, nil},
		{"one", func(l []string) []string { return l[1:2] }, at, []int{1}, nil},
		{"repeated counts once", func(l []string) []string { return []string{l[0], l[2], l[0]} }, at, []int{0, 2}, nil},
		{"none", func([]string) []string { return nil }, at, nil, nil},
		{"a gone id", func(l []string) []string { return []string{l[0], "gone", l[1]} }, at, []int{0, 1}, memory.ErrNotFound},
		{"only gone ids", func([]string) []string { return []string{"gone", "gone2"} }, at, nil, memory.ErrNotFound},
		{"no time", func(l []string) []string { return l }, time.Time{}, nil, memory.ErrInvalid},
		{"too many", func(l []string) []string { return make([]string, MaxAccessIDs+1) }, at, nil, memory.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			var live []string
			for i := range 3 {
				live = append(live, mustPut(t, s, mem(fmt.Sprintf("memory number %d about the deploy gate", i))).ID)
			}
			got, err := s.RecordAccess(context.Background(), tc.at, tc.ids(live)...)
			if !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.counted) {
				t.Errorf("returned %d records, want %d", len(got), len(tc.counted))
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openTest(t, dir)
			for i, id := range live {
				m, err := s.Get(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				if slices.Contains(tc.counted, i) {
					want = 1
					if !m.LastAccessed.Equal(at) || len(m.Hits) != 1 || !m.Hits[0].Equal(at) {
						t.Errorf("%s: last accessed %v, hits %v, want %v", id, m.LastAccessed, m.Hits, at)
					}
					if r, ok := got[id]; !ok || r.AccessCount != 1 || !r.UpdatedAt.Equal(m.UpdatedAt) {
						t.Errorf("%s: returned %+v, stored access count %d", id, r.AccessCount, m.AccessCount)
					}
				}
				if m.AccessCount != want {
					t.Errorf("%s: access count %d after reopening, want %d", id, m.AccessCount, want)
				}
			}
		})
	}
}

// TestRecordAccessOneWrite: the records of one RecordAccess share one
// sequence number (one transaction), newer than the write before it.
func TestRecordAccessOneWrite(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, b := mustPut(t, s, mem("the first memory")), mustPut(t, s, mem("the second memory"))
	_, before, err := s.ChangedSince(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordAccess(ctx, t0, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	changed, after, err := s.ChangedSince(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	if after != before+1 || len(changed) != 2 {
		t.Errorf("sequence %d -> %d, changed %v: want one write of both", before, after, changed)
	}
}

// BenchmarkRecordAccess measures recording five memories as accessed (a
// prompt recall's given memories) on a real store on disk: update×5 is one
// Update (one fsync'd transaction) per memory, as recalls recorded them
// before RecordAccess; batch is one RecordAccess. Both run in the same
// benchmark run, so their ratio is the batching's gain.
func BenchmarkRecordAccess(b *testing.B) {
	for _, batch := range []bool{false, true} {
		name := "update×5"
		if batch {
			name = "batch"
		}
		b.Run(name, func(b *testing.B) {
			s := openTest(b, b.TempDir())
			ctx := context.Background()
			var ids []string
			for i := range 5 {
				ids = append(ids, mustPut(b, s, mem(fmt.Sprintf("memory number %d about the deploy gate", i))).ID)
			}
			b.ResetTimer()
			for i := range b.N {
				at := t0.Add(time.Duration(i) * time.Second)
				if batch {
					if _, err := s.RecordAccess(ctx, at, ids...); err != nil {
						b.Fatal(err)
					}
					continue
				}
				for _, id := range ids {
					if _, err := s.Update(ctx, id, func(m *memory.Memory) error {
						m.AccessCount++
						m.LastAccessed = at
						m.Hits = append(m.Hits, at)
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestRecordAccessDamagedRecord: a record that cannot be read is named in
// the error and the others of the same call are recorded.
func TestRecordAccessDamagedRecord(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	a, bad, c := mustPut(t, s, mem("the first memory")), mustPut(t, s, mem("the damaged memory")), mustPut(t, s, mem("the third memory"))
	if err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketRecs).Put([]byte(bad.ID), []byte("not a record"))
	}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RecordAccess(ctx, t0, a.ID, bad.ID, c.ID)
	if err == nil || !strings.Contains(err.Error(), bad.ID) {
		t.Errorf("error %v, want one naming %s", err, bad.ID)
	}
	for _, id := range []string{a.ID, c.ID} {
		m, gerr := s.Get(ctx, id)
		if gerr != nil {
			t.Fatal(gerr)
		}
		if m.AccessCount != 1 || got[id].AccessCount != 1 {
			t.Errorf("%s: access count %d (returned %d), want 1", id, m.AccessCount, got[id].AccessCount)
		}
	}
	if _, ok := got[bad.ID]; ok {
		t.Errorf("the damaged record %s is returned as recorded", bad.ID)
	}
}
