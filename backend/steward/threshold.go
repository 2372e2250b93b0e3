package steward

import "strings"

// Merge similarities by embedder, for steward.merge_similarity 0.
const (
	// SemanticMergeSimilarity is for semantic models (Ollama): they put
	// paraphrases of one fact above 0.9.
	SemanticMergeSimilarity = 0.88
	// BuiltinMergeSimilarity is for memtray's built-in embedders, which
	// score paraphrases far lower: on recall-dev's 15 labelled
	// near-duplicate pairs they scored 0.52..0.83 (median 0.71) while no
	// two other memories, distractors included, passed 0.59.
	BuiltinMergeSimilarity = 0.7
)

// DefaultMergeSimilarity is the merge similarity for an embedding model.
func DefaultMergeSimilarity(model string) float64 {
	if strings.HasPrefix(model, "builtin-") {
		return BuiltinMergeSimilarity
	}
	return SemanticMergeSimilarity
}
