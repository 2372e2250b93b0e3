package recall

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// logged returns a service that logs into a real store, at the clock c.
func logged(t *testing.T, c *testClock) (*Service, *store.Store) {
	t.Helper()
	rec, built, st := openStore(t)
	s, err := New(Options{Recaller: rec, Built: built, Log: st, Clock: c, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() }) // before the store closes
	return s, st
}

// TestRecallLogged: each recall that searched is logged with its prompt
// redacted, what it gave and withheld; tool-loop and repeated turns are
// not; feedback lands on the recall that gave the memory.
func TestRecallLogged(t *testing.T) {
	ctx := context.Background()
	clock := &testClock{T: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
	s, _ := logged(t, clock)
	secret := "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	steps := []search.RecallRequest{
		{SessionID: "a", Prompt: prompt, Project: "shop", Turn: "1"},
		{SessionID: "a", Prompt: prompt, Turn: "1"},                                                 // the same turn: not logged
		{SessionID: "a", Prompt: "tool output", ToolLoop: true},                                     // not logged
		{SessionID: "b", Prompt: "how do I bake sourdough bread? my token is " + secret, Turn: "1"}, // nothing given
		{SessionID: "a", Prompt: "payment gateway retries backoff", Event: search.EventSearch},
	}
	for _, req := range steps {
		out, err := s.Recall(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		// Nothing the prompt said reaches an answer unmasked (a skip
		// reason names the prompt's unknown names).
		if strings.Contains(strings.ToLower(fmt.Sprintf("%+v", out)), strings.ToLower(secret)) {
			t.Errorf("the recall's answer holds the prompt's secret: %+v", out)
		}
	}
	log, err := s.RecallLog(ctx, store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 3 {
		t.Fatalf("%d entries logged, want 3: %+v", len(log), log)
	}
	first, empty := log[2], log[1]
	if strings.Contains(strings.ToLower(fmt.Sprintf("%+v", empty)), strings.ToLower(secret)) || !strings.Contains(empty.Prompt, "sourdough") {
		t.Errorf("the entry holds the prompt's secret: %+v", empty)
	}
	if first.SessionID != "a" || first.Project != "shop" || first.Event != search.EventPrompt || len(first.Given) == 0 {
		t.Errorf("first entry: %+v", first)
	}
	for _, g := range first.Given {
		if g.Preview == "" || g.Kind != "fact" || g.Score <= 0 {
			t.Errorf("given memory logged without preview, kind or score: %+v", g)
		}
	}
	if len(empty.Given) != 0 || empty.Skipped == "" {
		t.Errorf("an unrelated prompt's entry: %+v", empty)
	}
	for _, w := range append(empty.Withheld, log[0].Withheld...) {
		if w.Reason == "" || w.Preview == "" {
			t.Errorf("withheld without reason or preview: %+v", w)
		}
	}
	if log[0].Event != search.EventSearch {
		t.Errorf("the search logged as %q", log[0].Event)
	}

	// Feedback: the newest recall that gave the memory takes it.
	id := first.Given[0].ID
	if err := s.Feedback(ctx, OpRated, []string{id}, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Feedback(ctx, "liked", []string{id}, 1); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("an unknown op: %v", err)
	}
	log, _ = s.RecallLog(ctx, store.RecallLogQuery{SessionID: "a"})
	var fb []store.RecallFeedback
	for _, e := range log {
		fb = append(fb, e.Feedback...)
	}
	if len(fb) != 1 || fb[0].ID != id || fb[0].Score != 1 {
		t.Errorf("feedback %+v, want one +1 on %s", fb, id)
	}
}

// TestRecallLogStats: recalls per day with the days between, given vs
// empty, and the most given memories with their hit rate.
func TestRecallLogStats(t *testing.T) {
	ctx := context.Background()
	day0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	clock := &testClock{T: day0}
	s, _ := logged(t, clock)
	recall := func(sid, p string) search.Recalled {
		t.Helper()
		got, err := s.Recall(ctx, search.RecallRequest{SessionID: sid, Prompt: p})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	a := recall("a", prompt)
	recall("b", "how do I bake sourdough bread")
	clock.T = day0.Add(48 * time.Hour)
	c := recall("c", prompt)
	if len(a.Hits) == 0 || len(c.Hits) == 0 {
		t.Fatal("the prompt recalled nothing")
	}
	top := a.Hits[0].Memory.ID
	if err := s.Feedback(ctx, OpReinforced, []string{top}, 1); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		days          int
		wantDays      string
		recalls, gave int
	}{
		{3, "2026-05-04:2/1 2026-05-05:0/0 2026-05-06:1/1", 3, 2},
		{1, "2026-05-06:1/1", 1, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.days, " days"), func(t *testing.T) {
			st, err := s.RecallLogStats(ctx, tt.days)
			if err != nil {
				t.Fatal(err)
			}
			var days []string
			for _, d := range st.Days {
				days = append(days, fmt.Sprintf("%s:%d/%d", d.Date, d.Recalls, d.Gave))
			}
			if strings.Join(days, " ") != tt.wantDays || st.Recalls != tt.recalls || st.Gave != tt.gave || st.Empty != tt.recalls-tt.gave {
				t.Errorf("days %v, recalls %d gave %d empty %d", days, st.Recalls, st.Gave, st.Empty)
			}
			if len(st.Top) == 0 {
				t.Fatal("no top memories")
			}
			for _, m := range st.Top {
				wantHelped := 0
				if m.ID == top {
					wantHelped = 1 // the newest recall that gave it (c's) took the reinforcement
				}
				if m.Given != tt.gave || m.Helped != wantHelped || m.HitRate != float64(wantHelped)/float64(m.Given) {
					t.Errorf("%s: given %d helped %d rate %.2f", m.ID, m.Given, m.Helped, m.HitRate)
				}
			}
		})
	}
	for _, days := range []int{-1, MaxStatsDays + 1} {
		if _, err := s.RecallLogStats(ctx, days); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%d days: %v", days, err)
		}
	}
}

// testClock is a clock a test moves.
type testClock struct{ T time.Time }

func (c *testClock) Now() time.Time { return c.T }

// TestRecallLogKeepsWithheldCap: a recall that asks for every withheld
// candidate (search.RecallRequest.AllWithheld, the evaluation's) gets them
// all, and the log keeps the best search.MaxWithheld, as of any recall.
func TestRecallLogKeepsWithheldCap(t *testing.T) {
	ctx := context.Background()
	var texts []string
	for i := range 20 {
		texts = append(texts, fmt.Sprintf("Service %d of the shop retries its payment calls %d times before it gives up.", i, i%4+2))
	}
	rec, built, st := openTexts(t, texts, config.Default())
	s, err := New(Options{Recaller: rec, Built: built, Log: st, Clock: &testClock{T: testNow}, Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	out, err := s.Recall(ctx, search.RecallRequest{SessionID: "a", Prompt: "how do I bake sourdough bread with a rye starter?", AllWithheld: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Withheld) <= search.MaxWithheld {
		t.Fatalf("%d withheld, want more than %d (the fixture has too few memories?)", len(out.Withheld), search.MaxWithheld)
	}
	log, err := s.RecallLog(ctx, store.RecallLogQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != 1 || len(log[0].Withheld) != search.MaxWithheld {
		t.Fatalf("log %+v, want one entry with %d withheld", log, search.MaxWithheld)
	}
	for i, w := range log[0].Withheld {
		if w.ID != out.Withheld[i].ID || w.Reason != out.Withheld[i].Reason {
			t.Errorf("logged withheld %d is %s (%s), the recall's %+v", i, w.ID, w.Reason, out.Withheld[i])
		}
	}
}
