package search

import (
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/embedtest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestSearchAcrossModelSwitch: a query embedded with the old model just
// before the store switched models (a re-embedding finishing between the
// embed and the vector search) fails with memory.ErrModelMismatch, for its
// caller to run again (memories and recall do), instead of ranking by its
// similarity to the new model's vectors: its old vector is the new vector
// of a memory it has nothing to do with. In bm25 mode the query vector
// still measures the candidates' cosines (the floors): the candidates,
// loaded after the switch, are of the new model, and the search fails the
// same way. Run again, it finds the memory it is about.
func TestSearchAcrossModelSwitch(t *testing.T) {
	const (
		release = "The release train leaves every Tuesday at noon."
		lunch   = "Lunch is served on the second floor of the office."
		query   = "where is lunch served"
	)
	for _, mode := range []Mode{ModeVector, ModeHybrid, ModeBM25} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			oldEmb := &embedtest.Table{Name: "table-old", Vecs: map[string][]float32{release: embedtest.Unit(1), lunch: embedtest.Unit(2), query: embedtest.Unit(0)}, Other: embedtest.Unit(7)}
			newEmb := &embedtest.Table{Name: "table-new", Vecs: map[string][]float32{release: embedtest.Unit(0), lunch: embedtest.Unit(3), query: embedtest.Unit(3)}, Other: embedtest.Unit(6)}
			clock := memory.FixedClock{T: testNow}
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: oldEmb.Name, Dim: embedtest.Dim, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			var ids []string
			for _, text := range []string{release, lunch} {
				m, err := st.Put(ctx, memory.Memory{Text: text, Type: memory.TypeProject, Importance: 0.5, Embedding: oldEmb.Vecs[text]})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ID)
			}
			sw := embed.NewSwappable(oldEmb)
			cfg := config.Default().Search
			e := New(st, sw, cfg, clock)
			switched := false
			oldEmb.After = func([]string) {
				if switched {
					return
				}
				switched = true
				if err := st.ReembedWith(ctx, newEmb, store.ReembedOptions{Switched: func() { sw.Swap(newEmb) }}); err != nil {
					t.Errorf("reembed: %v", err)
				}
			}
			q := Query{Text: query, Mode: mode, K: 1}
			res, err := e.Run(ctx, q)
			if !switched {
				t.Fatal("the store never switched models: the test hook did not run")
			}
			if !errors.Is(err, memory.ErrModelMismatch) {
				var got []string
				if res != nil {
					got = hitIDs(res.Hits)
				}
				t.Fatalf("search during the switch: hits %v (release is %s), err %v; want memory.ErrModelMismatch", got, ids[0], err)
			}
			res, err = e.Run(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if got := hitIDs(res.Hits); len(got) != 1 || got[0] != ids[1] {
				t.Errorf("search again: hits %v, want the lunch memory %s", got, ids[1])
			}
		})
	}
}
