package recall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// held returns a service whose log writer writes only when made to
// (sync, close or a full batch of batch), with a queue of queue recalls.
func held(t *testing.T, queue, batch int) (*Service, *store.Store) {
	t.Helper()
	rec, built, st := openStore(t)
	s, err := New(Options{Recaller: rec, Built: built, Log: st, Clock: &testClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)},
		Location: time.UTC, LogQueue: queue, LogBatch: batch, LogEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, st
}

// recallN makes n prompt recalls, of sessions s<from>..s<from+n-1>.
func recallN(t *testing.T, s *Service, from, n int) []search.Recalled {
	t.Helper()
	var out []search.Recalled
	for i := from; i < from+n; i++ {
		got, err := s.Recall(context.Background(), search.RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: prompt})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	return out
}

// sessions lists the log's sessions, newest first, read from the store
// (what is written, not what waits).
func sessions(t *testing.T, st *store.Store) string {
	t.Helper()
	log, err := st.RecallLog(context.Background(), store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range log {
		out = append(out, e.SessionID)
	}
	return fmt.Sprint(out)
}

// TestLogQueue: recalls wait for the writer; a full queue drops the
// oldest (counted in the statistics) and the recall goes on; a full batch
// is written without being asked; Close writes what waits, and a recall
// after Close is dropped.
func TestLogQueue(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		queue, batch int
		recalls      int
		want         string // sessions in the log after Close, newest first
		dropped      int64
	}{
		{"within the queue", 10, 100, 3, "[s2 s1 s0]", 0},
		{"a full queue drops the oldest", 2, 100, 5, "[s4 s3]", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, st := held(t, tt.queue, tt.batch)
			recallN(t, s, 0, tt.recalls)
			if got := sessions(t, st); got != "[]" {
				t.Errorf("written before a sync: %s", got)
			}
			stats, err := s.RecallLogStats(ctx, 1) // writes what waits
			if err != nil {
				t.Fatal(err)
			}
			if stats.Dropped != tt.dropped || stats.Failed != 0 || stats.Recalls != tt.recalls-int(tt.dropped) {
				t.Errorf("stats: %d recalls, %d dropped, %d failed; want %d, %d, 0", stats.Recalls, stats.Dropped, stats.Failed, tt.recalls-int(tt.dropped), tt.dropped)
			}
			if got := sessions(t, st); got != tt.want {
				t.Errorf("log %s, want %s", got, tt.want)
			}
		})
	}

	t.Run("close writes what waits", func(t *testing.T) {
		s, st := held(t, 10, 100)
		recallN(t, s, 0, 2)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := sessions(t, st); got != "[s1 s0]" {
			t.Errorf("log after Close %s, want [s1 s0]", got)
		}
		recallN(t, s, 2, 1)
		if d, _ := s.w.counts(); d != 1 {
			t.Errorf("a recall after Close: %d dropped, want 1", d)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})

	t.Run("a full batch is written", func(t *testing.T) {
		s, st := held(t, 10, 2)
		recallN(t, s, 0, 2)
		// The writer writes the batch on its own; Close would too, so wait
		// for it through the store's log with no sync.
		deadline := time.Now().Add(time.Minute) // a guard against a hang, not a timing check
		for pause := time.Millisecond; sessions(t, st) != "[s1 s0]"; pause = min(2*pause, 100*time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the full batch was not written: log %s", sessions(t, st))
			}
			time.Sleep(pause)
		}
		_ = s
	})
}

// TestLogFeedbackOnQueued: feedback on a memory whose recall still waits
// for the writer lands on that recall.
func TestLogFeedbackOnQueued(t *testing.T) {
	ctx := context.Background()
	s, st := held(t, 10, 100)
	got := recallN(t, s, 0, 1)[0]
	if len(got.Hits) == 0 {
		t.Fatal("nothing recalled")
	}
	id := got.Hits[0].Memory.ID
	if err := s.Feedback(ctx, OpRated, []string{id}, -1); err != nil {
		t.Fatal(err)
	}
	log, err := st.RecallLog(ctx, store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || len(log[0].Feedback) != 1 || log[0].Feedback[0].ID != id || log[0].Feedback[0].Score != -1 {
		t.Errorf("log %+v: want the recall with one -1 on %s", log, id)
	}
}

// TestLogForgetsDeleted: a memory deleted while its recall waits for the
// writer is written with its preview replaced; one deleted after, too;
// the others keep theirs.
func TestLogForgetsDeleted(t *testing.T) {
	ctx := context.Background()
	s, st := held(t, 10, 100)
	got := recallN(t, s, 0, 2)
	if len(got[0].Hits) < 2 || len(got[1].Hits) < 2 {
		t.Fatalf("recalled %d and %d memories, want 2 each", len(got[0].Hits), len(got[1].Hits))
	}
	queued, later := got[1].Hits[0].Memory.ID, got[0].Hits[1].Memory.ID
	if err := st.Delete(ctx, queued); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecallLog(ctx, store.RecallLogQuery{}); err != nil { // written now
		t.Fatal(err)
	}
	if err := st.Delete(ctx, later); err != nil {
		t.Fatal(err)
	}
	log, err := s.RecallLog(ctx, store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range log {
		for _, m := range append(e.Given, e.Withheld...) {
			deleted := m.ID == queued || m.ID == later
			if (m.Preview == store.DeletedPreview) != deleted {
				t.Errorf("%s (deleted %v) in %s's recall: preview %q", m.ID, deleted, e.SessionID, m.Preview)
			}
		}
	}
}

// TestClearRecallLog: the written recalls and those waiting go.
func TestClearRecallLog(t *testing.T) {
	ctx := context.Background()
	s, st := held(t, 10, 100)
	recallN(t, s, 0, 2)
	if _, err := s.RecallLog(ctx, store.RecallLogQuery{}); err != nil {
		t.Fatal(err)
	}
	recallN(t, s, 2, 1) // waits
	n, err := s.ClearRecallLog(ctx)
	if err != nil || n != 3 {
		t.Errorf("cleared %d, %v; want 3", n, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := sessions(t, st); got != "[]" {
		t.Errorf("log after clear %s", got)
	}
}

// TestLogAgent: the agent a recall names is logged; a malformed one is
// refused.
func TestLogAgent(t *testing.T) {
	ctx := context.Background()
	s, _ := held(t, 10, 100)
	tests := []struct {
		agent string
		ok    bool
	}{
		{"codex", true},
		{"", true},
		{"Claude Code", false},
		{strings.Repeat("a", maxAgent+1), false},
	}
	for i, tt := range tests {
		_, err := s.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprint("a", i), Prompt: prompt, Agent: tt.agent})
		if (err == nil) != tt.ok || (!tt.ok && !errors.Is(err, memory.ErrInvalid)) {
			t.Errorf("agent %q: %v", tt.agent, err)
		}
	}
	log, err := s.RecallLog(ctx, store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range log {
		got[e.SessionID] = e.Agent
	}
	if fmt.Sprint(got) != "map[a0:codex a1:]" {
		t.Errorf("agents %v", got)
	}
}
