package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// TestTurnMarks: marks are read back by turn (never another turn's), a
// mark replaces the one of the same statement, they survive a reopen, and
// the ones older than TurnMarkTTL are left out and removed by a later
// MarkTurn. Invalid marks are refused.
func TestTurnMarks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if got, err := s.TurnMarks(ctx, "t1"); err != nil || len(got) != 0 {
		t.Fatalf("marks of an empty store: %v, %v", got, err)
	}
	if err := s.MarkTurn(ctx, []TurnMark{{Turn: "t1", Hash: "h1"}, {Turn: "t1", Hash: "h2"}, {Turn: "t10", Hash: "h1", Outcome: "stored"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkTurn(ctx, []TurnMark{{Turn: "t1", Hash: "h1", Outcome: "stored", MemoryID: "m1"}, {Turn: "t1", Outcome: "stored"}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		bad  TurnMark
	}{
		{"empty turn", TurnMark{Hash: "h"}},
		{"NUL in turn", TurnMark{Turn: "a\x00b"}},
		{"long turn", TurnMark{Turn: strings.Repeat("x", 300)}},
	} {
		if err := s.MarkTurn(ctx, []TurnMark{tc.bad}); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	got, err := s.TurnMarks(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]TurnMark{
		"":   {Turn: "t1", Outcome: "stored", At: t0},
		"h1": {Turn: "t1", Hash: "h1", Outcome: "stored", MemoryID: "m1", At: t0},
		"h2": {Turn: "t1", Hash: "h2", At: t0},
	}
	if len(got) != len(want) {
		t.Fatalf("marks %+v, want %+v", got, want)
	}
	for h, w := range want {
		if g := got[h]; g.Turn != w.Turn || g.Hash != w.Hash || g.Outcome != w.Outcome || g.MemoryID != w.MemoryID || !g.At.Equal(w.At) {
			t.Errorf("mark %q: %+v, want %+v", h, g, w)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Past the TTL they are gone, and a write removes them.
	later := t0.Add(TurnMarkTTL + time.Hour)
	s2, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: later}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s2.Close() })
	if got, err := s2.TurnMarks(ctx, "t1"); err != nil || len(got) != 0 {
		t.Errorf("expired marks: %+v, %v", got, err)
	}
	if err := s2.MarkTurn(ctx, []TurnMark{{Turn: "t2", Outcome: "stored"}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s2.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketTurns).ForEach(func(k, _ []byte) error {
			if !strings.HasPrefix(string(k), "\x00") {
				n++
			}
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d marks kept after the prune, want the new one", n)
	}
}

// TestMarksRideWrites: marks given to Insert and UpdateMarked are written
// in the write's transaction, stamped with its time, in order (a pending
// mark then the outcome of the same statement: the outcome stays); a
// write that writes nothing (Unique finding the text stored, an update of
// a memory not there or refused by its function, a mark refused) writes
// no mark. Atomic is kept on a pending mark only.
func TestMarksRideWrites(t *testing.T) {
	ctx := context.Background()
	pendingThenOutcome := func(turn, id string) []TurnMark {
		return []TurnMark{
			{Turn: turn, Hash: "h1", Atomic: true},
			{Turn: turn, Hash: "h2", Atomic: true},
			{Turn: turn, Hash: "h1", Outcome: "stored", MemoryID: id, Atomic: true},
		}
	}
	errRefused := errors.New("refused")
	tests := []struct {
		name  string
		write func(s *Store, old memory.Memory, turn string) (memory.Memory, error)
		// marked says the marks are on disk (else none is and the write failed or wrote nothing).
		marked bool
	}{
		{"insert", func(s *Store, _ memory.Memory, turn string) (memory.Memory, error) {
			id := newID()
			m, _, err := s.Insert(ctx, Insert{Memory: withID(mem("the deploy gate runs the smoke tests"), id), Unique: true, Marks: pendingThenOutcome(turn, id)})
			return m, err
		}, true},
		{"insert of a text stored", func(s *Store, old memory.Memory, turn string) (memory.Memory, error) {
			m, existed, err := s.Insert(ctx, Insert{Memory: mem(old.Text), Unique: true, Marks: pendingThenOutcome(turn, old.ID)})
			if err == nil && !existed {
				return m, errors.New("stored again")
			}
			return m, err
		}, false},
		{"insert of a batch", func(s *Store, _ memory.Memory, turn string) (memory.Memory, error) {
			res, err := s.InsertBatch(ctx, []Insert{{Memory: mem("the queue retries three times")}, {Memory: withID(mem("the cache expires hourly"), "m-2"), Marks: pendingThenOutcome(turn, "m-2")}})
			if err != nil {
				return memory.Memory{}, err
			}
			return res[1].Memory, nil
		}, true},
		{"supersede", func(s *Store, old memory.Memory, turn string) (memory.Memory, error) {
			id := newID()
			m, _, err := s.Insert(ctx, Insert{Memory: withID(mem(old.Text+" on port 8443"), id), Supersedes: old.ID, Unique: true, Marks: pendingThenOutcome(turn, id)})
			return m, err
		}, true},
		{"update", func(s *Store, old memory.Memory, turn string) (memory.Memory, error) {
			return s.UpdateMarked(ctx, old.ID, func(m *memory.Memory) error { m.Reinforce(t0); return nil }, pendingThenOutcome(turn, old.ID))
		}, true},
		{"update of a memory not there", func(s *Store, _ memory.Memory, turn string) (memory.Memory, error) {
			return s.UpdateMarked(ctx, "gone", func(m *memory.Memory) error { return nil }, pendingThenOutcome(turn, "gone"))
		}, false},
		{"update refused by its function", func(s *Store, old memory.Memory, turn string) (memory.Memory, error) {
			return s.UpdateMarked(ctx, old.ID, func(m *memory.Memory) error { return errRefused }, pendingThenOutcome(turn, old.ID))
		}, false},
		{"insert with a mark refused", func(s *Store, _ memory.Memory, turn string) (memory.Memory, error) {
			m, _, err := s.Insert(ctx, Insert{Memory: mem("the worker lease is thirty seconds"), Marks: append(pendingThenOutcome(turn, "x"), TurnMark{Turn: "a\x00b"})})
			return m, err
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			old := mustPut(t, s, mem("the gateway listens on the public port"))
			before := s.Count()
			turn := "t1:" + tc.name
			m, err := tc.write(s, old, turn)
			got, rerr := s.TurnMarks(ctx, turn)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !tc.marked {
				if len(got) != 0 {
					t.Errorf("marks %+v written by a write that wrote nothing", got)
				}
				if s.Count() != before {
					t.Errorf("%d memories, want %d", s.Count(), before)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]TurnMark{
				"h1": {Turn: turn, Hash: "h1", Outcome: "stored", MemoryID: m.ID},
				"h2": {Turn: turn, Hash: "h2", Atomic: true},
			}
			if len(got) != len(want) {
				t.Fatalf("marks %+v, want %+v", got, want)
			}
			for h, w := range want {
				g := got[h]
				if g.Outcome != w.Outcome || g.MemoryID != w.MemoryID || g.Atomic != w.Atomic || !g.At.Equal(m.UpdatedAt) {
					t.Errorf("mark %q: %+v, want %+v at %v (the write's time)", h, g, w, m.UpdatedAt)
				}
			}
		})
	}
}

func withID(m memory.Memory, id string) memory.Memory {
	m.ID = id
	return m
}

// TestTurnMarksLastForMemoriesOfNoProject: past TurnMarkTTL, the mark of a
// memory a turn stored (or updated) of no project stays, read and kept by
// the prune, with its turn's decided mark (a later reading of the turn
// with its project files the memory under it, however late); the marks
// of a memory of a project, of a reinforcement, of a memory deleted, and
// once the memory is filed under a project, expire.
func TestTurnMarksLastForMemoriesOfNoProject(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	loose := mustPut(t, s, mem("the exporter quotes every field"))
	filed := mem("the importer skips empty rows")
	filed.Project = "shop"
	filed = mustPut(t, s, filed)
	gone := mustPut(t, s, mem("the cache keeps tiles for an hour"))
	turns := map[string]TurnMark{
		"loose":      {Hash: "h1", Outcome: "stored", MemoryID: loose.ID},
		"updated":    {Hash: "h1", Outcome: "updated", MemoryID: loose.ID},
		"filed":      {Hash: "h1", Outcome: "stored", MemoryID: filed.ID},
		"reinforced": {Hash: "h1", Outcome: "skipped-duplicate", MemoryID: loose.ID},
		"gone":       {Hash: "h1", Outcome: "stored", MemoryID: gone.ID},
	}
	for turn, mk := range turns {
		mk.Turn = turn
		if err := s.MarkTurn(ctx, []TurnMark{mk, {Turn: turn, Outcome: mk.Outcome}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// at reopens the store at a time; marksLeft counts the marks on disk
	// by turn, after a write (which prunes).
	at := func(when time.Time) *Store {
		s, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: when}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	marksLeft := func(s *Store) map[string]int {
		if err := s.MarkTurn(ctx, []TurnMark{{Turn: "other", Outcome: "rejected"}}); err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		if err := s.db.View(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketTurns).ForEach(func(k, _ []byte) error {
				if turn, _, ok := strings.Cut(string(k), "\x00"); ok && turn != "" && turn != "other" {
					n[turn]++
				}
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, later := range []time.Duration{TurnMarkTTL + time.Hour, 400 * 24 * time.Hour} {
		s := at(t0.Add(later))
		for turn := range turns {
			got, err := s.TurnMarks(ctx, turn)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			if turn == "loose" || turn == "updated" {
				want = 2
			}
			if len(got) != want || (want > 0 && got[""].Outcome == "") {
				t.Errorf("%v later, turn %s: marks %+v, want %d (the decided one too)", later, turn, got, want)
			}
		}
		if n := marksLeft(s); n["loose"] != 2 || n["updated"] != 2 || len(n) != 2 {
			t.Errorf("%v later, after a prune: marks by turn %v, want loose and updated's 2 each", later, n)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	// Filed under a project, the memory needs them no more.
	s = at(t0.Add(500 * 24 * time.Hour))
	if _, err := s.Update(ctx, loose.ID, func(m *memory.Memory) error { m.Project = "shop"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.TurnMarks(ctx, "loose"); len(got) != 0 {
		t.Errorf("marks of a memory filed under a project: %+v, want none", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = at(t0.Add(500*24*time.Hour + 2*time.Hour)) // the prune runs at most hourly
	defer s.Close()
	if n := marksLeft(s); len(n) != 0 {
		t.Errorf("after the memory was filed: marks by turn %v, want none", n)
	}
}
