package cli

import (
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/store"
)

// TestImportSummary: `memtray import` says how many memories it kept
// without their vector (the export held none and the embedder did not
// answer), what that means and how they are made whole; memories embedded
// anew are counted as before.
func TestImportSummary(t *testing.T) {
	tests := []struct {
		name     string
		rep      store.ImportReport
		want     []string
		wantNone []string
	}{
		{"whole", store.ImportReport{Total: 3, Imported: 3}, []string{"imported 3 of 3 memories (0 duplicates skipped, 0 re-embedded)\n"}, []string{"note:"}},
		{"embedded anew", store.ImportReport{Total: 3, Imported: 3, WithoutVector: 2, Reembedded: 2},
			[]string{"2 exported without their damaged vector and embedded anew)"}, []string{"note:", "without a vector"}},
		{"one kept", store.ImportReport{Total: 3, Imported: 3, WithoutVector: 1, KeptWithoutVector: 1},
			[]string{", 1 without a vector)", "note: 1 memory was imported without its vector", "found by their words, not by meaning", "`memtray reindex`"}, []string{"embedded anew)"}},
		{"some kept, some embedded", store.ImportReport{Total: 5, Imported: 5, WithoutVector: 3, KeptWithoutVector: 2, Reembedded: 1},
			[]string{"1 exported without their damaged vector and embedded anew, 2 without a vector)", "note: 2 memories were imported without their vector"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := importSummary(tc.rep)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("summary lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.wantNone {
				if strings.Contains(got, w) {
					t.Errorf("summary has %q:\n%s", w, got)
				}
			}
		})
	}
}
