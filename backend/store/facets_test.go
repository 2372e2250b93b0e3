package store

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestFacetsAndFilters: on a small fixed store, List's type, scope,
// source and projects filters and Facets give the counts a brute-force
// count over the records gives, including after a team pull (ApplyTeam)
// and a scope change (Update).
func TestFacetsAndFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for _, m := range []struct {
		text, project, source string
		typ                   memory.Type
		scope                 memory.Scope
	}{
		{"checkout retries card charges three times", "shop", "cli", memory.TypeProject, memory.ScopeTeam},
		{"prefer table-driven tests in every package", "shop", "mcp", memory.TypeFeedback, memory.ScopePersonal},
		{"deploys go out with make release", "infra", "mcp", memory.TypeProject, memory.ScopeDefault},
		{"staging certificates come from letsencrypt", "infra", "ingest:runbook.md", memory.TypeReference, memory.ScopeDefault},
		{"the redesign worktree pins node twenty two", "shop-ui", "ingest:notes.md", memory.TypeProject, memory.ScopeTeam},
	} {
		x := mem(m.text)
		x.Project, x.Source, x.Type, x.Scope, x.Kind = m.project, m.source, m.typ, m.scope, memory.KindFact
		mustPut(t, s, x)
	}
	pulled := teamMem("the team's note on the release train")
	pulled.ID, pulled.Type, pulled.Source = "team1", memory.TypeReference, "mcp"
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{pulled}}); err != nil {
		t.Fatal(err)
	}
	types := func(ts ...memory.Type) []memory.Type { return ts }
	scopes := func(ss ...memory.Scope) []memory.Scope { return ss }
	for _, tc := range []struct {
		name string
		q    ListQuery
		want int
	}{
		{"all", ListQuery{}, 6},
		{"type", ListQuery{Types: types(memory.TypeProject)}, 3},
		{"two types", ListQuery{Types: types(memory.TypeProject, memory.TypeFeedback)}, 4},
		{"scope team (pulled included)", ListQuery{Scopes: scopes(memory.ScopeTeam)}, 3},
		{"scope default", ListQuery{Scopes: scopes(memory.ScopeDefault)}, 2},
		{"type and scope", ListQuery{Types: types(memory.TypeProject), Scopes: scopes(memory.ScopeTeam)}, 2},
		{"source exact", ListQuery{Source: "mcp"}, 3},
		{"source family", ListQuery{Source: "ingest"}, 2},
		{"source in full", ListQuery{Source: "ingest:runbook.md"}, 1},
		{"source prefix is not a family", ListQuery{Source: "ing"}, 0},
		{"projects", ListQuery{Projects: []string{"shop", "shop-ui"}}, 3},
		{"project and projects", ListQuery{Project: "shop", Projects: []string{"shop", "infra"}}, 2},
		{"projects and type", ListQuery{Projects: []string{"shop", "shop-ui"}, Types: types(memory.TypeProject)}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, total, err := s.List(ctx, tc.q)
			if err != nil || total != tc.want || len(ids) != tc.want {
				t.Fatalf("List = %v of %d, %v; want %d", ids, total, err, tc.want)
			}
			f, err := s.Facets(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if want := refFacets(t, s, tc.q); f.Total != tc.want || !reflect.DeepEqual(f, want) {
				t.Fatalf("Facets = %+v\nreference: %+v", f, want)
			}
		})
	}
	// A scope change is counted at once.
	ids, _, err := s.List(ctx, ListQuery{Scopes: scopes(memory.ScopePersonal)})
	if err != nil || len(ids) != 1 {
		t.Fatalf("personal: %v, %v", ids, err)
	}
	if _, err := s.Update(ctx, ids[0], func(m *memory.Memory) error { m.Scope = memory.ScopeTeam; return nil }); err != nil {
		t.Fatal(err)
	}
	f, err := s.Facets(ctx, ListQuery{})
	if err != nil || f.Scopes[memory.ScopeTeam] != 4 || f.Scopes[memory.ScopePersonal] != 0 {
		t.Fatalf("after the scope change: %+v, %v", f.Scopes, err)
	}
	if got := slices.Sorted(maps.Keys(f.Projects)); !slices.Equal(got, []string{"infra", "shop", "shop-ui", "team"}) {
		t.Fatalf("projects = %v", got)
	}
}

func TestSourceIn(t *testing.T) {
	for _, tc := range []struct {
		source, want string
		in           bool
	}{
		{"ingest:a.md", "ingest", true},
		{"ingest:a.md", "ingest:a.md", true},
		{"ingest", "ingest", true},
		{"ingest:a.md", "ing", false},
		{"ingestion", "ingest", false},
		{"a:b:c", "a:b", false}, // the family is "a"
		{"a:b:c", "a", true},
		{"cli", "mcp", false},
	} {
		if got := SourceIn(tc.source, tc.want); got != tc.in {
			t.Errorf("SourceIn(%q, %q) = %v, want %v", tc.source, tc.want, got, tc.in)
		}
		if got := tc.source == tc.want || SourceFamily(tc.source) == tc.want; got != tc.in {
			t.Errorf("SourceFamily(%q) == %q is %v, SourceIn says %v", tc.source, tc.want, got, tc.in)
		}
	}
}
