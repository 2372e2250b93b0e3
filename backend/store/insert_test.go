package store

import (
	"context"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestInsert: Insert is Put and Supersede in one, and with Unique a live
// memory holding the text wins (a superseded one does not).
func TestInsert(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// the store holds "alpha" (superseded by "beta" when superseded is set)
		superseded bool
		in         func(alpha memory.Memory) Insert
		existed    bool
		count      int
	}{
		{"put", false, func(memory.Memory) Insert { return Insert{Memory: mem("gamma")} }, false, 2},
		{"put keeps a duplicate", false, func(memory.Memory) Insert { return Insert{Memory: mem("alpha")} }, false, 2},
		{"unique finds the live copy", false, func(memory.Memory) Insert { return Insert{Memory: mem(" alpha "), Unique: true} }, true, 1},
		{"unique ignores a superseded copy", true, func(memory.Memory) Insert { return Insert{Memory: mem("alpha"), Unique: true} }, false, 3},
		{"supersede", false, func(a memory.Memory) Insert { return Insert{Memory: mem("delta"), Supersedes: a.ID, Unique: true} }, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			alpha := mustPut(t, s, mem("alpha"))
			if tc.superseded {
				if _, err := s.Supersede(ctx, alpha.ID, mem("beta")); err != nil {
					t.Fatal(err)
				}
			}
			in := tc.in(alpha)
			got, existed, err := s.Insert(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if existed != tc.existed || s.Count() != tc.count {
				t.Fatalf("existed %v, %d records; want %v, %d", existed, s.Count(), tc.existed, tc.count)
			}
			if existed && got.ID != alpha.ID {
				t.Fatalf("got %s, want the live copy %s", got.ID, alpha.ID)
			}
			if in.Supersedes != "" {
				old, err := s.Get(ctx, alpha.ID)
				if err != nil || old.SupersededBy != got.ID || got.Supersedes != alpha.ID {
					t.Fatalf("old %+v (%v), new %+v", old, err, got)
				}
			}
		})
	}
}

// TestInsertUniqueConcurrent: writers of one text with Unique store it once.
func TestInsertUniqueConcurrent(t *testing.T) {
	s := openTest(t, t.TempDir())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.Insert(context.Background(), Insert{Memory: mem("one text"), Unique: true}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := s.Count(); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
}
