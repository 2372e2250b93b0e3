package feed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

func TestDecisionLogRing(t *testing.T) {
	l := NewDecisionLog(3, nil)
	for i := 0; i < 5; i++ {
		l.Add(memory.Decision{ID: string(rune('a' + i))}, memory.Exchange{})
	}
	got := l.Newest(10)
	if len(got) != 3 || got[0].ID != "e" || got[2].ID != "c" {
		t.Errorf("newest: %v", got)
	}
	if _, ok := l.Find("a"); ok {
		t.Error("an evicted decision is still found")
	}
	if len(l.Newest(1)) != 1 {
		t.Error("limit ignored")
	}
}

// openStore opens a store in dir (the model is any: the log stores no vectors).
func openStore(t testing.TB, dir string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Dir: dir, Model: "test", Dim: 4, Clock: memory.FixedClock{T: logT0}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

var logT0 = time.Date(2026, 3, 2, 10, 30, 0, 0, time.UTC)

// openLog opens a decision log of 3 decisions on st, failing the test on
// any error, also the log's later write errors.
func openLog(t *testing.T, st *store.Store) *DecisionLog {
	t.Helper()
	l, err := OpenDecisionLog(LogOptions{Size: 3, Store: st, Failed: func(err error) { t.Error(err) }})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// reopenLog closes st, as a restart does, and opens the store in dir and
// its decision log again (openLog).
func reopenLog(t *testing.T, st *store.Store, dir string) *DecisionLog {
	t.Helper()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return openLog(t, openStore(t, dir))
}

// TestDecisionLogSurvivesRestart is issue 21 bug 8: a restart emptied the
// feed, today's counts and the hourly chart.
func TestDecisionLogSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	l := openLog(t, st)
	verdicts := []memory.Verdict{memory.VerdictStored, memory.VerdictRejected, memory.VerdictRejected, memory.VerdictStored, memory.VerdictRejected}
	for i, v := range verdicts {
		dec := memory.Decision{ID: fmt.Sprintf("d%d", i), Verdict: v, Stage: "content", At: logT0.Add(time.Duration(i) * 20 * time.Minute)}
		l.Add(dec, memory.Exchange{User: "user " + dec.ID, Assistant: strings.Repeat("é", MaxPersistedText), Project: "p"})
	}
	l = reopenLog(t, st, dir)
	got := l.Newest(10)
	if len(got) != 3 || got[0].ID != "d4" || got[2].ID != "d2" || got[0].User != "user d4" || got[0].Project != "p" {
		t.Fatalf("newest after restart: %+v", got)
	}
	if a := got[0].Assistant; len(a) > MaxPersistedText || !utf8.ValidString(a) || a == "" {
		t.Errorf("assistant text of %d bytes, valid %v", len(a), utf8.ValidString(a))
	}
	if e, ok := l.Find("d3"); !ok || e.Verdict != memory.VerdictStored {
		t.Errorf("find d3 after restart: %v %+v", ok, e)
	}
	hours := l.Hours(logT0.Add(-time.Hour))
	want := []struct{ stored, rejected int }{{1, 1}, {1, 2}} // 10:30 10:50 | 11:10 11:30 11:50
	if len(hours) != len(want) {
		t.Fatalf("hours after restart: %+v", hours)
	}
	for i, w := range want {
		if hours[i].Verdicts["stored"] != w.stored || hours[i].Verdicts["rejected"] != w.rejected || hours[i].Rejected["content"] != w.rejected {
			t.Errorf("hour %d: %+v, want %+v", i, hours[i], w)
		}
	}
	// New decisions go on from where the log left off.
	l.Add(memory.Decision{ID: "d5", Verdict: memory.VerdictStored, At: logT0.Add(2 * time.Hour)}, memory.Exchange{})
	if got := l.Newest(10); len(got) != 3 || got[0].ID != "d5" || got[2].ID != "d3" {
		t.Errorf("newest after an add: %+v", got)
	}
}

// TestDecisionLogBoundsCandidates: a turn that lists many verdicts (a
// statement per run of dropped sentences) is stored and survives a
// restart, bounded to memory.MaxDecisionCandidates verdicts, every kept
// one among them, the rest counted; unbounded, its record is over the
// store's size limit and never stored.
func TestDecisionLogBoundsCandidates(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	l := openLog(t, st)
	const n = 10000
	var cs []memory.CandidateVerdict
	for i := range n {
		c := memory.CandidateVerdict{Text: fmt.Sprintf("%d ", i) + strings.Repeat("narrating ", 15), Origin: "tool-loop", Class: "narration", Reason: "narration"}
		if i == n-1 {
			c.Kept, c.Class, c.Reason, c.MemoryID = true, "finding", "", "m1"
		}
		cs = append(cs, c)
	}
	l.Add(memory.Decision{ID: "long", Verdict: memory.VerdictStored, At: logT0, Candidates: cs}, memory.Exchange{})
	l = reopenLog(t, st, dir)
	e, ok := l.Find("long")
	if !ok {
		t.Fatal("the long turn's decision was not stored")
	}
	got := e.Candidates
	if len(got) != memory.MaxDecisionCandidates || e.CandidatesOmitted != n-memory.MaxDecisionCandidates || got[len(got)-1].MemoryID != "m1" {
		t.Errorf("%d verdicts listed, %d omitted, last %+v", len(got), e.CandidatesOmitted, got[len(got)-1])
	}
}
