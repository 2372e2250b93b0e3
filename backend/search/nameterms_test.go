package search

import (
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/store"
)

// TestNameTerms: the BM25 leg's name terms are the prompt's names as
// written (store.Term.Name, weight 1), none for a prompt of words, and
// none with the switch off.
func TestNameTerms(t *testing.T) {
	for _, c := range []struct {
		prompt string
		want   []store.Term
	}{
		{"what does --firmware do?", []store.Term{{Text: "--firmware", Boost: 1, Name: true}}},
		{"where is `examples/` defined? see slice()", []store.Term{{Text: "examples/", Boost: 1, Name: true}, {Text: "slice()", Boost: 1, Name: true}}},
		{"how is the firmware mapped?", nil},
	} {
		if got := nameTerms(c.prompt); !slices.Equal(got, c.want) {
			t.Errorf("nameTerms(%q) = %v, want %v", c.prompt, got, c.want)
		}
	}
	defer func(on bool) { nameTermsOn = on }(nameTermsOn)
	nameTermsOn = false
	if got := nameTerms("what does --firmware do?"); got != nil {
		t.Errorf("off: %v", got)
	}
}
