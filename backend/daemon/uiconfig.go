package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
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

// Config returns the effective config, judge.anthropic_key masked.
func (d *Daemon) Config(context.Context) (httpapi.ConfigView, error) {
	return d.configView(*d.live.Load()), nil
}

func (d *Daemon) configView(c config.Config) httpapi.ConfigView {
	if c.Judge.AnthropicKey != "" {
		c.Judge.AnthropicKey = maskedKey
	}
	return httpapi.ConfigView{Config: c, Path: d.configPath, Runtime: slices.Clone(RuntimeConfig)}
}

// SetConfig merges a partial config of RuntimeConfig fields, validates the
// result (config.Validate), saves it to the config file the daemon was
// started with (merged into the file's own JSON, so fields the file leaves
// to the defaults stay so), and applies what can be applied at once.
func (d *Daemon) SetConfig(_ context.Context, patch json.RawMessage) (httpapi.ConfigUpdate, error) {
	var pm map[string]any
	dec := json.NewDecoder(bytes.NewReader(patch))
	dec.UseNumber()
	if err := dec.Decode(&pm); err != nil || pm == nil {
		return httpapi.ConfigUpdate{}, fmt.Errorf("%w: the body must be a JSON object of config fields", memory.ErrInvalid)
	}
	paths := leafPaths("", pm)
	if len(paths) == 0 {
		return httpapi.ConfigUpdate{}, fmt.Errorf("%w: nothing to change", memory.ErrInvalid)
	}
	fields := map[string]string{}
	for _, p := range paths {
		if !slices.Contains(RuntimeConfig, p) {
			fields[p] = "cannot be changed here: edit the config file and restart (runtime fields: " + strings.Join(RuntimeConfig, ", ") + ")"
		}
	}
	if len(fields) > 0 {
		return httpapi.ConfigUpdate{}, &httpapi.FieldErrors{Message: "invalid config change", Fields: fields}
	}
	d.liveMu.Lock()
	defer d.liveMu.Unlock()
	cur := *d.live.Load()
	next := cur
	next.Steward.AutoApply = slices.Clone(cur.Steward.AutoApply) // decoding reuses a slice's array
	if err := config.Decode(patch, &next); err != nil {
		return httpapi.ConfigUpdate{}, fmt.Errorf("%w: %v", memory.ErrInvalid, err)
	}
	if err := next.Validate(); err != nil {
		return httpapi.ConfigUpdate{}, configFieldErrors(err)
	}
	up := httpapi.ConfigUpdate{Changed: []string{}, Applied: []string{}, NeedsRestart: []string{}}
	for _, p := range paths {
		if reflect.DeepEqual(fieldAt(cur, p), fieldAt(next, p)) {
			continue
		}
		up.Changed = append(up.Changed, p)
		switch {
		case slices.Contains(liveConfig, p),
			p == "recall.k" && next.Recall.K <= d.cfg.Recall.K,
			p == "recall.max_chars" && next.Recall.MaxChars <= d.cfg.Recall.MaxChars:
			up.Applied = append(up.Applied, p)
		default:
			up.NeedsRestart = append(up.NeedsRestart, p)
		}
	}
	if d.configPath == "" {
		up.Note = "memtray was started without a config file: the change holds until it stops"
	} else if len(up.Changed) > 0 {
		if err := mergeConfigFile(d.configPath, pm); err != nil {
			return httpapi.ConfigUpdate{}, err
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
	d.live.Store(&next)
	up.ConfigView = d.configView(next)
	d.log.Info("config changed", "fields", up.Changed, "saved", up.Saved)
	return up, nil
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
	fe := &httpapi.FieldErrors{Message: "invalid config", Fields: map[string]string{}}
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

// PreviewThreshold replays the recent decisions that reached the content
// gate under another threshold: which would now be rejected, which would
// pass on to the later stages.
func (d *Daemon) PreviewThreshold(_ context.Context, req httpapi.ThresholdPreviewRequest) (httpapi.ThresholdPreview, error) {
	t := req.ContentThreshold
	if !(t >= 0 && t <= 1) {
		return httpapi.ThresholdPreview{}, &httpapi.FieldErrors{Message: "invalid preview",
			Fields: map[string]string{"content_threshold": "must be within 0..1"}}
	}
	cur := d.live.Load().Ingest.ContentThreshold
	if sc := d.pipeline.Scorer(); sc != nil {
		cur = sc.Threshold()
	}
	pv := httpapi.ThresholdPreview{Current: cur, Proposed: t, RejectedExamples: []httpapi.ThresholdFlip{}, PassedExamples: []httpapi.ThresholdFlip{}}
	for _, e := range d.decisions.newest(d.cfg.Ingest.DecisionLog) {
		score, ok := e.Scores["content_score"]
		if !ok {
			continue
		}
		pv.Scored++
		was, will := score >= cur, score >= t
		flip := httpapi.ThresholdFlip{DecisionID: e.ID, Score: score, Verdict: string(e.Verdict), Preview: e.Preview}
		switch {
		case was && !will:
			pv.NowRejected++
			if len(pv.RejectedExamples) < 5 {
				pv.RejectedExamples = append(pv.RejectedExamples, flip)
			}
		case !was && will:
			pv.NowPassed++
			if len(pv.PassedExamples) < 5 {
				pv.PassedExamples = append(pv.PassedExamples, flip)
			}
		}
	}
	return pv, nil
}
