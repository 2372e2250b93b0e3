package ingest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestGlossesIn(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		ident string   // "" for no gloss
		words []string // the description's subject words, sorted
	}{
		{
			name:  "an identifier alone in brackets, with its value",
			text:  "Made the nightly upload step non-fatal (allow_failure: true).",
			ident: "allow_failure",
			words: []string{"nightly", "non-fatal", "upload"},
		},
		{
			name:  "a condition after the description is not what the setting does",
			text:  "Made the export step optional if the bucket is missing (skip-missing: true).",
			ident: "skip-missing",
			words: []string{"export", "optional"},
		},
		{
			name:  "a backticked identifier after by and a verb of setting",
			text:  "Silenced the warmup logger by setting `QUIET_WARMUP`.",
			ident: "quiet_warmup",
			words: []string{"logger", "silenc", "warmup"},
		},
		{
			name:  "a backticked identifier before which and its description",
			text:  "Added `--keep-going`, which lets the integration suite continue past failures.",
			ident: "--keep-going",
			words: []string{"continu", "failur", "integration", "suite"},
		},
		{
			name: "a file name is no setting",
			text: "Moved the retry settings out of the request handler (`retry_config.yaml`).",
		},
		{
			name: "a description of one word says too little",
			text: "Fixed the tests (max_retries: 3).",
		},
		{
			name: "a description that names code of its own is no plain-words gloss",
			text: "Raised the `pool.go` idle timeouts (idle_timeout: 30s).",
		},
		{
			name: "a plain word in brackets is no identifier",
			text: "Made the nightly upload step non-fatal (temporarily).",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gs := glossesIn(lower(tc.text), 3, nil)
			if tc.ident == "" {
				if len(gs) != 0 {
					t.Fatalf("glosses %+v, want none", gs)
				}
				return
			}
			if len(gs) != 1 || gs[0].ident != tc.ident || gs[0].pos != 3 || !slices.Equal(slices.Sorted(maps.Keys(gs[0].words)), tc.words) {
				t.Fatalf("glosses %+v, want %s with %q", gs, tc.ident, tc.words)
			}
			if other := glossesIn(lower(tc.text), 3, map[string]bool{"something_else": true}); len(other) != 0 {
				t.Fatalf("glosses %+v of an identifier no undo names", other)
			}
		})
	}
}

// The fixtures of an undo in other words: the session glosses a setting,
// says its description again without it, then removes it.
const (
	glossSaid   = "Made the nightly upload step non-fatal while the mirror is down (allow_failure: true)."
	glossAgain  = "Marked the nightly upload step as non-fatal so a mirror outage doesn't fail the pipeline."
	glossUndoes = "I removed the upload `allow_failure` now that the mirror is back."
)

func TestGlossUndone(t *testing.T) {
	tests := []struct {
		name    string
		earlier []string // what an earlier turn of the session said (Turn.held)
		texts   []string // the turn's texts
		later   []string
		gone    bool // the statement in other words is cut (only with the gloss link on)
	}{
		{
			name:    "an earlier turn's gloss links the undo to the statement in other words",
			earlier: []string{glossSaid},
			texts:   []string{glossAgain},
			later:   []string{glossUndoes},
			gone:    true,
		},
		{
			name:  "a later turn's gloss before the undo links them too",
			texts: []string{glossAgain},
			later: []string{"The mirror outage is handled for now.\n\n" + glossSaid, glossUndoes},
			gone:  true,
		},
		{
			name:  "a gloss said after the undo links nothing",
			texts: []string{glossAgain},
			later: []string{glossUndoes, glossSaid},
		},
		{
			name:    "without a gloss the undo names nothing the statement says",
			earlier: []string{"The mirror is down since Monday, so the nightly job retries every hour."},
			texts:   []string{glossAgain},
			later:   []string{glossUndoes},
		},
		{
			name:    "an undo of the identifier elsewhere (no word of the description) is another thing",
			earlier: []string{glossSaid},
			texts:   []string{glossAgain},
			later:   []string{"I removed `allow_failure` from the lint job."},
		},
		{
			name:    "a statement missing a word of the description says something else",
			earlier: []string{glossSaid},
			texts:   []string{"Marked the upload step as non-fatal so a mirror outage doesn't fail the pipeline."},
			later:   []string{glossUndoes},
		},
		{
			name:    "an undo of another identifier leaves the statement alone",
			earlier: []string{glossSaid},
			texts:   []string{glossAgain},
			later:   []string{"I removed the upload `retry_limit` now that the mirror is back."},
		},
	}
	const gone = "Marked the "
	kept := func(tc int) (bool, string) {
		c := tests[tc]
		tn := Turn{SessionID: "s1", User: []string{"why does the pipeline pass?"}}
		for _, tx := range c.texts {
			tn.Steps = append(tn.Steps, Step{Text: tx})
		}
		var earlier Turn
		for _, tx := range c.earlier {
			earlier.Steps = append(earlier.Steps, Step{Text: tx})
		}
		tn.held = saidBlocks(earlier)
		stays, why := false, ""
		for _, cv := range Distill(tn, modelSaid(c.later...)) {
			if cv.Keep && strings.Contains(cv.Text, gone) {
				stays = true
			}
			if !cv.Keep && strings.Contains(cv.Text, gone) {
				why = cv.Reason
			}
			for _, k := range cv.cuts {
				if strings.Contains(k.text, gone) {
					why = k.reason
				}
			}
		}
		return stays, why
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stays, why := kept(i)
			if stays == tc.gone {
				t.Fatalf("statement kept %v, want %v (reason %q)", stays, !tc.gone, why)
			}
			if tc.gone && (!strings.HasPrefix(why, "undone later: "+glossUndoes) || !strings.Contains(why, `the session said "made the nightly upload step non-fatal" for allow_failure`)) {
				t.Fatalf("reason %q", why)
			}
			evidenceOff["gloss"] = true
			defer delete(evidenceOff, "gloss")
			if stays, _ := kept(i); !stays {
				t.Fatalf("the statement is cut with the gloss link off")
			}
		})
	}
}

// TestSaidBlocksGlosses: what a turn said is recorded with the glosses its
// findings and changes make, and their bytes are counted (heldSize, so the
// bound of the session's record, maxRecentBytes, counts them).
func TestSaidBlocksGlosses(t *testing.T) {
	turn := Turn{Steps: []Step{{Text: glossSaid + " The nightly job uploads to the mirror in `deploy/upload.sh`."}}}
	said := saidBlocks(turn)
	if len(said) != 1 || len(said[0].glosses) != 1 || said[0].glosses[0].ident != "allow_failure" || said[0].glosses[0].pos != -1 {
		t.Fatalf("said %+v", said)
	}
	bare := slices.Clone(said)
	bare[0].glosses = nil
	if heldSize(said) <= heldSize(bare) {
		t.Fatalf("heldSize %d with the gloss, %d without", heldSize(said), heldSize(bare))
	}
	evidenceOff["gloss"] = true
	defer delete(evidenceOff, "gloss")
	if off := saidBlocks(turn); len(off) != 1 || len(off[0].glosses) != 0 {
		t.Fatalf("said with the gloss link off %+v", off)
	}
}

// TestReviseEarlierTurnsByGloss: live, the turn that removes a glossed
// setting revises an earlier turn's statement of its description in other
// words, as batch ingest drops it, with the gloss in the reason.
func TestReviseEarlierTurnsByGloss(t *testing.T) {
	checkGlossRevisedLive(t, "s-gloss", [3]string{glossSaid + " The retry loop in `deploy/upload.sh` waits 30 s between attempts.", glossAgain, glossUndoes}, nil, "the session said")
}

// checkGlossRevisedLive replays a three-turn session about the nightly
// upload, batch and live (replayBoth): turn 1's answer glosses its
// setting, turn 2's says the description in other words ("Marked the
// nightly ..."), turn 3 undoes the setting (answers[2], and calls, when
// given, in its first exchange). Live turn 2 must store its statement,
// neither store may keep the description, and live turn 3 must list the
// revision of turn 2's statement with a reason holding want.
func checkGlossRevisedLive(t *testing.T, id string, answers [3]string, calls []memory.ToolCall, want string) {
	t.Helper()
	var exs []memory.Exchange
	for i, tt := range [][]string{
		{"the nightly upload fails while the mirror is down", "Let me edit the pipeline.", answers[0]},
		{"why is the pipeline green?", "Let me check the last run.", answers[1]},
		{"the mirror is back up", "Let me edit the pipeline.", answers[2]},
	} {
		for j, ex := range sessionOf(id, tt[0], tt[1:]...) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1
			if i == 2 && j == 0 && calls != nil {
				ex.ToolCalls = calls
			}
			exs = append(exs, ex)
		}
	}
	turns := GroupTurns(exs)
	if len(turns) != 3 {
		t.Fatalf("%d turns", len(turns))
	}
	_, _, decs, got := replayBoth(t, turns)
	second, last := decs[1], decs[len(decs)-1]
	if !slices.ContainsFunc(second.Candidates, func(c memory.CandidateVerdict) bool { return c.Kept && strings.Contains(c.Text, "Marked the nightly") }) {
		t.Fatalf("live turn 2 did not store its statement: %+v", second.Candidates)
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "non-fatal") }) {
		t.Fatalf("store %q: the description of the removed setting stands", got)
	}
	if !slices.ContainsFunc(last.Candidates, func(c memory.CandidateVerdict) bool {
		return c.Origin == OriginEarlier && strings.Contains(c.Text, "Marked the nightly") && strings.Contains(c.Reason, want)
	}) {
		t.Fatalf("turn 3 does not show the revision: %+v", last.Candidates)
	}
}

// TestGlossUndoneInLeavesOthers: a sentence that names the identifier
// itself is undoneIn's to judge, and one that reports an undo of its own
// is no statement of the state; the gloss link cuts neither.
func TestGlossUndoneInLeavesOthers(t *testing.T) {
	u, ok := undoOf(posSentence{text: glossUndoes, pos: 10}, false)
	if !ok {
		t.Fatal("the fixture's undo is no undo")
	}
	links := glossUndos([]undo{u}, glossesIn(lower(glossSaid), 1, nil))
	if len(links) != 1 {
		t.Fatalf("links %+v", links)
	}
	for _, tc := range []struct {
		sent string
		cut  bool
	}{
		{glossAgain, true},
		{"Marked the nightly upload step as non-fatal through allow_failure so a mirror outage passes.", false},
		{"Reverted the nightly upload step to non-fatal after the mirror failed again.", false},
	} {
		cut, _ := glossUndoneIn(tc.sent, []string{tc.sent}, 2, links)
		if (len(cut) > 0) != tc.cut {
			t.Errorf("%q cut %v, want %v", tc.sent, cut, tc.cut)
		}
		if cut, _ := glossUndoneIn(tc.sent, []string{tc.sent}, 10, links); len(cut) > 0 {
			t.Errorf("%q cut by an undo said before it", tc.sent)
		}
	}
}
