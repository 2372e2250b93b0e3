package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/embed/openaifake"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// TestReembedToOpenAI switches a store of the built-in model to a model of
// an OpenAI-compatible server (with a key from the environment) through
// the real switch path: the Settings test (GET /api/embedder with a
// query), POST /api/embedder/reembed, the job to its end; every memory
// then holds the server's vector, the config file names the server and
// the key's variable but not the key, and a restart reopens the server's
// model (or starts degraded when it is down).
func TestReembedToOpenAI(t *testing.T) {
	ctx := context.Background()
	const keyEnv, key = "MEMTRAY_TEST_EMBED_KEY", "sk-test-not-a-real-key"
	t.Setenv(keyEnv, key)
	f := openaifake.New(t, openaifake.Options{Dim: 24, Key: key, Models: []string{"voyage-4-nano", "chat-model"}})
	cfgPath := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgPath, []byte("{\"recall\": {\"k\": 5}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	d, addr := serveWith(t, Options{Config: cfg, Version: "test", ConfigPath: cfgPath})
	c := httpapi.NewClient(addr, d.Token())
	texts := seed(t, d, 60)

	// Nothing configured: nothing asked.
	info, err := c.EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	if err != nil || info.OpenAI.Checked || info.OpenAI.URL != config.DefaultOpenAIURL || len(f.Requests()) != 0 {
		t.Fatalf("info = %+v, %v; %d requests", info.OpenAI, err, len(f.Requests()))
	}
	// The Settings test.
	q := httpapi.EmbedderQuery{OpenAIURL: f.URL(), OpenAIModel: "voyage-4-nano", OpenAIKeyEnv: keyEnv}
	info, err = c.EmbedderInfo(ctx, q)
	if err != nil || !info.OpenAI.Checked || !info.OpenAI.Reachable || info.OpenAI.Dim != 24 || info.OpenAI.Error != "" ||
		len(info.OpenAI.Models) != 2 || info.OpenAI.KeyEnv != keyEnv {
		t.Fatalf("test = %+v, %v", info.OpenAI, err)
	}
	q.OpenAIKeyEnv = ""
	if info, err = c.EmbedderInfo(ctx, q); err != nil || !info.OpenAI.Reachable || !strings.Contains(info.OpenAI.Error, "not authorized") {
		t.Fatalf("test without the key = %+v, %v", info.OpenAI, err)
	}

	// Bad switches fail the request, naming the field.
	var fe *httpapi.FieldErrors
	for field, req := range map[string]httpapi.ReembedRequest{
		"model":          {Provider: "openai", OpenAIURL: f.URL()},
		"openai_key_env": {Provider: "openai", Model: "voyage-4-nano", OpenAIKeyEnv: "sk-live-123"},
		"openai_url":     {Provider: "openai", Model: "voyage-4-nano", OpenAIURL: "localhost:8080"},
		"dimensions":     {Provider: "openai", Model: "voyage-4-nano", Dimensions: -4},
		"provider":       {Provider: "builtin", OpenAIURL: f.URL()},
	} {
		if _, err := c.Reembed(ctx, req); !errors.As(err, &fe) || fe.Fields[field] == "" {
			t.Errorf("Reembed(%+v) = %v, want a field error on %s", req, err, field)
		}
	}
	if _, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "openai", Model: "nope", OpenAIURL: f.URL(), OpenAIKeyEnv: keyEnv}); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("unknown model: %v, want ErrNotFound", err)
	}

	job, err := c.Reembed(ctx, httpapi.ReembedRequest{Provider: "openai", Model: "voyage-4-nano", OpenAIURL: f.URL(), OpenAIKeyEnv: keyEnv})
	if err != nil {
		t.Fatal(err)
	}
	const model = "openai:voyage-4-nano"
	if job.Target != model {
		t.Fatalf("job = %+v", job)
	}
	final, err := c.WaitJob(ctx, job.ID, 5*time.Millisecond, nil)
	if err != nil || final.State != httpapi.JobDone || !strings.Contains(final.Result, "re-embedded 60 memories with "+model) {
		t.Fatalf("final = %+v, %v", final, err)
	}
	info, err = c.EmbedderInfo(ctx, httpapi.EmbedderQuery{})
	if err != nil || info.Model != model || info.StoreModel != model || info.Dim != 24 || info.Provider != "openai" ||
		!strings.Contains(info.Reason, "switched") || !info.OpenAI.Checked || info.OpenAI.Dim != 24 || info.ConfiguredProvider != "openai" {
		t.Fatalf("after the switch: %+v, %v", info, err)
	}
	ref, err := embed.NewOpenAI(embed.OpenAIOptions{URL: f.URL(), Model: "voyage-4-nano", KeyEnv: keyEnv})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Add(ctx, httpapi.AddRequest{Text: "Added after the switch: the nightly export runs at 02:00 UTC."}); err != nil {
		t.Fatal(err)
	}
	checkVectors(t, allMemories(t, d), ref)
	hits, err := c.Search(ctx, httpapi.SearchRequest{Query: texts[4], Mode: "vector", K: 1})
	if err != nil || len(hits) != 1 || hits[0].Memory.Text != texts[4] {
		t.Fatalf("vector search after the switch = %+v, %v", hits, err)
	}

	// Saved: the server and the key's name, never the key; the file's own
	// fields stay.
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Recall   map[string]any `json:"recall"`
		Embedder map[string]any `json:"embedder"`
	}
	if err := json.Unmarshal(data, &file); err != nil || file.Embedder["provider"] != "openai" || file.Embedder["openai_model"] != "voyage-4-nano" ||
		file.Embedder["openai_url"] != f.URL() || file.Embedder["openai_key_env"] != keyEnv || file.Recall["k"] != float64(5) || strings.Contains(string(data), key) {
		t.Fatalf("config file = %s (%v)", data, err)
	}

	// A restart on the saved config reopens the server's model; with the
	// server down it starts degraded on the same model.
	saved, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	saved.DataDir, saved.Listen = cfg.DataDir, cfg.Listen
	saved.Capture.Transcripts = cfg.Capture.Transcripts
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(ctx, Options{Config: saved})
	if err != nil {
		t.Fatal(err)
	}
	if d2.Embedder().Model() != model || d2.EmbedderChoice().Provider != "store" || d2.Embedder().Dim() != 24 {
		t.Fatalf("after a restart: %s (%+v)", d2.Embedder().Model(), d2.EmbedderChoice())
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d3, err := Open(ctx, Options{Config: saved})
	if err != nil {
		t.Fatal(err)
	}
	defer d3.Close()
	if d3.Embedder().Model() != model || d3.Embedder().Dim() != 24 || !d3.embedderDegraded() {
		t.Fatalf("with the server down: %s dim %d degraded %v", d3.Embedder().Model(), d3.Embedder().Dim(), d3.embedderDegraded())
	}
}
