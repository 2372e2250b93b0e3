package store

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// refRecords is every record as Iterate decodes them, in its order, and
// the store's clock then: the reference List and Facets filter it per
// query exactly as an Iterate of the query's filter would (the same
// Filter.matchMemory at the same now), so checkList decodes the store once
// per step instead of twice per query (exp-speed).
type refRecords struct {
	all []memory.Memory
	now int64
}

// snapshotRecords decodes every record of s with Iterate.
func snapshotRecords(t *testing.T, s *Store) refRecords {
	t.Helper()
	r := refRecords{now: s.now().UnixNano()}
	err := s.Iterate(context.Background(), Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		r.all = append(r.all, m)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// matches returns the records q's filters keep: those an Iterate with q's
// Filter yields, then q's other filters tested on their memory.Memory
// fields.
func (r refRecords) matches(t *testing.T, q ListQuery) []memory.Memory {
	t.Helper()
	f := Filter{Project: q.Project, Kinds: q.Kinds, IncludeSnoozed: true, IncludeSuperseded: q.IncludeSuperseded}
	if err := f.validate(); err != nil {
		t.Fatal(err)
	}
	var all []memory.Memory
	text := strings.ToLower(q.Text)
	for _, m := range r.all {
		if !f.matchMemory(&m, r.now) {
			continue
		}
		switch {
		case q.Snoozed == SnoozedExclude && m.Snoozed(q.Now), q.Snoozed == SnoozedOnly && !m.Snoozed(q.Now):
			continue
		case text != "" && !strings.Contains(strings.ToLower(m.Text), text):
			continue
		case len(q.Types) > 0 && !slices.Contains(q.Types, m.Type),
			len(q.Scopes) > 0 && !slices.Contains(q.Scopes, m.Scope),
			len(q.Projects) > 0 && !slices.Contains(q.Projects, m.Project):
			continue
		case q.Source != "" && m.Source != q.Source && !(strings.HasPrefix(m.Source, q.Source+":") && !strings.Contains(q.Source, ":")):
			continue
		}
		all = append(all, m)
	}
	return all
}

// refFacets is Facets the slow way: a count over the records matches
// keeps.
func refFacets(t *testing.T, s *Store, q ListQuery) Facets {
	t.Helper()
	return snapshotRecords(t, s).facets(t, q)
}

// facets is refFacets over r.
func (r refRecords) facets(t *testing.T, q ListQuery) Facets {
	t.Helper()
	f := Facets{Projects: map[string]int{}, Kinds: map[memory.Kind]int{}, Types: map[memory.Type]int{},
		Sources: map[string]int{}, Scopes: map[memory.Scope]int{}}
	for _, m := range r.matches(t, q) {
		f.Total++
		f.Projects[m.Project]++
		f.Kinds[m.Kind]++
		f.Types[m.Type]++
		f.Sources[m.Source]++
		f.Scopes[m.Scope]++
	}
	return f
}

// list is List the slow way: every record decoded by Iterate, filtered
// and sorted on its memory.Memory fields. TestListMatchesReference holds
// List to it.
func (r refRecords) list(t *testing.T, q ListQuery) ([]string, int) {
	t.Helper()
	all := r.matches(t, q)
	sticky := func(m *memory.Memory) float64 {
		if m.AccessCount < q.StickyMinAccess || m.AccessCount <= 0 {
			return 0
		}
		return float64(m.AccessCount) / float64(max(m.ReinforcedCount, 1))
	}
	key := map[ListSort]func(a, b *memory.Memory) int{
		"":             func(a, b *memory.Memory) int { return a.CreatedAt.Compare(b.CreatedAt) },
		SortCreated:    func(a, b *memory.Memory) int { return a.CreatedAt.Compare(b.CreatedAt) },
		SortUpdated:    func(a, b *memory.Memory) int { return a.UpdatedAt.Compare(b.UpdatedAt) },
		SortImportance: func(a, b *memory.Memory) int { return cmp.Compare(a.Importance, b.Importance) },
		SortAccess:     func(a, b *memory.Memory) int { return cmp.Compare(a.AccessCount, b.AccessCount) },
		SortReinforced: func(a, b *memory.Memory) int { return cmp.Compare(a.ReinforcedCount, b.ReinforcedCount) },
		SortStickiness: func(a, b *memory.Memory) int { return cmp.Compare(sticky(a), sticky(b)) },
		SortLastUsed:   func(a, b *memory.Memory) int { return a.LastAccessed.Compare(b.LastAccessed) },
		SortKind:       func(a, b *memory.Memory) int { return strings.Compare(string(a.Kind), string(b.Kind)) },
		SortProject:    func(a, b *memory.Memory) int { return strings.Compare(a.Project, b.Project) },
	}[q.Sort]
	slices.SortFunc(all, func(a, b memory.Memory) int {
		c := key(&a, &b)
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if q.Desc {
			return -c
		}
		return c
	})
	out := []string{}
	for i := q.Offset; i < len(all) && (q.Limit == 0 || i < q.Offset+q.Limit); i++ {
		out = append(out, all[i].ID)
	}
	return out, len(all)
}

var listWords = []string{"Queue", "cache", "ÄRGER", "İstanbul", "deploy", "Index", "straße", "retry", "lock", "Worker"}

// randMem is a memory with random list columns.
func randMem(r *rand.Rand, i int) memory.Memory {
	var words []string
	for range 3 + r.Intn(6) {
		words = append(words, listWords[r.Intn(len(listWords))])
	}
	m := mem(fmt.Sprintf("%s %d", strings.Join(words, " "), i))
	randCols(r, &m)
	return m
}

// randCols sets m's list columns at random, with many ties.
func randCols(r *rand.Rand, m *memory.Memory) {
	m.Kind = memory.Kinds[r.Intn(len(memory.Kinds))]
	m.Type = memory.Types[r.Intn(len(memory.Types))]
	m.Project = []string{"", "alpha", "beta", "Beta"}[r.Intn(4)]
	m.Scope = []memory.Scope{memory.ScopeDefault, memory.ScopePersonal, memory.ScopeTeam}[r.Intn(3)]
	m.Source = []string{"", "cli", "mcp", "ingest:a.md", "ingest:b.md", "ingest", "capture:claude"}[r.Intn(7)]
	m.Importance = float64(r.Intn(5)) / 4
	m.Pinned = r.Intn(4) == 0
	m.AccessCount = r.Intn(12)
	m.ReinforcedCount = r.Intn(4)
	m.CreatedAt = t0.Add(-time.Duration(r.Intn(50)) * time.Hour)
	m.UpdatedAt = m.CreatedAt.Add(time.Duration(r.Intn(3)) * time.Minute)
	m.LastAccessed = time.Time{}
	if r.Intn(2) == 0 {
		m.LastAccessed = t0.Add(-time.Duration(r.Intn(20)) * time.Hour)
	}
	m.CooldownUntil = time.Time{}
	if r.Intn(4) == 0 {
		m.CooldownUntil = t0.Add(time.Duration(r.Intn(96)-24) * time.Hour)
	}
}

func randQuery(r *rand.Rand) ListQuery {
	q := ListQuery{
		Snoozed:           SnoozeFilter(r.Intn(3)),
		IncludeSuperseded: r.Intn(3) != 0,
		Now:               t0.Add(time.Duration(r.Intn(72)-12) * time.Hour),
		Sort:              append([]ListSort{""}, ListSorts...)[r.Intn(len(ListSorts)+1)],
		Desc:              r.Intn(2) == 0,
		StickyMinAccess:   r.Intn(6),
		Offset:            []int{0, 0, 1, 5, 40, 1000}[r.Intn(6)],
		Limit:             []int{0, 1, 3, 20, 100}[r.Intn(5)],
	}
	if r.Intn(3) == 0 {
		q.Project = []string{"alpha", "beta", "Beta", "gamma"}[r.Intn(4)]
	}
	for range r.Intn(3) {
		q.Kinds = append(q.Kinds, memory.Kinds[r.Intn(len(memory.Kinds))])
	}
	for range r.Intn(3) {
		q.Types = append(q.Types, memory.Types[r.Intn(len(memory.Types))])
	}
	for range r.Intn(3) {
		q.Scopes = append(q.Scopes, []memory.Scope{memory.ScopeDefault, memory.ScopePersonal, memory.ScopeTeam}[r.Intn(3)])
	}
	if r.Intn(4) == 0 {
		q.Projects = []string{"alpha", "Beta", "", "gamma"}[:1+r.Intn(4)]
	}
	if r.Intn(3) == 0 {
		q.Source = []string{"cli", "ingest", "ingest:a.md", "capture", "ingest:", "capture:claude", "gone"}[r.Intn(7)]
	}
	if r.Intn(3) == 0 {
		q.Text = []string{"QUEUE", "ärger", "straSSe", "İstanbul", "istanbul", "retry lock", "1", "zzz"}[r.Intn(8)]
	}
	return q
}

// checkList compares List and Facets with the reference on n random
// queries.
func checkList(t *testing.T, s *Store, r *rand.Rand, step string, n int) {
	t.Helper()
	nonEmpty := 0
	ref := snapshotRecords(t, s)
	for range n {
		q := randQuery(r)
		got, total, err := s.List(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: List(%+v): %v", step, q, err)
		}
		want, wantTotal := ref.list(t, q)
		if total != wantTotal || !slices.Equal(got, want) {
			t.Fatalf("%s: List(%+v) = %d of %d %v\nreference: %d of %d %v", step, q, len(got), total, got, len(want), wantTotal, want)
		}
		f, err := s.Facets(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: Facets(%+v): %v", step, q, err)
		}
		if wantF := ref.facets(t, q); !reflect.DeepEqual(f, wantF) {
			t.Fatalf("%s: Facets(%+v) = %+v\nreference: %+v", step, q, f, wantF)
		}
		if len(got) > 0 {
			nonEmpty++
		}
	}
	if nonEmpty == 0 {
		t.Fatalf("%s: every random query came back empty", step)
	}
}

// TestListMatchesReference performs every kind of write and checks List
// against the Iterate-based reference after each.
func TestListMatchesReference(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	r := rand.New(rand.NewSource(1))
	const queries = 150
	var live []string // ids of live, not superseded records
	pick := func() string {
		i := r.Intn(len(live))
		id := live[i]
		live = slices.Delete(live, i, i+1)
		return id
	}

	// put and put batch
	for i := range 40 {
		live = append(live, mustPut(t, s, randMem(r, i)).ID)
	}
	checkList(t, s, r, "put", queries)
	var batch []memory.Memory
	for i := 40; i < 300; i++ {
		batch = append(batch, randMem(r, i))
	}
	stored, err := s.PutBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range stored {
		live = append(live, m.ID)
	}
	checkList(t, s, r, "put batch", queries)

	// update: columns only, then text (with a new embedding)
	for i := range 60 {
		id := live[r.Intn(len(live))]
		if _, err := s.Update(ctx, id, func(m *memory.Memory) error {
			randCols(r, m)
			if i%3 == 0 {
				m.Text = fmt.Sprintf("updated STRASSE %d %s", i, listWords[r.Intn(len(listWords))])
				m.Embedding = testEmb.vec(m.Text)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	checkList(t, s, r, "update", queries)

	// delete
	for range 20 {
		if err := s.Delete(ctx, pick()); err != nil {
			t.Fatal(err)
		}
	}
	checkList(t, s, r, "delete", queries)

	// supersede
	for i := range 25 {
		next := randMem(r, 1000+i)
		m, err := s.Supersede(ctx, pick(), next)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, m.ID)
	}
	checkList(t, s, r, "supersede", queries)

	// apply: puts (columns and texts changed) and trash in one batch
	var b Batch
	got, err := s.GetMany(ctx, live[:30])
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range live[:30] {
		m := got[id]
		randCols(r, &m)
		if i%2 == 0 {
			m.Text = fmt.Sprintf("applied Worker %d", i)
			m.Embedding = testEmb.vec(m.Text)
		}
		b.Put = append(b.Put, m)
	}
	var trashed []string
	for range 30 {
		id := live[30+r.Intn(len(live)-30)]
		if slices.Contains(trashed, id) {
			continue
		}
		trashed = append(trashed, id)
		b.Trash = append(b.Trash, TrashRequest{ID: id, Reason: "test"})
	}
	if err := s.Apply(ctx, b); err != nil {
		t.Fatal(err)
	}
	live = slices.DeleteFunc(live, func(id string) bool { return slices.Contains(trashed, id) })
	checkList(t, s, r, "apply put+trash", queries)

	// restore, through Apply and through Restore
	if err := s.Apply(ctx, Batch{Restore: trashed[:10]}); err != nil {
		t.Fatal(err)
	}
	checkList(t, s, r, "apply restore", queries)
	if err := s.Restore(ctx, trashed[10:]...); err != nil {
		t.Fatal(err)
	}
	live = append(live, trashed...)
	checkList(t, s, r, "restore", queries)

	// reembed to another model
	v2 := wordEmbedder{model: "list-words-v2", dim: 16}
	if err := s.Reembed(ctx, v2, nil); err != nil {
		t.Fatal(err)
	}
	checkList(t, s, r, "reembed", queries)

	// import (a put of records taken as they are)
	var buf bytes.Buffer
	if err := s.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// reopen: the columns come back from the records
	s, err = Open(ctx, Options{Dir: dir, Clock: memory.FixedClock{T: t0}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if w := s.Info().Warnings; len(w) > 0 {
		t.Fatalf("warnings after reopen: %q", w)
	}
	checkList(t, s, r, "reopen", queries)

	s2, err := Open(ctx, Options{Dir: t.TempDir(), Model: v2.model, Dim: v2.dim, Clock: memory.FixedClock{T: t0}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	if _, err := s2.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	checkList(t, s2, r, "import", queries)
}

func TestListValidatesAndPages(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for _, q := range []ListQuery{{Sort: "color"}, {Kinds: []memory.Kind{"gossip"}}, {Offset: -1}, {Limit: -1}, {Snoozed: 9},
		{Types: []memory.Type{"opinion"}}, {Scopes: []memory.Scope{"public"}}, {Source: "\xff"},
		{Source: strings.Repeat("s", 257)}, {Projects: []string{"ok", "\xff"}}} {
		if _, _, err := s.List(ctx, q); err == nil {
			t.Errorf("List(%+v) accepted", q)
		}
		if _, err := s.Facets(ctx, q); err == nil {
			t.Errorf("Facets(%+v) accepted", q)
		}
	}
	if ids, total, err := s.List(ctx, ListQuery{}); err != nil || total != 0 || ids == nil || len(ids) != 0 {
		t.Fatalf("empty store: %v %d %v", ids, total, err)
	}
	a := mustPut(t, s, mem("first"))
	b := mustPut(t, s, mem("second"))
	ids, total, err := s.List(ctx, ListQuery{Offset: 1, Limit: 5})
	if err != nil || total != 2 || !slices.Equal(ids, []string{max(a.ID, b.ID)}) {
		t.Fatalf("page = %v of %d, %v", ids, total, err)
	}
	s.Close()
	if _, _, err := s.List(ctx, ListQuery{}); err == nil {
		t.Fatal("List on a closed store")
	}
	if _, err := s.Facets(ctx, ListQuery{}); err == nil {
		t.Fatal("Facets on a closed store")
	}
}

// TestListConcurrentWrites runs List while other goroutines write (for
// -race), then checks it against the reference.
func TestListConcurrentWrites(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	r := rand.New(rand.NewSource(2))
	var ms []memory.Memory
	for i := range 200 {
		ms = append(ms, randMem(r, i))
	}
	stored, err := s.PutBatch(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(int64(10 + w)))
			for i := range 50 {
				id := stored[r.Intn(len(stored))].ID
				if _, err := s.Update(ctx, id, func(m *memory.Memory) error { randCols(r, m); return nil }); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if _, err := s.Put(ctx, randMem(r, 1000*(w+1)+i)); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	for range 100 {
		if _, _, err := s.List(ctx, randQuery(r)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	checkList(t, s, r, "after concurrent writes", 50)
}

func TestContainsAtAndSortPage(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	alpha := "abxz 7é"
	randStr := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alpha[r.Intn(len(alpha))])
		}
		return b.String()
	}
	for range 20000 {
		hay, needle := randStr(r.Intn(30)), randStr(1+r.Intn(4))
		if got, want := containsAt(hay, needle, rarestByte(needle)), strings.Contains(hay, needle); got != want {
			t.Fatalf("containsAt(%q, %q) = %v", hay, needle, got)
		}
	}
	cmpItem := func(a, b listItem) int {
		if c := cmp.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	}
	for range 300 {
		n := r.Intn(3000)
		a := make([]listItem, n)
		for i := range a {
			a[i] = listItem{k: uint64(r.Intn(20)), id: fmt.Sprint(i)}
		}
		want := slices.Clone(a)
		slices.SortFunc(want, cmpItem)
		lo := r.Intn(n + 1)
		hi := min(n, lo+r.Intn(60))
		sortPage(a, lo, hi, cmpItem)
		if !slices.Equal(a[lo:hi], want[lo:hi]) {
			t.Fatalf("sortPage(%d, %d, %d) differs from a sort", n, lo, hi)
		}
	}
}
