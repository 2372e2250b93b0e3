package daemon

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/tail"
)

// counts are what a memory's signal is made of.
type counts struct{ reinforced, accessed int }

func memoryCounts(t testing.TB, st *store.Store) map[string]counts {
	t.Helper()
	out := map[string]counts{}
	if err := st.Iterate(context.Background(), store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		out[m.Text] = counts{m.ReinforcedCount, m.AccessCount}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTranscriptTurnDeliveredTwice: the turns of a session file stored
// once come again, as when a kill lands after they were stored and before
// the tailer saved its cursor and the session's fingerprints (the file is
// read again from the start at the next start), delivered by two hooks at
// once: one set of memories, no reinforcement, no second decision in the
// feed. Before turn marks, every memory of the file was reinforced.
func TestTranscriptTurnDeliveredTwice(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	root := t.TempDir()
	cfg.Capture.Transcripts.ClaudeCodeDirs = []string{root}
	r := newTranscriptRig(t, cfg)
	r.write(len(r.lines))
	r.hook(tail.EventSessionEnd)
	before := memoryCounts(t, r.d.store)
	decided := len(r.d.decisions.Newest(1000))
	if len(before) == 0 || decided == 0 {
		t.Fatalf("the session stored %d memories in %d decisions: the fixture should store some", len(before), decided)
	}
	r.d.Close()
	// What a kill before the tailer's saves leaves: no cursor, no
	// fingerprints.
	for _, sub := range []string{"cursors", "sessions"} {
		dir := filepath.Join(cfg.DataDir, TranscriptsDir, sub)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	r.serveAgain()
	done := r.d.tail.Stats().Processed
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if _, err := r.cl.CaptureTranscript(context.Background(), httpapi.TranscriptRequest{Path: r.path, Event: tail.EventSessionEnd,
				SessionID: "7d1f6c2e-0b5a-4c39-9a7e-tail00000001", CWD: "/home/dev/src/ledgerd"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r.waitProcessed(done + 1)
	if st := r.d.tail.Stats(); st.Turns == 0 {
		t.Fatalf("the file was not read again: %+v", st)
	}
	after := memoryCounts(t, r.d.store)
	if len(after) != len(before) {
		t.Errorf("%d memories after the second delivery, want %d", len(after), len(before))
	}
	for text, c := range after {
		if b, ok := before[text]; !ok || c != b {
			t.Errorf("memory %q: reinforced %d, accessed %d after the second delivery; before %+v", text, c.reinforced, c.accessed, b)
		}
	}
	if n := len(r.d.decisions.Newest(1000)); n != decided {
		t.Errorf("%d decisions after the second delivery, want the first %d", n, decided)
	}
}
