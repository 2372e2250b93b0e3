package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
)

// TestDamagedVectorRepairedAtStart: a memory whose stored vector a flipped
// disk sector made NaN is embedded anew when the daemon starts (it has
// the store's embedder), so it is found by meaning again and the store has
// nothing left to warn about.
func TestDamagedVectorRepairedAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := testConfig(t)
	d := openAt(t, cfg, nil)
	text := "the billing service retries webhooks with exponential backoff"
	vecs, err := d.emb.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.store.Put(ctx, memory.Memory{Text: text, Embedding: vecs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	nanStoredVector(t, cfg, vecs[0])
	// What a daemon without the repair would serve: the warning.
	st, err := store.Open(ctx, store.Options{Dir: filepath.Join(cfg.DataDir, StoreDir)})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(st.Info().Warnings, "\n"); !strings.Contains(w, "1 memory has a damaged vector") {
		t.Fatalf("the damaged vector is not reported: %q", w)
	}
	st.Close()

	d2 := openAt(t, cfg, nil)
	if w := d2.store.Info().Warnings; len(w) != 0 {
		t.Errorf("warnings after the start: %q", w)
	}
	hits, err := d2.store.VectorSearch(ctx, vecs[0], 1, store.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != m.ID || math.Abs(float64(hits[0].Score)-1) > 1e-3 {
		t.Errorf("vector search = %+v, %v: want %s, scored 1", hits, err, m.ID)
	}
}

// nanStoredVector writes NaN over the last number of vec where the closed
// daemon's records file holds it (once, contiguously).
func nanStoredVector(t *testing.T, cfg config.Config, vec []float32) {
	t.Helper()
	var packed []byte
	for _, f := range vec {
		packed = binary.LittleEndian.AppendUint32(packed, math.Float32bits(f))
	}
	path := filepath.Join(cfg.DataDir, StoreDir, "memtray.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := bytes.Index(b, packed)
	if at < 0 || bytes.Count(b, packed) != 1 {
		t.Fatal("the vector is not stored once, contiguously, in the records file")
	}
	binary.LittleEndian.PutUint32(b[at+len(packed)-4:], math.Float32bits(float32(math.NaN())))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedVectorRepairedWhenEmbedderAnswers: the daemon's Ollama
// answers at start (it lists and probes the model) but fails the repair's
// embedding (HTTP 500, a model that will not load); the memory keeps its
// warning, and once Ollama embeds again the daemon, still running, repairs
// it: found by meaning, no warning left.
func TestDamagedVectorRepairedWhenEmbedderAnswers(t *testing.T) {
	defer func(d time.Duration) { vectorRepairRetry = d }(vectorRepairRetry)
	vectorRepairRetry = 10 * time.Millisecond
	ctx := context.Background()
	text := "the billing service retries webhooks with exponential backoff"
	fake := newFakeOllama(t, 24, "nomic-embed-text:latest")
	// A real HTTP server in front of the fake: while down is set, it fails
	// every embedding of the damaged memory's text; the rest passes through.
	var down atomic.Bool
	var refused atomic.Int32
	cfg := ollamaConfig(t, failingOllama(t, fake, text, &down, &refused))
	cfg.Embedder.Provider = "ollama"
	d := openAt(t, cfg, nil)
	vecs, err := d.emb.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	m, err := d.store.Put(ctx, memory.Memory{Text: text, Embedding: vecs[0]})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	nanStoredVector(t, cfg, vecs[0])

	down.Store(true)
	d2 := openAt(t, cfg, nil)
	if !strings.HasPrefix(d2.emb.Model(), "ollama:") {
		t.Fatalf("the daemon embeds with %s, want the store's Ollama model", d2.emb.Model())
	}
	polltest.Wait(t, "a retry refused while the embedder fails", func() bool { return refused.Load() >= 3 },
		func() string { return fmt.Sprintf("%d refused", refused.Load()) })
	if w := strings.Join(d2.store.Info().Warnings, "\n"); !strings.Contains(w, "1 memory has a damaged vector") {
		t.Fatalf("while the embedder fails, warnings %q: want the damaged vector's", w)
	}
	down.Store(false)
	polltest.Wait(t, "the repair once the embedder answers", func() bool { return len(d2.store.Info().Warnings) == 0 },
		func() string { return fmt.Sprintf("%q", d2.store.Info().Warnings) })
	hits, err := d2.store.VectorSearch(ctx, vecs[0], 1, store.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != m.ID || math.Abs(float64(hits[0].Score)-1) > 1e-3 {
		t.Errorf("vector search = %+v, %v: want %s, scored 1", hits, err, m.ID)
	}
}

// TestImportWithoutVectorRepaired: an export file holding a memory
// without its vector (version 2: damaged where it was exported), imported
// while the daemon's embedder fails on its text, is kept (at 4c30b9e the
// import failed): found by its words, named by the store's warning, and
// embedded by the daemon, still running, once the embedder answers.
func TestImportWithoutVectorRepaired(t *testing.T) {
	defer func(d time.Duration) { vectorRepairRetry = d }(vectorRepairRetry)
	vectorRepairRetry = 10 * time.Millisecond
	ctx := context.Background()
	text := "the invoice exporter batches rows by customer before it writes the csv"
	fake := newFakeOllama(t, 24, "nomic-embed-text:latest")
	var down atomic.Bool
	cfg := ollamaConfig(t, failingOllama(t, fake, "invoice exporter", &down, nil))
	cfg.Embedder.Provider = "ollama"
	down.Store(true)
	d := openAt(t, cfg, nil)
	info := d.store.Info()
	// The export file, as `memtray export` writes one whose record's
	// stored vector was damaged.
	file := filepath.Join(t.TempDir(), "export.jsonl")
	at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC).Format(time.RFC3339)
	lines := []string{
		fmt.Sprintf(`{"format":"memtray-export","version":2,"embedding_model":%q,"dim":%d,"count":1,"exported_at":%q,"without_vector":1}`, info.Model, info.Dim, at),
		fmt.Sprintf(`{"id":"invoice-exporter","text":%q,"kind":"fact","type":"project","project":"billing","importance":0.5,"created_at":%q,"updated_at":%q,"embedding_damaged":true}`, text, at, at),
		`{"end":true,"count":1}`,
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := d.Services().Memories.Import(ctx, f)
	if err != nil || rep.Imported != 1 || rep.KeptWithoutVector != 1 {
		t.Fatalf("Import = %+v, %v: want the memory imported, kept without its vector", rep, err)
	}
	if w := strings.Join(d.store.Info().Warnings, "\n"); !strings.Contains(w, "1 memory has a damaged vector") {
		t.Fatalf("after the import, warnings %q: want the memory's", w)
	}
	if m, err := d.store.Get(ctx, "invoice-exporter"); err != nil || m.Text != text || m.Project != "billing" {
		t.Fatalf("the imported memory: %+v, %v", m, err)
	}
	down.Store(false)
	polltest.Wait(t, "the repair once the embedder answers", func() bool { return len(d.store.Info().Warnings) == 0 },
		func() string { return fmt.Sprintf("%q", d.store.Info().Warnings) })
	vecs, err := d.emb.Embed(ctx, []string{text})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := d.store.VectorSearch(ctx, vecs[0], 1, store.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != "invoice-exporter" {
		t.Errorf("vector search = %+v, %v: want the imported memory", hits, err)
	}
}

// failingOllama is a real HTTP server in front of fake, returning its URL:
// while down is set, it fails every embedding request whose body holds
// part as Ollama fails one it cannot run (500, {"error": ...}), counting
// them in refused (when not nil); every other request passes through.
func failingOllama(t *testing.T, fake *ollamafake.Server, part string, down *atomic.Bool, refused *atomic.Int32) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/embed" && down.Load() {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(part)) {
				if refused != nil {
					refused.Add(1)
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"error":"llama runner process has terminated: signal: killed"}`)
				return
			}
		}
		fake.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
