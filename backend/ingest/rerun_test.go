package ingest

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
)

// TestRerunChangesNothing: a session ingested twice into the same store,
// the second time by a new pipeline (a second `memtray ingest`), is
// replayed turn by turn (StageReplay) and leaves every memory as it was,
// whatever the first run decided of each turn. At 9937c7b a turn that
// stored nothing was not marked decided: the second run decided it again,
// with the turns before it replayed and so absent from what the session
// said (held.go); a line the first run dropped as said in an earlier turn
// was then stored. A headless turn rejected under the count is the
// exception: its session may grow to the count, so it is decided again.
func TestRerunChangesNothing(t *testing.T) {
	stored := []string{"how do I export a ledger?", "Let me read the CLI.",
		"Export a ledger with `tally export --ledger LEDGER.yaml --out DIR`; each account goes to its own CSV file in DIR, named after the account id."}
	held := []string{"try it on my books", "Let me run it.",
		"Ran it.\n\n- Try it: `tally export --ledger my-books.yaml --out ./reports`\n"}
	narration := []string{"run the tests again", "Let me run them.", "Running the tests now. Done, all of them pass."}
	tests := []struct {
		name     string
		turns    [][]string
		headless bool
		// again is the stage of each turn's second run.
		again []string
	}{
		{"stored, then a line said in an earlier turn", [][]string{stored, held}, false, []string{StageReplay, StageReplay}},
		{"narration only", [][]string{narration}, false, []string{StageReplay}},
		{"stored, then narration", [][]string{stored, narration}, false, []string{StageReplay, StageReplay}},
		{"headless under the count", [][]string{stored}, true, []string{StageHeadless}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			turns := rerunSession("rerun", tc.turns, tc.headless)
			first := ingestTurns(t, f.p, turns)
			before := allMemories(t, f.st)
			again := ingestTurns(t, pipelineOn(t, f), turns)
			for i, d := range again {
				if d.Stage != tc.again[i] {
					t.Errorf("turn %d: first run %s at %s (%s); second run %s at %s (%s), want stage %s",
						i+1, first[i].Verdict, first[i].Stage, first[i].Reason, d.Verdict, d.Stage, d.Reason, tc.again[i])
				}
			}
			if after := allMemories(t, f.st); !reflect.DeepEqual(before, after) {
				t.Errorf("the second run changed the store:\nbefore %s\nafter  %s", texts(before), texts(after))
			}
		})
	}
}

// rerunSession groups one session of turns (each its prompt, then the
// model's texts), headless or not.
func rerunSession(id string, turns [][]string, headless bool) []Turn {
	var exs []memory.Exchange
	for i, tt := range turns {
		for _, ex := range sessionOf(id, tt[0], tt[1:]...) {
			ex.Turn, ex.UserTurns, ex.Headless = len(exs)+1, i+1, headless
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// ingestTurns decides a whole session's turns as `memtray ingest` does:
// an ended session, each turn knowing what the session said after it.
func ingestTurns(t *testing.T, p *Pipeline, turns []Turn) []memory.Decision {
	t.Helper()
	var out []memory.Decision
	for i, tn := range turns {
		d, _, err := p.ProcessTurn(context.Background(), tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true})
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		out = append(out, d)
	}
	return out
}

// pipelineOn returns a new pipeline on f's store and embedder: a second
// process, with nothing of the first one's session records.
func pipelineOn(t testing.TB, f *fixture) *Pipeline {
	t.Helper()
	cfg := config.Default().Ingest
	sc, err := noise.New(context.Background(), noise.Options{Embedder: f.emb, Clock: f.clock, BufferSize: cfg.NoiseBufferSize,
		Recent: cfg.NoiseRecent, RebuildEvery: cfg.NoiseRebuildEvery, Threshold: cfg.ContentThreshold})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Config: cfg, Embedder: f.emb, Store: f.st, Scorer: sc, Clock: f.clock})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// texts lists the memories' texts and states, for a failure message.
func texts(ms []memory.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprintf("%q (reinforced %d, superseded by %q)", preview(m.Text), m.ReinforcedCount, m.SupersededBy)
	}
	return out
}

// BenchmarkRejectedTurn measures a turn that stores nothing (narration
// only, rejected at distill) through the pipeline on a real store: since
// exp-reingest its decided mark is written (one transaction).
func BenchmarkRejectedTurn(b *testing.B) {
	f := newFixture(b, nil)
	t := rerunSession("bench", [][]string{{"run the tests again", "Let me run them.", "Running the tests now. Done, all of them pass."}}, false)[0]
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t.SessionID = fmt.Sprintf("bench-%d", i) // a new turn each time: the same one again is a replay
		d, _, err := f.p.ProcessTurn(ctx, t, nil, SessionState{Ended: true})
		if err != nil || d.Verdict != memory.VerdictRejected {
			b.Fatalf("%s at %s, %v", d.Verdict, d.Stage, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}
