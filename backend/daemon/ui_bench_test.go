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
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// benchDataDir returns a cached daemon data dir holding n synthetic
// memories (see fillStore), built once under os.TempDir()/memtray-bench
// as backend/store's benchmarks do. Run:
//
//	go test ./backend/daemon -run '^$' -bench ListPage -benchtime 20x
func benchDataDir(b *testing.B, n int) string {
	root := filepath.Join(os.TempDir(), "memtray-bench")
	dir := filepath.Join(root, fmt.Sprintf("daemon-n%d-%s-f%d-m%s", n, embed.BuiltinModel, store.FormatVersion, store.TextMappingVersion))
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
// the Iterate-based implementation it replaced (listByIterate). The cases
// with a type, scope or worktrees filter and facets compare List, which
// answers them from the store's entries (store.List, store.Facets), with
// impl=records, the implementation it replaced (listByRecords: those
// filters and the facets read the records).
func BenchmarkListPage(b *testing.B) {
	const n = 100_000
	d, err := Open(context.Background(), Options{Config: benchConfig(benchDataDir(b, n))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	type impl struct {
		name string
		list func(context.Context, httpapi.ListRequest) (httpapi.ListResponse, error)
	}
	byIterate := []impl{{"store", d.Memories().List}, {"iterate", d.listByIterate}}
	byRecords := []impl{{"store", d.Memories().List}, {"records", d.listByRecords}}
	for _, c := range []struct {
		req   httpapi.ListRequest
		impls []impl
	}{
		{httpapi.ListRequest{Limit: 50}, byIterate},
		{httpapi.ListRequest{Limit: 50, Offset: 50_000, Sort: "stickiness", Order: "asc"}, byIterate},
		{httpapi.ListRequest{Limit: 50, Sort: "importance", Q: "service 7"}, byIterate},
		{httpapi.ListRequest{Limit: 50, Project: "p1", Snoozed: "exclude"}, byIterate},
		{httpapi.ListRequest{Limit: 50, Type: "project", Scope: "default", Facets: true}, byRecords},
		{httpapi.ListRequest{Limit: 50, Type: "project", Scope: "default"}, byRecords},
		{httpapi.ListRequest{Limit: 50, Project: "p1", Worktrees: true, Sort: "importance"}, byRecords},
		{httpapi.ListRequest{Limit: 50, Facets: true}, byRecords},
	} {
		req := c.req
		for _, impl := range c.impls {
			b.Run(fmt.Sprintf("impl=%s,sort=%s,q=%q,project=%s,offset=%d,type=%s,scope=%s,wt=%v,facets=%v", impl.name, req.Sort, req.Q,
				req.Project, req.Offset, req.Type, req.Scope, req.Worktrees, req.Facets), func(b *testing.B) {
				for b.Loop() {
					res, err := impl.list(context.Background(), req)
					if err != nil || len(res.Memories) == 0 || req.Facets != (res.Facets != nil) {
						b.Fatalf("List = %d, %v", len(res.Memories), err)
					}
				}
			})
		}
	}
}

// listByRecords is List as it was before store.List filtered by type,
// source, scope and a project's worktrees and store.Facets counted: the
// store selected and sorted by the other filters, those were tested on
// the records, read 512 at a time, and the facets were a pass of Iterate
// over every record. It is BenchmarkListPage's baseline for those cases.
func (d *Daemon) listByRecords(ctx context.Context, req httpapi.ListRequest) (httpapi.ListResponse, error) {
	if err := req.Validate(); err != nil {
		return httpapi.ListResponse{}, err
	}
	now := d.clock.Now()
	q := store.ListQuery{Project: req.Project, IncludeSuperseded: true, Text: req.Q, Now: now,
		Sort: store.ListSort(req.Sort), Desc: req.Order != "asc", StickyMinAccess: d.cfg.Steward.StickyMinAccess}
	if req.Kind != "" {
		q.Kinds = []memory.Kind{memory.Kind(req.Kind)}
	}
	switch req.Snoozed {
	case "exclude":
		q.Snoozed = store.SnoozedExclude
	case "only":
		q.Snoozed = store.SnoozedOnly
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	worktrees := req.Worktrees && req.Project != ""
	if worktrees {
		q.Project = ""
	}
	scopeName := func(s memory.Scope) string {
		if s == memory.ScopeDefault {
			return memories.ScopeDefaultName
		}
		return string(s)
	}
	ids, _, err := d.store.List(ctx, q)
	if err != nil {
		return httpapi.ListResponse{}, err
	}
	res := httpapi.ListResponse{Memories: []httpapi.ListedMemory{}}
	for start := 0; start < len(ids); start += 512 {
		part := ids[start:min(len(ids), start+512)]
		ms, err := d.store.GetMany(ctx, part)
		if err != nil {
			return httpapi.ListResponse{}, err
		}
		for _, id := range part {
			m, ok := ms[id]
			switch {
			case !ok,
				worktrees && m.Project != req.Project && !memories.WorktreeOf(m.Project, req.Project),
				req.Type != "" && string(m.Type) != req.Type,
				req.Scope != "" && scopeName(m.Scope) != req.Scope,
				req.Source != "" && m.Source != req.Source && memories.SourceFamily(m.Source) != req.Source:
				continue
			}
			if res.Total >= req.Offset && len(res.Memories) < limit {
				res.Memories = append(res.Memories, d.memories.Listed(m, now))
			}
			res.Total++
		}
	}
	if req.Facets {
		f := httpapi.ListFacets{Projects: map[string]int{}, Kinds: map[string]int{}, Types: map[string]int{}, Sources: map[string]int{}, Scopes: map[string]int{}}
		err := d.store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
			f.Projects[m.Project]++
			f.Kinds[string(m.Kind)]++
			f.Types[string(m.Type)]++
			f.Sources[memories.SourceFamily(m.Source)]++
			f.Scopes[scopeName(m.Scope)]++
			return nil
		})
		if err != nil {
			return httpapi.ListResponse{}, err
		}
		res.Facets = &f
	}
	return res, nil
}

func benchConfig(dir string) config.Config {
	cfg := config.Default()
	cfg.DataDir = dir
	cfg.Embedder.Provider = "builtin"
	return cfg
}
