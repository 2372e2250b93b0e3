package eval

import (
	"sync"
	"time"
)

// evalTick is how far a steppedClock moves at each reading.
const evalTick = time.Millisecond

// steppedClock is a memory.Clock for an evaluation run through a real
// daemon (daemon.Options.Clock): it starts at the evaluations' fixed time
// (evalNow) and moves on by one millisecond each time it is read, never by
// itself. Time still passes as the run goes, so memories written one after
// the other have increasing created_at (what the sessions dump orders them
// by) and a memory is a little older when it is recalled than when it was
// written, as with the wall clock; but how much older depends only on what
// the run did in between, not on how fast the machine did it. With the
// wall clock, the recency factor of every recall score depended on the
// seconds the run had taken, and a score the dump prints changed in its
// third decimal now and then (1.346 in one run, 1.347 in the next).
//
// The readings are the same in every run as long as the run reads the
// clock the same number of times between two points that wait for each
// other: the daemon's concurrent readers (the search legs) each read it a
// fixed number of times, and what they read only filters by time (snoozed
// memories), which no evaluation sets. Safe for concurrent use.
type steppedClock struct {
	mu sync.Mutex
	t  time.Time
}

// newSteppedClock returns a steppedClock at evalNow.
func newSteppedClock() *steppedClock { return &steppedClock{t: evalNow} }

// Now returns the clock's time and moves it on by one tick.
func (c *steppedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = c.t.Add(evalTick)
	return t
}

// advance moves the clock on by d, as that much time passing between two
// things the run does (the steward's sweeps, SessionsOptions.SweepDays).
func (c *steppedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
