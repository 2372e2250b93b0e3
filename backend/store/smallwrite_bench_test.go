package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkSmallWrite measures the small transactions of the write and
// recall paths on a real store on disk, each one fsync'd bbolt
// transaction: a turn mark (MarkTurn of one mark: a turn writes two such
// transactions, its pending marks and its outcomes), a decision of the
// feed's log (AddDecision), and one memory recorded as accessed
// (RecordAccess of one id). Their cost is about one fsync each.
func BenchmarkSmallWrite(b *testing.B) {
	ctx := context.Background()
	b.Run("mark-turn", func(b *testing.B) {
		s := openTest(b, b.TempDir())
		b.ResetTimer()
		for i := range b.N {
			if err := s.MarkTurn(ctx, []TurnMark{{Turn: fmt.Sprint("t1:", i), Hash: "h"}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decision", func(b *testing.B) {
		s := openTest(b, b.TempDir())
		b.ResetTimer()
		for i := range b.N {
			rec := DecisionRecord{At: t0.Add(time.Duration(i) * time.Second), ID: fmt.Sprint("d", i), Data: []byte(`{"verdict":"stored"}`)}
			if err := s.AddDecision(rec, "stored", "", DecisionLimits{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("access-1", func(b *testing.B) {
		s := openTest(b, b.TempDir())
		id := mustPut(b, s, mem("one memory about the deploy gate")).ID
		b.ResetTimer()
		for i := range b.N {
			if _, err := s.RecordAccess(ctx, t0.Add(time.Duration(i)*time.Second), id); err != nil {
				b.Fatal(err)
			}
		}
	})
}
