package ingest

import (
	"strings"
	"testing"
)

// The users of correcting outside dropRevised: a revision cue that
// corrects nothing (inside a conditional clause, or a state that goes on
// and is no problem) is read as no cue by each of them. Each table runs
// its cases with the user switched back to the raw revisionCue too
// (revisionOff), where the new cases come out the other way.

// TestConfirmByNonCorrectingCue: a later sentence of the turn whose cue
// corrects nothing confirms a guess as any plain statement does
// (dropUnconfirmed: the guess is not cut as unconfirmed; the confirming
// sentence restates it). A sentence that corrects confirms nothing, as
// before (TestDropUnconfirmed).
func TestConfirmByNonCorrectingCue(t *testing.T) {
	tests := []struct {
		name, guess, later string
		raw                bool
		confirmed          bool
	}{
		{"a cue in a conditional clause confirms",
			"The upload probably retries three times on HTTP 503 in `sync/upload.go`.",
			"When the upload still fails, `sync/upload.go` retries three times on HTTP 503 because the gateway drops bursts.", false, true},
		{"it did not with the raw cue",
			"The upload probably retries three times on HTTP 503 in `sync/upload.go`.",
			"When the upload still fails, `sync/upload.go` retries three times on HTTP 503 because the gateway drops bursts.", true, false},
		{"a state that goes on and is no problem confirms",
			"The status bar probably shows the retry count from `sync/upload.go`.",
			"The status bar still shows the retry count because `sync/upload.go` keeps the counter from before the refactor.", false, true},
		{"it did not with the raw cue",
			"The status bar probably shows the retry count from `sync/upload.go`.",
			"The status bar still shows the retry count because `sync/upload.go` keeps the counter from before the refactor.", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			revisionOff["raw-confirm"] = tc.raw
			defer delete(revisionOff, "raw-confirm")
			cands := Distill(loopTurn(tc.guess, tc.later), nil)
			for _, c := range cands {
				if strings.Contains(c.Text, "probably") {
					if guessed := strings.HasPrefix(c.Reason, reasonGuess); guessed == tc.confirmed {
						t.Errorf("confirmed = %v, want %v: %+v", !guessed, tc.confirmed, c)
					}
					return
				}
			}
			t.Fatalf("no candidate holds the guess: %+v", cands)
		})
	}
}

// TestMendCutsNonCorrectingPronoun: after a sentence cut whole whose
// subject cannot be put back, a pronoun sentence whose cue corrects
// nothing is about what was cut and is cut too (mendDangling); one that
// corrects says what stands and stays.
func TestMendCutsNonCorrectingPronoun(t *testing.T) {
	const kept = "The importer batches 500 rows per insert in `batch.go`."
	const cut = "Maybe the flush worker is slow."
	tests := []struct {
		name, st string
		raw      bool
		stays    bool
	}{
		{"a state that goes on and is no problem goes", "It still shows the batch count in `importer.log`.", false, false},
		{"it stayed with the raw cue", "It still shows the batch count in `importer.log`.", true, true},
		{"a cue in a conditional clause goes", "It retries the batch when the insert still fails.", false, false},
		{"it stayed with the raw cue", "It retries the batch when the insert still fails.", true, true},
		{"a state that is a problem corrects and stays", "It still shows the old count in `importer.log`.", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			revisionOff["raw-mend"] = tc.raw
			defer delete(revisionOff, "raw-mend")
			c := Candidate{Text: kept + " " + cut + " " + tc.st, Keep: true}
			cutSentences(&c, []string{cut}, "revised later: x")
			if stays := strings.Contains(c.Text, tc.st); stays != tc.stays || !strings.Contains(c.Text, kept) {
				t.Errorf("kept %q, want %q in it: %v", c.Text, tc.st, tc.stays)
			}
		})
	}
}

// TestContextFromNonCorrectingCue: a sentence before a bare pronoun whose
// cue corrects nothing names the pronoun's referent as any sentence does
// and is joined (withContext); one that corrects is not.
func TestContextFromNonCorrectingCue(t *testing.T) {
	const st = "They come from `icons/export.svg`."
	tests := []struct {
		name, before string
		raw          bool
		joined       bool
	}{
		{"a state that goes on and is no problem joins", "The `Toolbar` component still shows the export icons.", false, true},
		{"it did not with the raw cue", "The `Toolbar` component still shows the export icons.", true, false},
		{"a cue in a conditional clause joins", "When the export still fails, the `Toolbar` component shows two retry icons.", false, true},
		{"it did not with the raw cue", "When the export still fails, the `Toolbar` component shows two retry icons.", true, false},
		{"a correction does not join", "The `Toolbar` component still shows the old icons.", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			revisionOff["raw-context"] = tc.raw
			defer delete(revisionOff, "raw-context")
			want := st
			if tc.joined {
				want = tc.before + " " + st
			}
			if got := withContext(st, tc.before); got != want {
				t.Errorf("withContext = %q, want %q", got, want)
			}
		})
	}
}
