package recall

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/search"
)

// BenchmarkRecall measures a prompt recall with and without the recall
// log (one more store write per recall, plus reading the withheld
// memories' previews).
func BenchmarkRecall(b *testing.B) {
	for _, logged := range []bool{false, true} {
		b.Run(fmt.Sprint("logged=", logged), func(b *testing.B) {
			rec, built, st := openStore(b)
			o := Options{Recaller: rec, Built: built, Clock: &testClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}}
			if logged {
				o.Log = st
			}
			s, err := New(o)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				if _, err := s.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: prompt}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
