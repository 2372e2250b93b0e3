package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// ollamaForCLI is a loopback server speaking the part of Ollama's API the
// daemon uses: /api/tags, /api/version, /api/embed (hashed vectors) and
// /api/pull, which streams the recorded pull of nomic-embed-text
// (package embed's testdata) and then has the model.
func ollamaForCLI(t *testing.T) *httptest.Server {
	t.Helper()
	pullStream, err := os.ReadFile(filepath.Join("..", "embed", "testdata", "pull_success.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	models := []string{"llama3.2:latest"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"version":"0.13.0"}`))
	})
	mux.HandleFunc("GET /api/tags", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var list []map[string]any
		for _, m := range models {
			list = append(list, map[string]any{"name": m, "model": m, "size": 274302450, "digest": "0a109f42"})
		}
		json.NewEncoder(w).Encode(map[string]any{"models": list})
	})
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		out := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			h := sha256.Sum256([]byte(in))
			for _, b := range h[:12] {
				out[i] = append(out[i], float32(b)-127.5)
			}
		}
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out})
	})
	mux.HandleFunc("POST /api/pull", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		sc := bufio.NewScanner(bytes.NewReader(pullStream))
		for sc.Scan() {
			w.Write(append(sc.Bytes(), '\n'))
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		models = append(models, "nomic-embed-text:latest")
		mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestRemotePullAndReindex: with a daemon running, `memtray pull` and
// `memtray reindex` have the daemon do the work, with the same progress
// bars on stderr, and the daemon switches models without stopping.
func TestRemotePullAndReindex(t *testing.T) {
	dir := isolate(t)
	t.Setenv("OLLAMA_HOST", ollamaForCLI(t).URL)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- Run(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Ctx: ctx},
			[]string{"serve", "--data-dir", dir, "--listen", "127.0.0.1:0"})
	}()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "serving on") {
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	bg := context.Background()
	for _, text := range []string{"The ledger service pins Postgres 16.4.", "Deploys go through the canary stage first.", "Logs rotate daily at 03:00 UTC."} {
		if code, _, errs := run(t, bg, "", "add", "--data-dir", dir, text); code != 0 {
			t.Fatalf("add: %s", errs)
		}
	}
	// auto: Ollama answers but lacks the model, so the store stays built-in.
	if code, _, errs := run(t, bg, "", "reindex", "--data-dir", dir); code != 1 || !strings.Contains(errs, "already uses builtin") {
		t.Fatalf("reindex before the pull: %d %s", code, errs)
	}
	code, sout, errs := run(t, bg, "", "pull", "--data-dir", dir)
	if code != 0 || !strings.Contains(errs, "the running daemon pulls nomic-embed-text") || !strings.Contains(errs, "100%") ||
		!strings.Contains(errs, "274.3 MB") || !strings.Contains(sout, "nomic-embed-text is ready") {
		t.Fatalf("pull through the daemon: %d %q %q", code, sout, errs)
	}
	code, sout, errs = run(t, bg, "", "reindex", "--data-dir", dir)
	if code != 0 || !strings.Contains(errs, "the running daemon re-embeds every memory with ollama:nomic-embed-text") ||
		!strings.Contains(errs, "100% 3/3") || !strings.Contains(sout, "re-embedded 3 memories with ollama:nomic-embed-text") {
		t.Fatalf("reindex through the daemon: %d %q %q", code, sout, errs)
	}
	if code, sout, _ := run(t, bg, "", "stats", "--data-dir", dir); code != 0 || !strings.Contains(sout, "embedder:   ollama:nomic-embed-text") {
		t.Fatalf("stats after the switch: %s", sout)
	}
	if code, sout, errs := run(t, bg, "", "search", "--data-dir", dir, "which Postgres version"); code != 0 || !strings.Contains(sout, "16.4") {
		t.Fatalf("search after the switch: %d %s %s", code, sout, errs)
	}
	code, sout, errs = run(t, bg, "", "reindex", "--data-dir", dir, "--embedder", "builtin")
	if code != 0 || !strings.Contains(sout, "re-embedded 3 memories with builtin-wordvec-v1") {
		t.Fatalf("reindex back to builtin: %d %q %q", code, sout, errs)
	}
}
