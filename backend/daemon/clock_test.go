package daemon

import (
	"testing"
	"time"
)

// TestClockCheck: the clock moving as far as the time that really passed
// (a night's sleep included: the sleep-counting clock moves too) is no
// jump; the clock moving without the time passing, either way, is.
func TestClockCheck(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 22, 0, 0, 0, time.UTC)
	steps := []struct {
		name      string
		wall, run time.Duration // how far the clock and the real time move
		want      time.Duration
	}{
		{"first observation", 0, 0, 0},
		{"an hour of a steady clock", time.Hour, time.Hour, 0},
		{"a night asleep", 9 * time.Hour, 9 * time.Hour, 0},
		{"NTP nudges it by a few minutes", time.Hour + 4*time.Minute, time.Hour, 0},
		{"a year forward", 365*24*time.Hour + time.Hour, time.Hour, 365 * 24 * time.Hour},
		{"back again", -365*24*time.Hour + time.Hour, time.Hour, -365 * 24 * time.Hour},
	}
	var c clockCheck
	var run time.Duration
	c.since = func() time.Duration { return run }
	wall := t0
	for _, s := range steps {
		wall, run = wall.Add(s.wall), run+s.run
		if got := c.observe(wall); got != s.want {
			t.Errorf("%s: jump %v, want %v", s.name, got, s.want)
		}
	}
	if held, jump, _, _ := c.held(); !held || jump != -365*24*time.Hour {
		t.Errorf("held %v after the jumps (last %v)", held, jump)
	}
}

// TestSinceBoot: the sleep-counting clock runs at least as fast as Go's
// monotonic one (equal while awake).
func TestSinceBoot(t *testing.T) {
	t.Parallel()
	// The boot clock's readings enclose the monotonic ones (b0, m0 ...
	// m1, b1), so a preemption between two readings widens only the
	// interval that must be the longer.
	b0, m0 := sinceBoot(), time.Now()
	time.Sleep(20 * time.Millisecond)
	m1 := time.Now()
	b1 := sinceBoot()
	if b0 <= 0 || b1-b0 < m1.Sub(m0)-time.Millisecond || b1-b0 > m1.Sub(m0)+time.Second {
		t.Fatalf("sinceBoot moved %v while the monotonic clock moved %v (readings %v, %v)", b1-b0, m1.Sub(m0), b0, b1)
	}
	if !sleepAware {
		t.Log("no sleep-counting clock on this system: a sleep looks like a jump forward")
	}
}
