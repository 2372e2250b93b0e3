package daemon

import (
	"fmt"
	"sync"
	"time"
)

// Clock jumps. The daemon's clock (memory.Clock, the wall clock) can jump:
// a wrong hardware clock at boot, a manual change, an NTP correction. The
// steward's scheduled sweep compares how far the clock moved since the
// last sweep with the time that really passed (the monotonic clock) and,
// after a jump either way, applies nothing by itself and empties no trash
// until the clock has run steadily for clockHold, so a clock that is wrong
// for a while and then corrected cannot snooze memories for the size of
// the jump or purge trash that is not yet due. Plans and applies a user
// asks for work as usual. A computer that slept looks the same as a jump
// forward (the monotonic clock stops while it sleeps): the sweep then
// just waits a while longer, which costs nothing.
//
// What a jump does without this hold is bounded anyway: the importance
// operations touch a memory at most once per steward.MinInterval (the
// ledger), so a jump of a year decays each memory once; prune is not
// applied by itself unless configured; nothing is ever deleted but
// trash older than trash_days.

// Clock jump defaults.
const (
	// maxClockSkew is how far the clock may run apart from the time that
	// really passed between two sweeps before it counts as a jump.
	maxClockSkew = 10 * time.Minute
	// clockHold is how long the clock must run steadily after a jump
	// before the sweep applies and purges by itself again.
	clockHold = 24 * time.Hour
)

// clockCheck tells clock jumps from time passing. Safe for concurrent use.
type clockCheck struct {
	mu   sync.Mutex
	wall time.Time // the clock at the last observation (no monotonic reading)
	mono time.Time // time.Now() then (monotonic)
	// The last jump: its size (the clock's move minus the time that
	// passed), when (by the clock) it was seen, and until when (monotonic)
	// the sweep holds back.
	jump      time.Duration
	seen      time.Time
	holdUntil time.Time
}

// observe notes the clock's reading now and reports a jump since the
// last observation (0: none).
func (c *clockCheck) observe(now time.Time) time.Duration {
	mono := time.Now()
	now = now.Round(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mono.IsZero() {
		c.wall, c.mono = now, mono
		return 0
	}
	j := now.Sub(c.wall) - mono.Sub(c.mono)
	c.wall, c.mono = now, mono
	if j.Abs() <= maxClockSkew {
		return 0
	}
	c.jump, c.seen, c.holdUntil = j, now, mono.Add(clockHold)
	return j
}

// held reports whether the sweep holds back after a jump, and the jump.
func (c *clockCheck) held() (bool, time.Duration, time.Time, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	left := time.Until(c.holdUntil)
	return left > 0, c.jump, c.seen, left
}

// clockWarning is the warning a recent jump shows, or "".
func (d *Daemon) clockWarning() string {
	held, jump, seen, left := d.clockCheck.held()
	if !held {
		return ""
	}
	dir := "forward"
	if jump < 0 {
		dir = "back"
	}
	return fmt.Sprintf("The clock jumped %s by %s (noticed at %s by the clock; or the computer slept that long): the steward applies nothing by itself and empties no trash for another %s, until the clock has run steadily; plans and applies you ask for work as usual.",
		dir, roundDuration(jump.Abs()), seen.Local().Format("2006-01-02 15:04"), roundDuration(left))
}

// roundDuration prints a duration in days, hours or minutes (rounded up).
func roundDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d/time.Hour))
	case d <= time.Minute:
		return "1 minute"
	}
	return fmt.Sprintf("%d minutes", int((d+time.Minute-1)/time.Minute))
}
