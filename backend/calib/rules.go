package calib

import "fmt"

// Names of the calibrated thresholds: their config keys.
const (
	DuplicateSimilarity = "ingest.duplicate_similarity"
	SourceSimilarity    = "ingest.source_similarity"
	MergeSimilarity     = "steward.merge_similarity"
	VectorFloor         = "search.vector_floor"
	SkillFloor          = "recall.skill_floor"
)

// Anchor is one quantile of one distribution.
type Anchor struct {
	Dist string  `json:"dist"`
	Q    float64 `json:"q"`
}

// String is e.g. "paraphrase P90".
func (a Anchor) String() string { return fmt.Sprintf("%s P%02.0f", a.Dist, a.Q*100) }

// Rule derives one threshold: Lo + Fraction x (Hi - Lo), between two
// anchors of the model's distributions (Hi the higher one, for any sane
// model). Fraction was fitted once so that the built-in model gets
// Builtin, the value memtray shipped with before calibration; a model
// whose cosines are an increasing affine function of the built-in's gets
// the same function of Builtin.
type Rule struct {
	Name     string  `json:"name"`
	Lo       Anchor  `json:"lo"`
	Hi       Anchor  `json:"hi"`
	Fraction float64 `json:"fraction"`
	// Builtin is the value the rule was anchored on (the built-in model's
	// pre-calibration threshold).
	Builtin float64 `json:"builtin"`
	// Why says what the threshold separates.
	Why string `json:"why"`
}

// Rules are the calibrated thresholds' rules, in display order. The
// fractions come from builtin-wordvec-v1 on set.json (see
// TestRulesReproduceBuiltin).
var Rules = []Rule{
	{Name: DuplicateSimilarity, Lo: Anchor{DistParaphrase, 0.9}, Hi: Anchor{DistNear, 0.1}, Fraction: 0.934, Builtin: 0.92,
		Why: "a near duplicate (reinforces or replaces the stored memory) against a restatement in other words (a new memory)"},
	{Name: SourceSimilarity, Lo: Anchor{DistRelated, 0.9}, Hi: Anchor{DistNear, 0.1}, Fraction: 0.593, Builtin: 0.75,
		Why: "a chunk that extends an ingested source document against one merely on its topic"},
	{Name: MergeSimilarity, Lo: Anchor{DistRelated, 0.9}, Hi: Anchor{DistNear, 0.1}, Fraction: 0.483, Builtin: 0.70,
		Why: "two memories of one fact (the sweep merges them) against two facts of one topic"},
	{Name: VectorFloor, Lo: Anchor{DistMiss, 0.5}, Hi: Anchor{DistHit, 0.5}, Fraction: 0.236, Builtin: 0.30,
		Why: "a memory that answers the prompt by meaning alone against the best memory for a prompt the store knows nothing about"},
	{Name: SkillFloor, Lo: Anchor{DistMiss, 0.5}, Hi: Anchor{DistHit, 0.5}, Fraction: 0.415, Builtin: 0.35,
		Why: "a skill written for the prompt against the best match of an unrelated prompt"},
}

// RuleFor returns the rule of a threshold name.
func RuleFor(name string) (Rule, bool) {
	for _, r := range Rules {
		if r.Name == name {
			return r, true
		}
	}
	return Rule{}, false
}

// anchorValue is a's quantile in m.
func anchorValue(m Measured, a Anchor) float64 { return quantile(m[a.Dist], a.Q) }

// Derive applies r to m. It fails when the anchors are not ordered (Hi
// below Lo): such a model does not separate the classes the threshold is
// about, and no threshold derived from it means anything.
func (r Rule) Derive(m Measured) (float64, error) {
	lo, hi := anchorValue(m, r.Lo), anchorValue(m, r.Hi)
	if !(hi > lo) {
		return 0, fmt.Errorf("%s: %s (%.3f) is not above %s (%.3f): the model does not separate them", r.Name, r.Hi, hi, r.Lo, lo)
	}
	return lo + r.Fraction*(hi-lo), nil
}

// fit is the fraction that makes r give want on m.
func (r Rule) fit(m Measured, want float64) float64 {
	lo, hi := anchorValue(m, r.Lo), anchorValue(m, r.Hi)
	return (want - lo) / (hi - lo)
}
