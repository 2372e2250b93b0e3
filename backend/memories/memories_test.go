package memories

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// event is one change the service announced.
type event struct {
	op  string
	ids []string
}

// open returns the service over a real store with the built-in embedder,
// and the events it publishes.
func open(t *testing.T) (*Service, *[]event) {
	t.Helper()
	ctx := context.Background()
	clock := memory.FixedClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	emb := embed.NewSwappable(embed.NewBuiltin())
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := config.Default()
	p, err := ingest.New(ingest.Options{Config: cfg.Ingest, Embedder: emb, Store: st, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var evs []event
	s, err := New(Options{Store: st, Pipeline: p, Search: search.New(st, emb, cfg.Search, clock), Embedder: emb,
		Steward: cfg.Steward, Clock: clock,
		Publish: func(op string, ids []string, _ *memory.Memory) { evs = append(evs, event{op, slices.Clone(ids)}) }})
	if err != nil {
		t.Fatal(err)
	}
	return s, &evs
}

func TestNewNeedsParts(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a store: no error")
	}
}

func TestListRequestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		req   ListRequest
		field string // "" valid
	}{
		{"empty", ListRequest{}, ""},
		{"every sort", ListRequest{Sort: "stickiness", Order: "asc", Snoozed: "only", Q: "retry"}, ""},
		{"bad sort", ListRequest{Sort: "size"}, "sort"},
		{"bad order", ListRequest{Order: "up"}, "order"},
		{"bad snoozed", ListRequest{Snoozed: "never"}, "snoozed"},
		{"long q", ListRequest{Q: strings.Repeat("x", MaxListQuery+1)}, "q"},
		{"invalid utf-8 q", ListRequest{Q: "\xff"}, "q"},
		{"known type", ListRequest{Type: "feedback", Kind: "fact", Source: "ingest"}, ""},
		{"bad type", ListRequest{Type: "opinion"}, "type"},
		{"bad kind", ListRequest{Kind: "rumour"}, "kind"},
		{"long source", ListRequest{Source: strings.Repeat("s", MaxListQuery+1)}, "source"},
		{"invalid utf-8 project", ListRequest{Project: "\xff"}, "project"},
		{"scopes", ListRequest{Scope: "default"}, ""},
		{"bad scope", ListRequest{Scope: "public"}, "scope"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			var fe *memory.FieldErrors
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Validate = %v, want nil", err)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Fields[tc.field] == ""):
				t.Fatalf("Validate = %v, want a problem with %s", err, tc.field)
			}
		})
	}
}

// TestAddEditHistoryDelete: an added memory is announced and found; a new
// text makes a new version whose history holds both; a delete is announced.
func TestAddEditHistoryDelete(t *testing.T) {
	ctx := context.Background()
	s, evs := open(t)
	m, err := s.Add(ctx, AddRequest{Text: "The payment gateway retries failed charges three times.", Kind: "fact", Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, m.ID); err != nil || got.Text != m.Text {
		t.Fatalf("Get = %q, %v", got.Text, err)
	}
	page, err := s.List(ctx, ListRequest{Project: "shop"})
	if err != nil || page.Total != 1 || page.Memories[0].ID != m.ID || page.Memories[0].Embedding != nil {
		t.Fatalf("List = %+v, %v", page, err)
	}
	text := "The payment gateway retries failed charges five times."
	res, err := s.Edit(ctx, m.ID, MemoryPatch{Text: &text})
	if err != nil {
		t.Fatal(err)
	}
	if res.Previous != m.ID || res.Memory.ID == m.ID || res.Memory.Text != text {
		t.Fatalf("Edit = %+v", res)
	}
	h, err := s.History(ctx, res.Memory.ID)
	if err != nil || len(h.Versions) != 2 || h.Versions[0].ID != m.ID || h.Versions[1].ID != res.Memory.ID {
		t.Fatalf("History = %+v, %v", h, err)
	}
	if err := s.Delete(ctx, res.Memory.ID); err != nil {
		t.Fatal(err)
	}
	want := []event{{OpAdded, []string{m.ID}}, {OpUpdated, []string{m.ID, res.Memory.ID}}, {OpDeleted, []string{res.Memory.ID}}}
	if !slices.EqualFunc(*evs, want, func(a, b event) bool { return a.op == b.op && slices.Equal(a.ids, b.ids) }) {
		t.Fatalf("events = %v, want %v", *evs, want)
	}
	if _, err := s.Edit(ctx, m.ID, MemoryPatch{}); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("empty patch: %v, want invalid", err)
	}
}

func TestIngestDocumentTooLarge(t *testing.T) {
	s, _ := open(t)
	if _, err := s.IngestDocument(context.Background(), "big", "", strings.Repeat("a", MaxDocumentBytes+1)); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("IngestDocument = %v, want invalid", err)
	}
}

// TestListFilters: the type and source filters (which the store's columns
// do not hold) page like the others, and the facets count the whole store.
func TestListFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	add := []AddRequest{
		{Text: "The checkout service retries card charges three times before failing.", Kind: "fact", Type: "project", Project: "shop", Source: "cli"},
		{Text: "Prefer table-driven tests with a name per case in every Go package.", Kind: "preference", Type: "feedback", Project: "shop", Source: "mcp"},
		{Text: "Deploys go out with make release from the main branch only.", Kind: "fact", Type: "project", Project: "infra", Source: "mcp"},
		{Text: "The staging cluster issues certificates through the letsencrypt issuer.", Kind: "fact", Type: "reference", Project: "infra", Source: "ingest:runbook.md"},
	}
	for i, a := range add {
		m, err := s.Add(ctx, a)
		if err != nil {
			t.Fatalf("Add(%q): %v", a.Text, err)
		}
		scope := []memory.Scope{memory.ScopeTeam, memory.ScopePersonal, memory.ScopeTeam, memory.ScopeDefault}[i]
		if _, err := s.o.Store.Update(ctx, m.ID, func(m *memory.Memory) error { m.Scope = scope; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		req   ListRequest
		total int
		page  int
	}{
		{"none", ListRequest{}, 4, 4},
		{"type", ListRequest{Type: "project"}, 2, 2},
		{"type and project", ListRequest{Type: "project", Project: "infra"}, 1, 1},
		{"source exact", ListRequest{Source: "mcp"}, 2, 2},
		{"source family", ListRequest{Source: "ingest"}, 1, 1},
		{"source in full", ListRequest{Source: "ingest:runbook.md"}, 1, 1},
		{"source none", ListRequest{Source: "import"}, 0, 0},
		{"paged", ListRequest{Source: "mcp", Limit: 1, Offset: 1}, 2, 1},
		{"past the end", ListRequest{Type: "project", Offset: 5}, 2, 0},
		{"scope team", ListRequest{Scope: "team"}, 2, 2},
		{"scope personal", ListRequest{Scope: "personal"}, 1, 1},
		{"scope default", ListRequest{Scope: "default"}, 1, 1},
		{"scope and source", ListRequest{Scope: "team", Source: "mcp"}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.List(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Total != tc.total || len(res.Memories) != tc.page {
				t.Fatalf("List(%+v) = total %d, page %d; want %d, %d", tc.req, res.Total, len(res.Memories), tc.total, tc.page)
			}
			for _, m := range res.Memories {
				if !refMatches(m.Memory, tc.req) {
					t.Fatalf("List(%+v) listed %+v", tc.req, m.Memory)
				}
			}
			if res.Facets != nil {
				t.Fatal("facets not asked for, but given")
			}
		})
	}
	// Pages under a filter do not overlap and keep the sort.
	a, _ := s.List(ctx, ListRequest{Source: "mcp", Limit: 1, Sort: "project", Order: "asc"})
	b, _ := s.List(ctx, ListRequest{Source: "mcp", Limit: 1, Offset: 1, Sort: "project", Order: "asc"})
	if len(a.Memories) != 1 || len(b.Memories) != 1 || a.Memories[0].Project != "infra" || b.Memories[0].Project != "shop" {
		t.Fatalf("pages = %+v / %+v", a.Memories, b.Memories)
	}

	res, err := s.List(ctx, ListRequest{Type: "feedback", Facets: true})
	if err != nil || res.Facets == nil {
		t.Fatalf("List with facets = %+v, %v", res, err)
	}
	f := res.Facets
	if f.Projects["shop"] != 2 || f.Projects["infra"] != 2 || f.Types["project"] != 2 || f.Kinds["fact"] != 3 ||
		f.Sources["mcp"] != 2 || f.Sources["ingest"] != 1 || f.Sources["cli"] != 1 ||
		f.Scopes["team"] != 2 || f.Scopes["personal"] != 1 || f.Scopes["default"] != 1 {
		t.Fatalf("facets = %+v", *f)
	}
}

// refMatches reports whether m passes req's project (with Worktrees),
// kind, type, source and scope filters, tested on the record.
func refMatches(m memory.Memory, req ListRequest) bool {
	switch {
	case req.Project != "" && m.Project != req.Project && !(req.Worktrees && WorktreeOf(m.Project, req.Project)),
		req.Kind != "" && string(m.Kind) != req.Kind,
		req.Type != "" && string(m.Type) != req.Type,
		req.Scope != "" && scopeName(m.Scope) != req.Scope,
		req.Source != "" && m.Source != req.Source && SourceFamily(m.Source) != req.Source:
		return false
	}
	return true
}

// TestListMatchesRecords: on a real store of random memories, every
// combination of filters lists what a brute-force pass over the records
// keeps (same ids, same order by project then id), and the facets equal
// a count over every record.
func TestListMatchesRecords(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	r := rand.New(rand.NewSource(7))
	projects := []string{"shop", "shop-ui", "shop_fix", "shopping", "infra", ""}
	sources := []string{"cli", "mcp", "ingest:a.md", "ingest:b.md", "capture:claude", "ingest"}
	scopes := []memory.Scope{memory.ScopeDefault, memory.ScopePersonal, memory.ScopeTeam}
	var ms []memory.Memory
	for i := range 300 {
		m := memory.Memory{Text: fmt.Sprintf("Synthetic memory %d about service %d and its worker pool.", i, i%23),
			Kind: memory.Kinds[r.Intn(len(memory.Kinds))], Type: memory.Types[r.Intn(len(memory.Types))],
			Project: projects[r.Intn(len(projects))], Source: sources[r.Intn(len(sources))], Scope: scopes[r.Intn(len(scopes))]}
		v, err := s.o.Embedder.Embed(ctx, []string{m.Text})
		if err != nil {
			t.Fatal(err)
		}
		m.Embedding = v[0]
		ms = append(ms, m)
	}
	if _, err := s.o.Store.PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var all []memory.Memory
	if err := s.o.Store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		all = append(all, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(all, func(a, b memory.Memory) int {
		if c := strings.Compare(a.Project, b.Project); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	wantF := ListFacets{Projects: map[string]int{}, Kinds: map[string]int{}, Types: map[string]int{}, Sources: map[string]int{}, Scopes: map[string]int{}}
	for _, m := range all {
		wantF.Projects[m.Project]++
		wantF.Kinds[string(m.Kind)]++
		wantF.Types[string(m.Type)]++
		wantF.Sources[SourceFamily(m.Source)]++
		wantF.Scopes[scopeName(m.Scope)]++
	}
	wantF.Worktrees = groupWorktrees(wantF.Projects)
	for _, project := range []string{"", "shop", "infra"} {
		for _, wt := range []bool{false, true} {
			for _, typ := range []string{"", "project", "user"} {
				for _, scope := range []string{"", "default", "team"} {
					for _, source := range []string{"", "ingest", "mcp", "ingest:a.md"} {
						req := ListRequest{Project: project, Worktrees: wt, Type: typ, Scope: scope, Source: source,
							Kind: []string{"", "fact"}[r.Intn(2)], Sort: "project", Order: "asc", Limit: 7, Offset: r.Intn(3) * 5, Facets: true}
						var want []string
						for _, m := range all {
							if refMatches(m, req) {
								want = append(want, m.ID)
							}
						}
						res, err := s.List(ctx, req)
						if err != nil {
							t.Fatal(err)
						}
						var got []string
						for _, m := range res.Memories {
							got = append(got, m.ID)
						}
						page := want[min(len(want), req.Offset):min(len(want), req.Offset+req.Limit)]
						if res.Total != len(want) || !slices.Equal(got, page) {
							t.Fatalf("List(%+v) = %d %v; records: %d %v", req, res.Total, got, len(want), page)
						}
						if !reflect.DeepEqual(*res.Facets, wantF) {
							t.Fatalf("facets = %+v\nrecords: %+v", *res.Facets, wantF)
						}
					}
				}
			}
		}
	}
}

func TestWorktreeOf(t *testing.T) {
	for _, tc := range []struct {
		label, repo string
		want        bool
	}{
		{"memtray-ui", "memtray", true},
		{"memtray_fix", "memtray", true},
		{"memtray.wt", "memtray", true},
		{"memtray", "memtray", false},
		{"memtray-", "memtray", false},
		{"memtrayx", "memtray", false},
		{"shop", "", false},
		{"mem", "memtray", false},
	} {
		if got := WorktreeOf(tc.label, tc.repo); got != tc.want {
			t.Errorf("WorktreeOf(%q, %q) = %v, want %v", tc.label, tc.repo, got, tc.want)
		}
	}
	got := groupWorktrees(map[string]int{"shop": 1, "shop-ui": 2, "shop-ui-fix": 1, "infra": 3, "lone-wt": 1})
	if len(got) != 2 || !slices.Equal(got["shop"], []string{"shop-ui"}) || !slices.Equal(got["shop-ui"], []string{"shop-ui-fix"}) {
		t.Fatalf("groupWorktrees = %v", got)
	}
}

// TestListWorktrees: a project with Worktrees keeps its worktree labels too.
func TestListWorktrees(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	for _, a := range []AddRequest{
		{Text: "The shop front end builds with vite and ships as static files.", Project: "shop"},
		{Text: "The shop worktree for the redesign pins node to version twenty two.", Project: "shop-redesign"},
		{Text: "Shopping list exporter writes one CSV file per list on request.", Project: "shopping"},
	} {
		if _, err := s.Add(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		req  ListRequest
		want int
	}{
		{ListRequest{Project: "shop"}, 1},
		{ListRequest{Project: "shop", Worktrees: true}, 2},
		{ListRequest{Worktrees: true}, 3},
	} {
		res, err := s.List(ctx, tc.req)
		if err != nil || res.Total != tc.want {
			t.Fatalf("List(%+v) = %d, %v; want %d", tc.req, res.Total, err, tc.want)
		}
	}
	res, err := s.List(ctx, ListRequest{Facets: true})
	if err != nil || !slices.Equal(res.Facets.Worktrees["shop"], []string{"shop-redesign"}) {
		t.Fatalf("facets = %+v, %v", res.Facets, err)
	}
}

// TestDeleteGoesToTheTrash: Delete moves a memory to the trash, out of
// Get, restorable as it was; Purge deletes for good; an unknown id is not
// found either way.
func TestDeleteGoesToTheTrash(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	m, err := s.Add(ctx, AddRequest{Text: "The staging database is reset every Monday at 06:00 UTC.", Kind: "fact", Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, m.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want not found", err)
	}
	trash, err := s.o.Store.Trash(ctx)
	if err != nil || len(trash) != 1 || trash[0].Memory.ID != m.ID || trash[0].Reason != DeleteReason {
		t.Fatalf("trash after Delete = %+v, %v; want %s with reason %q", trash, err, m.ID, DeleteReason)
	}
	if err := s.o.Store.Restore(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, m.ID); err != nil || got.Text != m.Text {
		t.Fatalf("Get after Restore = %q, %v", got.Text, err)
	}
	if err := s.Purge(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if trash, err := s.o.Store.Trash(ctx); err != nil || len(trash) != 0 {
		t.Fatalf("trash after Purge = %+v, %v; want empty", trash, err)
	}
	if _, err := s.Get(ctx, m.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Get after Purge = %v, want not found", err)
	}
	for name, del := range map[string]func(context.Context, string) error{"Delete": s.Delete, "Purge": s.Purge} {
		if err := del(ctx, "no-such-id"); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("%s(unknown) = %v, want not found", name, err)
		}
	}
}

// TestTrash: Trash (what Delete and the feed's MarkNoise share) moves a
// live memory to the trash under the reason given and announces it as
// deleted; an unknown or already trashed id is not found and announces
// nothing.
func TestTrash(t *testing.T) {
	ctx := context.Background()
	s, evs := open(t)
	add := func(text string) string {
		m, err := s.Add(ctx, AddRequest{Text: text, Kind: "fact", Project: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		return m.ID
	}
	deleted := add("The staging database is reset every Monday at 06:00 UTC.")
	noisy := add("Release builds are signed with the key kept in the ops vault under release-signing.")
	for _, tc := range []struct {
		name, id, reason string
		wantErr          error // nil: trashed
	}{
		{"a delete", deleted, DeleteReason, nil},
		{"a noise mark", noisy, "noise", nil},
		{"unknown id", "no-such-id", DeleteReason, memory.ErrNotFound},
		{"already trashed", deleted, DeleteReason, memory.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*evs = nil
			err := s.Trash(ctx, tc.id, tc.reason)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || len(*evs) != 0 {
					t.Fatalf("Trash = %v with events %v, want %v and none", err, *evs, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := []event{{OpDeleted, []string{tc.id}}}; !reflect.DeepEqual(*evs, want) {
				t.Fatalf("events = %v, want %v", *evs, want)
			}
			if _, err := s.Get(ctx, tc.id); !errors.Is(err, memory.ErrNotFound) {
				t.Fatalf("Get after Trash = %v, want not found", err)
			}
			trash, err := s.o.Store.TrashGet(ctx, []string{tc.id})
			if err != nil || trash[tc.id].Reason != tc.reason {
				t.Fatalf("trash of %s = %+v, %v; want reason %q", tc.id, trash, err, tc.reason)
			}
		})
	}
}
