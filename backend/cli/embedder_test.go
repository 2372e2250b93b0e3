package cli

import (
	"bytes"
	"context"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"strings"
	"testing"
	"time"
)

// ollamaForCLI is a fake Ollama (package ollamafake) with a chat model
// only: its pull of nomic-embed-text streams the recorded pull, a line
// every 10 ms, and then has the model; vectors have 12 dimensions.
func ollamaForCLI(t *testing.T) *ollamafake.Server {
	t.Helper()
	f := ollamafake.New(t, ollamafake.Options{Models: []string{"llama3.2:latest"}, Dim: 12})
	f.Set(func(k *ollamafake.Knobs) { k.PullDelay = 10 * time.Millisecond })
	return f
}

// TestRemotePullAndReindex: with a daemon running, `memtray pull` and
// `memtray reindex` have the daemon do the work, with the same progress
// bars on stderr, and the daemon switches models without stopping.
func TestRemotePullAndReindex(t *testing.T) {
	dir := isolate(t)
	t.Setenv("OLLAMA_HOST", ollamaForCLI(t).URL())
	serveUntilEnd(t, dir)
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
	// On a terminal: the bars.
	code, sout, errs := runTTY(t, bg, "pull", "--data-dir", dir)
	if code != 0 || !strings.Contains(errs, "the running daemon pulls nomic-embed-text") || !strings.Contains(errs, "100%") ||
		!strings.Contains(errs, "274.3 MB") || !strings.Contains(sout, "nomic-embed-text is ready") {
		t.Fatalf("pull through the daemon: %d %q %q", code, sout, errs)
	}
	// Not on a terminal (a log, a pipe): the statuses, no bar.
	code, sout, errs = run(t, bg, "", "pull", "--data-dir", dir)
	if code != 0 || strings.Contains(errs, "\r") || strings.Contains(errs, "100%") || !strings.Contains(errs, "success\n") || !strings.Contains(sout, "is ready") {
		t.Fatalf("pull through the daemon into a log: %d %q %q", code, sout, errs)
	}
	code, sout, errs = runTTY(t, bg, "reindex", "--data-dir", dir)
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

// ttyBuffer is a buffer that passes for a terminal: the progress bars draw
// only on one.
type ttyBuffer struct{ bytes.Buffer }

func (*ttyBuffer) IsTerminal() bool { return true }

// runTTY is run with stderr on a terminal.
func runTTY(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out bytes.Buffer
	var errb ttyBuffer
	code := Run(&Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Ctx: ctx}, args)
	return code, out.String(), errb.String()
}
