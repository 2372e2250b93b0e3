package embed

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// RetryEvery is how often a Reconnecting embedder tries to reach its model
// again while it is unavailable.
const RetryEvery = 15 * time.Second

// reconnectTimeout bounds one attempt to reach the model.
const reconnectTimeout = 2 * time.Second

// Reconnecting stands in for a store's embedding model while it cannot be
// reached (Ollama stopped): it keeps the store's model name and dimension,
// fails Embed with an error wrapping memory.ErrUnavailable, and tries again
// at most every RetryEvery, so the daemon starts without its embedder and
// recovers by itself when the embedder comes back.
type Reconnecting struct {
	cfg   config.Embedder
	model string
	dim   int

	mu      sync.Mutex
	inner   memory.Embedder
	lastTry time.Time
	lastErr error
	now     func() time.Time
}

// NewReconnecting returns a Reconnecting for model (dimension dim) that has
// just failed with firstErr.
func NewReconnecting(cfg config.Embedder, model string, dim int, firstErr error) *Reconnecting {
	return &Reconnecting{cfg: cfg, model: model, dim: dim, lastErr: firstErr, lastTry: time.Now(), now: time.Now}
}

// Model is the store's model name.
func (r *Reconnecting) Model() string { return r.model }

// Dim is the store's dimension.
func (r *Reconnecting) Dim() int { return r.dim }

// Available reports whether the model answered the last time it was asked.
func (r *Reconnecting) Available() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inner != nil
}

// Embed embeds with the model once it is reachable.
func (r *Reconnecting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e, err := r.get(ctx)
	if err != nil {
		return nil, err
	}
	return e.Embed(ctx, texts)
}

// EmbedQuery embeds a query with the model once it is reachable.
func (r *Reconnecting) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	e, err := r.get(ctx)
	if err != nil {
		return nil, err
	}
	if qe, ok := e.(memory.QueryEmbedder); ok {
		return qe.EmbedQuery(ctx, text)
	}
	vecs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (r *Reconnecting) get(ctx context.Context) (memory.Embedder, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inner != nil {
		return r.inner, nil
	}
	if r.now().Sub(r.lastTry) < RetryEvery {
		return nil, r.unavailable()
	}
	r.lastTry = r.now()
	actx, cancel := context.WithTimeout(ctx, reconnectTimeout)
	defer cancel()
	e, err := ForModel(actx, r.cfg, r.model)
	if err == nil && e.Dim() != r.dim {
		err = fmt.Errorf("%s now embeds with %d dimensions, the store holds %d: %w", r.model, e.Dim(), r.dim, memory.ErrModelMismatch)
	}
	if err != nil {
		r.lastErr = err
		return nil, r.unavailable()
	}
	r.inner, r.lastErr = e, nil
	return e, nil
}

func (r *Reconnecting) unavailable() error {
	return fmt.Errorf("%s is unavailable (retrying every %s): %w: %v", r.model, RetryEvery, memory.ErrUnavailable, r.lastErr)
}
