package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// failingEmbedder wraps an embedder and fails after `after` calls.
type failingEmbedder struct {
	wordEmbedder
	after int32
	calls atomic.Int32
}

func (f *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.calls.Add(1) > f.after {
		return nil, errors.New("embedder went away")
	}
	return f.wordEmbedder.Embed(ctx, texts)
}

func TestReembedSwitchesModelAndResumes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	var batch []memory.Memory
	for i := 0; i < 300; i++ {
		batch = append(batch, mem(fmt.Sprintf("reembed record %d about %s", i, []string{"queues", "caches", "indexes"}[i%3])))
	}
	stored, err := s.PutBatch(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	v2 := wordEmbedder{model: "words-v2", dim: 16}

	// Fail midway: the store keeps its old model, fully usable.
	bad := &failingEmbedder{wordEmbedder: v2, after: 2}
	if err := s.Reembed(ctx, bad, nil); err == nil || !strings.Contains(err.Error(), "went away") {
		t.Fatalf("failing reembed: %v", err)
	}
	if s.Info().Model != testEmb.model {
		t.Fatalf("model switched after a failed reembed: %+v", s.Info())
	}
	if vs, err := s.VectorSearch(ctx, stored[5].Embedding, 1, Filter{}); err != nil || vs[0].Score < 0.999 {
		t.Fatalf("vector search after failed reembed: %v %v", vs, err)
	}
	s.Close()

	// Reopen with the old model: works, and says a re-embedding is unfinished.
	s = openTest(t, dir)
	if w := s.Info().Warnings; len(w) != 1 || !strings.Contains(w[0], "words-v2") {
		t.Errorf("warnings = %q", w)
	}
	// A write in between must be re-embedded too.
	extra := mustPut(t, s, mem("written between the two runs"))
	s.Close()

	// The new model is refused without AllowModelChange, accepted with it.
	if _, err := Open(ctx, Options{Dir: dir, Model: v2.model, Dim: v2.dim}); !errors.Is(err, memory.ErrModelMismatch) {
		t.Fatalf("open with new model: %v", err)
	}
	s2, err := Open(ctx, Options{Dir: dir, Model: v2.model, Dim: v2.dim, AllowModelChange: true})
	if err != nil {
		t.Fatal(err)
	}
	var first, last [2]int
	calls := 0
	err = s2.Reembed(ctx, v2, func(done, total int) {
		if calls == 0 {
			first = [2]int{done, total}
		}
		last = [2]int{done, total}
		calls++
	})
	if err != nil {
		t.Fatal(err)
	}
	// Two batches of 64 were staged by the failed run: resumed, not redone.
	if first[0] != 128+64 || last != [2]int{301, 301} {
		t.Errorf("progress first %v last %v", first, last)
	}
	info := s2.Info()
	if info.Model != v2.model || info.Dim != 16 || len(info.Warnings) != 0 {
		t.Errorf("Info after reembed: %+v", info)
	}
	for _, m := range append(stored[:10], extra) {
		g, err := s2.Get(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g.EmbeddingModel != v2.model || !slices.Equal(g.Embedding, v2.vec(g.Text)) || g.UpdatedAt != m.UpdatedAt {
			t.Errorf("record %s not re-embedded: %q %d", m.ID, g.EmbeddingModel, len(g.Embedding))
		}
		vs, err := s2.VectorSearch(ctx, v2.vec(g.Text), 1, Filter{})
		if err != nil || vs[0].Score < 0.999 {
			t.Errorf("vector search with the new model: %v %v", vs, err)
		}
	}
	if _, err := s2.VectorSearch(ctx, stored[0].Embedding, 1, Filter{}); !errors.Is(err, memory.ErrModelMismatch) {
		t.Errorf("old-dim query after reembed: %v", err)
	}
	if _, err := s2.Put(ctx, mem("old model vector")); !errors.Is(err, memory.ErrModelMismatch) {
		t.Errorf("old-model put after reembed: %v", err)
	}
	if ts, _ := s2.TextSearch(ctx, "written", 5, Filter{}); len(ts) != 1 {
		t.Errorf("text index after reembed: %v", ts)
	}
	s2.Close()
	s3, err := Open(ctx, Options{Dir: dir, Model: v2.model, Dim: v2.dim})
	if err != nil {
		t.Fatalf("reopen with the new model: %v", err)
	}
	if s3.Info().RepairedOnOpen != 0 || s3.Count() != 301 {
		t.Errorf("reopen after reembed: %+v", s3.Info())
	}
	s3.Close()
}

// TestReembedSwitchedHoldsWrites: Switched runs after the switch with the
// write lock held, so a Put waiting for it lands in the new model, and a
// Put labelled with the old model afterwards is refused.
func TestReembedSwitchedHoldsWrites(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i := 0; i < 50; i++ {
		mustPut(t, s, mem(fmt.Sprintf("switched hook record %d", i)))
	}
	v2 := wordEmbedder{model: "words-v2", dim: testDim} // same dimension: only the label tells
	putDone := make(chan error, 1)
	var modelInHook string
	err := s.ReembedWith(ctx, v2, ReembedOptions{Switched: func() {
		modelInHook = s.Info().Model
		go func() {
			m := mem("written while Switched runs")
			m.EmbeddingModel = testEmb.model
			_, err := s.Put(ctx, m)
			putDone <- err
		}()
		select {
		case err := <-putDone:
			t.Errorf("a Put finished while Switched held the write lock: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if modelInHook != v2.model {
		t.Fatalf("Switched saw model %q, want %q", modelInHook, v2.model)
	}
	if err := <-putDone; !errors.Is(err, memory.ErrModelMismatch) {
		t.Fatalf("Put of an old-model vector after the switch: %v, want ErrModelMismatch", err)
	}
	if n := s.Count(); n != 50 {
		t.Fatalf("count = %d, want 50", n)
	}
}

// TestVectorSearchModel: a search names its query vectors' model
// (Filter.Model); vectors of another model than the store's are refused
// with memory.ErrModelMismatch instead of compared with the new model's,
// and the refusal comes back only once the switch's Switched callback has
// returned (a caller then embeds again with the new model).
func TestVectorSearchModel(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	stored := mustPut(t, s, mem("the release train leaves on tuesdays"))
	v2 := wordEmbedder{model: "words-v2", dim: testDim}
	search := func(model string) error {
		_, err := s.VectorSearch(ctx, stored.Embedding, 1, Filter{Model: model})
		return err
	}
	tests := []struct {
		name, model string
		mismatch    bool
	}{
		{"no model: no check", "", false},
		{"the store's model", testEmb.model, false},
		{"another model", v2.model, true},
	}
	for _, tc := range tests {
		t.Run("before switch/"+tc.name, func(t *testing.T) {
			if err := search(tc.model); errors.Is(err, memory.ErrModelMismatch) != tc.mismatch {
				t.Errorf("search with model %q: %v, want mismatch %v", tc.model, err, tc.mismatch)
			}
		})
	}
	if err := search(strings.Repeat("m", maxModel+1)); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("too long a model: %v", err)
	}

	var switched atomic.Bool
	staleErr := make(chan error, 1)
	err := s.ReembedWith(ctx, v2, ReembedOptions{Switched: func() {
		// A search of the old model's vector, from a writer that
		// embedded before the switch: refused, after Switched returns.
		go func() {
			err := search(testEmb.model)
			if !switched.Load() {
				err = fmt.Errorf("refused before Switched returned: %w", err)
			}
			staleErr <- err
		}()
		switched.Store(true)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-staleErr; !errors.Is(err, memory.ErrModelMismatch) || !strings.Contains(err.Error(), "words-v2") || strings.Contains(err.Error(), "before Switched") {
		t.Errorf("stale search during the switch: %v", err)
	}
	for _, tc := range []struct {
		model    string
		mismatch bool
	}{{"", false}, {testEmb.model, true}, {v2.model, false}} {
		if err := search(tc.model); errors.Is(err, memory.ErrModelMismatch) != tc.mismatch {
			t.Errorf("after switch, search with model %q: %v, want mismatch %v", tc.model, err, tc.mismatch)
		}
		if err := s.CheckModel(tc.model); errors.Is(err, memory.ErrModelMismatch) != tc.mismatch {
			t.Errorf("after switch, CheckModel(%q): %v, want mismatch %v", tc.model, err, tc.mismatch)
		}
	}
}
