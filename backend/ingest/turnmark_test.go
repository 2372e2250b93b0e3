package ingest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// failingEmbedder is a seenEmbedder that refuses, once, to embed a text
// containing fail: the embedder going away in the middle of a turn.
type failingEmbedder struct {
	seenEmbedder
	fail   string
	failed bool
}

var errEmbedderGone = errors.New("embedder went away")

func (e *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	for _, t := range texts {
		if !e.failed && e.fail != "" && strings.Contains(t, e.fail) {
			e.failed = true
			return nil, errEmbedderGone
		}
	}
	return e.seenEmbedder.Embed(ctx, texts)
}

// TestTurnRunAgain: a captured turn run again stores each of its
// statements once and reinforces none. A turn whose second statement
// fails (after the store switched models, embedding it again fails: the
// first statement is stored by then) is run again by its capture path:
// the first statement is not placed again as its own duplicate. A turn
// decided whole and read again (a hook and the watcher, a transcript
// rewritten) is skipped entirely (StageReplay). Before turn marks, both
// second runs reinforced the stored statements (verdict skipped-duplicate).
func TestTurnRunAgain(t *testing.T) {
	const (
		para1 = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
		para2 = "The importer in `import/rows.go` skips rows with an empty `customer_id` column before it validates the remaining ones."
	)
	tests := []struct {
		name      string
		failFirst bool // the first run fails on the second statement
	}{
		{"second statement fails, run again", true},
		{"whole turn decided, read again", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			a := &seenEmbedder{model: "seen-a", base: 0}
			b := &failingEmbedder{seenEmbedder: seenEmbedder{model: "seen-b", base: 10}}
			st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: a.model, Dim: seenDim, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			sw := embed.NewSwappable(a)
			cfg := config.Default().Ingest
			p, err := New(Options{Config: cfg, Embedder: sw, Store: st, Clock: memory.FixedClock{T: t0}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.failFirst {
				// A to B once the turn's statements are embedded with A:
				// each is embedded again with B, which fails on the second.
				b.fail = "import/rows.go"
				switched := false
				a.after = func([]string) {
					if switched {
						return
					}
					switched = true
					if err := st.ReembedWith(ctx, b, store.ReembedOptions{Switched: func() { sw.Swap(b) }}); err != nil {
						t.Errorf("reembed with %s: %v", b.Model(), err)
					}
				}
			}
			turn := GroupTurns(sessionOf("again", "look at the csv code", para1, "Let me read the importer.", para2))[0]
			first, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{})
			switch {
			case tc.failFirst && !errors.Is(err, errEmbedderGone):
				t.Fatalf("first run: %v (decision %s %s), want the embedder's failure", err, first.Verdict, first.Reason)
			case !tc.failFirst && err != nil:
				t.Fatalf("first run: %v", err)
			}
			if tc.failFirst && st.Count() != 1 {
				t.Fatalf("after the failed run %d memories, want the first statement stored", st.Count())
			}
			again, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{})
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			if tc.failFirst && again.Verdict != memory.VerdictStored {
				t.Errorf("second run verdict %s at %s (%s), want stored (what the two runs did)", again.Verdict, again.Stage, again.Reason)
			}
			if !tc.failFirst && (again.Stage != StageReplay || again.Verdict != memory.VerdictDuplicate) {
				t.Errorf("second run of a decided turn: %s at stage %s, want %s at %s", again.Verdict, again.Stage, memory.VerdictDuplicate, StageReplay)
			}
			if len(again.MemoryIDs) != 2 {
				t.Errorf("second run names memories %v, want both statements'", again.MemoryIDs)
			}
			if n := st.Count(); n != 2 {
				t.Errorf("%d memories, want 2", n)
			}
			if err := st.Iterate(ctx, store.Filter{}, func(m memory.Memory) error {
				if m.ReinforcedCount != 0 || m.AccessCount != 0 || m.Superseded() {
					t.Errorf("memory %q: reinforced %d, accessed %d, superseded %v: want stored once", preview(m.Text), m.ReinforcedCount, m.AccessCount, m.Superseded())
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// A third run finds the turn decided.
			third, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{})
			if err != nil || third.Stage != StageReplay {
				t.Errorf("third run: stage %s, err %v; want %s", third.Stage, err, StageReplay)
			}
		})
	}
}

// TestTurnRunTwiceAtOnce: two runs of one turn at the same time (two
// capture paths handing it over at once) store it once: the second,
// waiting for the write lock, finds the turn decided and reinforces
// nothing.
func TestTurnRunTwiceAtOnce(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	turn := GroupTurns(sessionOf("atonce", "look at the csv code",
		"The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons.",
		"Let me read the importer.",
		"The importer in `import/rows.go` skips rows with an empty `customer_id` column before it validates the remaining ones."))[0]
	var wg sync.WaitGroup
	decs := make([]memory.Decision, 2)
	for i := range decs {
		wg.Go(func() {
			d, _, err := f.p.ProcessTurn(ctx, turn, nil, SessionState{})
			if err != nil {
				t.Error(err)
			}
			decs[i] = d
		})
	}
	wg.Wait()
	replays := 0
	for _, d := range decs {
		if d.Stage == StageReplay {
			replays++
		}
	}
	if replays != 1 {
		t.Errorf("decisions at %s and %s, want one replay", decs[0].Stage, decs[1].Stage)
	}
	if err := f.st.Iterate(ctx, store.Filter{}, func(m memory.Memory) error {
		if m.ReinforcedCount != 0 {
			t.Errorf("memory %q reinforced %d times by a run of the same turn", preview(m.Text), m.ReinforcedCount)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := f.st.Count(); n != 2 {
		t.Errorf("%d memories, want 2", n)
	}
}
