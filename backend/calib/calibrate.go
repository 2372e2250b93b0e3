package calib

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// RulesVersion changes whenever Rules change, so a stored calibration made
// by older rules is made again.
const RulesVersion = 1

// Result is one model's calibration: its derived thresholds and the
// distributions they came from.
type Result struct {
	// Model is the embedding model calibrated.
	Model string `json:"model"`
	// Set is the calibration set's version and Rules RulesVersion: a
	// result of another set or rules is stale.
	Set   string `json:"set"`
	Rules int    `json:"rules"`
	// At is when the calibration ran.
	At time.Time `json:"at"`
	// Thresholds are the derived values by name (see Rules).
	Thresholds map[string]float64 `json:"thresholds"`
	// Stats summarise each distribution (see Distributions).
	Stats map[string]Summary `json:"stats"`
}

// Calibrate embeds the set s with emb and derives every threshold of
// Rules from the model's distributions. It fails when the embedder fails
// or the model does not separate the classes a rule needs.
func Calibrate(ctx context.Context, emb memory.Embedder, s *Set, now time.Time) (*Result, error) {
	m, err := Measure(ctx, emb, s)
	if err != nil {
		return nil, err
	}
	r := &Result{Model: emb.Model(), Set: s.Version, Rules: RulesVersion, At: now.UTC(),
		Thresholds: map[string]float64{}, Stats: map[string]Summary{}}
	for _, d := range Distributions {
		r.Stats[d] = summarize(m[d])
	}
	for _, rule := range Rules {
		v, err := rule.Derive(m)
		if err != nil {
			return nil, fmt.Errorf("calibrate %s: %w", emb.Model(), err)
		}
		r.Thresholds[rule.Name] = round3(clamp(v))
	}
	return r, nil
}

// clamp keeps a derived value within its config field's range: cosine
// thresholds within 0..1 (a value of exactly 0 would read as "not set").
func clamp(v float64) float64 {
	return math.Min(math.Max(v, 0.001), 1)
}

// round3 rounds to three decimals: finer differences are noise of the set.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// Current says whether r is a calibration of model by the shipped set and
// rules.
func (r *Result) Current(model string) bool {
	return r != nil && r.Model == model && r.Set == Builtin().Version && r.Rules == RulesVersion
}

// Decode reads a stored Result, checking that every rule's threshold is
// present and within 0..1.
func Decode(data []byte) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("stored calibration: %w", err)
	}
	if strings.TrimSpace(r.Model) == "" {
		return nil, fmt.Errorf("stored calibration: no model")
	}
	for _, rule := range Rules {
		v, ok := r.Thresholds[rule.Name]
		if !ok || !(v > 0 && v <= 1) {
			return nil, fmt.Errorf("stored calibration of %s: %s missing or out of range (%v)", r.Model, rule.Name, v)
		}
	}
	return &r, nil
}

// Encode is r as stored.
func (r *Result) Encode() ([]byte, error) { return json.Marshal(r) }

// Recorder keeps one calibration per model (store.Store implements it).
type Recorder interface {
	// Calibration returns what SetCalibration stored for model; ok is
	// false when nothing is.
	Calibration(model string) (data []byte, ok bool, err error)
	// SetCalibration stores data for model.
	SetCalibration(model string, data []byte) error
}

// Ensure returns the stored calibration of emb's model when it is
// current (see Result.Current), else calibrates with the shipped set and
// stores the result. made says it calibrated.
func Ensure(ctx context.Context, rec Recorder, emb memory.Embedder, now time.Time) (r *Result, made bool, err error) {
	model := emb.Model()
	data, ok, err := rec.Calibration(model)
	if err != nil {
		return nil, false, fmt.Errorf("read calibration of %s: %w", model, err)
	}
	if ok {
		if r, err := Decode(data); err == nil && r.Current(model) {
			return r, false, nil
		}
		// A stale or unreadable record is made again below.
	}
	r, err = Calibrate(ctx, emb, Builtin(), now)
	if err != nil {
		return nil, false, err
	}
	data, err = r.Encode()
	if err != nil {
		return nil, false, fmt.Errorf("encode calibration of %s: %w", model, err)
	}
	if err := rec.SetCalibration(model, data); err != nil {
		return nil, false, fmt.Errorf("store calibration of %s: %w", model, err)
	}
	return r, true, nil
}
