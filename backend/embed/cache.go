package embed

import (
	"container/list"
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/memtray/memtray/backend/memory"
)

// BatchSizer is implemented by embedders that prefer a bounded number of
// texts per call (Ollama). Cached splits its misses accordingly.
type BatchSizer interface {
	// BatchSize is the most texts one Embed call should carry; 0 means no limit.
	BatchSize() int
}

// Cached is an LRU cache keyed by the SHA-256 of the exact text, in front
// of another embedder. It only sends cache misses to the inner embedder,
// each distinct text once per call, in batches of the inner embedder's
// BatchSize when it has one, and caches each completed batch, so a failure
// late in a large call keeps the earlier work. It is safe for concurrent use;
// two concurrent calls missing the same text may both embed it. Returned
// vectors are the caller's own copies.
type Cached struct {
	inner memory.Embedder
	size  int
	batch int

	mu    sync.Mutex
	lru   *list.List // of *cacheEntry, most recently used first
	items map[[32]byte]*list.Element

	hits, misses, deduped atomic.Uint64
}

// cacheEntry is one cached vector.
type cacheEntry struct {
	key [32]byte
	vec []float32
}

// CacheStats counts what the cache did since it was made.
type CacheStats struct {
	// Hits is the number of texts served from the cache.
	Hits uint64 `json:"hits"`
	// Misses is the number of distinct texts sent to the inner embedder.
	Misses uint64 `json:"misses"`
	// Deduped is the number of texts that repeated another text of the same
	// call and were neither looked up nor sent again.
	Deduped uint64 `json:"deduped"`
	// Len is the number of cached vectors; Cap the most it keeps.
	Len int `json:"len"`
	Cap int `json:"cap"`
}

// NewCached puts an LRU cache of size vectors in front of inner. A size of 0
// or less keeps nothing but still dedupes and batches each call.
func NewCached(inner memory.Embedder, size int) *Cached {
	c := &Cached{inner: inner, size: max(size, 0), lru: list.New(), items: map[[32]byte]*list.Element{}}
	if bs, ok := inner.(BatchSizer); ok && bs.BatchSize() > 0 {
		c.batch = bs.BatchSize()
	}
	return c
}

// Model returns the inner embedder's model.
func (c *Cached) Model() string { return c.inner.Model() }

// Dim returns the inner embedder's dimension.
func (c *Cached) Dim() int { return c.inner.Dim() }

// Unwrap returns the inner embedder, e.g. to reach Ollama's Pull.
func (c *Cached) Unwrap() memory.Embedder { return c.inner }

// Stats returns the counters and the cache's fill.
func (c *Cached) Stats() CacheStats {
	c.mu.Lock()
	n := c.lru.Len()
	c.mu.Unlock()
	return CacheStats{Hits: c.hits.Load(), Misses: c.misses.Load(), Deduped: c.deduped.Load(), Len: n, Cap: c.size}
}

// Embed returns one vector per text, in order, from the cache where it can.
func (c *Cached) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
	}
	first := make(map[[32]byte]int, len(texts)) // key -> first index with it
	var dups [][2]int                           // {index, index of its first occurrence}
	var missIdx []int                           // first indexes of distinct misses
	c.mu.Lock()
	for i, k := range keys {
		if f, seen := first[k]; seen {
			dups = append(dups, [2]int{i, f})
			continue
		}
		first[k] = i
		if el, ok := c.items[k]; ok {
			c.lru.MoveToFront(el)
			out[i] = clone(el.Value.(*cacheEntry).vec)
			continue
		}
		missIdx = append(missIdx, i)
	}
	c.mu.Unlock()
	c.deduped.Add(uint64(len(dups)))
	c.hits.Add(uint64(len(texts) - len(dups) - len(missIdx)))
	step := len(missIdx)
	if c.batch > 0 {
		step = c.batch
	}
	for start := 0; start < len(missIdx); start += step {
		part := missIdx[start:min(start+step, len(missIdx))]
		batch := make([]string, len(part))
		for j, i := range part {
			batch[j] = texts[i]
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("cached embed: %w", err)
		}
		c.misses.Add(uint64(len(batch)))
		vecs, err := c.inner.Embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("cached embed: %s returned %d vectors for %d texts", c.inner.Model(), len(vecs), len(batch))
		}
		for j, v := range vecs {
			if v == nil {
				return nil, fmt.Errorf("cached embed: %s returned no vector for text %d", c.inner.Model(), part[j])
			}
		}
		c.mu.Lock()
		for j, i := range part {
			c.put(keys[i], clone(vecs[j]))
			out[i] = vecs[j] // the inner embedder's fresh slice; the cache keeps its own copy
		}
		c.mu.Unlock()
	}
	for _, d := range dups {
		out[d[0]] = clone(out[d[1]])
	}
	return out, nil
}

// EmbedQuery embeds a search query: through the inner embedder's
// EmbedQuery when it has one (cached apart from documents), else like Embed.
func (c *Cached) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	qe, ok := c.inner.(memory.QueryEmbedder)
	if !ok {
		vecs, err := c.Embed(ctx, []string{text})
		if err != nil {
			return nil, err
		}
		return vecs[0], nil
	}
	key := sha256.Sum256([]byte("\x00query\x00" + text))
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		c.lru.MoveToFront(el)
		v := clone(el.Value.(*cacheEntry).vec)
		c.mu.Unlock()
		c.hits.Add(1)
		return v, nil
	}
	c.mu.Unlock()
	c.misses.Add(1)
	v, err := qe.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.put(key, clone(v))
	c.mu.Unlock()
	return v, nil
}

// put stores vec under key, evicting the least recently used entry when
// full. c.mu must be held.
func (c *Cached) put(key [32]byte, vec []float32) {
	if c.size == 0 {
		return
	}
	if el, ok := c.items[key]; ok {
		el.Value.(*cacheEntry).vec = vec
		c.lru.MoveToFront(el)
		return
	}
	c.items[key] = c.lru.PushFront(&cacheEntry{key: key, vec: vec})
	for c.lru.Len() > c.size {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).key)
	}
}

// clone copies a vector.
func clone(v []float32) []float32 {
	return append([]float32(nil), v...)
}
