package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// CaptureStateFile, in the data dir, keeps the runtime capture switch and
// the excluded projects across restarts (the tray's toggle writes it).
const CaptureStateFile = "capture.json"

// captureState is what CaptureStateFile holds.
type captureState struct {
	Enabled         bool     `json:"enabled"`
	ExcludeProjects []string `json:"exclude_projects"`
	// PausedUntil is the end of a timed pause (Enabled is false until then).
	PausedUntil time.Time `json:"paused_until,omitzero"`
}

// pauseCheck is how often a running daemon looks whether a timed pause
// has ended.
const pauseCheck = time.Second

// pauseClock measures a timed pause in time that really passes (the
// monotonic clock), so a clock jumping back cannot stretch it: a pause
// ends when the clock reaches its end or when it has run its length,
// whichever comes first. (A clock jumping forward, or a computer that
// slept, ends it at its end by the clock.)
type pauseClock struct {
	mono   time.Time // when it began, or when the daemon started with it
	length time.Duration
}

// over reports whether the pause has run its length.
func (p pauseClock) over() bool {
	return p.length > 0 && time.Since(p.mono) >= p.length
}

// openCapture builds the proxy from the config, then applies the state the
// user last chose at runtime, if any.
func (d *Daemon) openCapture() error {
	cc := d.cfg.Capture
	if st, ok, err := d.readCaptureState(); err != nil {
		d.log.Warn("capture state unreadable; using the config", "file", CaptureStateFile, "err", err)
	} else if ok {
		cc.Enabled, cc.ExcludeProjects = st.Enabled, st.ExcludeProjects
		if !st.PausedUntil.IsZero() {
			if now := d.clock.Now(); now.Before(st.PausedUntil) {
				d.pausedUntil = st.PausedUntil
				left := d.pausedUntil.Sub(now)
				if left > httpapi.MaxPause {
					// The clock went back since the pause began: no pause
					// outlasts the longest one can ask for.
					d.log.Warn("capture pause ends later than any pause can last (the clock went back?): shortened", "paused_until", st.PausedUntil, "max", httpapi.MaxPause)
					left = httpapi.MaxPause
					d.pausedUntil = now.Add(left).Round(time.Second)
				}
				d.pauseClock = pauseClock{mono: time.Now(), length: left}
			} else {
				cc.Enabled = true // the pause ended while memtray was not running
			}
		}
	}
	p, err := capture.New(capture.Options{Config: cc, Logger: d.log, Clock: d.clock})
	if err != nil {
		return err
	}
	d.proxy, d.exclude = p, slices.Clone(cc.ExcludeProjects)
	if d.turn, err = openLive(d.cfg.DataDir); err != nil {
		d.log.Warn("captured turns left by an earlier run partly unreadable; the rest is kept", "err", err)
	}
	return nil
}

func (d *Daemon) readCaptureState() (captureState, bool, error) {
	var st captureState
	data, err := os.ReadFile(filepath.Join(d.cfg.DataDir, CaptureStateFile))
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, false, fmt.Errorf("parse %s: %w", CaptureStateFile, err)
	}
	return st, true, validExclusions(st.ExcludeProjects)
}

func validExclusions(list []string) error {
	if len(list) > 1000 {
		return fmt.Errorf("%w: at most 1000 excluded projects", memory.ErrInvalid)
	}
	for _, p := range list {
		if strings.TrimSpace(p) == "" || len(p) > 4096 || !memory.ValidUTF8(p) {
			return fmt.Errorf("%w: an excluded project must be a name or an absolute path of 1..4096 bytes", memory.ErrInvalid)
		}
	}
	return nil
}

// runPauses turns capture back on when a timed pause ends, until ctx ends.
func (d *Daemon) runPauses(ctx context.Context) {
	tick := time.NewTicker(pauseCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		d.captureMu.Lock()
		until, ran := d.pausedUntil, d.pauseClock.over()
		d.captureMu.Unlock()
		if until.IsZero() || (d.clock.Now().Before(until) && !ran) {
			continue
		}
		if _, err := d.resumeAfterPause(until); err != nil {
			d.log.Warn("could not end the capture pause", "err", err)
		}
	}
}

// resumeAfterPause turns capture on if the pause that ends at until is
// still the current one (not replaced or ended by the user since).
func (d *Daemon) resumeAfterPause(until time.Time) (bool, error) {
	d.captureMu.Lock()
	defer d.captureMu.Unlock()
	if !d.pausedUntil.Equal(until) {
		return false, nil
	}
	on := true
	_, err := d.setCaptureLocked(httpapi.CaptureUpdate{Enabled: &on})
	return err == nil, err
}

// runCapture feeds captured exchanges to the write pipeline, a whole
// user turn at a time (liveturns.go), until ctx ends. One worker keeps a
// session's exchanges in order.
func (d *Daemon) runCapture(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { d.runLive(ctx) })
	d.proxy.Run(ctx, 1, func(ctx context.Context, ex memory.Exchange) error {
		if d.skipProxyExchange(ex) { // stored from the session file already (transcripts.go)
			return nil
		}
		return d.captureExchange(ctx, ex)
	})
	wg.Wait()
}

// Capture reports the capture switch, the excluded projects and the
// proxy's counters.
func (d *Daemon) Capture(context.Context) (httpapi.CaptureState, error) {
	d.captureMu.Lock()
	defer d.captureMu.Unlock()
	return d.captureStateLocked(), nil
}

func (d *Daemon) captureStateLocked() httpapi.CaptureState {
	st := d.proxy.Stats()
	raw, _ := json.Marshal(st)
	cs := httpapi.CaptureState{Enabled: d.proxy.Enabled(), ExcludeProjects: slices.Clone(d.exclude),
		Anthropic: d.cfg.Capture.AnthropicUpstream, OpenAI: d.cfg.Capture.OpenAIUpstream, Stats: raw}
	if !d.pausedUntil.IsZero() {
		until := d.pausedUntil
		cs.PausedUntil = &until
	}
	return cs
}

// SetCapture turns capture on or off and changes the excluded projects,
// at once and for later starts (CaptureStateFile).
// A timed pause (PauseFor) turns capture back on by itself.
func (d *Daemon) SetCapture(_ context.Context, u httpapi.CaptureUpdate) (httpapi.CaptureState, error) {
	d.captureMu.Lock()
	defer d.captureMu.Unlock()
	return d.setCaptureLocked(u)
}

func (d *Daemon) setCaptureLocked(u httpapi.CaptureUpdate) (httpapi.CaptureState, error) {
	next := captureState{Enabled: d.proxy.Enabled(), ExcludeProjects: slices.Clone(d.exclude), PausedUntil: d.pausedUntil}
	if u.Enabled != nil && u.PauseFor != nil {
		return httpapi.CaptureState{}, &httpapi.FieldErrors{Message: "invalid capture change",
			Fields: map[string]string{"pause_for": "not together with enabled"}}
	}
	if u.Enabled != nil {
		next.Enabled, next.PausedUntil = *u.Enabled, time.Time{}
	}
	if u.PauseFor != nil {
		p := time.Duration(*u.PauseFor)
		if p <= 0 || p > httpapi.MaxPause {
			return httpapi.CaptureState{}, &httpapi.FieldErrors{Message: "invalid capture change",
				Fields: map[string]string{"pause_for": fmt.Sprintf("must be more than 0 and at most %s", httpapi.MaxPause)}}
		}
		next.Enabled, next.PausedUntil = false, d.clock.Now().Add(p).Round(time.Second)
	}
	if u.ExcludeProjects != nil {
		next.ExcludeProjects = *u.ExcludeProjects
	}
	for _, p := range u.Exclude {
		if !slices.Contains(next.ExcludeProjects, p) {
			next.ExcludeProjects = append(next.ExcludeProjects, p)
		}
	}
	next.ExcludeProjects = slices.DeleteFunc(next.ExcludeProjects, func(p string) bool { return slices.Contains(u.Include, p) })
	if next.ExcludeProjects == nil {
		next.ExcludeProjects = []string{}
	}
	if err := validExclusions(next.ExcludeProjects); err != nil {
		return httpapi.CaptureState{}, err
	}
	data, _ := json.MarshalIndent(next, "", "  ")
	if err := config.WriteFileAtomic(filepath.Join(d.cfg.DataDir, CaptureStateFile), append(data, '\n'), 0o600); err != nil {
		return httpapi.CaptureState{}, fmt.Errorf("save capture state: %w", err)
	}
	d.proxy.SetEnabled(next.Enabled)
	d.proxy.SetExcludedProjects(next.ExcludeProjects)
	if !next.PausedUntil.Equal(d.pausedUntil) {
		d.pauseClock = pauseClock{}
		if u.PauseFor != nil {
			d.pauseClock = pauseClock{mono: time.Now(), length: time.Duration(*u.PauseFor)}
		}
	}
	d.exclude, d.pausedUntil = next.ExcludeProjects, next.PausedUntil
	d.log.Info("capture changed", "enabled", next.Enabled, "excluded", next.ExcludeProjects, "paused_until", next.PausedUntil)
	cs := d.captureStateLocked()
	d.publish(httpapi.EventCapture, cs)
	return cs, nil
}
