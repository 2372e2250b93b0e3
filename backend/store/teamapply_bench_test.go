package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// BenchmarkApplyTeam measures one pulled page as the team sync applies
// it: 500 team memories updated (a new importance each round, the text
// and vector kept) in a team store of 2,000, each put written with its
// copy's base.
func BenchmarkApplyTeam(b *testing.B) {
	recs := benchRecords(2000)
	s, err := Open(context.Background(), Options{Dir: b.TempDir(), Model: embed.BuiltinModel, Dim: embed.BuiltinDim,
		Shared: func(*memory.Memory) bool { return true }})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := range recs {
		recs[i].ID = fmt.Sprintf("team%05d", i)
		recs[i].Scope = memory.ScopeTeam
		recs[i].CreatedAt, recs[i].UpdatedAt = time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC()
	}
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: recs}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		page := make([]memory.Memory, 0, 500)
		for j := 0; j < 500; j++ {
			m := recs[(i*500+j)%len(recs)]
			m.Importance = float64((i+j)%10) / 10
			m.UpdatedAt = time.Unix(int64(i+1), 0).UTC()
			page = append(page, m)
		}
		if _, err := s.ApplyTeam(ctx, TeamChanges{Put: page}); err != nil {
			b.Fatal(err)
		}
	}
}
