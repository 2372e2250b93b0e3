package ingest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// stepClock tells a time one millisecond later at each call: each store
// transaction stamps what it writes with a time of its own.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond)
	return c.t
}

// newStepFixture is a pipeline on a store whose clock steps (stepClock).
func newStepFixture(t *testing.T) (*Pipeline, *store.Store) {
	t.Helper()
	ctx := context.Background()
	emb := embed.NewBuiltin()
	clock := &stepClock{t: t0}
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: clock})
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

const (
	rideCSV  = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas and semicolons."
	rideRows = "The importer in `import/rows.go` skips rows with an empty `customer_id` column before it validates the remaining ones."
)

// TestTurnMarksRideWrites: a turn's marks are written in the transactions
// of the placements they record (turnmark.go): a turn of one stored
// statement is one transaction, its memory, its outcome and the turn
// decided (their times are the memory's: each transaction stamps a time
// of its own); a statement reinforced is marked in the reinforcement's
// transaction. No pending mark is left, and the turn decided carries the
// decision's verdict.
func TestTurnMarksRideWrites(t *testing.T) {
	tests := []struct {
		name   string
		before []string // stored by another session first
		texts  []string // the turn's statements
		want   memory.Verdict
	}{
		{"one statement", nil, []string{rideCSV}, memory.VerdictStored},
		{"two statements", nil, []string{rideCSV, rideRows}, memory.VerdictStored},
		{"the first stored before", []string{rideCSV}, []string{rideCSV, rideRows}, memory.VerdictStored},
		{"every one stored before", []string{rideCSV}, []string{rideCSV}, memory.VerdictDuplicate},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p, st := newStepFixture(t)
			for i, text := range tc.before {
				turn := GroupTurns(sessionOf("earlier", "look at the code", text))[0]
				turn.Turn = 100 + i
				if _, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{}); err != nil {
					t.Fatal(err)
				}
			}
			texts := []string{tc.texts[0]}
			if len(tc.texts) > 1 {
				texts = append(texts, "Let me read the importer.", tc.texts[1])
			}
			turn := GroupTurns(sessionOf("ride", "look at the csv code", texts...))[0]
			dec, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{})
			if err != nil {
				t.Fatal(err)
			}
			if dec.Verdict != tc.want {
				t.Fatalf("verdict %s (%s), want %s", dec.Verdict, dec.Reason, tc.want)
			}
			marks, err := st.TurnMarks(ctx, turnKey(turn))
			if err != nil {
				t.Fatal(err)
			}
			if len(marks) != len(tc.texts)+1 {
				t.Fatalf("marks %+v, want one per statement and the turn's", marks)
			}
			var last time.Time
			for _, text := range tc.texts {
				mk := marks[memory.ContentHash(text)]
				m, err := st.Get(ctx, mk.MemoryID)
				if err != nil {
					t.Fatalf("statement %q marked %+v: %v", preview(text), mk, err)
				}
				if mk.Outcome == "" || !mk.At.Equal(m.UpdatedAt) {
					t.Errorf("statement %q marked %+v, want its outcome written with its memory (at %v)", preview(text), mk, m.UpdatedAt)
				}
				last = m.UpdatedAt
			}
			if whole := marks[""]; whole.Outcome != string(dec.Verdict) || !whole.At.Equal(last) {
				t.Errorf("turn marked %+v, want %s with the last placement (at %v)", whole, dec.Verdict, last)
			}
		})
	}
}

// TestTurnPendingMarks: a statement a run cut short left marked pending
// is placed as usual when the mark is Atomic (written with the first
// placement: the statement was not placed), and resolved from the store
// when it is not (a store written by the older code, which marked the
// outcome after the placement: the memory holding the text may be the
// run's own). Either way the text is stored once.
func TestTurnPendingMarks(t *testing.T) {
	tests := []struct {
		name       string
		atomic     bool
		storedLast bool // the memory holding the text is newer than the mark (the cut run stored it)
		wantReinf  int
		want       memory.Verdict
	}{
		{"atomic, text stored by another turn", true, false, 1, memory.VerdictDuplicate},
		{"old, text stored by another turn", false, false, 0, memory.VerdictDuplicate},
		{"old, text stored by the cut run", false, true, 0, memory.VerdictStored},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			p, st := newStepFixture(t)
			turn := GroupTurns(sessionOf("cut", "look at the csv code", rideCSV))[0]
			mark := func() {
				if err := st.MarkTurn(ctx, []store.TurnMark{{Turn: turnKey(turn), Hash: memory.ContentHash(rideCSV), Atomic: tc.atomic}}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.storedLast {
				mark()
			}
			other := GroupTurns(sessionOf("other", "look at the code", rideCSV))[0]
			if _, _, err := p.ProcessTurn(ctx, other, nil, SessionState{}); err != nil {
				t.Fatal(err)
			}
			if !tc.storedLast {
				mark()
			}
			dec, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{})
			if err != nil {
				t.Fatal(err)
			}
			if dec.Verdict != tc.want {
				t.Errorf("verdict %s (%s), want %s", dec.Verdict, dec.Reason, tc.want)
			}
			if n := st.Count(); n != 1 {
				t.Errorf("%d memories, want the text stored once", n)
			}
			m, ok, err := st.FindByHash(ctx, memory.ContentHash(rideCSV), "shop")
			if err != nil || !ok {
				t.Fatalf("text not stored: %v", err)
			}
			if m.ReinforcedCount != tc.wantReinf {
				t.Errorf("reinforced %d times, want %d", m.ReinforcedCount, tc.wantReinf)
			}
			marks, err := st.TurnMarks(ctx, turnKey(turn))
			if err != nil {
				t.Fatal(err)
			}
			if mk := marks[memory.ContentHash(rideCSV)]; mk.Outcome == "" || mk.MemoryID != m.ID {
				t.Errorf("statement marked %+v after the run, want its outcome and memory %s", mk, m.ID)
			}
		})
	}
}

// TestTurnResolvedOutcomeRidesNextWrite: the outcome of a placement that
// writes nothing (a statement an older run placed, its pending mark
// resolved) is written with the next statement's placement, not alone.
func TestTurnResolvedOutcomeRidesNextWrite(t *testing.T) {
	ctx := context.Background()
	p, st := newStepFixture(t)
	turn := GroupTurns(sessionOf("cut", "look at the csv code", rideCSV, "Let me read the importer.", rideRows))[0]
	// An older run marked the first statement pending, stored it, and was cut short.
	if err := st.MarkTurn(ctx, []store.TurnMark{{Turn: turnKey(turn), Hash: memory.ContentHash(rideCSV)}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.ProcessTurn(ctx, GroupTurns(sessionOf("other", "look at the code", rideCSV))[0], nil, SessionState{}); err != nil {
		t.Fatal(err)
	}
	dec, _, err := p.ProcessTurn(ctx, turn, nil, SessionState{})
	if err != nil {
		t.Fatal(err)
	}
	if dec.Verdict != memory.VerdictStored || st.Count() != 2 {
		t.Fatalf("verdict %s (%s), %d memories; want stored, 2", dec.Verdict, dec.Reason, st.Count())
	}
	marks, err := st.TurnMarks(ctx, turnKey(turn))
	if err != nil {
		t.Fatal(err)
	}
	rows, ok, err := st.FindByHash(ctx, memory.ContentHash(rideRows), "shop")
	if err != nil || !ok {
		t.Fatalf("second statement not stored: %v", err)
	}
	for _, h := range []string{memory.ContentHash(rideCSV), memory.ContentHash(rideRows), ""} {
		if mk := marks[h]; mk.Outcome != string(memory.VerdictStored) || !mk.At.Equal(rows.CreatedAt) {
			t.Errorf("mark %q: %+v, want stored, written with the second statement's memory (at %v)", h, mk, rows.CreatedAt)
		}
	}
}
