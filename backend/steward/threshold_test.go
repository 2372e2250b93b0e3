package steward

import "testing"

func TestSetMergeSimilarity(t *testing.T) {
	cfg := defaults()
	cfg.MergeSimilarity = 0.9
	_, s := fixture(t, cfg)
	if got := s.mergeSimilarity(); got != 0.9 {
		t.Fatalf("configured: %v", got)
	}
	s.SetMergeSimilarity(BuiltinMergeSimilarity)
	if got := s.mergeSimilarity(); got != BuiltinMergeSimilarity {
		t.Fatalf("after SetMergeSimilarity: %v", got)
	}
	cfg.MergeSimilarity = 0
	_, s = fixture(t, cfg)
	if got := s.mergeSimilarity(); got != 0.88 {
		t.Fatalf("unset: %v", got)
	}
}
