package ingest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestRelabelEarlier: a session ingested with no project, then again with
// one (its history now resolves to a project), files the memories the
// first run of each turn stored under the project, and stores and
// reinforces nothing again. A memory of no project that another session
// stored with the same text is not the turn's, and stays as it is.
func TestRelabelEarlier(t *testing.T) {
	const (
		para1 = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
		para2 = "The importer in `import/rows.go` skips rows with an empty `customer_id` column before it validates the remaining ones."
	)
	ctx := context.Background()
	p, st := newSeenFixture(t, memory.FixedClock{T: t0})
	turnOf := transcriptTurn
	// Another session of no project says the importer's statement too.
	if _, _, err := p.ProcessTurn(ctx, turnOf("other", "", "what does the importer skip", para2), nil, SessionState{Ended: true}); err != nil {
		t.Fatal(err)
	}
	first, _, err := p.ProcessTurn(ctx, turnOf("csv", "", "look at the csv code", para1, "Let me read the importer.", para2), nil, SessionState{Ended: true})
	if err != nil || first.Verdict != memory.VerdictStored {
		t.Fatalf("first run: %s %s %v", first.Verdict, first.Reason, err)
	}
	again, _, err := p.ProcessTurn(ctx, turnOf("csv", "shop", "look at the csv code", para1, "Let me read the importer.", para2), nil, SessionState{Ended: true})
	if err != nil || again.Stage != StageReplay || !strings.Contains(again.Reason, "1 of its memories filed under shop") {
		t.Fatalf("run with the project: %s at %s (%s) %v; want a replay filing the memory it stored", again.Verdict, again.Stage, again.Reason, err)
	}
	want := map[string]string{"export/csv.go": "shop", "import/rows.go": ""}
	if n := st.Count(); n != len(want) {
		t.Errorf("%d memories, want %d", n, len(want))
	}
	if err := st.Iterate(ctx, store.Filter{IncludeSuperseded: true}, func(m memory.Memory) error {
		for text, project := range want {
			if strings.Contains(m.Text, text) && m.Project != project {
				t.Errorf("%q: project %q, want %q", preview(m.Text), m.Project, project)
			}
		}
		if strings.Contains(m.Text, "export/csv.go") && m.ReinforcedCount != 0 {
			t.Errorf("%q reinforced %d times, want 0 (the same turn read again)", preview(m.Text), m.ReinforcedCount)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Read again with the project: the first run's marks still answer.
	third, _, err := p.ProcessTurn(ctx, turnOf("csv", "shop", "look at the csv code", para1, "Let me read the importer.", para2), nil, SessionState{Ended: true})
	if err != nil || third.Stage != StageReplay {
		t.Errorf("third run: %s at %s %v", third.Verdict, third.Stage, err)
	}
}

// TestRelabelMonthsLater: a session ingested with no project and read
// again with its project past store.TurnMarkTTL (a history imported, the
// repository cloned months later) still files what its first run stored
// under the project, and stores nothing again: the first run's marks of
// memories of no project last (store: lastingMark). A turn of a project
// read again that late is distilled again as before (its memory
// reinforced), and a turn whose memory was deleted meanwhile stores it
// anew under the project.
func TestRelabelMonthsLater(t *testing.T) {
	const para = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
	tests := []struct {
		name         string
		first        string // the first run's project
		later        time.Duration
		deleteMemory bool
		wantStage    string // of the second run's decision ("" any but replay)
		wantRefiled  int
		wantReinf    int
	}{
		{"31 days later", "", store.TurnMarkTTL + 24*time.Hour, false, StageReplay, 1, 0},
		{"400 days later", "", 400 * 24 * time.Hour, false, StageReplay, 1, 0},
		{"within the TTL", "", 24 * time.Hour, false, StageReplay, 1, 0},
		{"a project's turn 31 days later", "shop", store.TurnMarkTTL + 24*time.Hour, false, "", 0, 1},
		{"its memory deleted", "", store.TurnMarkTTL + 24*time.Hour, true, "", 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			clock := &stepClock{t: t0}
			p, st := newSeenFixture(t, clock)
			turnOf := func(project string) Turn { return transcriptTurn("csv", project, "look at the csv code", para) }
			first, _, err := p.ProcessTurn(ctx, turnOf(tc.first), nil, SessionState{Ended: true})
			if err != nil || first.Verdict != memory.VerdictStored {
				t.Fatalf("first run: %s %s %v", first.Verdict, first.Reason, err)
			}
			if tc.deleteMemory {
				if err := st.Delete(ctx, first.MemoryIDs[0]); err != nil {
					t.Fatal(err)
				}
			}
			clock.mu.Lock()
			clock.t = clock.t.Add(tc.later)
			clock.mu.Unlock()
			again, _, err := p.ProcessTurn(ctx, turnOf("shop"), nil, SessionState{Ended: true})
			if err != nil {
				t.Fatal(err)
			}
			if (tc.wantStage == StageReplay) != (again.Stage == StageReplay) || again.Refiled != tc.wantRefiled {
				t.Errorf("second run: %s at %s (%s), re-filed %d; want stage %q, re-filed %d", again.Verdict, again.Stage, again.Reason, again.Refiled, tc.wantStage, tc.wantRefiled)
			}
			if n := st.Count(); n != 1 {
				t.Errorf("%d memories, want 1", n)
			}
			m, ok, err := st.FindByHash(ctx, memory.ContentHash(para), "shop")
			if err != nil || !ok {
				t.Fatalf("no memory of shop holds the text (%v)", err)
			}
			if m.ReinforcedCount != tc.wantReinf {
				t.Errorf("reinforced %d times, want %d", m.ReinforcedCount, tc.wantReinf)
			}
			// Read again once more, later still: the turn's marks under
			// its project answer (the relabel copied them there).
			third, _, err := p.ProcessTurn(ctx, turnOf("shop"), nil, SessionState{Ended: true})
			if err != nil || third.Stage != StageReplay || st.Count() != 1 {
				t.Errorf("third run: %s at %s (%s), %d memories %v; want a replay", third.Verdict, third.Stage, third.Reason, st.Count(), err)
			}
		})
	}
}

// newSeenFixture is a pipeline with the seen-a embedder on a store on disk
// whose clock is clock.
func newSeenFixture(t *testing.T, clock memory.Clock) (*Pipeline, *store.Store) {
	t.Helper()
	emb := &seenEmbedder{model: "seen-a"}
	st, err := store.Open(context.Background(), store.Options{Dir: t.TempDir(), Model: emb.model, Dim: seenDim, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := New(Options{Config: config.Default().Ingest, Embedder: emb, Store: st, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return p, st
}

// transcriptTurn is the first turn of session, read from a transcript of
// project: the user's prompt, then texts.
func transcriptTurn(session, project, prompt string, texts ...string) Turn {
	exs := sessionOf(session, prompt, texts...)
	for i := range exs {
		exs[i].Project, exs[i].Source = project, memory.SourceTranscript
	}
	return GroupTurns(exs)[0]
}
