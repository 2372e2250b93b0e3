package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// ollamaLike answers /api/tags and /api/embed the way Ollama does, with
// 8-dimensional vectors made from a hash of each input.
func ollamaLike(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(`{"models":[{"name":"nomic-embed-text:latest","model":"nomic-embed-text:latest","size":274302450,"digest":"0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f"}]}`))
	})
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
			Input []string
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid input type"}`))
			return
		}
		out := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			h := sha256.Sum256([]byte(in))
			for j := 0; j < 8; j++ {
				out[i] = append(out[i], float32(h[j])-127.5)
			}
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestStartsWithoutOllama: a store built with an Ollama model opens when
// Ollama is down; search falls back to BM25 and adding says why it cannot.
func TestStartsWithoutOllama(t *testing.T) {
	ctx := context.Background()
	srv := ollamaLike(t)
	cfg := testConfig(t)
	cfg.Embedder.Provider = "ollama"
	cfg.Embedder.OllamaHost = srv.URL
	d, err := Open(ctx, Options{Config: cfg})
	if err != nil {
		t.Fatalf("Open with Ollama up: %v", err)
	}
	if _, err := d.Add(ctx, httpapi.AddRequest{Text: "The billing worker retries webhooks with exponential backoff up to 6 times."}); err != nil {
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
	hits, err := d.Search(ctx, httpapi.SearchRequest{Query: "how often are billing webhooks retried"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hybrid search with the embedder down = %v, %v; want the BM25 hit", hits, err)
	}
	if _, err := d.Search(ctx, httpapi.SearchRequest{Query: "webhooks", Mode: "vector"}); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("vector-only search with the embedder down: %v, want ErrUnavailable", err)
	}
	if _, err := d.Add(ctx, httpapi.AddRequest{Text: "A new memory that cannot be embedded right now."}); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Add with the embedder down: %v, want ErrUnavailable", err)
	}
	if n := d.Store().Count(); n != 1 {
		t.Fatalf("store holds %d, want 1", n)
	}
}
