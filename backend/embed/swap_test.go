package embed

import (
	"context"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestSwappable(t *testing.T) {
	ctx := context.Background()
	lex, built := NewLexical(), NewBuiltin()
	s := NewSwappable(NewCached(lex, 8))
	if s.Model() != LexicalModel || s.Dim() != LexicalDim || s.Generation() != 1 {
		t.Fatalf("start: %s %d gen %d", s.Model(), s.Dim(), s.Generation())
	}
	var _ memory.QueryEmbedder = s
	if got := Snapshot(NewSwappable(s)); got.Model() != LexicalModel {
		t.Fatalf("Snapshot through nested Swappables = %s", got.Model())
	}
	if old := s.Swap(built); old.Model() != LexicalModel {
		t.Fatalf("Swap returned %s", old.Model())
	}
	if s.Model() != BuiltinModel || s.Dim() != BuiltinDim || s.Generation() != 2 || Snapshot(s) != built || s.Unwrap() != built {
		t.Fatalf("after Swap: %s %d gen %d", s.Model(), s.Dim(), s.Generation())
	}
	vecs, err := s.Embed(ctx, []string{"the billing worker retries webhooks"})
	if err != nil || len(vecs[0]) != BuiltinDim {
		t.Fatalf("Embed after Swap: %d dims, %v", len(vecs[0]), err)
	}
	q, err := s.EmbedQuery(ctx, "billing retries")
	if err != nil || len(q) != BuiltinDim {
		t.Fatalf("EmbedQuery after Swap: %d dims, %v", len(q), err)
	}
	if Snapshot(lex) != lex {
		t.Fatal("Snapshot of a plain embedder is not itself")
	}
}

// TestSwappableConcurrent: embedding while the model is swapped back and
// forth; a snapshot's vectors always have its own dimension (run with -race).
func TestSwappableConcurrent(t *testing.T) {
	ctx := context.Background()
	a, b := NewLexical(), NewBuiltin()
	s := NewSwappable(a)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				e := Snapshot(s)
				vecs, err := e.Embed(ctx, []string{"a text to embed"})
				if err != nil || len(vecs[0]) != e.Dim() {
					t.Errorf("snapshot %s gave %d dims, %v", e.Model(), len(vecs[0]), err)
					return
				}
			}
		})
	}
	for i := range 200 {
		if i%2 == 0 {
			s.Swap(b)
		} else {
			s.Swap(a)
		}
	}
	close(stop)
	wg.Wait()
	if s.Generation() != 201 {
		t.Fatalf("generation %d after 200 swaps", s.Generation())
	}
}
