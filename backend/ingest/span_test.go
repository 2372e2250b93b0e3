package ingest

import (
	"slices"
	"testing"
)

// previewLine is a statement whose text holds a short menu item, "G-code
// Preview", inside one of its own sentences (a path through a menu).
const previewLine = "Tools → G-code Preview: Open a PDL (YAML/JSON), pick a hook, set variables, preview rendered G-code."

// TestCutBySpan: each path that cuts a statement out of a memory cuts
// the statement's own span, not the first place its text occurs: a
// statement whose text also stands inside an earlier sentence of the same
// memory (or of another memory) takes nothing from that sentence, and a
// statement held only inside another sentence is not cut at all.
func TestCutBySpan(t *testing.T) {
	compactor := "Compactor: runs once a night in `ledger/compact.go`, because the index points at older segments until its nightly rebuild"
	tests := []struct {
		name string
		run  func() []string // what each memory holds after the cut
		want []string
	}{
		{"cutSentences (revised, guessed, offered, undone, updated): the item cut, not the menu path",
			func() []string {
				c := Candidate{Text: previewLine + " Menu items: G-code Preview Validate Hook Variables, both in `opk/ui/main_window.py`", Keep: true}
				cutSentences(&c, []string{"G-code Preview"}, "revised later: x")
				return []string{c.Text}
			},
			[]string{previewLine + " Menu items: Validate Hook Variables, both in `opk/ui/main_window.py`"}},
		{"cutSentences: a pronoun's sentence mended at its own span",
			func() []string {
				c := Candidate{Text: "`retry.sh` logs \"It backs off.\" on HTTP 429. `retry.sh` lives in `tools/`. It backs off.", Keep: true}
				cutSentences(&c, []string{"`retry.sh` lives in `tools/`."}, "revised later: x")
				return []string{c.Text}
			},
			[]string{"`retry.sh` logs \"It backs off.\" on HTTP 429. `retry.sh` backs off."}},
		{"cutSentences: a parenthetical aside is still cut where it stands",
			func() []string {
				c := Candidate{Text: "The build uses `-O1` in a rescue block (compiler bug workaround) for `arm64` in `build.sh`.", Keep: true}
				cutSentences(&c, []string{"(compiler bug workaround)"}, "guessed: x")
				return []string{c.Text}
			},
			[]string{"The build uses `-O1` in a rescue block for `arm64` in `build.sh`."}},
		{"replaceSentences (moved): the sentence replaced at its own span",
			func() []string {
				c := Candidate{Text: "The README quotes the old line Config lives in `conf/app.toml` now. as history. Config lives in `conf/app.toml` now.", Keep: true}
				replaceSentences(&c, [][3]string{{"Config lives in `conf/app.toml` now.", "", "Config lives in `conf/app.toml` now."}}, "revised later: x")
				return []string{c.Text}
			},
			[]string{"The README quotes the old line Config lives in `conf/app.toml` now. as history."}},
		{"undoneIn (undone): the sentence held as its own is cut, one held only inside it is not",
			func() []string {
				sents := []string{previewLine, "G-code Preview"}
				u, _ := undoOf(posSentence{text: "I removed the `G-code` `Preview` menu item from `main_window.py`.", pos: 5}, false)
				cut, _ := undoneIn(previewLine, sents, 0, []undo{u})
				return cut
			},
			[]string{previewLine}},
		{"glossUndoneIn (undone, gloss): the sentence held as its own is cut, one held only inside it is not",
			func() []string {
				sents := []string{previewLine, "G-code Preview"}
				u, _ := undoOf(posSentence{text: "I removed `gcodePreview` from `main_window.py`.", pos: 5}, false)
				l := glossUndo{undo: u, gloss: gloss{ident: "gcodepreview", words: map[string]bool{"g-code": true, "preview": true}, desc: "G-code Preview"}}
				l.removed = true
				cut, _ := glossUndoneIn(previewLine, sents, 0, []glossUndo{l})
				return cut
			},
			[]string{previewLine}},
		{"dropOffered (offered): an offered item held only inside another sentence stays",
			func() []string {
				turn := Turn{Steps: []Step{{Text: previewLine + "\n\nIf you want, I can:\n- G-code Preview\n- Validate Hook Variables"}}}
				cands := []Candidate{{Text: previewLine, Keep: true, Origin: OriginFinal, step: 0}}
				dropOffered(turn, cands)
				return []string{cands[0].Text}
			},
			[]string{previewLine}},
		{"dropUpdated (updated): the memory holding the statement as its own is cut, not one quoting it",
			func() []string {
				quoting := "The README quoted Compactor: runs once a night in `ledger/compact.go`, because the index points at older segments until its nightly rebuild before `docs/ledger.md` replaced it"
				cands := []Candidate{
					{Text: quoting, Keep: true, Origin: OriginFinal},
					{Text: "Retention is configurable now in `config/ledger.toml`. " + compactor, Keep: true, Origin: OriginFinal},
				}
				later := "Compactor: runs once a night in `ledger/compact.go` and at startup, because the index points at older segments until its rebuild"
				dropUpdated(Turn{}, cands, []posSentence{{text: compactor, pos: 0}}, []posSentence{{text: later, pos: 5}})
				return []string{cands[0].Text, cands[1].Text}
			},
			[]string{
				"The README quoted Compactor: runs once a night in `ledger/compact.go`, because the index points at older segments until its nightly rebuild before `docs/ledger.md` replaced it",
				"Retention is configurable now in `config/ledger.toml`.",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.run(); !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// TestSentenceIndex: a sentence's own span is bounded by whitespace or
// the text's ends, and one where a sentence opens is preferred.
func TestSentenceIndex(t *testing.T) {
	tests := []struct {
		text, s string
		want    int
	}{
		{"Tools → G-code Preview: open it", "G-code Preview", -1},
		{"Open the G-code Preview dialog. G-code Preview", "G-code Preview", 32},
		{"Open the G-code Preview dialog", "G-code Preview", 9},
		{"Items:\nG-code Preview", "G-code Preview", 7},
		{"G-code Preview", "G-code Preview", 0},
		{"anything", "", -1},
	}
	for _, tc := range tests {
		if got := sentenceIndex(tc.text, tc.s); got != tc.want {
			t.Errorf("sentenceIndex(%q, %q) = %d, want %d", tc.text, tc.s, got, tc.want)
		}
	}
}

// TestHoldsPiece: the reasons of a revision find a whole sentence only as
// a sentence of its own, a clause or an unpunctuated item anywhere.
func TestHoldsPiece(t *testing.T) {
	tests := []struct {
		text, s string
		want    bool
	}{
		{"The deploy job failed. Build done.", "Build done.", true},
		{"The log line `Build done.` shows after every step.", "Build done.", false},
		{"Run it (only on CI) before the release.", "(only on CI)", true},
		{"Compactor: 64 MiB Compactor", "64 MiB Compactor", true},
	}
	for _, tt := range tests {
		if got := holdsPiece(tt.text, tt.s); got != tt.want {
			t.Errorf("holdsPiece(%q, %q) = %v, want %v", tt.text, tt.s, got, tt.want)
		}
	}
	// revisedWhy reads the same: a memory quoting the revised sentence
	// inside another one was not revised by it (at e6cd3fa it was).
	now := []Candidate{{Text: "Build done.", Reason: "revised later: the build never finished"}}
	if why := revisedWhy(now, "The log line `Build done.` shows after every step."); why != "" {
		t.Errorf("revisedWhy = %q, want none", why)
	}
	if why := revisedWhy(now, "The deploy job failed. Build done."); why == "" {
		t.Error("revisedWhy found no revision of the memory holding the sentence")
	}
}
