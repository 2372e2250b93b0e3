package wordvec

// Truncated returns a model of m's n most frequent words (all of them when
// n >= m.Len()), with the same SIF constant: the vocabulary-size ablation of
// TestExperimentAblation without retraining.
func Truncated(m *Model, n int) *Model {
	n = min(n, len(m.words))
	t := &Model{dim: m.dim, words: m.words[:n], prob: m.prob[:n], scales: m.scales[:n], vecs: m.vecs[:n*m.dim]}
	if err := t.init(); err != nil {
		panic(err)
	}
	if err := t.SetSIF(m.a); err != nil {
		panic(err)
	}
	return t
}
