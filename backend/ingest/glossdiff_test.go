package ingest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// uploadPatch is a patch that takes allow_failure out of the nightly
// upload step of a CI file, the step's other lines kept.
const uploadPatch = "*** Begin Patch\n*** Update File: .ci/pipeline.yml\n@@\n   - name: Upload the nightly build\n     stage: publish\n-    allow_failure: true\n     script: ./upload.sh\n*** End Patch"

// patchCall is an apply_patch tool call of Codex's shell holding patch.
func patchCall(id, patch string) memory.ToolCall {
	in, _ := json.Marshal(map[string]any{"command": []string{"apply_patch", patch}})
	return memory.ToolCall{ID: id, Name: "shell", Input: string(in)}
}

func TestRemovedSettings(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		key   string // "" for none
		word  string // a word of the lines around it its subject holds
	}{
		{name: "a setting's line taken out", patch: uploadPatch, key: "allow_failure", word: "nightly"},
		{
			name:  "a setting given another value is not removed",
			patch: "*** Begin Patch\n*** Update File: .ci/pipeline.yml\n@@\n   nightly-upload:\n-    allow_failure: true\n+    allow_failure: false\n*** End Patch",
		},
		{
			name:  "a line moved within the hunk is not removed",
			patch: "*** Begin Patch\n*** Update File: .ci/pipeline.yml\n@@\n   nightly-upload:\n-    allow_failure: true\n     script: ./upload.sh\n+    allow_failure: true\n*** End Patch",
		},
		{
			name:  "a setting moved to another file is not removed",
			patch: "*** Begin Patch\n*** Update File: .ci/pipeline.yml\n@@\n   nightly-upload:\n-    allow_failure: true\n*** Update File: .ci/defaults.yml\n@@\n default:\n+  allow_failure: true\n*** End Patch",
		},
		{
			name:  "a line that sets nothing",
			patch: "*** Begin Patch\n*** Update File: upload.sh\n@@\n set -e\n-echo uploading now\n rsync -a out/ mirror:/srv\n*** End Patch",
		},
		{
			name:  "an env file's KEY=value",
			patch: "*** Begin Patch\n*** Update File: deploy/.env\n@@\n MIRROR_HOST=mirror.example.org\n-SKIP_CHECKSUM=1\n*** End Patch",
			key:   "skip_checksum",
			word:  "mirror_host=mirror.example.org",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := parsePatch(tc.patch).removedSettings()
			if tc.key == "" {
				if len(rs) != 0 {
					t.Fatalf("removed %+v, want none", rs)
				}
				return
			}
			if len(rs) != 1 || rs[0].key != tc.key || !rs[0].subject[tc.word] {
				t.Fatalf("removed %+v, want %s around %q", rs, tc.key, tc.word)
			}
		})
	}
}

// TestGlossUndoneByDiff: a patch that removes a glossed setting, in a
// later turn or in the turn after the statement, undoes the statement of
// its description in other words, as a narrated removal does; a patch
// removing it before the statement, or the diff reading switched off,
// does not.
func TestGlossUndoneByDiff(t *testing.T) {
	patchTurn := Turn{SessionID: "s1", Steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{patchCall("p1", uploadPatch)}}, {Text: "Done."}}}
	laterPatch := laterOf(patchTurn)
	if !slices.ContainsFunc(laterPatch, func(l string) bool { return strings.HasPrefix(l, removedLaterMark) }) {
		t.Fatalf("later texts %q hold no removal", laterPatch)
	}
	uploadGloss := "Made the nightly upload job non-fatal while the mirror is down (allow_failure: true)."
	uploadAgain := "Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline."
	tests := []struct {
		name  string
		steps []Step
		later []string
		gone  bool
	}{
		{name: "a later turn's patch", steps: []Step{{Text: uploadAgain}}, later: laterPatch, gone: true},
		{name: "the turn's own patch after the statement", steps: []Step{{Text: uploadAgain, Calls: []memory.ToolCall{patchCall("p1", uploadPatch)}}, {Text: "Done."}}, gone: true},
		{name: "the turn's own patch before the statement", steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{patchCall("p1", uploadPatch)}}, {Text: uploadAgain}}},
	}
	kept := func(tc int) (bool, string) {
		tn := Turn{SessionID: "s1", User: []string{"why does the pipeline pass?"}, Steps: tests[tc].steps}
		tn.held = saidBlocks(Turn{Steps: []Step{{Text: uploadGloss}}})
		stays, why := false, ""
		for _, c := range Distill(tn, tests[tc].later) {
			if strings.Contains(c.Text, "Marked the nightly") {
				stays, why = c.Keep, c.Reason
			}
			for _, k := range c.cuts {
				if strings.Contains(k.text, "Marked the nightly") {
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
			if tc.gone && (!strings.Contains(why, "patch removes allow_failure") || !strings.Contains(why, "the session said")) {
				t.Fatalf("reason %q", why)
			}
			evidenceOff["gloss-diff"] = true
			defer delete(evidenceOff, "gloss-diff")
			if stays, _ := kept(i); !stays {
				t.Fatalf("the statement is cut with the diff reading off")
			}
		})
	}
}

// TestSlimKeepsRemovals: a slimmed turn keeps a call whose patch removes a
// setting, so that live capture reads the same later text of it as batch
// ingest.
func TestSlimKeepsRemovals(t *testing.T) {
	tn := Turn{SessionID: "s1", Steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{patchCall("p1", uploadPatch), {ID: "b1", Name: "shell", Input: `{"command":["make","test"]}`}}}}}
	s := slim(tn)
	if len(s.Steps[0].Calls) != 1 || s.Steps[0].Calls[0].ID != "p1" {
		t.Fatalf("slimmed calls %+v", s.Steps[0].Calls)
	}
	if !slices.Equal(laterOf(s), laterOf(tn)) {
		t.Fatalf("later texts of the slimmed turn %q, of the turn %q", laterOf(s), laterOf(tn))
	}
}

// TestReviseEarlierTurnsByGlossDiff: live, a turn whose only word of the
// removal is its patch revises an earlier turn's statement of the
// setting's description, as batch ingest drops it.
func TestReviseEarlierTurnsByGlossDiff(t *testing.T) {
	var exs []memory.Exchange
	for i, tt := range [][]string{
		{"the nightly upload fails while the mirror is down", "Let me edit the pipeline.", "Made the nightly upload job non-fatal while the mirror is down (allow_failure: true). The retry loop in `deploy/upload.sh` waits 30 s between attempts."},
		{"why is the pipeline green?", "Let me check the last run.", "Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline."},
		{"the mirror is back up", "Let me edit the pipeline.", "Done, the pipeline is updated."},
	} {
		for j, ex := range sessionOf("s-glossdiff", tt[0], tt[1:]...) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1
			if i == 2 && j == 0 {
				ex.ToolCalls = []memory.ToolCall{patchCall("t", uploadPatch)}
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
		return c.Origin == OriginEarlier && strings.Contains(c.Text, "Marked the nightly") && strings.Contains(c.Reason, "patch removes allow_failure")
	}) {
		t.Fatalf("turn 3 does not show the revision: %+v", last.Candidates)
	}
}
