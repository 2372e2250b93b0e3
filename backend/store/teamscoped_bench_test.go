package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkEnqueueTeamScoped is the pass the sync loop makes at a daemon's
// first connection, over a store of 2,000 memories none of which is to be
// queued (the common start: nothing shared while team memory was off).
func BenchmarkEnqueueTeamScoped(b *testing.B) {
	s := openTeam(b, b.TempDir())
	ctx := context.Background()
	for i := range 2000 {
		mustPut(b, s, teamMem(fmt.Sprintf("fact number %d about the deploy pipeline", i)))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.EnqueueTeamScoped(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
