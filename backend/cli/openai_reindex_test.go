package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/embed/openaifake"
)

// TestReindexOpenAI: `memtray reindex --embedder openai` moves a store to
// an OpenAI-compatible server's model, by itself and through a running
// daemon, and back to the built-in model.
func TestReindexOpenAI(t *testing.T) {
	bg := context.Background()
	f := openaifake.New(t, openaifake.Options{Dim: 12})
	texts := []string{"The ledger service pins Postgres 16.4.", "Deploys go through the canary stage first.", "Logs rotate daily at 03:00 UTC."}
	toOpenAI := []string{"--embedder", "openai", "--openai-url", f.URL(), "--openai-model", "voyage-4-nano"}

	t.Run("local", func(t *testing.T) {
		dir := isolate(t)
		for _, text := range texts {
			if code, _, errs := run(t, bg, "", "add", "--data-dir", dir, text); code != 0 {
				t.Fatalf("add: %s", errs)
			}
		}
		code, sout, errs := run(t, bg, "", append([]string{"reindex", "--data-dir", dir}, toOpenAI...)...)
		if code != 0 || !strings.Contains(sout, "reindexed 3 memories with openai:voyage-4-nano") {
			t.Fatalf("reindex: %d %q %q", code, sout, errs)
		}
		if code, _, errs := run(t, bg, "", "reindex", "--data-dir", dir, "--embedder", "openai", "--openai-url", f.URL()); code == 0 ||
			!strings.Contains(errs, "openai_model") {
			t.Fatalf("reindex without a model: %d %q", code, errs)
		}
		code, sout, errs = run(t, bg, "", "reindex", "--data-dir", dir, "--embedder", "builtin")
		if code != 0 || !strings.Contains(sout, "reindexed 3 memories with builtin-") {
			t.Fatalf("reindex back: %d %q %q", code, sout, errs)
		}
	})

	t.Run("through the daemon", func(t *testing.T) {
		dir := isolate(t)
		serveUntilEnd(t, dir)
		for _, text := range texts {
			if code, _, errs := run(t, bg, "", "add", "--data-dir", dir, text); code != 0 {
				t.Fatalf("add: %s", errs)
			}
		}
		code, sout, errs := run(t, bg, "", append([]string{"reindex", "--data-dir", dir}, toOpenAI...)...)
		if code != 0 || !strings.Contains(errs, "the running daemon re-embeds every memory with openai:voyage-4-nano") ||
			!strings.Contains(sout, "re-embedded 3 memories with openai:voyage-4-nano") {
			t.Fatalf("reindex through the daemon: %d %q %q", code, sout, errs)
		}
		if code, sout, _ := run(t, bg, "", "stats", "--data-dir", dir); code != 0 || !strings.Contains(sout, "openai:voyage-4-nano") {
			t.Fatalf("stats after the switch: %s", sout)
		}
		if code, sout, errs := run(t, bg, "", "search", "--data-dir", dir, "which Postgres version"); code != 0 || !strings.Contains(sout, "16.4") {
			t.Fatalf("search after the switch: %d %s %s", code, sout, errs)
		}
		code, sout, errs = run(t, bg, "", "reindex", "--data-dir", dir, "--embedder", "builtin")
		if code != 0 || !strings.Contains(sout, "re-embedded 3 memories with builtin-") {
			t.Fatalf("reindex back to builtin: %d %q %q", code, sout, errs)
		}
	})
}

// TestReindexOpenAINeedsModel: `reindex --embedder openai` without a model
// asks for --openai-model; it blamed the config file's
// embedder.openai_model, which the user had not written. With the model in
// the config the flag is not needed.
func TestReindexOpenAINeedsModel(t *testing.T) {
	bg := context.Background()
	dir := isolate(t)
	code, _, errs := run(t, bg, "", "reindex", "--data-dir", dir, "--embedder", "openai")
	if code != 2 || !strings.Contains(errs, "--openai-model NAME") || strings.Contains(errs, "invalid config") {
		t.Fatalf("reindex --embedder openai without a model: %d %q", code, errs)
	}
	cfg := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(cfg, []byte(`{"embedder":{"openai_model":"voyage-4-nano","openai_url":"http://127.0.0.1:1/v1"}}`), 0o600)
	code, _, errs = run(t, bg, "", "reindex", "--data-dir", dir, "--config", cfg, "--embedder", "openai")
	if code == 0 || strings.Contains(errs, "--openai-model NAME") {
		t.Fatalf("reindex with the model in the config (a server that is not there): %d %q", code, errs)
	}
}
