package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

type fixtureMemory struct {
	ID      string `json:"id"`
	Project string `json:"project"`
	Kind    string `json:"kind"`
	Surface string `json:"surface"`
	Text    string `json:"text"`
}

// openFixture opens a real store in a temporary directory, loads
// testdata/memories.json (40 memories over the projects orbit and pantry)
// created a day before testNow, and returns an engine over it.
func openFixture(t *testing.T, mod func(*memory.Memory)) (*Engine, *store.Store) {
	t.Helper()
	return openFixtureWith(t, embed.NewBuiltin(), mod)
}

// openFixtureWith is openFixture with another embedder.
func openFixtureWith(t *testing.T, emb memory.Embedder, mod func(*memory.Memory)) (*Engine, *store.Store) {
	t.Helper()
	return openFixtureFile(t, "testdata/memories.json", emb, testNow.Add(-24*time.Hour), mod)
}

// openFixtureFile opens a real store in a temporary directory, loads the
// fixture memories of path, created at created and embedded by emb, and
// returns an engine over it (the clock at testNow).
func openFixtureFile(t *testing.T, path string, emb memory.Embedder, created time.Time, mod func(*memory.Memory)) (*Engine, *store.Store) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fx []fixtureMemory
	if err := json.Unmarshal(data, &fx); err != nil {
		t.Fatal(err)
	}
	clock := memory.FixedClock{T: testNow}
	st, err := store.Open(context.Background(), store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	texts := make([]string, len(fx))
	for i, f := range fx {
		texts[i] = f.Text
	}
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]memory.Memory, len(fx))
	for i, f := range fx {
		ms[i] = memory.Memory{ID: f.ID, Text: f.Text, Kind: memory.Kind(f.Kind), Project: f.Project,
			Surface: f.Surface, Type: memory.TypeProject, Importance: 0.5,
			CreatedAt: created, Embedding: vecs[i]}
		if mod != nil {
			mod(&ms[i])
		}
	}
	if _, err := st.PutBatch(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	return New(st, emb, config.Default().Search, clock), st
}

func hitIDs(hits []memory.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Memory.ID
	}
	return out
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func TestEngineExactIdentifierFirst(t *testing.T) {
	e, _ := openFixture(t, nil)
	cases := map[string]string{
		"ORBIT_TLE_CACHE_TTL": "o02",
		"ORB-E117":            "o03",
		"PNT-E210":            "p03",
		"useRecipeStore":      "p01",
		"api.WriteError":      "o11",
		"PANTRY_SEARCH_URL":   "p06",
	}
	for _, mode := range Modes {
		for q, want := range cases {
			hits, err := e.Search(context.Background(), Query{Text: q, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			// Vector mode: a single rank-based list is flat enough near the
			// top that a kind boost (1.5 for decisions) can pass the exact
			// match; it must still be near the top.
			ok := len(hits) > 0 && hits[0].Memory.ID == want
			if mode == ModeVector {
				ok = contains(hitIDs(hits[:min(2, len(hits))]), want)
			}
			if !ok {
				t.Errorf("%s %q: got %v, want %s first", mode, q, hitIDs(hits), want)
			}
		}
	}
}

func TestEngineParaphraseFound(t *testing.T) {
	e, _ := openFixture(t, nil)
	cases := []struct{ q, want string }{
		{"the fetcher process kept using more and more RAM", "o13"},
		{"two people adding the same item to one shopping list at once", "p18"},
		{"how often are the orbital element sets refreshed?", "o01"},
		{"why not Redux for client state?", "p01"},
	}
	for _, c := range cases {
		hits, err := e.Search(context.Background(), Query{Text: c.q})
		if err != nil {
			t.Fatal(err)
		}
		if !contains(hitIDs(hits), c.want) {
			t.Errorf("%q: got %v, want %s among them", c.q, hitIDs(hits), c.want)
		}
	}
}

func TestEngineProjectBoost(t *testing.T) {
	e, _ := openFixture(t, nil)
	q := "which logging library do we use and where does the request id come from?"
	for project, want := range map[string]string{"orbit": "o09", "pantry": "p04"} {
		hits, err := e.Search(context.Background(), Query{Text: q, Project: project})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Memory.ID != want {
			t.Fatalf("project %s: got %v, want %s first", project, hitIDs(hits), want)
		}
		if hits[0].Breakdown.ProjectBoost != 2.5 {
			t.Errorf("project %s: boost %v", project, hits[0].Breakdown.ProjectBoost)
		}
	}
	// The project boost does not filter: the other project's memory is still there.
	hits, _ := e.Search(context.Background(), Query{Text: q, Project: "orbit", K: 10})
	if !contains(hitIDs(hits), "p04") {
		t.Errorf("other project's memory missing: %v", hitIDs(hits))
	}
	// Filter.Project does filter.
	hits, _ = e.Search(context.Background(), Query{Text: q, Filter: store.Filter{Project: "orbit"}, K: 10})
	for _, h := range hits {
		if h.Memory.Project != "orbit" {
			t.Errorf("filter leaked %s", h.Memory.ID)
		}
	}
}

func TestEngineSymbolsDemoted(t *testing.T) {
	e, _ := openFixture(t, nil)
	hits, err := e.Search(context.Background(), Query{Text: "TLE epoch parsing", Project: "orbit", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	ids := hitIDs(hits)
	if len(ids) == 0 || ids[0] == "o14" {
		t.Fatalf("symbol first: %v", ids)
	}
	for _, h := range hits {
		if h.Memory.ID == "o14" && (h.Breakdown.Surface != 0.2 || h.Breakdown.ProjectBoost != 1) {
			t.Errorf("symbol breakdown %+v", h.Breakdown)
		}
	}
	// An exact identifier still finds its symbol, demoted or not.
	hits, _ = e.Search(context.Background(), Query{Text: "parseTLEEpoch"})
	if !contains(hitIDs(hits), "o14") {
		t.Errorf("parseTLEEpoch: %v", hitIDs(hits))
	}
}

func TestEngineSnoozedAndSupersededExcluded(t *testing.T) {
	e, _ := openFixture(t, func(m *memory.Memory) {
		switch m.ID {
		case "o02":
			m.CooldownUntil = testNow.Add(48 * time.Hour)
		case "p14":
			m.SupersededBy = "p18"
		}
	})
	ctx := context.Background()
	hits, err := e.Search(ctx, Query{Text: "ORBIT_TLE_CACHE_TTL", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if contains(hitIDs(hits), "o02") {
		t.Errorf("snoozed memory returned: %v", hitIDs(hits))
	}
	hits, _ = e.Search(ctx, Query{Text: "ORBIT_TLE_CACHE_TTL", Filter: store.Filter{IncludeSnoozed: true}})
	if len(hits) == 0 || hits[0].Memory.ID != "o02" {
		t.Errorf("IncludeSnoozed: %v", hitIDs(hits))
	}
	hits, _ = e.Search(ctx, Query{Text: "duplicate shopping list items unique index", K: 10})
	if ids := hitIDs(hits); contains(ids, "p14") || !contains(ids, "p18") {
		t.Errorf("superseded: %v", ids)
	}
	hits, _ = e.Search(ctx, Query{Text: "duplicate shopping list items unique index", K: 10, Filter: store.Filter{IncludeSuperseded: true}})
	if !contains(hitIDs(hits), "p14") {
		t.Errorf("IncludeSuperseded: %v", hitIDs(hits))
	}
}

func TestEngineNothingRelevant(t *testing.T) {
	e, _ := openFixture(t, nil)
	for _, q := range []string{
		"who won the football match yesterday?",
		"recommend a thriller novel for the holidays",
	} {
		r, err := e.Run(context.Background(), Query{Text: q})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) != 0 {
			t.Errorf("%q: got %v (coverage %.2f, cosine %.2f)", q, hitIDs(r.Hits), r.Coverage, r.Cosine)
		}
		// Without floors the same query returns candidates.
		r, _ = e.Run(context.Background(), Query{Text: q, NoFloors: true})
		if len(r.Hits) == 0 && r.Candidates > 0 {
			t.Errorf("%q: NoFloors returned nothing from %d candidates", q, r.Candidates)
		}
	}
}

func TestEngineExclude(t *testing.T) {
	e, _ := openFixture(t, nil)
	q := Query{Text: "duplicate shopping list rows unique index", K: 3}
	hits, err := e.Search(context.Background(), q)
	if err != nil || len(hits) == 0 {
		t.Fatalf("%v %v", hitIDs(hits), err)
	}
	first := hits[0].Memory.ID
	q.Exclude = func(id string) bool { return id == first }
	hits2, _ := e.Search(context.Background(), q)
	if contains(hitIDs(hits2), first) {
		t.Errorf("excluded %s returned: %v", first, hitIDs(hits2))
	}
	if len(hits2) == 0 {
		t.Errorf("nothing left after excluding %s", first)
	}
}

func TestEngineHitsAndBreakdown(t *testing.T) {
	e, _ := openFixture(t, nil)
	ctx := context.Background()
	for _, mode := range Modes {
		r, err := e.Run(ctx, Query{Text: "Meilisearch recipe search typo tolerance", Mode: mode, K: 4})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 || len(r.Hits) > 4 {
			t.Fatalf("%s: %d hits", mode, len(r.Hits))
		}
		for i, h := range r.Hits {
			if h.Memory.Embedding != nil {
				t.Errorf("%s: hit carries its embedding", mode)
			}
			b := h.Breakdown
			if h.Score != math.Max(0, b.Composite-b.Diversity) || b.Relevance <= 0 || b.Relevance > 1 || b.Importance != 0.5 || b.Recency >= 1 || b.Recency < 0.98 {
				t.Errorf("%s hit %d: score %v breakdown %+v", mode, i, h.Score, b)
			}
			if (mode == ModeBM25 && b.VectorRank != 0) || (mode == ModeVector && b.TextRank != 0) {
				t.Errorf("%s: ranks %+v", mode, b)
			}
		}
		if r.Hits[0].Memory.ID != "p07" {
			t.Errorf("%s: %v", mode, hitIDs(r.Hits))
		}
	}
}

// TestEngineScoresInRankOrder: what a hit shows is what it ranks by. MMR
// may place a memory below one with a lower composite (it resembles a hit
// above it); its Score then carries the penalty, so scores never increase
// down the list, and no two hits share a vector rank though the builtin
// embedder searches two vector lists (issue 21, bug 3).
func TestEngineScoresInRankOrder(t *testing.T) {
	e, _ := openFixture(t, nil)
	ctx := context.Background()
	queries := []string{"why is the cache TTL pinned", "recipe search", "error handling in the API",
		"orbit propagation", "pantry store", "how do we deploy", "tests"}
	var demoted int
	for _, mode := range Modes {
		for _, q := range queries {
			r, err := e.Run(ctx, Query{Text: q, Mode: mode, K: 20, NoFloors: true})
			if err != nil {
				t.Fatal(err)
			}
			vecRanks := map[int]string{}
			for i, h := range r.Hits {
				b := h.Breakdown
				if i > 0 && h.Score > r.Hits[i-1].Score {
					t.Errorf("%s %q: hit %d (%s) scores %.4f above hit %d's %.4f", mode, q, i+1, h.Memory.ID, h.Score, i, r.Hits[i-1].Score)
				}
				if want := math.Max(0, b.Composite-b.Diversity); h.Score != want {
					t.Errorf("%s %q: hit %d score %v, want composite %v less diversity %v", mode, q, i+1, h.Score, b.Composite, b.Diversity)
				}
				if b.Diversity > 0 {
					demoted++
					if b.SimilarTo == "" || b.SimilarTo == h.Memory.ID {
						t.Errorf("%s %q: hit %d demoted, similar to %q", mode, q, i+1, b.SimilarTo)
					}
				}
				if b.VectorRank > 0 {
					if other, dup := vecRanks[b.VectorRank]; dup {
						t.Errorf("%s %q: %s and %s both have vector rank %d", mode, q, other, h.Memory.ID, b.VectorRank)
					}
					vecRanks[b.VectorRank] = h.Memory.ID
				}
			}
		}
	}
	if demoted == 0 {
		t.Error("no query had MMR demote a hit: the test does not exercise it")
	}
}

func TestEnginePromptUsesKeywords(t *testing.T) {
	e, _ := openFixture(t, nil)
	prompt := "Hey, I was looking at the code this morning and I am a bit confused about something. " +
		"When we convert the ingredient quantities for the shopping list, where do the units get converted " +
		"and what does the database actually store, grams or cups? Please explain before you change anything."
	r, err := e.Run(context.Background(), Query{Text: prompt})
	if err != nil {
		t.Fatal(err)
	}
	if r.TextQuery == prompt || len(r.Keywords) == 0 || len(r.Keywords) > 5 {
		t.Fatalf("prompt not reduced to keywords: %q %v", r.TextQuery, r.Keywords)
	}
	if !contains(hitIDs(r.Hits), "p13") {
		t.Errorf("p13 missing: %v (keywords %v)", hitIDs(r.Hits), r.Keywords)
	}
}

func TestEngineValidation(t *testing.T) {
	e, _ := openFixture(t, nil)
	for name, q := range map[string]Query{
		"empty":     {Text: "  "},
		"utf8":      {Text: "bad \xff"},
		"mode":      {Text: "x", Mode: "fuzzy"},
		"k":         {Text: "x", K: -1},
		"too big":   {Text: strings.Repeat("a ", MaxQueryBytes)},
		"k too big": {Text: "x", K: MaxK + 1},
	} {
		if _, err := e.Search(context.Background(), q); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

func TestEngineEmptyStore(t *testing.T) {
	emb := embed.NewBuiltin()
	st, err := store.Open(context.Background(), store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := New(st, emb, config.Default().Search, nil)
	hits, err := e.Search(context.Background(), Query{Text: "anything at all"})
	if err != nil || len(hits) != 0 {
		t.Fatalf("%v %v", hits, err)
	}
}

// TestEngineVectorWeight checks that hybrid relevance is RRF with the
// vector list weighted by search.vector_weight and BM25's by 1 (a plain,
// unsegmented embedder).
func TestEngineVectorWeight(t *testing.T) {
	for _, vw := range []float64{0.25, 1} {
		e, _ := openFixtureWith(t, embed.NewLexical(), nil)
		e.cfg.VectorWeight = vw
		r, err := e.Run(context.Background(), Query{Text: "retry budget for the payment worker", K: 10, NoFloors: true, NoMMR: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 {
			t.Fatal("no hits")
		}
		pool := float64(max(20, e.cfg.Candidates))
		hi, lo := (1+vw)/(e.cfg.RRFK+1), min(vw, 1)/(e.cfg.RRFK+pool)
		for _, h := range r.Hits {
			b := h.Breakdown
			var raw float64
			if b.VectorRank > 0 {
				raw += vw / (e.cfg.RRFK + float64(b.VectorRank))
			}
			if b.TextRank > 0 {
				raw += 1 / (e.cfg.RRFK + float64(b.TextRank))
			}
			want := (raw - lo) / (hi - lo)
			if d := b.Relevance - want; d > 1e-9 || d < -1e-9 {
				t.Errorf("vector_weight %v: %s (ranks v%d t%d) relevance %v, want %v", vw, h.Memory.ID, b.VectorRank, b.TextRank, b.Relevance, want)
			}
		}
	}
}

func TestDefaultVectorWeight(t *testing.T) {
	cases := []struct {
		model string
		want  float64
	}{
		{"builtin-hash-v2", 0.25},
		{embed.BuiltinModel, 1},
		{"ollama:nomic-embed-text", 1},
		{"", 1},
	}
	for _, c := range cases {
		if got := DefaultVectorWeight(c.model); got != c.want {
			t.Errorf("DefaultVectorWeight(%q) = %v, want %v", c.model, got, c.want)
		}
	}
	cfg := config.Default().Search
	if e := newEngine(nil, embed.NewLexical(), cfg, nil); e.cfg.VectorWeight != 0.25 {
		t.Errorf("a zero vector_weight with the lexical embedder became %v", e.cfg.VectorWeight)
	}
	cfg.VectorWeight = 0.7
	if e := newEngine(nil, embed.NewBuiltin(), cfg, nil); e.cfg.VectorWeight != 0.7 {
		t.Errorf("an explicit vector_weight became %v", e.cfg.VectorWeight)
	}
}

// TestSegmentQueries: a segmented embedder's query vector becomes one query
// per part, zero elsewhere, at the part's weight; an all-zero part is
// skipped; an unsegmented embedder keeps its vector.
func TestSegmentQueries(t *testing.T) {
	e := newEngine(nil, embed.NewBuiltin(), config.Default().Search, nil)
	segs := embed.NewBuiltin().Segments()
	q := make([]float32, embed.BuiltinDim)
	q[0], q[embed.LexicalDim] = 0.6, 0.8
	got := e.segmentQueries(q)
	if len(got) != 2 {
		t.Fatalf("%d queries, want 2", len(got))
	}
	for i, sq := range got {
		if sq.weight != segs[i].Weight {
			t.Errorf("part %d weight %v, want %v", i, sq.weight, segs[i].Weight)
		}
		for j, x := range sq.vec {
			inPart := (i == 0 && j < embed.LexicalDim) || (i == 1 && j >= embed.LexicalDim)
			if !inPart && x != 0 {
				t.Fatalf("part %d: coordinate %d is %v outside the part", i, j, x)
			}
			if inPart && x != q[j] {
				t.Fatalf("part %d: coordinate %d is %v, want %v", i, j, x, q[j])
			}
		}
	}
	q[embed.LexicalDim] = 0
	if got := e.segmentQueries(q); len(got) != 1 || got[0].weight != segs[0].Weight {
		t.Errorf("a zero semantic part: %d queries, want the lexical one alone", len(got))
	}
	lex := newEngine(nil, embed.NewLexical(), config.Default().Search, nil)
	v := make([]float32, embed.LexicalDim)
	v[3] = 1
	if got := lex.segmentQueries(v); len(got) != 1 || got[0].weight != 1 || &got[0].vec[0] != &v[0] {
		t.Errorf("unsegmented: %+v", got)
	}
}

// countingIndex records the vector queries an engine sends.
type countingIndex struct {
	*store.Store
	mu   sync.Mutex
	vecs [][]float32
}

func (c *countingIndex) VectorSearchMany(ctx context.Context, vecs [][]float32, n int, f store.Filter) ([][]store.Scored, error) {
	c.mu.Lock()
	c.vecs = append(c.vecs, vecs...)
	c.mu.Unlock()
	return c.Store.VectorSearchMany(ctx, vecs, n, f)
}

// TestHybridSearchesEachSegment: with the built-in embedder a hybrid search
// sends one vector query per part (lexical, then semantic), bm25 mode none.
func TestHybridSearchesEachSegment(t *testing.T) {
	_, st := openFixture(t, nil)
	for _, c := range []struct {
		mode Mode
		want int
	}{{ModeHybrid, 2}, {ModeVector, 2}, {ModeBM25, 0}} {
		ci := &countingIndex{Store: st}
		e := newEngine(ci, embed.NewBuiltin(), config.Default().Search, memory.FixedClock{T: testNow})
		r, err := e.Run(context.Background(), Query{Text: "how many workers run the propagation jobs on the job queue", Mode: c.mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Hits) == 0 {
			t.Errorf("%s: no hits", c.mode)
		}
		if len(ci.vecs) != c.want {
			t.Fatalf("%s: %d vector queries, want %d", c.mode, len(ci.vecs), c.want)
		}
		for i, v := range ci.vecs {
			lexNorm, semNorm := 0.0, 0.0
			for j, x := range v {
				if j < embed.LexicalDim {
					lexNorm += float64(x * x)
				} else {
					semNorm += float64(x * x)
				}
			}
			if (i == 0) != (lexNorm > 0) || (i == 1) != (semNorm > 0) {
				t.Errorf("%s: query %d has lexical norm %v, semantic %v", c.mode, i, lexNorm, semNorm)
			}
		}
	}
}

// loadCounter records the ids the engine loads to score.
type loadCounter struct {
	*store.Store
	mu     sync.Mutex
	loaded []int
}

func (c *loadCounter) GetMany(ctx context.Context, ids []string) (map[string]memory.Memory, error) {
	c.mu.Lock()
	c.loaded = append(c.loaded, len(ids))
	c.mu.Unlock()
	return c.Store.GetMany(ctx, ids)
}

// TestFusedCandidatesCutAtPool: of the fused lists (three in hybrid mode
// with the built-in embedder) only the best pool are loaded and scored.
func TestFusedCandidatesCutAtPool(t *testing.T) {
	_, st := openFixture(t, nil)
	const q = "how do we deploy the payment worker and retry failed jobs in the queue"
	cfg := config.Default().Search
	cfg.Candidates = 8 // pool = max(K x overfetch, 8) = 10 at K = 5
	lc := &loadCounter{Store: st}
	e := newEngine(lc, embed.NewBuiltin(), cfg, memory.FixedClock{T: testNow})
	r, err := e.Run(context.Background(), Query{Text: q, Mode: ModeHybrid, NoFloors: true, NoMMR: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(lc.loaded) != 1 || lc.loaded[0] != 10 || r.Candidates != 10 || len(r.Hits) != 5 {
		t.Fatalf("loaded %v ids, %d candidates, %d hits; want 10, 10, 5", lc.loaded, r.Candidates, len(r.Hits))
	}
}

// TestLargePoolIsClamped: settings config.Validate accepts (overfetch 20,
// K up to MaxK) must not ask the store for more than it returns.
func TestLargePoolIsClamped(t *testing.T) {
	e, _ := openFixture(t, nil)
	e.cfg.Overfetch = 20
	hits, err := e.Search(context.Background(), Query{Text: "postgres", K: MaxK, Mode: ModeHybrid})
	if err != nil {
		t.Fatalf("Search with a pool of %d: %v", MaxK*20, err)
	}
	if len(hits) == 0 {
		t.Fatal("no hits")
	}
}

// TestSynonymExpansion: a hybrid search's BM25 leg adds the shipped
// thesaurus's synonyms of the query's plain words at synonym_weight, so
// "bill" finds a memory that only says "invoice"; bm25 mode and zero
// weights do not expand, and identifiers are never expanded.
func TestSynonymExpansion(t *testing.T) {
	emb := embed.NewBuiltin()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	texts := []string{"The invoice is generated once per period by the cron job.", "Parrots sing in the garden at dawn."}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range texts {
		if _, err := st.Put(ctx, memory.Memory{ID: fmt.Sprintf("m%d", i), Text: tx, Kind: memory.KindFact, Type: memory.TypeProject,
			Importance: 0.5, CreatedAt: testNow, Embedding: vecs[i]}); err != nil {
			t.Fatal(err)
		}
	}
	has := func(terms []store.Term, text string, boost float64) bool {
		for _, x := range terms {
			if x.Text == text && x.Boost == boost {
				return true
			}
		}
		return false
	}
	cfg := config.Default().Search
	// Two memories and a one-synonym match are no evidence beyond chance
	// (TestEvidenceGate): the gate would rightly answer nothing.
	cfg.EvidenceGate = false
	e := New(st, emb, cfg, memory.FixedClock{T: testNow})
	r, err := e.Run(ctx, Query{Text: "when is the bill made", Mode: ModeHybrid})
	if err != nil {
		t.Fatal(err)
	}
	if !has(r.Expansions, "invoic", cfg.SynonymWeight) {
		t.Errorf("expansions %v lack invoic at %v", r.Expansions, cfg.SynonymWeight)
	}
	if len(r.Hits) == 0 || r.Hits[0].Memory.ID != "m0" {
		t.Errorf("hits %v, want m0 first", hitIDs(r.Hits))
	}
	if r, _ := e.Run(ctx, Query{Text: "when is the bill made", Mode: ModeBM25}); len(r.Expansions) != 0 {
		t.Errorf("bm25 mode expanded: %v", r.Expansions)
	}
	if r, _ := e.Run(ctx, Query{Text: "billId bill_2 Bill9", Mode: ModeHybrid}); len(r.Expansions) != 0 {
		t.Errorf("identifiers expanded: %v", r.Expansions)
	}
	cfg.SynonymWeight, cfg.HypernymWeight = 0, 0
	e = New(st, emb, cfg, memory.FixedClock{T: testNow})
	if r, _ := e.Run(ctx, Query{Text: "when is the bill made", Mode: ModeHybrid}); len(r.Expansions) != 0 {
		t.Errorf("zero weights expanded: %v", r.Expansions)
	}
}

// TestDocTerms: docTerms adds the parts of a compound the index keeps
// whole, split at '.' and ':'; a snake_case name stays one term (only
// keywordTerms reads its parts).
func TestDocTerms(t *testing.T) {
	emb := embed.NewLexical()
	st := smallStore(t, emb, []string{"placeholder so the store opens with one memory"})
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	for _, c := range []struct {
		text      string
		want, not []string
	}{
		{"Phoenix.LiveViewTest", []string{"phoenix.liveviewtest", "phoenix", "liveviewtest"}, nil},
		{"run mix:format first", []string{"mix:format", "mix", "format"}, nil},
		{"opk.core_utils", []string{"opk", "core_utils"}, []string{"core", "utils"}},
		{"set show_debug", []string{"show_debug"}, []string{"show", "debug"}},
		{"lib/show_debug.ex", []string{"lib", "show_debug.ex", "show_debug"}, []string{"debug"}},
	} {
		doc := e.docTerms(c.text)
		for _, w := range c.want {
			for _, term := range st.Analyze(w) {
				if !doc[term] {
					t.Errorf("docTerms(%q) lacks %q: %v", c.text, term, doc)
				}
			}
		}
		for _, w := range c.not {
			for _, term := range st.Analyze(w) {
				if doc[term] {
					t.Errorf("docTerms(%q) holds %q: %v", c.text, term, doc)
				}
			}
		}
	}
}

// TestKeywordTerms: a memory's snake_case terms count their parts as the
// keyword factor's hits (the index keeps "show_debug" whole); the terms
// docTerms gives stay, and a memory without such a term is left as it is.
func TestKeywordTerms(t *testing.T) {
	emb := embed.NewLexical()
	st := smallStore(t, emb, []string{"placeholder so the store opens with one memory"})
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	cases := []struct {
		text      string
		want      []string // terms the keyword doc must hold
		notInDocs []string // of them, those docTerms alone lacks
	}{
		{"Assigning @transcript_view_show_debug directly no longer toggles the sidecar.", []string{"transcript_view_show_debug", "debug", "sidecar"}, []string{"debug"}},
		{"Phoenix.LiveViewTest needs lazy_html.", []string{"phoenix.liveviewtest", "liveviewtest", "lazy_html", "lazy", "html"}, []string{"lazy", "html"}},
		{"Run mix credo before every commit.", []string{"credo", "commit"}, nil},
	}
	for _, c := range cases {
		doc := e.docTerms(c.text)
		kdoc := e.keywordTerms(doc)
		for _, w := range c.want {
			for _, term := range st.Analyze(w) {
				if !kdoc[term] {
					t.Errorf("keywordTerms(%q) lacks %q (from %q)", c.text, term, w)
				}
			}
		}
		for _, w := range c.notInDocs {
			for _, term := range st.Analyze(w) {
				if doc[term] {
					t.Errorf("docTerms(%q) holds %q: the case tests nothing", c.text, term)
				}
			}
		}
		for term := range doc {
			if !kdoc[term] {
				t.Errorf("keywordTerms(%q) dropped %q", c.text, term)
			}
		}
	}
}

// TestKeywordHitInSnakeCase: a keyword that a memory holds only inside a
// snake_case identifier counts as a hit in the keyword factor.
func TestKeywordHitInSnakeCase(t *testing.T) {
	emb := embed.NewLexical()
	st := smallStore(t, emb, []string{
		"Assigning show_debug on the socket no longer toggles the sidecar; the computer input does.",
		"Debug builds log every query they run.",
		"Rows collapse after ten lines unless expanded.",
		"Each row's payload is pretty-printed as JSON.",
	})
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	r, err := e.Run(context.Background(), Query{Text: "debug sidecar toggle", NoFloors: true})
	if err != nil {
		t.Fatal(err)
	}
	want := 1 + 2*config.Default().Search.KeywordHitBoost // debug (in show_debug), sidecar, toggles
	for _, h := range r.Hits {
		if h.Memory.ID == "m0" && math.Abs(h.Breakdown.Keyword-want) > 1e-9 {
			t.Errorf("m0 (show_debug, sidecar, toggles): keyword factor %v, want %v (keywords %+v)", h.Breakdown.Keyword, want, r.Keywords)
		}
	}
	if !contains(hitIDs(r.Hits), "m0") {
		t.Fatalf("hits %v lack m0", hitIDs(r.Hits))
	}
}
