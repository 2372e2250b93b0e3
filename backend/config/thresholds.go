package config

// Similarity thresholds follow the embedding model: a field left at 0 is
// not set, and the daemon fills it with the model's calibrated value
// (package calib). The values below are what a field left at 0 means where
// no calibration was applied (tests, evaluations, a model that could not
// be calibrated): the built-in model's, which the calibration rules were
// anchored on.
const (
	// BuiltinDuplicateSimilarity is ingest.duplicate_similarity's value
	// for the built-in model.
	BuiltinDuplicateSimilarity = 0.92
	// BuiltinSourceSimilarity is ingest.source_similarity's.
	BuiltinSourceSimilarity = 0.75
	// BuiltinVectorFloor is search.vector_floor's.
	BuiltinVectorFloor = 0.3
	// BuiltinSkillFloor is recall.skill_floor's.
	BuiltinSkillFloor = 0.35
)

// Duplicate is DuplicateSimilarity, or BuiltinDuplicateSimilarity when
// it is not set.
func (in Ingest) Duplicate() float64 {
	return orDefault(in.DuplicateSimilarity, BuiltinDuplicateSimilarity)
}

// Source is SourceSimilarity, or BuiltinSourceSimilarity when it is not
// set.
func (in Ingest) Source() float64 { return orDefault(in.SourceSimilarity, BuiltinSourceSimilarity) }

// Vector is VectorFloor, or BuiltinVectorFloor when it is not set.
func (s Search) Vector() float64 { return orDefault(s.VectorFloor, BuiltinVectorFloor) }

// Skill is SkillFloor, or BuiltinSkillFloor when it is not set.
func (rc Recall) Skill() float64 { return orDefault(rc.SkillFloor, BuiltinSkillFloor) }

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}
