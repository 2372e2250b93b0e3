// Package calib calibrates memtray's similarity thresholds to an embedding
// model. Each model puts similar and unrelated texts at its own cosines
// (the built-in embedder scores unrelated memories near 0.1, many semantic
// models above 0.5), so a threshold tuned for one model means something
// else with another. Calibrate embeds a small labelled set shipped in the
// binary (Builtin: software-development memories in near-duplicate,
// paraphrase, related and unrelated pairs, and prompts with and without a
// relevant memory) with the model, measures the cosine distribution of each
// class, and places every threshold at a fixed relative position between
// two of those distributions (Rules). The fractions were fitted once so
// that the built-in model's derived thresholds are the values memtray
// shipped with; under any monotone affine change of the cosine scale the
// thresholds move with it exactly. docs/embedders.md lists the rules.
//
// The result is stored with the model (Recorder, implemented by the
// store) and applied to a configuration by Apply wherever the user left a
// threshold at 0 (not set); a value set in the config file wins.
package calib
