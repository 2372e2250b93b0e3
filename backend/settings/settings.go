// Package settings is the settings service: what people change in a
// running memtray. The config's runtime fields (read, merged from a
// partial config, validated, saved into the config file's own JSON and
// applied where they can be at once), the capture switch with its excluded
// projects and timed pause (kept across restarts in the data dir), and the
// install token's rotation.
//
// The service holds the live config the rest of the daemon reads at every
// use (Live) and the capture proxy, which it builds with the switch the
// user last chose.
package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/capture"
	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// RuntimeConfig lists the config fields PUT /api/config accepts. Capture's
// switch and exclusions are POST /api/capture.
var RuntimeConfig = []string{
	"listen", "capture.anthropic_upstream", "capture.openai_upstream",
	"ingest.content_threshold", "ingest.min_length",
	"judge.max_per_hour", "judge.max_per_day",
	"recall.k", "recall.max_chars", "recall.skills",
	"steward.every", "steward.auto_apply",
}

// liveConfig lists the runtime fields that take effect at once: the
// daemon reads them at every use. recall.k and recall.max_chars take
// effect at once when lowered below their value at start (the recaller
// never exceeds that); raised, after a restart. The other fields belong to
// components built at start (the content scorer, the judge's budget, the
// skill catalogue) and take effect after a restart.
var liveConfig = []string{"steward.every", "steward.auto_apply"}

// maskedKey replaces a set judge.anthropic_key in answers.
const maskedKey = "********"

// ConfigView is what GET /api/config answers.
type ConfigView struct {
	// Config is the effective config; judge.anthropic_key is masked.
	Config config.Config `json:"config"`
	// Path is the config file the daemon saves to ("" when none).
	Path string `json:"path,omitempty"`
	// Runtime lists the fields PUT /api/config accepts.
	Runtime []string `json:"runtime"`
}

// ConfigUpdate is what PUT /api/config answers.
type ConfigUpdate struct {
	ConfigView
	// Changed lists the fields whose value changed; Applied those in
	// effect now, NeedsRestart those in effect after a restart.
	Changed      []string `json:"changed"`
	Applied      []string `json:"applied"`
	NeedsRestart []string `json:"needs_restart"`
	// Saved says whether the config file was written.
	Saved bool   `json:"saved"`
	Note  string `json:"note,omitempty"`
}

// Options configures New.
type Options struct {
	// Config is the config as loaded (the live config starts as it);
	// Built is the one the components were built with (after the
	// similarity thresholds' calibration), whose recall bounds a lowered
	// recall.k or recall.max_chars applies at once under.
	Config, Built config.Config
	// ConfigPath is the config file changes are saved to; "" keeps them
	// for the run only.
	ConfigPath string
	// DataDir holds the capture state file.
	DataDir string
	// Clock times pauses; nil is the system clock.
	Clock memory.Clock
	// Logger gets what changed; nil discards.
	Logger *slog.Logger
	// OnCapture is told every change of the capture state (the live
	// feed); nil: nobody.
	OnCapture func(CaptureState)
	// NewToken makes and saves a new install token; SetToken switches the
	// running handlers to it. Both are needed for RotateToken.
	NewToken func() (string, error)
	SetToken func(string)
}

// Service is the settings service; New makes one.
type Service struct {
	o Options

	liveMu sync.Mutex // orders changes of the live config
	live   atomic.Pointer[config.Config]

	proxy     *capture.Proxy
	captureMu sync.Mutex // orders SetCapture's file write and switch
	exclude   []string
	// pausedUntil ends a timed capture pause (zero: none); under captureMu.
	pausedUntil time.Time
	pauseClock  pauseClock // the running length of a timed pause; under captureMu

	tokenMu sync.Mutex // one rotation at a time (file and memory agree)
}

// New builds the service and the capture proxy, with the capture switch,
// exclusions and pause the user last chose (the capture state file) over
// the config's.
func New(o Options) (*Service, error) {
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OnCapture == nil {
		o.OnCapture = func(CaptureState) {}
	}
	s := &Service{o: o}
	cfg := o.Config
	s.live.Store(&cfg)
	if err := s.openCapture(); err != nil {
		return nil, err
	}
	return s, nil
}

// Live is the config in effect now, changes at runtime included; callers
// read it at every use and must not change it.
func (s *Service) Live() *config.Config { return s.live.Load() }

// Proxy is the capture proxy, built with the user's capture state.
func (s *Service) Proxy() *capture.Proxy { return s.proxy }

// Config returns the effective config, judge.anthropic_key masked.
func (s *Service) Config(context.Context) (ConfigView, error) {
	return s.view(*s.live.Load()), nil
}

func (s *Service) view(c config.Config) ConfigView {
	if c.Judge.AnthropicKey != "" {
		c.Judge.AnthropicKey = maskedKey
	}
	return ConfigView{Config: c, Path: s.o.ConfigPath, Runtime: slices.Clone(RuntimeConfig)}
}

// SetConfig merges a partial config of RuntimeConfig fields, validates the
// result (config.Validate), saves it to the config file the daemon was
// started with (merged into the file's own JSON, so fields the file leaves
// to the defaults stay so), and applies what can be applied at once.
func (s *Service) SetConfig(_ context.Context, patch json.RawMessage) (ConfigUpdate, error) {
	var pm map[string]any
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.UseNumber()
	if err := dec.Decode(&pm); err != nil || pm == nil {
		return ConfigUpdate{}, fmt.Errorf("%w: the body must be a JSON object of config fields", memory.ErrInvalid)
	}
	paths := leafPaths("", pm)
	if len(paths) == 0 {
		return ConfigUpdate{}, fmt.Errorf("%w: nothing to change", memory.ErrInvalid)
	}
	fields := map[string]string{}
	for _, p := range paths {
		if !slices.Contains(RuntimeConfig, p) {
			fields[p] = "cannot be changed here: edit the config file and restart (runtime fields: " + strings.Join(RuntimeConfig, ", ") + ")"
		}
	}
	if len(fields) > 0 {
		return ConfigUpdate{}, &memory.FieldErrors{Message: "invalid config change", Fields: fields}
	}
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	cur := *s.live.Load()
	next := cur
	next.Steward.AutoApply = slices.Clone(cur.Steward.AutoApply) // decoding reuses a slice's array
	if err := config.Decode(patch, &next); err != nil {
		return ConfigUpdate{}, fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	if err := next.Validate(); err != nil {
		return ConfigUpdate{}, configFieldErrors(err)
	}
	up := ConfigUpdate{Changed: []string{}, Applied: []string{}, NeedsRestart: []string{}}
	for _, p := range paths {
		if reflect.DeepEqual(fieldAt(cur, p), fieldAt(next, p)) {
			continue
		}
		up.Changed = append(up.Changed, p)
		switch {
		case slices.Contains(liveConfig, p),
			p == "recall.k" && next.Recall.K <= s.o.Built.Recall.K,
			p == "recall.max_chars" && next.Recall.MaxChars <= s.o.Built.Recall.MaxChars:
			up.Applied = append(up.Applied, p)
		default:
			up.NeedsRestart = append(up.NeedsRestart, p)
		}
	}
	if s.o.ConfigPath == "" {
		up.Note = "memtray was started without a config file: the change holds until it stops"
	} else if len(up.Changed) > 0 {
		if err := mergeConfigFile(s.o.ConfigPath, pm); err != nil {
			return ConfigUpdate{}, err
		}
		up.Saved = true
	}
	if len(up.NeedsRestart) > 0 {
		msg := "fields under needs_restart take effect at the next start"
		if up.Note != "" {
			up.Note += "; " + msg + " (with a config file)"
		} else {
			up.Note = msg
		}
	}
	s.live.Store(&next)
	up.ConfigView = s.view(next)
	s.o.Logger.Info("config changed", "fields", up.Changed, "saved", up.Saved)
	return up, nil
}

// Update changes the live config by change (which validates what it
// changed and may refuse it) and, when there is a config file, merges
// filePatch into it; the live config changes only when both succeed.
func (s *Service) Update(change func(next *config.Config) error, filePatch map[string]any) error {
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	next := *s.live.Load()
	if err := change(&next); err != nil {
		return err
	}
	if s.o.ConfigPath != "" {
		if err := mergeConfigFile(s.o.ConfigPath, filePatch); err != nil {
			return err
		}
	}
	s.live.Store(&next)
	return nil
}

// leafPaths lists the dotted paths of a JSON object's leaves (arrays are leaves).
func leafPaths(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
			out = append(out, leafPaths(p, sub)...)
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// fieldAt is the value of a dotted JSON path of c (nil if none).
func fieldAt(c config.Config, path string) any {
	v := reflect.ValueOf(c)
	for _, name := range strings.Split(path, ".") {
		if v.Kind() != reflect.Struct {
			return nil
		}
		found := false
		for i := range v.NumField() {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			if tag == name {
				v, found = v.Field(i), true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return v.Interface()
}

// configFieldErrors turns config.Validate's errors into field errors.
func configFieldErrors(err error) error {
	var ce config.Errors
	if !errors.As(err, &ce) {
		return fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	fe := &memory.FieldErrors{Message: "invalid config", Fields: map[string]string{}}
	for _, f := range ce {
		fe.Fields[f.Field] = f.Problem
	}
	return fe
}

// mergeConfigFile merges patch into the JSON object of the config file at
// path (a missing file is an empty object), checks that the result loads,
// and writes it atomically.
func mergeConfigFile(path string, patch map[string]any) error {
	file := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("read config %s: %w", path, err)
	default:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&file); err != nil {
			return fmt.Errorf("config %s is not a JSON object, not changed: %w", path, err)
		}
	}
	deepMerge(file, patch)
	out, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	check := config.Default()
	if err := config.Decode(out, &check); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := check.Validate(); err != nil {
		return configFieldErrors(err)
	}
	if err := config.WriteFileAtomic(path, append(out, '\n'), 0o600); err != nil {
		return fmt.Errorf("save config: %w", err)
	}
	return nil
}

// deepMerge copies src's leaves into dst, merging nested objects.
func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// RotateToken makes and saves a new install token and switches every
// handler to it at once: from the next request the old token, and the
// browser sessions signed in with it, are refused; no restart is needed.
// Clients that read the token file (the CLI, hooks, `memtray mcp`, which
// reconnects) pick the new one up by themselves.
func (s *Service) RotateToken(context.Context) (string, error) {
	if s.o.NewToken == nil || s.o.SetToken == nil {
		return "", errors.New("rotate token: no token to rotate")
	}
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	tok, err := s.o.NewToken()
	if err != nil {
		return "", err
	}
	s.o.SetToken(tok)
	s.o.Logger.Info("install token rotated: the old one is refused from now on")
	return tok, nil
}
