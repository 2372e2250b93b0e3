package judge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// stepClock is a clock tests move by hand; safe for concurrent use.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func newStepClock() *stepClock {
	return &stepClock{t: time.Date(2025, 11, 20, 8, 0, 0, 0, time.UTC)}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *stepClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// scriptJudge answers with a fixed verdict and error and counts its calls.
type scriptJudge struct {
	calls atomic.Int64
	mu    sync.Mutex
	v     memory.JudgeVerdict
	err   error
}

func (s *scriptJudge) Name() string { return "script:test" }

func (s *scriptJudge) Judge(ctx context.Context, ex memory.Exchange) (memory.JudgeVerdict, error) {
	s.calls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.v, s.err
}

func (s *scriptJudge) set(v memory.JudgeVerdict, err error) {
	s.mu.Lock()
	s.v, s.err = v, err
	s.mu.Unlock()
}

func newTestBudget(t *testing.T, perHour, perDay int) (*Budgeted, *scriptJudge, *stepClock) {
	t.Helper()
	inner := &scriptJudge{v: memory.JudgeVerdict{Skip: true, InputTokens: 10, OutputTokens: 1}}
	clock := newStepClock()
	b, err := NewBudgeted(inner, perHour, perDay, clock)
	if err != nil {
		t.Fatal(err)
	}
	return b, inner, clock
}

// call judges testExchange and reports whether the budget let it through.
func call(t *testing.T, b *Budgeted) bool {
	t.Helper()
	_, err := b.Judge(context.Background(), testExchange)
	switch {
	case err == nil:
		return true
	case errors.Is(err, ErrBudget):
		return false
	}
	t.Fatalf("unexpected error %v", err)
	return false
}

func TestBudgetWindows(t *testing.T) {
	type step struct {
		advance time.Duration
		allowed bool
	}
	tests := []struct {
		name            string
		perHour, perDay int
		steps           []step
	}{
		{"hour cap", 3, 100, []step{
			{0, true}, {10 * time.Minute, true}, {10 * time.Minute, true},
			{0, false}, {39 * time.Minute, false}, // 59 min after the first call
			{time.Minute, true},                  // the first call left the hour
			{0, false}, {10 * time.Minute, true}, // the second left too
		}},
		{"day cap", 10, 3, []step{
			{0, true}, {2 * time.Hour, true}, {2 * time.Hour, true},
			{2 * time.Hour, false}, {17 * time.Hour, false}, // 23 h after the first
			{time.Hour, true}, // 24 h after the first
			{0, false}, {2 * time.Hour, true},
		}},
		{"zero hour cap allows nothing", 0, 100, []step{{0, false}, {48 * time.Hour, false}}},
		{"zero day cap allows nothing", 100, 0, []step{{0, false}, {48 * time.Hour, false}}},
		{"both caps", 2, 3, []step{
			{0, true}, {0, true}, {0, false}, {time.Hour, true}, {0, false}, {time.Hour, false}, {22 * time.Hour, true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, inner, clock := newTestBudget(t, tc.perHour, tc.perDay)
			allowed := 0
			for i, s := range tc.steps {
				clock.Advance(s.advance)
				if got := call(t, b); got != s.allowed {
					t.Fatalf("step %d (t+%s): allowed %v, want %v; stats %+v", i, clock.Now().Sub(newStepClock().Now()), got, s.allowed, b.Stats())
				}
				if s.allowed {
					allowed++
				}
			}
			if n := inner.calls.Load(); n != int64(allowed) {
				t.Fatalf("inner judge called %d times, want %d", n, allowed)
			}
			st := b.Stats()
			if st.Calls != int64(allowed) || st.OverBudget != int64(len(tc.steps)-allowed) {
				t.Fatalf("stats %+v: want %d calls, %d over budget", st, allowed, len(tc.steps)-allowed)
			}
		})
	}
}

func TestBudgetStats(t *testing.T) {
	b, inner, clock := newTestBudget(t, 3, 5)
	start := clock.Now()
	ctx := context.Background()

	inner.set(memory.JudgeVerdict{Skip: true, InputTokens: 100, OutputTokens: 2}, nil)
	b.Judge(ctx, testExchange)
	clock.Advance(time.Minute)
	inner.set(memory.JudgeVerdict{Kind: memory.KindFact, Memory: "m", InputTokens: 200, OutputTokens: 20}, nil)
	b.Judge(ctx, testExchange)
	clock.Advance(time.Minute)
	inner.set(memory.JudgeVerdict{InputTokens: 50, OutputTokens: 5}, errors.New("judge x: judge answer not understood"))
	b.Judge(ctx, testExchange)
	clock.Advance(time.Minute)
	if _, err := b.Judge(ctx, testExchange); !errors.Is(err, ErrBudget) {
		t.Fatalf("fourth call in the hour: %v, want ErrBudget", err)
	}
	// An empty exchange and a cancelled context cost nothing.
	if v, err := b.Judge(ctx, memory.Exchange{}); err != nil || !v.Skip {
		t.Fatalf("empty exchange: %+v %v", v, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.Judge(cctx, testExchange); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}

	st := b.Stats()
	want := Stats{
		Judge: "script:test", MaxPerHour: 3, MaxPerDay: 5,
		CallsLastHour: 3, CallsLastDay: 3, Calls: 3, Keeps: 1, Skips: 1, Errors: 1, OverBudget: 1,
		InputTokens: 350, OutputTokens: 27,
		LastError: "judge x: judge answer not understood", LastErrorAt: start.Add(2 * time.Minute),
		LastCallAt: start.Add(2 * time.Minute), NextCallAt: start.Add(time.Hour),
	}
	if st != want {
		t.Fatalf("stats\n got %+v\nwant %+v", st, want)
	}
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"judge":"script:test"`, `"calls_last_hour":3`, `"calls_last_day":3`, `"max_per_hour":3`, `"max_per_day":5`,
		`"calls":3`, `"keeps":1`, `"skips":1`, `"errors":1`, `"over_budget":1`, `"input_tokens":350`, `"output_tokens":27`,
		`"last_error":"judge x: judge answer not understood"`, `"next_call_at":"2025-11-20T09:00:00Z"`} {
		if !strings.Contains(string(js), key) {
			t.Errorf("JSON %s lacks %s", js, key)
		}
	}
	if strings.Contains(string(js), "paused_until") {
		t.Errorf("JSON %s shows a pause", js)
	}

	// A success clears the last error; the windows roll with the clock.
	clock.Advance(time.Hour)
	inner.set(memory.JudgeVerdict{Skip: true}, nil)
	b.Judge(ctx, testExchange)
	st = b.Stats()
	if st.LastError != "" || st.CallsLastHour != 1 || st.CallsLastDay != 4 || !st.NextCallAt.IsZero() {
		t.Fatalf("after an hour: %+v", st)
	}
	clock.Advance(24 * time.Hour)
	if st := b.Stats(); st.CallsLastHour != 0 || st.CallsLastDay != 0 || st.Calls != 4 {
		t.Fatalf("after a day: %+v", st)
	}
}

func TestBudgetRateLimitPause(t *testing.T) {
	b, inner, clock := newTestBudget(t, 100, 1000)
	ctx := context.Background()
	inner.set(memory.JudgeVerdict{}, &APIError{Provider: "anthropic", StatusCode: 429, Type: "rate_limit_error", RetryAfter: 30 * time.Second})
	if _, err := b.Judge(ctx, testExchange); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("first call: %v", err)
	}
	inner.set(memory.JudgeVerdict{Skip: true}, nil)
	clock.Advance(29 * time.Second)
	_, err := b.Judge(ctx, testExchange)
	if !errors.Is(err, ErrRateLimited) || !errors.Is(err, memory.ErrUnavailable) || errors.Is(err, ErrBudget) {
		t.Fatalf("during the pause: %v", err)
	}
	if st := b.Stats(); st.Paused != 1 || st.PausedUntil != clock.Now().Add(time.Second) || inner.calls.Load() != 1 {
		t.Fatalf("stats during the pause: %+v, %d calls", st, inner.calls.Load())
	}
	clock.Advance(time.Second)
	if _, err := b.Judge(ctx, testExchange); err != nil {
		t.Fatalf("after the pause: %v", err)
	}
	// A 429 without retry-after pauses a minute; a 529 does not pause.
	inner.set(memory.JudgeVerdict{}, &APIError{Provider: "anthropic", StatusCode: 429})
	b.Judge(ctx, testExchange)
	if st := b.Stats(); st.PausedUntil != clock.Now().Add(defaultRateLimitPause) {
		t.Fatalf("default pause: %+v", st)
	}
	clock.Advance(defaultRateLimitPause)
	inner.set(memory.JudgeVerdict{}, &APIError{Provider: "anthropic", StatusCode: 529})
	b.Judge(ctx, testExchange)
	inner.set(memory.JudgeVerdict{Skip: true}, nil)
	if _, err := b.Judge(ctx, testExchange); err != nil {
		t.Fatalf("after a 529: %v", err)
	}
}

func TestBudgetConcurrent(t *testing.T) {
	const perHour, workers, each = 100, 16, 25
	b, inner, clock := newTestBudget(t, perHour, 1000)
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := b.Judge(context.Background(), testExchange)
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ErrBudget):
					refused.Add(1)
				default:
					t.Errorf("error %v", err)
				}
				_ = b.Stats()
			}
		}()
	}
	wg.Add(1)
	go func() { // the clock moves (within the hour) while calls run
		defer wg.Done()
		for i := 0; i < 50; i++ {
			clock.Advance(time.Second)
		}
	}()
	wg.Wait()
	if ok.Load() != perHour || refused.Load() != workers*each-perHour || inner.calls.Load() != perHour {
		t.Fatalf("%d allowed, %d refused, %d inner calls; want %d allowed", ok.Load(), refused.Load(), inner.calls.Load(), perHour)
	}
	if st := b.Stats(); st.Calls != perHour || st.Skips != perHour || st.OverBudget != workers*each-perHour || st.CallsLastHour != perHour {
		t.Fatalf("stats %+v", st)
	}
}

func TestBudgetClockBackwards(t *testing.T) {
	b, _, clock := newTestBudget(t, 2, 10)
	call(t, b)
	clock.Advance(-30 * time.Minute) // calls "in the future" still count
	call(t, b)
	if call(t, b) {
		t.Fatal("a clock stepped back reopened the budget")
	}
}

func TestNewBudgetedInvalid(t *testing.T) {
	if _, err := NewBudgeted(nil, 1, 1, nil); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("nil judge: %v", err)
	}
	if _, err := NewBudgeted(&scriptJudge{}, -1, 1, nil); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("negative cap: %v", err)
	}
}

func TestNew(t *testing.T) {
	t.Setenv(AnthropicKeyEnv, "")
	t.Setenv("OLLAMA_HOST", "")
	def := config.Default().Judge
	with := func(f func(*config.Judge)) config.Judge { c := def; f(&c); return c }

	for _, provider := range []string{"off", ""} {
		j, err := New(with(func(c *config.Judge) { c.Provider = provider }), nil)
		if err != nil || j != nil {
			t.Errorf("provider %q: %v, %v; want nil, nil", provider, j, err)
		}
	}
	if _, err := New(with(func(c *config.Judge) { c.Provider = "openai" }), nil); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("unknown provider: %v", err)
	}
	if _, err := New(with(func(c *config.Judge) { c.Provider = "anthropic" }), nil); !errors.Is(err, ErrNoKey) {
		t.Errorf("anthropic without key: %v", err)
	}
	j, err := New(with(func(c *config.Judge) { c.Provider = "anthropic"; c.AnthropicKey = testKey }), nil)
	if err != nil || j.Name() != "anthropic:claude-haiku-4-5" {
		t.Fatalf("anthropic: %v %v", j, err)
	}
	if st := j.(*Budgeted).Stats(); st.MaxPerHour != def.MaxPerHour || st.MaxPerDay != def.MaxPerDay {
		t.Errorf("caps %+v", st)
	}

	// Ollama end to end: the configured timeout bounds the call, and the
	// budget counts it.
	f := newFakeOllama(t, "hang")
	j, err = New(with(func(c *config.Judge) {
		c.Provider, c.OllamaHost = "ollama", f.srv.URL
		c.Timeout = config.Duration(200 * time.Millisecond)
	}), newStepClock())
	if err != nil || j.Name() != "ollama:llama3.2" {
		t.Fatalf("ollama: %v %v", j, err)
	}
	start := time.Now()
	_, err = j.Judge(context.Background(), testExchange)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Fatalf("timeout: %v after %s", err, time.Since(start))
	}
	if st := j.(*Budgeted).Stats(); st.Calls != 1 || st.Errors != 1 || !strings.Contains(st.LastError, "no answer within 200ms") {
		t.Fatalf("stats %+v", st)
	}
	f.set("answer", "DECISION: Use bbolt.")
	v, err := j.Judge(context.Background(), testExchange)
	if err != nil || v.Kind != memory.KindDecision || v.InputTokens != 700 {
		t.Fatalf("verdict %+v %v", v, err)
	}
}
