package feedback

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

type event struct {
	op  string
	ids []string
}

// open returns a service over a real store holding memories "a" and "b",
// and the events it publishes.
func open(t *testing.T, now time.Time) (*Service, *store.Store, *[]event) {
	t.Helper()
	ctx := context.Background()
	emb := embed.NewBuiltin()
	st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: emb.Dim(), Clock: memory.FixedClock{T: now}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for _, id := range []string{"a", "b"} {
		vecs, err := emb.Embed(ctx, []string{"memory " + id})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Put(ctx, memory.Memory{ID: id, Text: "memory " + id, Embedding: vecs[0], CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
	}
	var events []event
	s := New(Options{Store: st, Clock: memory.FixedClock{T: now}, Publish: func(op string, ids []string, _ *memory.Memory) {
		events = append(events, event{op, ids})
	}})
	return s, st, &events
}

func TestFeedback(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	tests := []struct {
		name    string
		do      func(ctx context.Context, s *Service) error
		wantErr error
		wantOp  string
		check   func(t *testing.T, a, b memory.Memory)
	}{
		{name: "reinforce", wantOp: OpReinforced,
			do: func(ctx context.Context, s *Service) error { _, err := s.Reinforce(ctx, "a"); return err },
			check: func(t *testing.T, a, _ memory.Memory) {
				if a.ReinforcedCount != 1 {
					t.Errorf("reinforced %d times", a.ReinforcedCount)
				}
			}},
		{name: "rate two", wantOp: OpRated,
			do: func(ctx context.Context, s *Service) error {
				_, err := s.Rate(ctx, []string{"a", "b"}, -1, "misled")
				return err
			},
			check: func(t *testing.T, a, b memory.Memory) {
				if a.FeedbackSum != -1 || a.FeedbackN != 1 || b.FeedbackSum != -1 || b.FeedbackN != 1 {
					t.Errorf("feedback a %v/%d, b %v/%d", a.FeedbackSum, a.FeedbackN, b.FeedbackSum, b.FeedbackN)
				}
			}},
		{name: "rate checks every id first", wantErr: memory.ErrNotFound,
			do: func(ctx context.Context, s *Service) error {
				_, err := s.Rate(ctx, []string{"a", "nope"}, 1, "")
				return err
			},
			check: func(t *testing.T, a, _ memory.Memory) {
				if a.FeedbackN != 0 {
					t.Error("a was rated though the request failed")
				}
			}},
		{name: "rate score", wantErr: memory.ErrInvalid,
			do: func(ctx context.Context, s *Service) error { _, err := s.Rate(ctx, []string{"a"}, 2, ""); return err }},
		{name: "rate no ids", wantErr: memory.ErrInvalid,
			do: func(ctx context.Context, s *Service) error { _, err := s.Rate(ctx, nil, 1, ""); return err }},
		{name: "rate bad reason", wantErr: memory.ErrInvalid,
			do: func(ctx context.Context, s *Service) error {
				_, err := s.Rate(ctx, []string{"a"}, 1, "\xff")
				return err
			}},
		{name: "snooze", wantOp: OpSnoozed,
			do: func(ctx context.Context, s *Service) error { _, err := s.Snooze(ctx, "a", 2); return err },
			check: func(t *testing.T, a, _ memory.Memory) {
				if !a.CooldownUntil.Equal(now.Add(48 * time.Hour)) {
					t.Errorf("snoozed until %v", a.CooldownUntil)
				}
			}},
		{name: "snooze NaN", wantErr: memory.ErrInvalid,
			do: func(ctx context.Context, s *Service) error { _, err := s.Snooze(ctx, "a", math.NaN()); return err }},
		{name: "snooze too long", wantErr: memory.ErrInvalid,
			do: func(ctx context.Context, s *Service) error { _, err := s.Snooze(ctx, "a", MaxSnoozeDays+1); return err }},
		{name: "pin", wantOp: OpPinned,
			do: func(ctx context.Context, s *Service) error { _, err := s.Pin(ctx, "b", true); return err },
			check: func(t *testing.T, _, b memory.Memory) {
				if !b.Pinned {
					t.Error("b is not pinned")
				}
			}},
		{name: "pin unknown", wantErr: memory.ErrNotFound,
			do: func(ctx context.Context, s *Service) error { _, err := s.Pin(ctx, "nope", true); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			s, st, events := open(t, now)
			err := tt.do(ctx, s)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tt.wantErr)
			}
			if tt.wantOp != "" && (len(*events) != 1 || (*events)[0].op != tt.wantOp) {
				t.Errorf("events %v, want one %s", *events, tt.wantOp)
			}
			if tt.wantErr != nil && len(*events) != 0 {
				t.Errorf("a failed change announced %v", *events)
			}
			if tt.check != nil {
				a, _ := st.Get(ctx, "a")
				b, _ := st.Get(ctx, "b")
				tt.check(t, a, b)
			}
		})
	}
}
