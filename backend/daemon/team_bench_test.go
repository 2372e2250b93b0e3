package daemon

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// BenchmarkTeamPropagation measures, with three daemons on one team
// database (PostgreSQL on a unix socket), the time from a team write
// acknowledged on one daemon to the memory being in the other two's
// stores and indexes (recallable), while every daemon also writes a
// steady background load (4 team memories a second each). It reports
// p50 and p99 in milliseconds; the pull timer is the default 30 s, so
// what it measures is the push on write and LISTEN/NOTIFY.
//
//	go test -run XXX -bench TeamPropagation -benchtime 100x ./backend/daemon/
func BenchmarkTeamPropagation(b *testing.B) {
	srv := pgtest.Start(b)
	db := srv.NewDB(b, "benchowner")
	ctx := context.Background()
	admin, err := team.Open(ctx, srv.ConnString("benchowner", db))
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	var ds []*Daemon
	for i := range 3 {
		role := fmt.Sprintf("bench%d", i)
		srv.Role(b, role)
		if err := admin.SetMember(ctx, role, false); err != nil {
			b.Fatal(err)
		}
		cfg := config.Default()
		cfg.DataDir, cfg.Listen, cfg.Embedder.Provider = b.TempDir(), "127.0.0.1:0", "builtin"
		cfg.Capture.Transcripts.ClaudeCodeDirs, cfg.Capture.Transcripts.CodexDirs = []string{b.TempDir()}, []string{b.TempDir()}
		env := fmt.Sprintf("MEMTRAY_BENCH_TEAM_URL_%d", i)
		b.Setenv(env, srv.ConnString(role, db))
		cfg.Team = config.Team{Share: true, URLEnv: env, Projects: []string{"shop"}, PullInterval: config.Duration(30 * time.Second)}
		d, _ := serveWith(b, Options{Config: cfg, Version: "bench"})
		ds = append(ds, d)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var load sync.WaitGroup
	for di, d := range ds {
		load.Go(func() {
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for i := 0; ; i++ {
				select {
				case <-loadCtx.Done():
					return
				case <-t.C:
				}
				_, _ = d.memories.Add(loadCtx, httpapi.AddRequest{Text: teamText(10+di, i), Project: "shop"})
			}
		})
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		from := ds[i%3]
		m, err := from.memories.Add(ctx, httpapi.AddRequest{Text: teamText(20+i%3, i), Project: "shop"})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now() // acknowledged
		for _, to := range ds {
			if to == from {
				continue
			}
			for {
				if _, err := to.store.Get(ctx, m.ID); err == nil {
					break
				}
				if time.Since(start) > time.Minute {
					b.Fatalf("write %d never reached a daemon", i)
				}
				time.Sleep(time.Millisecond)
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	stopLoad()
	load.Wait()
	slices.Sort(lat)
	q := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
}

// BenchmarkRecallTeam compares local search latency with the team store
// detached (team memory off) and attached (on, its sync loop running and
// the outbox drained): the network is never on the read path, so the two
// should match within noise.
//
//	go test -run XXX -bench RecallTeam -benchtime 2000x ./backend/daemon/
func BenchmarkRecallTeam(b *testing.B) {
	srv := pgtest.Start(b)
	db := srv.NewDB(b, "recallowner")
	b.Setenv("MEMTRAY_BENCH_RECALL_URL", srv.ConnString("recallowner", db))
	const n = 2000
	for _, attached := range []bool{false, true} {
		b.Run(fmt.Sprintf("attached=%v", attached), func(b *testing.B) {
			ctx := context.Background()
			cfg := config.Default()
			cfg.DataDir, cfg.Listen, cfg.Embedder.Provider = b.TempDir(), "127.0.0.1:0", "builtin"
			cfg.Capture.Transcripts.ClaudeCodeDirs, cfg.Capture.Transcripts.CodexDirs = []string{b.TempDir()}, []string{b.TempDir()}
			if attached {
				cfg.Team = config.Team{Share: true, URLEnv: "MEMTRAY_BENCH_RECALL_URL", Projects: []string{"*"}, PullInterval: config.Duration(30 * time.Second)}
			}
			d, _ := serveWith(b, Options{Config: cfg, Version: "bench"})
			texts := make([]string, n)
			for i := range texts {
				texts[i] = teamText(30+i/500, i%500)
			}
			vs, err := d.emb.Embed(ctx, texts)
			if err != nil {
				b.Fatal(err)
			}
			batch := make([]memory.Memory, n)
			for i := range batch {
				batch[i] = memory.Memory{Text: texts[i], Project: "shop", Embedding: vs[i]}
			}
			if _, err := d.store.PutBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			if attached {
				d.team.Kick()
				for {
					if st := d.team.Status(); st.Outbox == 0 && st.Connected {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				// The pull of its own pushes, applied before the clock starts.
				if _, err := d.team.PullNow(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := d.memories.Search(ctx, httpapi.SearchRequest{Query: texts[(i*37)%n], K: 8}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
