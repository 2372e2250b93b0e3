package feedback

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestObserve: a stored reinforcement or rating is observed with its
// score (for the recall log); a failed one, a snooze, a pin or a
// reinforcement the recall log recorded itself (ReinforceUsed) is not.
func TestObserve(t *testing.T) {
	now := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	ctx := context.Background()
	tests := []struct {
		name string
		do   func(s *Service) error
		want string
	}{
		{"reinforce", func(s *Service) error { _, err := s.Reinforce(ctx, "a"); return err }, "reinforced [a] +1"},
		{"rate down", func(s *Service) error { _, err := s.Rate(ctx, []string{"a", "b"}, -1, ""); return err }, "rated [a b] -1"},
		{"rate up", func(s *Service) error { _, err := s.Rate(ctx, []string{"b"}, 1, "it helped"); return err }, "rated [b] +1"},
		{"unknown memory", func(s *Service) error { _, _ = s.Reinforce(ctx, "zz"); return nil }, ""},
		{"snooze", func(s *Service) error { _, err := s.Snooze(ctx, "a", 1); return err }, ""},
		{"pin", func(s *Service) error { _, err := s.Pin(ctx, "a", true); return err }, ""},
		{"reinforce used (the recall log has it)", func(s *Service) error {
			m, err := s.ReinforceUsed(ctx, "a")
			if err == nil && (m.ReinforcedCount != 1 || !m.LastReinforcedAt.Equal(now)) {
				err = fmt.Errorf("reinforced %d at %v, want once at %v", m.ReinforcedCount, m.LastReinforcedAt, now)
			}
			return err
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := open(t, now)
			got := ""
			s.o.Observe = func(_ context.Context, op string, ids []string, score int) {
				got += fmt.Sprintf("%s %v %+d", op, ids, score)
			}
			if err := tt.do(s); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("observed %q, want %q", got, tt.want)
			}
		})
	}
}
