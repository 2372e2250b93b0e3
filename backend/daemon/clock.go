package daemon

import (
	"fmt"
	"sync"
	"time"
)

// Clock jumps. The daemon's clock (memory.Clock, the wall clock) can jump:
// a wrong hardware clock at boot, a manual change, an NTP correction. The
// steward's scheduled sweep compares how far the clock moved since the
// last sweep with the time that really passed and, after a jump either
// way, applies nothing by itself and empties no trash until the clock has
// run steadily for clockHold, so a clock that is wrong for a while and
// then corrected cannot snooze memories for the size of the jump or purge
// trash that is not yet due. Plans and applies a user asks for work as
// usual. The time that really passed counts the time the computer slept
// (sinceBoot: CLOCK_BOOTTIME on Linux, CLOCK_MONOTONIC on macOS), so a
// laptop's night is not a jump; Go's own monotonic clock stops during
// sleep, and where no sleep-counting clock is known it is used instead
// (a sleep then looks like a jump forward, and the sweep waits).
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
	mu      sync.Mutex
	wall    time.Time     // the clock at the last observation (no monotonic reading)
	elapsed time.Duration // since() then
	started bool
	// since measures the time that really passed (nil: sinceBoot).
	since func() time.Duration
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
	since := c.since
	if since == nil {
		since = sinceBoot
	}
	el := since()
	now = now.Round(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.started {
		c.wall, c.elapsed, c.started = now, el, true
		return 0
	}
	j := now.Sub(c.wall) - (el - c.elapsed)
	c.wall, c.elapsed = now, el
	if j.Abs() <= maxClockSkew {
		return 0
	}
	c.jump, c.seen, c.holdUntil = j, now, time.Now().Add(clockHold)
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
	return fmt.Sprintf("The clock jumped %s by %s (noticed at %s by the clock%s): the steward applies nothing by itself and empties no trash for another %s, until the clock has run steadily; plans and applies you ask for work as usual.",
		dir, roundDuration(jump.Abs()), seen.Local().Format("2006-01-02 15:04"), sleepNote(jump), roundDuration(left))
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

// sleepNote is what the warning adds where a sleep can look like a jump
// forward: on systems without a sleep-counting clock.
func sleepNote(jump time.Duration) string {
	if jump > 0 && !sleepAware {
		return "; or the computer slept that long"
	}
	return ""
}
