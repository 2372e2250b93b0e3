package store

import (
	"context"
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
