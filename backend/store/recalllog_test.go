package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// recallAt is an entry of session sid at t0+min giving ids.
func recallAt(sid string, min int, ids ...string) RecallEntry {
	e := RecallEntry{At: t0.Add(time.Duration(min) * time.Minute), SessionID: sid, Event: "user-prompt", Prompt: fmt.Sprint("prompt ", min)}
	for _, id := range ids {
		e.Given = append(e.Given, RecallMemory{ID: id, Score: 0.5, Kind: "fact", Preview: "text of " + id})
	}
	e.Withheld = []RecallMemory{{ID: "w", Score: 0.1, Reason: "relative_floor"}}
	return e
}

func seqs(es []RecallEntry) string {
	var b []string
	for _, e := range es {
		b = append(b, fmt.Sprint(e.Seq))
	}
	return strings.Join(b, ",")
}

// TestRecallLogQuery: newest first, by session, paged with Before, and it
// survives a restart.
func TestRecallLogQuery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	for i := range 6 {
		sid := []string{"a", "b"}[i%2]
		if _, err := s.AddRecall(ctx, recallAt(sid, i, fmt.Sprint("m", i)), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	tests := []struct {
		name string
		q    RecallLogQuery
		want string
	}{
		{"all", RecallLogQuery{}, "6,5,4,3,2,1"},
		{"limit", RecallLogQuery{Limit: 2}, "6,5"},
		{"session", RecallLogQuery{SessionID: "a"}, "5,3,1"},
		{"before", RecallLogQuery{Before: 5, Limit: 2}, "4,3"},
		{"before and session", RecallLogQuery{Before: 5, SessionID: "b"}, "4,2"},
		{"before beyond the newest", RecallLogQuery{Before: 100, Limit: 1}, "6"},
		{"before the oldest", RecallLogQuery{Before: 1}, ""},
		{"unknown session", RecallLogQuery{SessionID: "zz"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.RecallLog(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if seqs(got) != tt.want {
				t.Errorf("seqs %s, want %s", seqs(got), tt.want)
			}
		})
	}
	got, _ := s.RecallLog(ctx, RecallLogQuery{Limit: 1})
	if e := got[0]; e.Prompt != "prompt 5" || len(e.Given) != 1 || e.Given[0].Preview != "text of m5" || e.Withheld[0].Reason != "relative_floor" {
		t.Errorf("entry not kept whole: %+v", e)
	}
	for _, q := range []RecallLogQuery{{Limit: -1}, {Limit: MaxRecallLogLimit + 1}, {SessionID: strings.Repeat("s", 300)}} {
		if _, err := s.RecallLog(ctx, q); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

// TestRecallLogBounded: the oldest entries go beyond Keep and MaxAge,
// with the feedback index's keys to them.
func TestRecallLogBounded(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		lim  RecallLimits
		mins []int // the entries' times, in minutes after t0
		want string
	}{
		{"keep", RecallLimits{Keep: 3}, []int{0, 1, 2, 3, 4}, "5,4,3"},
		{"max age", RecallLimits{MaxAge: 90 * time.Minute}, []int{0, 60, 120, 121}, "4,3,2"},
		{"within both", RecallLimits{}, []int{0, 1}, "2,1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			for i, m := range tt.mins {
				if _, err := s.AddRecall(ctx, recallAt("s", m, fmt.Sprint("m", i)), tt.lim); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.RecallLog(ctx, RecallLogQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if seqs(got) != tt.want {
				t.Errorf("seqs %s, want %s", seqs(got), tt.want)
			}
			// Feedback on the first memory finds no entry once it is gone.
			n, err := s.AddRecallFeedback(ctx, []string{"m0"}, RecallFeedback{Op: "rated", Score: 1, At: t0})
			if err != nil {
				t.Fatal(err)
			}
			if kept := strings.HasSuffix(tt.want, ",1"); (n == 1) != kept {
				t.Errorf("feedback on m0 took %d entries; its entry kept: %v", n, kept)
			}
		})
	}
}

// TestRecallFeedback: feedback goes to the newest entry that gave the
// memory, and is bounded.
func TestRecallFeedback(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i, ids := range [][]string{{"x", "y"}, {"x"}, {"z"}} {
		if _, err := s.AddRecall(ctx, recallAt("s", i, ids...), RecallLimits{}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.AddRecallFeedback(ctx, []string{"x", "y", "unknown"}, RecallFeedback{Op: "rated", Score: -1, At: t0})
	if err != nil || n != 2 {
		t.Fatalf("took %d, %v; want 2", n, err)
	}
	if _, err := s.AddRecallFeedback(ctx, []string{"x"}, RecallFeedback{Op: "reinforced", Score: 1, At: t0}); err != nil {
		t.Fatal(err)
	}
	got, _ := s.RecallLog(ctx, RecallLogQuery{})
	fb := map[uint64]string{}
	for _, e := range got {
		for _, f := range e.Feedback {
			fb[e.Seq] += fmt.Sprintf("%s:%s%+d ", f.ID, f.Op, f.Score)
		}
	}
	want := map[uint64]string{2: "x:rated-1 x:reinforced+1 ", 1: "y:rated-1 "}
	if fmt.Sprint(fb) != fmt.Sprint(want) {
		t.Errorf("feedback %v, want %v", fb, want)
	}
	for range MaxRecallFeedback + 5 {
		if _, err := s.AddRecallFeedback(ctx, []string{"z"}, RecallFeedback{Op: "rated", Score: 1, At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = s.RecallLog(ctx, RecallLogQuery{Limit: 1})
	if len(got[0].Feedback) != MaxRecallFeedback {
		t.Errorf("%d feedback entries, want %d", len(got[0].Feedback), MaxRecallFeedback)
	}
	if _, err := s.AddRecallFeedback(ctx, []string{"x"}, RecallFeedback{Op: "rated", Score: 2}); err == nil {
		t.Error("score 2: no error")
	}
}

func TestAddRecallValidates(t *testing.T) {
	s := openTest(t, t.TempDir())
	tests := []struct {
		name string
		mod  func(*RecallEntry)
	}{
		{"no session", func(e *RecallEntry) { e.SessionID = "" }},
		{"no event", func(e *RecallEntry) { e.Event = "" }},
		{"no time", func(e *RecallEntry) { e.At = time.Time{} }},
		{"long prompt", func(e *RecallEntry) { e.Prompt = strings.Repeat("p", MaxRecallPrompt+1) }},
		{"bad utf-8", func(e *RecallEntry) { e.Prompt = "\xff" }},
		{"no memory id", func(e *RecallEntry) { e.Given[0].ID = "" }},
		{"long preview", func(e *RecallEntry) { e.Withheld[0].Preview = strings.Repeat("p", MaxRecallPreview+1) }},
		{"too many", func(e *RecallEntry) { e.Given = make([]RecallMemory, MaxRecallMemories+1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := recallAt("s", 0, "m")
			tt.mod(&e)
			if _, err := s.AddRecall(context.Background(), e, RecallLimits{}); err == nil {
				t.Error("no error")
			}
		})
	}
}
