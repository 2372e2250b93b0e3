package team

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// benchN is the team size the benchmarks measure at.
const benchN = 10_000

// benchMemories are n distinct memories of about a sentence or two.
func benchMemories(n int) []Memory {
	out := make([]Memory, n)
	for i := range out {
		text := fmt.Sprintf("Fact %d: the service %d reads its settings from /etc/app/%d.toml and restarts on SIGHUP; see runbook section %d.", i, i%97, i, i%13)
		out[i] = mem(fmt.Sprintf("%032x", i), text)
		out[i].ContentHash = memory.ContentHash(text)
	}
	return out
}

// pushAll pushes ms in batches of batch.
func pushAll(b *testing.B, s *Store, ms []Memory, batch int) {
	ctx := context.Background()
	for i := 0; i < len(ms); i += batch {
		res, err := s.Push(ctx, ms[i:min(i+batch, len(ms))])
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Status != PushInserted {
			b.Fatalf("push: %+v", res[0])
		}
	}
}

// BenchmarkPush: pushing 10k new memories to a fresh team database, in
// batches of 500 (one transaction each), as an outbox drains.
func BenchmarkPush(b *testing.B) {
	ms := benchMemories(benchN)
	for b.Loop() {
		b.StopTimer()
		tm := newTeam(b)
		s := tm.open(b, tm.owner)
		b.StartTimer()
		pushAll(b, s, ms, 500)
	}
	b.ReportMetric(float64(benchN*b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkPushRetry: the same 10k pushed again (all unchanged), what a
// daemon restarting with a full outbox costs.
func BenchmarkPushRetry(b *testing.B) {
	ms := benchMemories(benchN)
	tm := newTeam(b)
	s := tm.open(b, tm.owner)
	pushAll(b, s, ms, 500)
	ctx := context.Background()
	for b.Loop() {
		for i := 0; i < len(ms); i += 500 {
			if _, err := s.Push(ctx, ms[i:min(i+500, len(ms))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(benchN*b.N)/b.Elapsed().Seconds(), "memories/s")
}

// BenchmarkPullApply: a daemon joining a team of 10k memories pulls the
// whole feed from the zero cursor in pages of 1000 and applies each
// change's state (here to a map, the local store's side is part 2's); the
// model variant carries a cached 256-dimension vector per memory.
func BenchmarkPullApply(b *testing.B) {
	ms := benchMemories(benchN)
	tm := newTeam(b)
	s := tm.open(b, tm.owner)
	pushAll(b, s, ms, 500)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	var vs []Vector
	for _, m := range ms {
		v := make([]float32, 256)
		for i := range v {
			v[i] = rng.Float32()
		}
		vs = append(vs, Vector{MemoryID: m.ID, ContentHash: m.ContentHash, Values: v})
	}
	for i := 0; i < len(vs); i += 1000 {
		if err := s.PutVectors(ctx, "bench-256", vs[i:i+1000]); err != nil {
			b.Fatal(err)
		}
	}
	for _, model := range []string{"", "bench-256"} {
		name := "text"
		if model != "" {
			name = "text+vector"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				local := map[string]Memory{}
				vectors := 0
				var cur Cursor
				for {
					page, err := s.Pull(ctx, cur, PullOptions{Limit: 1000, Model: model})
					if err != nil {
						b.Fatal(err)
					}
					for _, c := range page.Changes {
						if c.Memory != nil {
							local[c.MemoryID] = *c.Memory
						}
						if c.Vector != nil {
							vectors++
						}
					}
					cur = page.Next
					if !page.More {
						break
					}
				}
				if len(local) != benchN || (model != "" && vectors != benchN) {
					b.Fatalf("applied %d memories and %d vectors", len(local), vectors)
				}
			}
			b.ReportMetric(float64(benchN*b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}
