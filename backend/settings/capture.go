package settings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// CaptureStateFile, in the data dir, keeps the runtime capture switch and
// the excluded projects across restarts (the tray's toggle writes it).
const CaptureStateFile = "capture.json"

// MaxPause bounds CaptureUpdate.PauseFor.
const MaxPause = 7 * 24 * time.Hour

// CaptureState is what GET /api/capture returns.
type CaptureState struct {
	// Enabled is the capture switch: off, the proxy forwards but keeps nothing.
	Enabled bool `json:"enabled"`
	// PausedUntil, set while a timed pause (CaptureUpdate.PauseFor) runs,
	// is when capture turns itself back on.
	PausedUntil *time.Time `json:"paused_until,omitempty"`
	// ExcludeProjects are project names or directories never captured.
	ExcludeProjects []string `json:"exclude_projects"`
	// Anthropic and OpenAI are the upstreams the proxy forwards to.
	Anthropic string `json:"anthropic_upstream"`
	OpenAI    string `json:"openai_upstream"`
	// Stats are the proxy's counters (package capture's Stats).
	Stats json.RawMessage `json:"stats"`
}

// CaptureUpdate is what POST /api/capture takes; absent fields stay.
type CaptureUpdate struct {
	Enabled *bool `json:"enabled,omitempty"`
	// PauseFor turns capture off for a while (at most MaxPause); it turns
	// itself back on then, also across restarts. Not with Enabled.
	PauseFor *config.Duration `json:"pause_for,omitempty"`
	// ExcludeProjects replaces the whole list; Exclude and Include add to
	// and remove from it.
	ExcludeProjects *[]string `json:"exclude_projects,omitempty"`
	Exclude         []string  `json:"exclude,omitempty"`
	Include         []string  `json:"include,omitempty"`
}

// captureState is what CaptureStateFile holds.
type captureState struct {
	Enabled         bool     `json:"enabled"`
	ExcludeProjects []string `json:"exclude_projects"`
	// PausedUntil is the end of a timed pause (Enabled is false until then).
	PausedUntil time.Time `json:"paused_until,omitzero"`
}

// pauseCheck is how often RunPauses looks whether a timed pause has ended.
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
func (s *Service) openCapture() error {
	cc := s.o.Built.Capture
	if st, ok, err := s.readCaptureState(); err != nil {
		s.o.Logger.Warn("capture state unreadable; using the config", "file", CaptureStateFile, "err", err)
	} else if ok {
		cc.Enabled, cc.ExcludeProjects = st.Enabled, st.ExcludeProjects
		if !st.PausedUntil.IsZero() {
			if now := s.o.Clock.Now(); now.Before(st.PausedUntil) {
				s.pausedUntil = st.PausedUntil
				left := s.pausedUntil.Sub(now)
				if left > MaxPause {
					// The clock went back since the pause began: no pause
					// outlasts the longest one can ask for.
					s.o.Logger.Warn("capture pause ends later than any pause can last (the clock went back?): shortened", "paused_until", st.PausedUntil, "max", MaxPause)
					left = MaxPause
					s.pausedUntil = now.Add(left).Round(time.Second)
				}
				s.pauseClock = pauseClock{mono: time.Now(), length: left}
			} else {
				cc.Enabled = true // the pause ended while memtray was not running
			}
		}
	}
	p, err := capture.New(capture.Options{Config: cc, Logger: s.o.Logger, Clock: s.o.Clock})
	if err != nil {
		return err
	}
	s.proxy, s.exclude = p, slices.Clone(cc.ExcludeProjects)
	return nil
}

func (s *Service) readCaptureState() (captureState, bool, error) {
	var st captureState
	data, err := os.ReadFile(filepath.Join(s.o.DataDir, CaptureStateFile))
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

// RunPauses turns capture back on when a timed pause ends, until ctx ends.
func (s *Service) RunPauses(ctx context.Context) {
	tick := time.NewTicker(pauseCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		s.captureMu.Lock()
		until, ran := s.pausedUntil, s.pauseClock.over()
		s.captureMu.Unlock()
		if until.IsZero() || (s.o.Clock.Now().Before(until) && !ran) {
			continue
		}
		if _, err := s.resumeAfterPause(until); err != nil {
			s.o.Logger.Warn("could not end the capture pause", "err", err)
		}
	}
}

// resumeAfterPause turns capture on if the pause that ends at until is
// still the current one (not replaced or ended by the user since).
func (s *Service) resumeAfterPause(until time.Time) (bool, error) {
	s.captureMu.Lock()
	defer s.captureMu.Unlock()
	if !s.pausedUntil.Equal(until) {
		return false, nil
	}
	on := true
	_, err := s.setCaptureLocked(CaptureUpdate{Enabled: &on})
	return err == nil, err
}

// AllowTurn keeps capture from session files under the same switch as the
// proxy: nothing is stored while capture is off or paused, or from an
// excluded project (by name, or a directory containing the session's
// working directory cwd).
func (s *Service) AllowTurn(project, cwd string) bool {
	s.captureMu.Lock()
	defer s.captureMu.Unlock()
	if !s.proxy.Enabled() {
		return false
	}
	for _, e := range s.exclude {
		e = strings.TrimSpace(e)
		if e != "" && (e == project || cwd != "" && e == filepath.Base(filepath.Clean(cwd))) { // a directory's own name: a project name of older versions
			return false
		}
		if filepath.IsAbs(e) && cwd != "" {
			if rel, err := filepath.Rel(filepath.Clean(e), filepath.Clean(cwd)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return false
			}
		}
	}
	return true
}

// Capture reports the capture switch, the excluded projects and the
// proxy's counters.
func (s *Service) Capture(context.Context) (CaptureState, error) {
	s.captureMu.Lock()
	defer s.captureMu.Unlock()
	return s.captureStateLocked(), nil
}

func (s *Service) captureStateLocked() CaptureState {
	st := s.proxy.Stats()
	raw, _ := json.Marshal(st)
	cs := CaptureState{Enabled: s.proxy.Enabled(), ExcludeProjects: slices.Clone(s.exclude),
		Anthropic: s.o.Built.Capture.AnthropicUpstream, OpenAI: s.o.Built.Capture.OpenAIUpstream, Stats: raw}
	if !s.pausedUntil.IsZero() {
		until := s.pausedUntil
		cs.PausedUntil = &until
	}
	return cs
}

// SetCapture turns capture on or off and changes the excluded projects,
// at once and for later starts (CaptureStateFile).
// A timed pause (PauseFor) turns capture back on by itself.
func (s *Service) SetCapture(_ context.Context, u CaptureUpdate) (CaptureState, error) {
	s.captureMu.Lock()
	defer s.captureMu.Unlock()
	return s.setCaptureLocked(u)
}

func (s *Service) setCaptureLocked(u CaptureUpdate) (CaptureState, error) {
	next := captureState{Enabled: s.proxy.Enabled(), ExcludeProjects: slices.Clone(s.exclude), PausedUntil: s.pausedUntil}
	if u.Enabled != nil && u.PauseFor != nil {
		return CaptureState{}, &memory.FieldErrors{Message: "invalid capture change",
			Fields: map[string]string{"pause_for": "not together with enabled"}}
	}
	if u.Enabled != nil {
		next.Enabled, next.PausedUntil = *u.Enabled, time.Time{}
	}
	if u.PauseFor != nil {
		p := time.Duration(*u.PauseFor)
		if p <= 0 || p > MaxPause {
			return CaptureState{}, &memory.FieldErrors{Message: "invalid capture change",
				Fields: map[string]string{"pause_for": fmt.Sprintf("must be more than 0 and at most %s", MaxPause)}}
		}
		next.Enabled, next.PausedUntil = false, s.o.Clock.Now().Add(p).Round(time.Second)
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
		return CaptureState{}, err
	}
	data, _ := json.MarshalIndent(next, "", "  ")
	if err := config.WriteFileAtomic(filepath.Join(s.o.DataDir, CaptureStateFile), append(data, '\n'), 0o600); err != nil {
		return CaptureState{}, fmt.Errorf("save capture state: %w", err)
	}
	s.proxy.SetEnabled(next.Enabled)
	s.proxy.SetExcludedProjects(next.ExcludeProjects)
	if !next.PausedUntil.Equal(s.pausedUntil) {
		s.pauseClock = pauseClock{}
		if u.PauseFor != nil {
			s.pauseClock = pauseClock{mono: time.Now(), length: time.Duration(*u.PauseFor)}
		}
	}
	s.exclude, s.pausedUntil = next.ExcludeProjects, next.PausedUntil
	s.o.Logger.Info("capture changed", "enabled", next.Enabled, "excluded", next.ExcludeProjects, "paused_until", next.PausedUntil)
	cs := s.captureStateLocked()
	s.o.OnCapture(cs)
	return cs, nil
}
