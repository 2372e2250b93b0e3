package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// TestStartsWithoutOllama: a store built with an Ollama model opens when
// Ollama is down; search falls back to BM25 and adding says why it cannot.
func TestStartsWithoutOllama(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := newFakeOllama(t, 8, "nomic-embed-text:latest")
	cfg := testConfig(t)
	cfg.Embedder.Provider = "ollama"
	cfg.Embedder.OllamaHost = srv.URL()
	d, err := Open(ctx, Options{Config: cfg})
	if err != nil {
		t.Fatalf("Open with Ollama up: %v", err)
	}
	if _, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: "The billing worker retries webhooks with exponential backoff up to 6 times."}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	srv.Close() // Ollama stops
	d, err = Open(ctx, Options{Config: cfg})
	if err != nil {
		t.Fatalf("Open with Ollama down: %v", err)
	}
	defer d.Close()
	if d.Embedder().Model() != "ollama:nomic-embed-text" || !strings.Contains(d.EmbedderChoice().Reason, "unavailable") {
		t.Fatalf("embedder %s (%s)", d.Embedder().Model(), d.EmbedderChoice().Reason)
	}
	hits, err := d.Memories().Search(ctx, httpapi.SearchRequest{Query: "how often are billing webhooks retried"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hybrid search with the embedder down = %v, %v; want the BM25 hit", hits, err)
	}
	if _, err := d.Memories().Search(ctx, httpapi.SearchRequest{Query: "webhooks", Mode: "vector"}); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("vector-only search with the embedder down: %v, want ErrUnavailable", err)
	}
	if _, err := d.Memories().Add(ctx, httpapi.AddRequest{Text: "A new memory that cannot be embedded right now."}); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Add with the embedder down: %v, want ErrUnavailable", err)
	}
	if n := d.Store().Count(); n != 1 {
		t.Fatalf("store holds %d, want 1", n)
	}
}
