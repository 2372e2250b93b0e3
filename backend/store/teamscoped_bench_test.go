package store

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
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

// BenchmarkFirstConnection is the sync loop's pass at a daemon's first
// connection over a team store of n memories, none changed while team
// memory was off (the common start): half pulled from the team (their
// scope is team), half pushed from here (default scope, in a shared
// project), every one with its base, with the built-in embedder's
// dimension. "team-scoped@7034821" is the pass before EnqueueSinceBase
// (the baseline, in the same run); "team-scoped" that pass now (a base
// looked up before a record is decoded); "team-scoped+since-base" the
// pass now, at the first start after the upgrade and at a later one.
func BenchmarkFirstConnection(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("memories=%d", n), func(b *testing.B) {
			s := benchTeamStore(b, n)
			ctx := context.Background()
			// exp-teamon's pass as at 7034821, which decoded every record
			// saying scope team before looking at its base: the baseline.
			b.Run("pass=team-scoped@7034821", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.enqueueWhere(ctx, "enqueue team-scoped", outboxRestore, teamScopeJSON, nil, neverSent); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("pass=team-scoped", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.EnqueueTeamScoped(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			pass := func(b *testing.B) {
				if _, err := s.EnqueueTeamScoped(ctx); err != nil {
					b.Fatal(err)
				}
				c, err := s.EnqueueSinceBase(ctx)
				if err != nil || c.Total() != 0 {
					b.Fatalf("EnqueueSinceBase = %+v, %v; want nothing queued", c, err)
				}
			}
			// The first pass after the upgrade compares every record.
			b.Run("pass=team-scoped+since-base/first", func(b *testing.B) {
				for b.Loop() {
					b.StopTimer()
					forgetSinceBase(b, s)
					b.StartTimer()
					pass(b)
				}
			})
			b.Run("pass=since-base", func(b *testing.B) {
				pass(b)
				for b.Loop() {
					if _, err := s.EnqueueSinceBase(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
			// Every later start: only the records written since the last.
			b.Run("pass=team-scoped+since-base", func(b *testing.B) {
				pass(b)
				for b.Loop() {
					pass(b)
				}
			})
		})
	}
}

// benchTeamStore is a team store of n synced memories for
// BenchmarkFirstConnection: n/2 pulled, n/2 pushed and acknowledged.
func benchTeamStore(b *testing.B, n int) *Store {
	b.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Options{Dir: b.TempDir(), Model: "bench-random", Dim: embed.BuiltinDim, Shared: teamPolicy})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	g := newTextGen(7)
	r := rand.New(rand.NewSource(7))
	vec := func() []float32 {
		v := make([]float32, embed.BuiltinDim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	const page = 2000
	for lo := 0; lo < n; lo += page {
		var pulled, own []memory.Memory
		for i := lo; i < min(n, lo+page); i++ {
			m := memory.Memory{Text: fmt.Sprintf("%s (%d)", g.text(8, 60), i), Embedding: vec(), Project: "team", Type: memory.TypeProject,
				CreatedAt: t0, UpdatedAt: t0}
			if i%2 == 0 {
				m.ID, m.Scope = fmt.Sprintf("pulled%06d", i), memory.ScopeTeam
				pulled = append(pulled, m)
			} else {
				own = append(own, m)
			}
		}
		if _, err := s.ApplyTeam(ctx, TeamChanges{Put: pulled}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.PutBatch(ctx, own); err != nil {
			b.Fatal(err)
		}
		es, ds, err := s.Outbox(ctx, 0)
		if err != nil {
			b.Fatal(err)
		}
		dids := make([]string, len(ds))
		for i := range es {
			es[i].Accepted = true
		}
		for i, d := range ds {
			dids[i] = d.ID
		}
		if err := s.AckOutbox(ctx, es, dids); err != nil {
			b.Fatal(err)
		}
	}
	if k, err := s.OutboxLen(); err != nil || k != 0 {
		b.Fatalf("outbox %d, %v", k, err)
	}
	return s
}

// forgetSinceBase drops the sequence number the last EnqueueSinceBase
// recorded, as in a store from before it.
func forgetSinceBase(b *testing.B, s *Store) {
	b.Helper()
	if err := s.update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Delete(keyTeamSinceBase) }); err != nil {
		b.Fatal(err)
	}
}
