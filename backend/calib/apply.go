package calib

import (
	"strings"

	"github.com/memtray/memtray/backend/config"
)

// Sources of a threshold's value (Value.Source).
const (
	// SourceConfig: the config file sets the value; calibration does not
	// touch it.
	SourceConfig = "config"
	// SourceCalibrated: derived from the embedding model's calibration.
	SourceCalibrated = "calibrated"
	// SourceDefault: not set and no calibration applies (the model could
	// not be calibrated): the value memtray shipped with before
	// calibration.
	SourceDefault = "default"
)

// semanticMerge is the merge similarity a model other than the built-in
// one got before calibration (steward.SemanticMergeSimilarity).
const semanticMerge = 0.88

// Value is one threshold in effect and where it came from.
type Value struct {
	// Name is the config key, e.g. "ingest.duplicate_similarity".
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Source string  `json:"source"`
	// Calibrated is the model's calibrated value, 0 when there is none
	// (shown next to a config override).
	Calibrated float64 `json:"calibrated,omitempty"`
}

// field returns a pointer to the config field of a threshold name.
func field(cfg *config.Config, name string) *float64 {
	switch name {
	case DuplicateSimilarity:
		return &cfg.Ingest.DuplicateSimilarity
	case SourceSimilarity:
		return &cfg.Ingest.SourceSimilarity
	case MergeSimilarity:
		return &cfg.Steward.MergeSimilarity
	case VectorFloor:
		return &cfg.Search.VectorFloor
	case SkillFloor:
		return &cfg.Recall.SkillFloor
	}
	panic("calib: no config field for " + name)
}

// Apply fills every threshold cfg leaves at 0 (not set) with r's value
// for it, or, when r is nil or not a calibration of model, with the value
// memtray used before calibration (the built-in model's; 0.88 for another
// model's merge similarity). A value the config sets stays. It returns the
// thresholds in effect, in Rules' order.
func Apply(cfg *config.Config, r *Result, model string) []Value {
	if r != nil && r.Model != model {
		r = nil
	}
	out := make([]Value, 0, len(Rules))
	for _, rule := range Rules {
		f := field(cfg, rule.Name)
		v := Value{Name: rule.Name}
		if r != nil {
			v.Calibrated = r.Thresholds[rule.Name]
		}
		switch {
		case *f != 0:
			v.Source = SourceConfig
		case v.Calibrated > 0:
			v.Source, *f = SourceCalibrated, v.Calibrated
		default:
			v.Source, *f = SourceDefault, rule.Builtin
			if rule.Name == MergeSimilarity && !strings.HasPrefix(model, "builtin-") {
				*f = semanticMerge
			}
		}
		v.Value = *f
		out = append(out, v)
	}
	return out
}
