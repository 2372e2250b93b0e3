// Package feedback records what a memory proved worth: reinforced (it
// helped), rated +1 or -1 by the agent or the user, snoozed out of recall
// for a while, pinned against the steward. Each change is one store
// update, announced through the daemon's feed. The API, the CLI and MCP
// reach it through their own small interfaces (see docs/architecture.md).
package feedback

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/store"
)

// MaxSnoozeDays bounds a snooze.
const MaxSnoozeDays = 3650

// MaxRateIDs bounds the memories one rating covers.
const MaxRateIDs = 100

// The changes a Service announces (the API's memory event ops).
const (
	OpPinned     = "pinned"
	OpSnoozed    = "snoozed"
	OpReinforced = "reinforced"
	OpRated      = "rated"
)

// Store is what the service needs of the store.
type Store interface {
	Get(ctx context.Context, id string) (memory.Memory, error)
	Update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error)
}

var _ Store = (*store.Store)(nil)

// Options configures New.
type Options struct {
	Store Store
	// Clock dates reinforcements and snoozes; nil: the wall clock.
	Clock memory.Clock
	// Logger gets ratings' reasons (debug); nil discards them.
	Logger *slog.Logger
	// Publish announces a change (one of the Op constants) of the memories
	// ids; m is the memory after it when one memory changed. Nil: nothing
	// is announced.
	Publish func(op string, ids []string, m *memory.Memory)
	// IndexLag turns "stored, but the text index lags" into success (and
	// a warning) and returns any other error (nil: errors are returned);
	// the daemon's also tells the status.
	IndexLag func(error) error
	// Observe, if set, is told of each reinforcement (score +1) and
	// rating (+1 or -1) once it is stored, for the recall log.
	Observe func(ctx context.Context, op string, ids []string, score int)
}

// Service records feedback on memories. It is safe for concurrent use.
type Service struct {
	o Options
}

// New returns the service over o.
func New(o Options) *Service {
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Publish == nil {
		o.Publish = func(string, []string, *memory.Memory) {}
	}
	if o.IndexLag == nil {
		o.IndexLag = func(err error) error { return err }
	}
	if o.Observe == nil {
		o.Observe = func(context.Context, string, []string, int) {}
	}
	return &Service{o: o}
}

// Reinforce records that a memory proved useful: reinforced_count++ and the
// decay clock restarts.
func (s *Service) Reinforce(ctx context.Context, id string) (memory.Memory, error) {
	now := s.o.Clock.Now().UTC()
	m, err := s.updated(OpReinforced)(s.update(ctx, id, func(m *memory.Memory) error {
		m.Reinforce(now)
		return nil
	}))
	if err == nil {
		s.o.Observe(ctx, OpReinforced, []string{id}, 1)
	}
	return m, err
}

// ReinforceUsed records that a memory given to a turn was used in it (the
// recall log found the turn wrote what the memory names, and noted it
// there: recall.Service.Used): a reinforcement as Reinforce makes one,
// announced as OpReinforced, that Observe is not told of (the log has
// it already, as implicit).
func (s *Service) ReinforceUsed(ctx context.Context, id string) (memory.Memory, error) {
	now := s.o.Clock.Now().UTC()
	return s.updated(OpReinforced)(s.update(ctx, id, func(m *memory.Memory) error {
		m.Reinforce(now)
		return nil
	}))
}

// Rate records the agent's or the user's verdict on memories it was given:
// +1 helped, -1 misled or was irrelevant. It feeds the composite score's
// feedback factor. Every id is checked before any is changed.
func (s *Service) Rate(ctx context.Context, ids []string, score int, reason string) ([]memory.Memory, error) {
	if score != 1 && score != -1 {
		return nil, fmt.Errorf("%w: score must be +1 or -1, not %d", memory.ErrInvalid, score)
	}
	if len(ids) == 0 || len(ids) > MaxRateIDs {
		return nil, fmt.Errorf("%w: rate 1..%d memory ids", memory.ErrInvalid, MaxRateIDs)
	}
	if len(reason) > 2000 || !memory.ValidUTF8(reason) {
		return nil, fmt.Errorf("%w: reason must be at most 2000 bytes of UTF-8", memory.ErrInvalid)
	}
	for _, id := range ids {
		if _, err := s.o.Store.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	out := make([]memory.Memory, 0, len(ids))
	for _, id := range ids {
		m, err := s.update(ctx, id, func(m *memory.Memory) error {
			m.FeedbackSum += float64(score)
			m.FeedbackN++
			return nil
		})
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
	s.o.Publish(OpRated, ids, nil)
	s.o.Observe(ctx, OpRated, ids, score)
	if reason != "" {
		masked, _ := redact.Redact(reason)
		s.o.Logger.Debug("memories rated", "ids", ids, "score", score, "reason", masked)
	}
	return out, nil
}

// Snooze keeps a memory out of recall for days (0 wakes it up again).
func (s *Service) Snooze(ctx context.Context, id string, days float64) (memory.Memory, error) {
	if !(days >= 0 && days <= MaxSnoozeDays) || math.IsNaN(days) {
		return memory.Memory{}, fmt.Errorf("%w: days must be within 0..%d", memory.ErrInvalid, MaxSnoozeDays)
	}
	until := time.Time{}
	if days > 0 {
		until = s.o.Clock.Now().UTC().Add(time.Duration(days * 24 * float64(time.Hour)))
	}
	return s.updated(OpSnoozed)(s.update(ctx, id, func(m *memory.Memory) error {
		m.CooldownUntil = until
		return nil
	}))
}

// Pin marks a memory the steward never prunes, decays or merges; a pinned
// memory does not decay in recall either.
func (s *Service) Pin(ctx context.Context, id string, pinned bool) (memory.Memory, error) {
	return s.updated(OpPinned)(s.update(ctx, id, func(m *memory.Memory) error {
		m.Pinned = pinned
		return nil
	}))
}

// updated returns a pass-through of update's result that announces a
// successful change as op.
func (s *Service) updated(op string) func(memory.Memory, error) (memory.Memory, error) {
	return func(m memory.Memory, err error) (memory.Memory, error) {
		if err == nil {
			s.o.Publish(op, []string{m.ID}, &m)
		}
		return m, err
	}
}

// update changes one memory; a lagging text index is not a failure.
func (s *Service) update(ctx context.Context, id string, fn func(*memory.Memory) error) (memory.Memory, error) {
	m, err := s.o.Store.Update(ctx, id, fn)
	m.Embedding = nil
	return m, s.o.IndexLag(err)
}
