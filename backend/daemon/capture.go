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
}

// openCapture builds the proxy from the config, then applies the state the
// user last chose at runtime, if any.
func (d *Daemon) openCapture() error {
	cc := d.cfg.Capture
	if st, ok, err := d.readCaptureState(); err != nil {
		d.log.Warn("capture state unreadable; using the config", "file", CaptureStateFile, "err", err)
	} else if ok {
		cc.Enabled, cc.ExcludeProjects = st.Enabled, st.ExcludeProjects
	}
	p, err := capture.New(capture.Options{Config: cc, Logger: d.log, Clock: d.clock})
	if err != nil {
		return err
	}
	d.proxy, d.exclude = p, slices.Clone(cc.ExcludeProjects)
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

// runCapture feeds captured exchanges to the write pipeline until ctx
// ends. One worker keeps a session's exchanges in order (a later answer
// may supersede an earlier one).
func (d *Daemon) runCapture(ctx context.Context) {
	d.proxy.Run(ctx, 1, func(ctx context.Context, ex memory.Exchange) error {
		dec, err := d.pipeline.Process(ctx, ex)
		if err = d.indexLag(err); err != nil {
			return err
		}
		d.decisions.add(dec, ex)
		return nil
	})
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
	return httpapi.CaptureState{Enabled: d.proxy.Enabled(), ExcludeProjects: slices.Clone(d.exclude),
		Anthropic: d.cfg.Capture.AnthropicUpstream, OpenAI: d.cfg.Capture.OpenAIUpstream, Stats: raw}
}

// SetCapture turns capture on or off and changes the excluded projects,
// at once and for later starts (CaptureStateFile).
func (d *Daemon) SetCapture(_ context.Context, u httpapi.CaptureUpdate) (httpapi.CaptureState, error) {
	d.captureMu.Lock()
	defer d.captureMu.Unlock()
	next := captureState{Enabled: d.proxy.Enabled(), ExcludeProjects: slices.Clone(d.exclude)}
	if u.Enabled != nil {
		next.Enabled = *u.Enabled
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
	d.exclude = next.ExcludeProjects
	d.log.Info("capture changed", "enabled", next.Enabled, "excluded", next.ExcludeProjects)
	cs := d.captureStateLocked()
	d.publish(httpapi.EventCapture, cs)
	return cs, nil
}
