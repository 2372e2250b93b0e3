package embed

import (
	"context"
	"errors"
	"fmt"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// countingEmbedder is a test double that records what it was asked to embed
// and returns fakeVec vectors; failAfter > 0 makes call number failAfter fail.
type countingEmbedder struct {
	mu        sync.Mutex
	calls     [][]string
	batch     int
	failAfter int
}

func (c *countingEmbedder) Model() string  { return "counting-v1" }
func (c *countingEmbedder) Dim() int       { return 8 }
func (c *countingEmbedder) BatchSize() int { return c.batch }
func (c *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	c.calls = append(c.calls, append([]string(nil), texts...))
	n := len(c.calls)
	c.mu.Unlock()
	if c.failAfter > 0 && n == c.failAfter {
		return nil, errors.New("inner failed")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = ollamafake.HashVector(t, 8)
	}
	return out, nil
}

func (c *countingEmbedder) sent() (calls int, texts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.calls {
		texts += len(b)
	}
	return len(c.calls), texts
}

func TestCachedHitsMissesDedupe(t *testing.T) {
	inner := &countingEmbedder{}
	c := NewCached(inner, 100)
	if c.Model() != "counting-v1" || c.Dim() != 8 || c.Unwrap() != inner {
		t.Fatal("Model/Dim/Unwrap do not pass through")
	}
	ctx := context.Background()
	in := []string{"a", "b", "a", "c", "b", "a"}
	got, err := c.Embed(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if calls, sent := inner.sent(); calls != 1 || sent != 3 {
		t.Errorf("inner got %d calls with %d texts, want 1 with 3 (dedupe)", calls, sent)
	}
	for i, s := range in {
		if fmt.Sprint(got[i]) != fmt.Sprint(ollamafake.HashVector(s, 8)) {
			t.Fatalf("vector %d is not the inner one for %q", i, s)
		}
	}
	if st := c.Stats(); st.Hits != 0 || st.Misses != 3 || st.Deduped != 3 || st.Len != 3 || st.Cap != 100 {
		t.Errorf("stats %+v", st)
	}
	// Second call: two hits (one repeated), one miss.
	got, err = c.Embed(ctx, []string{"c", "d", "c", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if calls, sent := inner.sent(); calls != 2 || sent != 4 || fmt.Sprint(inner.calls[1]) != "[d]" {
		t.Errorf("inner calls %v", inner.calls)
	}
	if st := c.Stats(); st.Hits != 2 || st.Misses != 4 || st.Deduped != 4 || st.Len != 4 {
		t.Errorf("stats %+v", st)
	}
	if fmt.Sprint(got[2]) != fmt.Sprint(ollamafake.HashVector("c", 8)) {
		t.Error("repeated hit has the wrong vector")
	}
	// All hits: inner not called.
	if _, err := c.Embed(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if calls, _ := inner.sent(); calls != 2 {
		t.Errorf("inner called on an all-hit call")
	}
	if out, err := c.Embed(ctx, nil); err != nil || len(out) != 0 {
		t.Errorf("empty call = %v, %v", out, err)
	}
}

func TestCachedNoAliasing(t *testing.T) {
	c := NewCached(&countingEmbedder{}, 10)
	ctx := context.Background()
	first, _ := c.Embed(ctx, []string{"x", "x"})
	first[0][0], first[1][1] = 42, 43 // the caller scribbles on its copies
	again, _ := c.Embed(ctx, []string{"x", "x"})
	want := ollamafake.HashVector("x", 8)
	for i := range again {
		if fmt.Sprint(again[i]) != fmt.Sprint(want) {
			t.Fatalf("cached vector %d was changed through a returned slice: %v", i, again[i])
		}
	}
	again[0][0] = 7
	if again[1][0] == 7 {
		t.Error("two results of one call share memory")
	}
}

func TestCachedLRUEviction(t *testing.T) {
	inner := &countingEmbedder{}
	c := NewCached(inner, 2)
	ctx := context.Background()
	c.Embed(ctx, []string{"a"})
	c.Embed(ctx, []string{"b"})
	c.Embed(ctx, []string{"a"}) // a is now most recent
	c.Embed(ctx, []string{"c"}) // evicts b
	if st := c.Stats(); st.Len != 2 || st.Hits != 1 || st.Misses != 3 {
		t.Errorf("stats %+v", st)
	}
	c.Embed(ctx, []string{"a"}) // still cached
	c.Embed(ctx, []string{"b"}) // evicted: a miss
	if st := c.Stats(); st.Hits != 2 || st.Misses != 4 {
		t.Errorf("stats after eviction %+v", st)
	}
}

func TestCachedBatchingAndPartialFailure(t *testing.T) {
	inner := &countingEmbedder{batch: 4, failAfter: 3}
	c := NewCached(inner, 100)
	ctx := context.Background()
	in := make([]string, 10)
	for i := range in {
		in[i] = fmt.Sprint("text ", i)
	}
	if _, err := c.Embed(ctx, in); err == nil || err.Error() != "inner failed" {
		t.Fatalf("error %v, want the inner error", err)
	}
	if calls, sent := inner.sent(); calls != 3 || sent != 10 {
		t.Fatalf("inner got %d calls with %d texts", calls, sent)
	}
	for i, b := range inner.calls {
		if len(b) > 4 {
			t.Errorf("batch %d has %d texts, more than BatchSize 4", i, len(b))
		}
	}
	// The two batches that succeeded were cached: only the last two texts are sent again.
	if _, err := c.Embed(ctx, in); err != nil {
		t.Fatal(err)
	}
	if last := inner.calls[len(inner.calls)-1]; fmt.Sprint(last) != "[text 8 text 9]" {
		t.Errorf("retry sent %v", last)
	}
}

func TestCachedSizeZero(t *testing.T) {
	inner := &countingEmbedder{}
	c := NewCached(inner, 0)
	ctx := context.Background()
	c.Embed(ctx, []string{"a", "a"})
	c.Embed(ctx, []string{"a"})
	if calls, sent := inner.sent(); calls != 2 || sent != 2 {
		t.Errorf("inner got %d calls with %d texts, want 2 and 2 (dedupe, no caching)", calls, sent)
	}
	if st := c.Stats(); st.Len != 0 || st.Deduped != 1 {
		t.Errorf("stats %+v", st)
	}
}

func TestCachedCanceled(t *testing.T) {
	inner := &countingEmbedder{}
	c := NewCached(inner, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Embed(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if calls, _ := inner.sent(); calls != 0 {
		t.Error("inner called with a canceled context")
	}
}

// badCountEmbedder returns one vector too few.
type badCountEmbedder struct{ countingEmbedder }

func (b *badCountEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, err := b.countingEmbedder.Embed(ctx, texts)
	return v[:len(v)-1], err
}

func TestCachedInnerWrongCount(t *testing.T) {
	c := NewCached(&badCountEmbedder{}, 10)
	if _, err := c.Embed(context.Background(), []string{"a", "b"}); err == nil {
		t.Fatal("no error for a wrong vector count")
	}
}

func TestCachedConcurrent(t *testing.T) {
	inner := &countingEmbedder{batch: 3}
	c := NewCached(inner, 50)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				in := []string{fmt.Sprint("t", (g+i)%80), fmt.Sprint("t", i%7), fmt.Sprint("t", (g*i)%80)}
				out, err := c.Embed(ctx, in)
				if err != nil {
					errs <- err
					return
				}
				for j, s := range in {
					if fmt.Sprint(out[j]) != fmt.Sprint(ollamafake.HashVector(s, 8)) {
						errs <- fmt.Errorf("wrong vector for %q", s)
						return
					}
					out[j][0] = -1 // must not corrupt the cache
				}
				_ = c.Stats()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st := c.Stats()
	if st.Len > 50 || st.Hits+st.Misses+st.Deduped != 16*50*3 {
		t.Errorf("stats %+v", st)
	}
}

func TestCachedWithOllama(t *testing.T) {
	f := newFakeOllama(t)
	o := newTestOllama(t, f.URL(), func(o *OllamaOptions) { o.BatchSize = 2 })
	c := NewCached(o, 100)
	var _ memory.Embedder = c
	ctx := context.Background()
	if _, err := c.Embed(ctx, []string{"a", "b", "c", "a", "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Embed(ctx, []string{"a", "d"}); err != nil {
		t.Fatal(err)
	}
	if calls, batches := f.Calls(); calls != 3 || fmt.Sprint(batches) != "[2 1 1]" {
		t.Errorf("ollama got %d requests, batches %v; want 3, [2 1 1]", calls, batches)
	}
	if c.Dim() != 16 || c.Model() != "ollama:nomic-embed-text" {
		t.Errorf("Dim %d Model %s", c.Dim(), c.Model())
	}
}

func BenchmarkCachedHit(b *testing.B) {
	c := NewCached(&countingEmbedder{}, 1000)
	ctx := context.Background()
	in := []string{"the quick brown fox jumps over the lazy dog, a typical short memory text"}
	c.Embed(ctx, in)
	b.ReportAllocs()
	for b.Loop() {
		c.Embed(ctx, in)
	}
}
