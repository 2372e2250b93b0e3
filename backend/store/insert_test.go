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

// TestInsertBatch: a batch is written whole; Unique finds texts stored
// before and earlier in the batch; Restore keeps what the record says of
// itself and gives a taken id a new one; a batch may not supersede.
func TestInsertBatch(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	alpha := mustPut(t, s, mem("alpha"))
	restored := mem("restored")
	restored.ID = alpha.ID // taken
	restored.Importance = 0.02
	restored.AccessCount = 7
	res, err := s.InsertBatch(ctx, []Insert{
		{Memory: mem("alpha"), Unique: true},
		{Memory: mem("gamma"), Unique: true},
		{Memory: mem(" gamma"), Unique: true},
		{Memory: restored, Restore: true, Unique: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 4 || s.Count() != 3 {
		t.Fatalf("%d results, %d records; want 4, 3", len(res), s.Count())
	}
	if !res[0].Existed || res[0].Memory.ID != alpha.ID {
		t.Errorf("the stored text: %+v, want alpha existing", res[0])
	}
	if res[1].Existed || !res[2].Existed || res[2].Memory.ID != res[1].Memory.ID {
		t.Errorf("a text twice in the batch: %+v / %+v, want the second to name the first", res[1], res[2])
	}
	r := res[3].Memory
	if res[3].Existed || r.ID == alpha.ID || r.Importance != 0.02 || r.AccessCount != 7 {
		t.Errorf("restore: %+v, want a new id, importance 0.02, access 7", r)
	}
	if _, err := s.InsertBatch(ctx, []Insert{{Memory: mem("x"), Supersedes: alpha.ID}, {Memory: mem("y")}}); err == nil || s.Count() != 3 {
		t.Errorf("a batch that supersedes: err %v, %d records; want an error and nothing written", err, s.Count())
	}
	if _, err := s.InsertBatch(ctx, []Insert{{Memory: mem("x")}, {Memory: memory.Memory{}}}); err == nil || s.Count() != 3 {
		t.Errorf("a batch with an invalid record: err %v, %d records; want an error and nothing written", err, s.Count())
	}
}
