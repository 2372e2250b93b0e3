package ingest

import "testing"

// TestUserFragments: a user's sentence of function words only ("If not
// it should.") names nothing and is no memory, even with a preference
// cue in it; a short rule that names what it is about is kept.
func TestUserFragments(t *testing.T) {
	for _, tc := range []struct {
		text string
		kept bool
	}{
		{"If not it should.", false},
		{"But it really should, though.", false},
		{"And we must not, ever.", false},
		{"Always use pnpm here.", true},
		{"Never commit the .env files.", true},
		{"If not, it should fall back to the bundled fonts in assets/fonts.", true},
	} {
		t.Run(tc.text, func(t *testing.T) {
			cands := userCandidates(tc.text)
			kept := len(cands) == 1 && cands[0].Keep
			if kept != tc.kept {
				t.Errorf("userCandidates(%q) = %+v; kept %v, want %v", tc.text, cands, kept, tc.kept)
			}
		})
	}
}

// TestContentless: function words only, whatever the punctuation and
// apostrophes; one content word makes a sentence say something.
func TestContentless(t *testing.T) {
	for _, tc := range []struct {
		st   string
		want bool
	}{
		{"If not it should.", true},
		{"It doesn’t, but it will.", true},
		{"If not it should break.", false},
		{"Use yarn.", false},
		{"", false},
	} {
		if got := contentless(tc.st); got != tc.want {
			t.Errorf("contentless(%q) = %v, want %v", tc.st, got, tc.want)
		}
	}
}
