package judge

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// Budget windows.
const (
	hourWindow = time.Hour
	dayWindow  = 24 * time.Hour
	// defaultRateLimitPause is how long Budgeted holds back after a 429
	// without retry-after; maxPause caps any pause.
	defaultRateLimitPause = time.Minute
	maxPause              = time.Hour
)

// Budgeted wraps a judge with caps on calls per rolling hour and per
// rolling day, and keeps the statistics the UI shows. It is safe for
// concurrent use.
//
// A call counts against both windows from the moment it starts, whatever
// its outcome (a failed call may still have cost tokens, and a dead
// provider must not be hammered). A cap of 0 allows no call at all in that
// window: 0 disables the judge, it never means unlimited. Past a cap, or
// while a provider's retry-after (429) runs, Judge returns at once with
// ErrBudget (or ErrRateLimited) without calling the model.
type Budgeted struct {
	inner      memory.Judge
	clock      memory.Clock
	maxPerHour int
	maxPerDay  int

	mu          sync.Mutex
	starts      []time.Time // starts of the calls of the last 24 h
	pausedUntil time.Time
	st          Stats
}

// Stats are a Budgeted judge's counts since it was made, for the UI.
type Stats struct {
	// Judge is the wrapped judge's Name.
	Judge string `json:"judge"`
	// MaxPerHour and MaxPerDay are the caps (0: no call allowed).
	MaxPerHour int `json:"max_per_hour"`
	MaxPerDay  int `json:"max_per_day"`
	// CallsLastHour and CallsLastDay count the calls started in the rolling
	// windows ending now.
	CallsLastHour int `json:"calls_last_hour"`
	CallsLastDay  int `json:"calls_last_day"`
	// Calls counts the calls made to the model; Keeps, Skips and Errors
	// split them by outcome.
	Calls  int64 `json:"calls"`
	Keeps  int64 `json:"keeps"`
	Skips  int64 `json:"skips"`
	Errors int64 `json:"errors"`
	// OverBudget counts the calls refused by a cap; Paused those refused
	// while waiting out a provider's rate limit. Neither reached the model.
	OverBudget int64 `json:"over_budget"`
	Paused     int64 `json:"paused"`
	// InputTokens and OutputTokens add up what the calls reported.
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	// LastError is the last call's error, if the last failed call was
	// after the last success; LastErrorAt when it happened.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// LastCallAt is when the last call started.
	LastCallAt time.Time `json:"last_call_at,omitzero"`
	// PausedUntil is the end of a rate-limit pause, zero if none runs.
	PausedUntil time.Time `json:"paused_until,omitzero"`
	// NextCallAt is, when a cap is reached, when a call will be allowed
	// again; zero when one is allowed now or never (a cap of 0).
	NextCallAt time.Time `json:"next_call_at,omitzero"`
}

// NewBudgeted wraps inner with caps of maxPerHour and maxPerDay calls (0
// allows none; negative is an error). clock nil means the wall clock.
func NewBudgeted(inner memory.Judge, maxPerHour, maxPerDay int, clock memory.Clock) (*Budgeted, error) {
	if inner == nil {
		return nil, fmt.Errorf("judge: budget around a nil judge: %w", memory.ErrInvalid)
	}
	if maxPerHour < 0 || maxPerDay < 0 {
		return nil, fmt.Errorf("judge: caps %d per hour, %d per day must not be negative: %w", maxPerHour, maxPerDay, memory.ErrInvalid)
	}
	if clock == nil {
		clock = memory.SystemClock{}
	}
	return &Budgeted{inner: inner, clock: clock, maxPerHour: maxPerHour, maxPerDay: maxPerDay}, nil
}

// Name returns the wrapped judge's name.
func (b *Budgeted) Name() string { return b.inner.Name() }

// Judge calls the wrapped judge if the budget allows, and counts the
// outcome. An exchange without text is a skip without a call (and costs no
// budget). Errors are the wrapped judge's, or ErrBudget / ErrRateLimited
// when the call was refused; on error the verdict carries token counts only.
func (b *Budgeted) Judge(ctx context.Context, ex memory.Exchange) (memory.JudgeVerdict, error) {
	if emptyExchange(ex) {
		return memory.JudgeVerdict{Skip: true}, nil
	}
	if err := ctx.Err(); err != nil {
		return memory.JudgeVerdict{}, fmt.Errorf("judge %s: %w", b.inner.Name(), err)
	}
	if err := b.reserve(); err != nil {
		return memory.JudgeVerdict{}, err
	}
	v, err := b.inner.Judge(ctx, ex)
	b.record(v.InputTokens, v.OutputTokens, v.Skip, err)
	return v, err
}

// JudgeTurn calls the wrapped judge's JudgeTurn if the budget allows (one
// call per turn counts like one Judge call), and counts the outcome: a
// verdict without memories is a skip. A turn without text is an empty
// verdict without a call. The wrapped judge must be a memory.TurnJudge
// (both providers are); otherwise the error wraps memory.ErrInvalid.
func (b *Budgeted) JudgeTurn(ctx context.Context, in memory.TurnInput) (memory.TurnVerdict, error) {
	tj, ok := b.inner.(memory.TurnJudge)
	if !ok {
		return memory.TurnVerdict{}, fmt.Errorf("judge %s does not judge turns: %w", b.inner.Name(), memory.ErrInvalid)
	}
	if emptyTurn(in) {
		return memory.TurnVerdict{}, nil
	}
	if err := ctx.Err(); err != nil {
		return memory.TurnVerdict{}, fmt.Errorf("judge %s: %w", b.inner.Name(), err)
	}
	if err := b.reserve(); err != nil {
		return memory.TurnVerdict{}, err
	}
	v, err := tj.JudgeTurn(ctx, in)
	b.record(v.InputTokens, v.OutputTokens, len(v.Memories) == 0, err)
	return v, err
}

// reserve takes a slot in both windows, or says why it cannot.
func (b *Budgeted) reserve() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.prune(now)
	if now.Before(b.pausedUntil) {
		b.st.Paused++
		return fmt.Errorf("judge %s: provider asked to wait until %s: %w (%w)", b.inner.Name(), b.pausedUntil.Format(time.RFC3339), ErrRateLimited, memory.ErrUnavailable)
	}
	hour, day := b.counts(now)
	switch {
	case hour >= b.maxPerHour:
		b.st.OverBudget++
		return fmt.Errorf("judge %s: %d calls in the last hour, max_per_hour is %d: %w", b.inner.Name(), hour, b.maxPerHour, ErrBudget)
	case day >= b.maxPerDay:
		b.st.OverBudget++
		return fmt.Errorf("judge %s: %d calls in the last day, max_per_day is %d: %w", b.inner.Name(), day, b.maxPerDay, ErrBudget)
	}
	b.starts = append(b.starts, now)
	b.st.Calls++
	b.st.LastCallAt = now
	return nil
}

// record counts a finished call.
func (b *Budgeted) record(inTokens, outTokens int, skip bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.st.InputTokens += int64(max(inTokens, 0))
	b.st.OutputTokens += int64(max(outTokens, 0))
	switch {
	case err != nil:
		now := b.clock.Now()
		b.st.Errors++
		b.st.LastError = truncateMessage(err.Error())
		b.st.LastErrorAt = now
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == 429 {
			pause := ae.RetryAfter
			if pause <= 0 {
				pause = defaultRateLimitPause
			}
			if until := now.Add(min(pause, maxPause)); until.After(b.pausedUntil) {
				b.pausedUntil = until
			}
		}
	case skip:
		b.st.Skips++
		b.st.LastError, b.st.LastErrorAt = "", time.Time{}
	default:
		b.st.Keeps++
		b.st.LastError, b.st.LastErrorAt = "", time.Time{}
	}
}

// prune drops starts older than a day; the clock may step back, so the
// slice is filtered rather than cut.
func (b *Budgeted) prune(now time.Time) {
	kept := b.starts[:0]
	for _, t := range b.starts {
		if now.Sub(t) < dayWindow {
			kept = append(kept, t)
		}
	}
	clear(b.starts[len(kept):])
	b.starts = kept
}

// counts returns the calls started in the last hour and day before now.
func (b *Budgeted) counts(now time.Time) (hour, day int) {
	for _, t := range b.starts {
		age := now.Sub(t)
		if age < dayWindow {
			day++
			if age < hourWindow {
				hour++
			}
		}
	}
	return hour, day
}

// Stats returns the counts as of now.
func (b *Budgeted) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	b.prune(now)
	s := b.st
	s.Judge = b.inner.Name()
	s.MaxPerHour, s.MaxPerDay = b.maxPerHour, b.maxPerDay
	s.CallsLastHour, s.CallsLastDay = b.counts(now)
	if now.Before(b.pausedUntil) {
		s.PausedUntil = b.pausedUntil
	}
	if b.maxPerHour > 0 && b.maxPerDay > 0 {
		var next time.Time
		if s.CallsLastHour >= b.maxPerHour {
			next = b.freeAt(now, hourWindow, s.CallsLastHour-b.maxPerHour)
		}
		if s.CallsLastDay >= b.maxPerDay {
			if t := b.freeAt(now, dayWindow, s.CallsLastDay-b.maxPerDay); t.After(next) {
				next = t
			}
		}
		if !next.IsZero() && s.PausedUntil.After(next) {
			next = s.PausedUntil
		}
		s.NextCallAt = next
	}
	return s
}

// freeAt returns when the window's count drops below its cap: when the
// (excess+1)-th oldest start of the window leaves it.
func (b *Budgeted) freeAt(now time.Time, window time.Duration, excess int) time.Time {
	var in []time.Time
	for _, t := range b.starts {
		if now.Sub(t) < window {
			in = append(in, t)
		}
	}
	slices.SortFunc(in, func(x, y time.Time) int { return x.Compare(y) })
	if excess >= len(in) {
		return time.Time{}
	}
	return in[excess].Add(window)
}

var (
	_ memory.Judge     = (*Budgeted)(nil)
	_ memory.TurnJudge = (*Budgeted)(nil)
)
