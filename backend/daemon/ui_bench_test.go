package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/store"
)

// benchDataDir returns a cached daemon data dir holding n synthetic
// memories (see fillStore), built once under os.TempDir()/memtray-bench
// as backend/store's benchmarks do. Run:
//
//	go test ./backend/daemon -run '^$' -bench ListPage -benchtime 20x
func benchDataDir(b *testing.B, n int) string {
	root := filepath.Join(os.TempDir(), "memtray-bench")
	dir := filepath.Join(root, fmt.Sprintf("daemon-n%d-%s-f%d", n, embed.BuiltinModel, store.FormatVersion))
	if _, err := os.Stat(filepath.Join(dir, "complete")); err == nil {
		return dir
	}
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(root, 0o700); err != nil {
		b.Fatal(err)
	}
	tmp, err := os.MkdirTemp(root, "daemon-build-")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	cfg := benchConfig(tmp)
	d, err := Open(context.Background(), Options{Config: cfg})
	if err != nil {
		b.Fatal(err)
	}
	fillStore(b, d, n)
	if err := d.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "complete"), nil, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("built a %d-memory data dir in %v", n, time.Since(start).Round(time.Millisecond))
	return dir
}

// BenchmarkListPage measures a page of GET /api/memories at 100k memories:
// impl=store is List (store.List, then GetMany of the page), impl=iterate
// the Iterate-based implementation it replaced (listByIterate).
func BenchmarkListPage(b *testing.B) {
	const n = 100_000
	d, err := Open(context.Background(), Options{Config: benchConfig(benchDataDir(b, n))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	for _, req := range []httpapi.ListRequest{
		{Limit: 50},
		{Limit: 50, Offset: 50_000, Sort: "stickiness", Order: "asc"},
		{Limit: 50, Sort: "importance", Q: "service 7"},
		{Limit: 50, Project: "p1", Snoozed: "exclude"},
	} {
		for _, impl := range []struct {
			name string
			list func(context.Context, httpapi.ListRequest) (httpapi.ListResponse, error)
		}{{"store", d.Memories().List}, {"iterate", d.listByIterate}} {
			b.Run(fmt.Sprintf("impl=%s,sort=%s,q=%q,project=%s,offset=%d", impl.name, req.Sort, req.Q, req.Project, req.Offset), func(b *testing.B) {
				for b.Loop() {
					res, err := impl.list(context.Background(), req)
					if err != nil || len(res.Memories) == 0 {
						b.Fatalf("List = %d, %v", len(res.Memories), err)
					}
				}
			})
		}
	}
}

func benchConfig(dir string) config.Config {
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.Embedder.Provider = "builtin"
	return cfg
}
