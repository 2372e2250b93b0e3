package search

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// openProjects opens a real store holding texts by project, each memory
// named by its project and index ("kiln0"), and an engine over it with
// cfg.
func openProjects(t *testing.T, texts map[string][]string, cfg config.Search) (*Engine, *store.Store) {
	t.Helper()
	var ms []memory.Memory
	for project, ts := range texts {
		for i, text := range ts {
			ms = append(ms, memory.Memory{ID: fmt.Sprintf("%s%d", project, i), Text: text, Project: project,
				Kind: memory.KindFact, Type: memory.TypeProject, Importance: 0.5,
				CreatedAt: testNow.Add(-24 * time.Hour)})
		}
	}
	st, emb, clock := openEmbedded(t, ms)
	return New(st, emb, cfg, clock), st
}

// openEmbedded opens a real store in a temporary folder holding ms, each
// embedded by the built-in embedder, with a clock fixed at testNow.
func openEmbedded(t *testing.T, ms []memory.Memory) (*store.Store, memory.Embedder, memory.Clock) {
	t.Helper()
	emb := embed.NewBuiltin()
	clock := memory.FixedClock{T: testNow}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i := range ms {
		vecs, err := emb.Embed(ctx, []string{ms[i].Text})
		if err != nil {
			t.Fatal(err)
		}
		ms[i].Embedding = vecs[0]
	}
	if _, err := st.PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	return st, emb, clock
}

// TestProjectLegs: the current project's memory that the whole store's
// pool misses (other projects' memories say the query's words more often)
// is still a candidate, and the project boost puts it first; a project
// filter, or no current project, runs no extra legs.
func TestProjectLegs(t *testing.T) {
	var other []string
	for i := range 12 {
		other = append(other, fmt.Sprintf("The nightly backup job uploads archive %d to the bucket, and the backup job retries a failed upload three times.", i))
	}
	texts := map[string][]string{
		"harbor": other,
		"kiln":   {"Glaze recipes live in recipes/glaze.toml; the kiln schedule reads them at start.", "A backup of the kiln controller settings is kept in settings.bak."},
	}
	cfg := config.Default().Search
	cfg.Candidates = 4 // pool = max(K x overfetch, 4) = 4 at K = 2
	e, _ := openProjects(t, texts, cfg)
	const q = "where is the backup job and how does it retry a failed upload?"
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		q         Query
		wantFirst string // "" : kiln1 is not a candidate
	}{
		{"current project", Query{Text: q, K: 2, Project: "kiln", NoFloors: true}, "kiln1"},
		{"no current project", Query{Text: q, K: 2, NoFloors: true}, ""},
		{"project filter", Query{Text: q, K: 2, Project: "kiln", Filter: store.Filter{Project: "harbor"}, NoFloors: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := e.Run(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			scored := map[string]bool{}
			for _, c := range r.Scored {
				scored[c.ID] = true
			}
			if tc.wantFirst == "" {
				if scored["kiln1"] {
					t.Fatal("kiln1 scored")
				}
			}
			if r.Candidates > 4 {
				t.Fatalf("%d candidates over the pool of 4", r.Candidates)
			}
			if tc.wantFirst == "" {
				return
			}
			if len(r.Hits) == 0 || r.Hits[0].Memory.ID != tc.wantFirst {
				t.Fatalf("hits %v, want %s first", hitIDs(r.Hits), tc.wantFirst)
			}
			if r.Hits[0].Breakdown.ProjectBoost != cfg.ProjectBoost {
				t.Errorf("project boost %v", r.Hits[0].Breakdown.ProjectBoost)
			}
		})
	}
}

// TestMergeProject: the project's pool joins the whole store's with the
// memories the latter lacks; a memory both hold keeps the whole store's
// relevance; the best pool by relevance times the project boost (for the
// project's memories) is kept, sorted by relevance.
func TestMergeProject(t *testing.T) {
	f := func(id string, score float64) Fused { return Fused{ID: id, Score: score} }
	for _, tc := range []struct {
		name      string
		all, proj []Fused
		pool      int
		want      []string
		wantScore map[string]float64
	}{
		{"nothing from the project", []Fused{f("a", 1), f("b", 0.5)}, nil, 2, []string{"a", "b"}, nil},
		{"project memory below the pool joins", []Fused{f("a", 1), f("b", 0.5)}, []Fused{f("p", 0.8)}, 3, []string{"a", "p", "b"}, nil},
		{"shared memory keeps its relevance", []Fused{f("a", 1), f("p", 0.3)}, []Fused{f("p", 1), f("q", 0.6)}, 3, []string{"a", "q", "p"}, map[string]float64{"p": 0.3}},
		{"the boost decides the pool", []Fused{f("a", 1), f("b", 0.9)}, []Fused{f("p", 0.5), f("q", 0.3)}, 2, []string{"a", "p"}, nil},
		{"empty store pool", nil, []Fused{f("p", 1)}, 2, []string{"p"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeProject(tc.all, tc.proj, tc.pool, 2.5)
			var ids []string
			for _, g := range got {
				ids = append(ids, g.ID)
				if w, ok := tc.wantScore[g.ID]; ok && g.Score != w {
					t.Errorf("%s: relevance %v, want %v", g.ID, g.Score, w)
				}
			}
			if !reflect.DeepEqual(ids, tc.want) {
				t.Fatalf("got %v, want %v", ids, tc.want)
			}
		})
	}
}
