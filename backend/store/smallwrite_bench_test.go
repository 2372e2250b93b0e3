package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// BenchmarkSmallWrite measures the small transactions of the write and
// recall paths on a real store on disk, each one fsync'd bbolt
// transaction: a turn mark (MarkTurn of one mark: a turn wrote two such
// transactions, its pending marks and its outcomes), a decision of the
// feed's log (AddDecision), and one memory recorded as accessed
// (RecordAccess of one id). Their cost is about one fsync each. (A turn's
// marks now ride in its memories' transactions: BenchmarkTurnWrite.)
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

// BenchmarkTurnWrite measures what a captured turn of one statement
// writes in the store, as the write pipeline did (marks-3tx: the pending
// mark, the memory, the outcome and decided marks, three transactions)
// and does (marks-1tx: the memory with its marks, Insert.Marks, one
// transaction), next to the memory alone (insert).
func BenchmarkTurnWrite(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"insert", "marks-3tx", "marks-1tx"} {
		b.Run(mode, func(b *testing.B) {
			s := openTest(b, b.TempDir())
			b.ResetTimer()
			for i := range b.N {
				m := mem(fmt.Sprint("statement ", i, " of the turn about the deploy gate"))
				turn, hash := fmt.Sprint("t1:", i), fmt.Sprint("h", i)
				var err error
				switch mode {
				case "insert":
					_, _, err = s.Insert(ctx, Insert{Memory: m, Unique: true})
				case "marks-3tx":
					if err = s.MarkTurn(ctx, []TurnMark{{Turn: turn, Hash: hash}}); err != nil {
						break
					}
					var st memory.Memory
					if st, _, err = s.Insert(ctx, Insert{Memory: m, Unique: true}); err != nil {
						break
					}
					err = s.MarkTurn(ctx, []TurnMark{{Turn: turn, Hash: hash, Outcome: "stored", MemoryID: st.ID}, {Turn: turn, Outcome: "stored"}})
				case "marks-1tx":
					m.ID = newID()
					_, _, err = s.Insert(ctx, Insert{Memory: m, Unique: true, Marks: []TurnMark{
						{Turn: turn, Hash: hash, Atomic: true},
						{Turn: turn, Hash: hash, Outcome: "stored", MemoryID: m.ID},
						{Turn: turn, Outcome: "stored"}}})
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
