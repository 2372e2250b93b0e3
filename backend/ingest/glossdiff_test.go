package ingest

import (
	"encoding/json"
	"fmt"
	"maps"
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

// uploadOld and uploadNew are uploadPatch's step before and after it, as
// Claude Code's Edit writes them (old_string and new_string).
const (
	uploadOld = "  - name: Upload the nightly build\n    stage: publish\n    allow_failure: true\n    script: ./upload.sh"
	uploadNew = "  - name: Upload the nightly build\n    stage: publish\n    script: ./upload.sh"
)

// claudeCall is a Claude Code tool call of the named tool with input.
func claudeCall(id, name string, input map[string]any) memory.ToolCall {
	in, _ := json.Marshal(input)
	return memory.ToolCall{ID: id, Name: name, Input: string(in)}
}

// uploadCalls are the same removal of allow_failure from the nightly
// upload step in each agent's form of a file edit: the removal rules read
// them alike (callPatch).
var uploadCalls = []struct {
	form string
	call func(id string) memory.ToolCall
}{
	{"Codex apply_patch", func(id string) memory.ToolCall { return patchCall(id, uploadPatch) }},
	{"Claude Code Edit", func(id string) memory.ToolCall {
		return claudeCall(id, "Edit", map[string]any{"file_path": "/home/dev/shop/.ci/pipeline.yml", "old_string": uploadOld, "new_string": uploadNew})
	}},
	{"Claude Code MultiEdit", func(id string) memory.ToolCall {
		return claudeCall(id, "MultiEdit", map[string]any{"file_path": "/home/dev/shop/.ci/pipeline.yml", "edits": []map[string]string{
			{"old_string": "image: golang:1.22", "new_string": "image: golang:1.23"},
			{"old_string": uploadOld, "new_string": uploadNew},
		}})
	}},
	{"text editor str_replace", func(id string) memory.ToolCall {
		return claudeCall(id, "str_replace_based_edit_tool", map[string]any{"command": "str_replace", "path": ".ci/pipeline.yml", "old_str": uploadOld, "new_str": uploadNew})
	}},
}

func TestRemovedSettings(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		call  memory.ToolCall // read instead of patch when named
		key   string          // "" for none
		word  string          // a word of the lines around it its subject holds
	}{
		{name: "Claude Code's Edit takes a setting out", call: uploadCalls[1].call("e1"), key: "allow_failure", word: "nightly"},
		{name: "Claude Code's MultiEdit takes a setting out", call: uploadCalls[2].call("e1"), key: "allow_failure", word: "nightly"},
		{
			name: "Claude Code's Edit giving a setting another value removes nothing",
			call: claudeCall("e1", "Edit", map[string]any{"file_path": ".ci/pipeline.yml", "old_string": "  nightly-upload:\n    allow_failure: true", "new_string": "  nightly-upload:\n    allow_failure: false"}),
		},
		{
			name: "Claude Code's MultiEdit moving a setting to another step removes nothing",
			call: claudeCall("e1", "MultiEdit", map[string]any{"file_path": ".ci/pipeline.yml", "edits": []map[string]string{
				{"old_string": "  nightly-upload:\n    allow_failure: true", "new_string": "  nightly-upload:"},
				{"old_string": "  nightly-sync:", "new_string": "  nightly-sync:\n    allow_failure: true"},
			}}),
		},
		{
			name: "Claude Code's Write of a whole file removes nothing",
			call: claudeCall("e1", "Write", map[string]any{"file_path": ".ci/pipeline.yml", "content": "stages:\n  - publish\n"}),
		},
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
			if tc.call.Name != "" {
				rs = nil
				if p := callPatch(tc.call); p != nil {
					rs = p.removedSettings()
				}
			}
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
	for _, form := range uploadCalls {
		t.Run(form.form, func(t *testing.T) { testGlossUndoneByDiff(t, form.call) })
	}
}

func testGlossUndoneByDiff(t *testing.T, call func(id string) memory.ToolCall) {
	patchTurn := Turn{SessionID: "s1", Steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{call("p1")}}, {Text: "Done."}}}
	laterPatch := laterOf(patchTurn)
	if !hasLater(laterPatch, LaterSettingsRemoved) {
		t.Fatalf("later texts %q hold no removal", laterPatch)
	}
	tests := []struct {
		name  string
		steps []Step
		later []LaterText
		gone  bool
	}{
		{name: "a later turn's patch", steps: []Step{{Text: uploadAgain}}, later: laterPatch, gone: true},
		{name: "the turn's own patch after the statement", steps: []Step{{Text: uploadAgain, Calls: []memory.ToolCall{call("p1")}}, {Text: "Done."}}, gone: true},
		{name: "the turn's own patch before the statement", steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{call("p1")}}, {Text: uploadAgain}}},
	}
	kept := func(tc int) (bool, string) {
		return nightlyStays(tests[tc].steps, tests[tc].later)
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
	for _, form := range uploadCalls {
		t.Run(form.form, func(t *testing.T) {
			tn := Turn{SessionID: "s1", Steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{form.call("p1"), {ID: "b1", Name: "shell", Input: `{"command":["make","test"]}`}}}}}
			s := slim(tn)
			if len(s.Steps[0].Calls) != 1 || s.Steps[0].Calls[0].ID != "p1" {
				t.Fatalf("slimmed calls %+v", s.Steps[0].Calls)
			}
			later := laterOf(tn)
			if !slices.ContainsFunc(later, func(l LaterText) bool {
				return l.From == LaterSettingsRemoved && strings.HasPrefix(l.Text, "allow_failure\t")
			}) {
				t.Fatalf("later texts %q hold no removal of allow_failure", later)
			}
			if !slices.Equal(laterOf(s), later) {
				t.Fatalf("later texts of the slimmed turn %q, of the turn %q", laterOf(s), later)
			}
		})
	}
}

// TestRemovalCall: the call a slimmed turn keeps of a patch that removes
// settings reads as the same removals, with the same subjects, however
// close the removed lines sit and whatever else the patch changes.
func TestRemovalCall(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		keys  int
	}{
		{"one removal", uploadPatch, 1},
		{"two settings removed side by side",
			"*** Begin Patch\n*** Update File: ci.yml\n@@\n   lint:\n-    allow_failure: true\n-    retry_count: 2\n     script: make lint\n*** End Patch", 2},
		{"a removal beside a setting given another value",
			"*** Begin Patch\n*** Update File: ci.yml\n@@\n   lint:\n-    allow_failure: true\n-    timeout_minutes: 5\n+    timeout_minutes: 9\n     script: make lint\n*** End Patch", 1},
		{"a key removed twice, once beside another removal",
			"*** Begin Patch\n*** Update File: ci.yml\n@@\n   lint:\n-    allow_failure: true\n     script: make lint\n@@\n   deploy:\n-    retry_count: 2\n-    allow_failure: true\n     script: make deploy\n*** End Patch", 2},
		{"windows far apart, in two files",
			"*** Begin Patch\n*** Update File: a.env\n@@\n A_HOST=x\n-A_SKIP_TLS=1\n B=1\n C=1\n D=1\n E=1\n F=1\n G=1\n-A_DEBUG=1\n*** Update File: b.env\n@@\n-B_MODE=fast\n*** End Patch", 3},
		{"two settings removed with no line around them",
			"*** Begin Patch\n*** Update File: ci.yml\n@@\n-    allow_failure: true\n-    retry_count: 2\n*** End Patch", 2},
		{"a bare removal beside a setting given another value",
			"*** Begin Patch\n*** Update File: ci.yml\n@@\n-    allow_failure: true\n-    timeout_minutes: 5\n+    timeout_minutes: 9\n*** End Patch", 1},
		{"code assignments set nothing, a config file's key does",
			"*** Begin Patch\n*** Update File: app/main.py\n@@\n-retries = 3\n*** Update File: app/config.toml\n@@\n-retries = 3\n*** End Patch", 1},
	}
	render := func(p *patch) []string {
		var out []string
		for _, r := range p.removedSettings() {
			out = append(out, fmt.Sprintf("%s bare=%v %s", r.key, r.bare, strings.Join(slices.Sorted(maps.Keys(r.subject)), " ")))
		}
		return out
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := patchCall("p", tc.patch)
			p := callPatch(c)
			want := render(p)
			if len(want) != tc.keys {
				t.Fatalf("the patch removes %q, want %d keys", want, tc.keys)
			}
			k, ok := removalCall(c, p)
			if !ok {
				t.Fatal("removalCall kept nothing")
			}
			if got := render(callPatch(k)); !slices.Equal(got, want) {
				t.Fatalf("the kept call removes %q, the call %q", got, want)
			}
		})
	}
}

// TestReviseEarlierTurnsByGlossDiff: live, a turn whose only word of the
// removal is its patch revises an earlier turn's statement of the
// setting's description, as batch ingest drops it.
func TestReviseEarlierTurnsByGlossDiff(t *testing.T) {
	for _, form := range uploadCalls {
		t.Run(form.form, func(t *testing.T) {
			checkGlossRevisedLive(t, "s-glossdiff", [3]string{
				"Made the nightly upload job non-fatal while the mirror is down (allow_failure: true). The retry loop in `deploy/upload.sh` waits 30 s between attempts.",
				"Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline.",
				"Done, the pipeline is updated.",
			}, []memory.ToolCall{form.call("t")}, "patch removes allow_failure")
		})
	}
}

// TestGlossUndoneByAiderEdit: an Aider SEARCH/REPLACE block that takes a
// glossed setting out, once Aider says it applied it, undoes the
// statement of its description as a patch does, in the turn or from a
// later turn; a block Aider did not apply does not.
func TestGlossUndoneByAiderEdit(t *testing.T) {
	block := ".ci/pipeline.yml\n```yaml\n<<<<<<< SEARCH\n" + uploadOld + "\n=======\n" + uploadNew + "\n>>>>>>> REPLACE\n```"
	applied := []memory.ToolResult{{Name: "aider", Content: "Applied edit to .ci/pipeline.yml"}}
	failed := []memory.ToolResult{{Name: "aider", Content: "The LLM did not conform to the edit format."}}
	later := func(res []memory.ToolResult) []LaterText {
		return laterOf(Turn{SessionID: "s1", Steps: []Step{{Text: "The mirror is back:\n\n" + block, Results: res}}})
	}
	tests := []struct {
		name  string
		steps []Step
		later []LaterText
		gone  bool
	}{
		{name: "the turn's own applied block after the statement", steps: []Step{{Text: uploadAgain + "\n\n" + block, Results: applied}}, gone: true},
		{name: "a later turn's applied block", steps: []Step{{Text: uploadAgain}}, later: later(applied), gone: true},
		{name: "a block Aider did not apply", steps: []Step{{Text: uploadAgain + "\n\n" + block, Results: failed}}},
		{name: "a later turn's block Aider did not apply", steps: []Step{{Text: uploadAgain}}, later: later(failed)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stays, why := nightlyStays(tc.steps, tc.later)
			if stays == tc.gone {
				t.Fatalf("statement kept %v, want %v (reason %q)", stays, !tc.gone, why)
			}
			if tc.gone && !strings.Contains(why, "removes allow_failure") {
				t.Fatalf("reason %q", why)
			}
		})
	}
}

// bareUploadCalls take allow_failure out of the nightly upload step with
// no line around it, in each agent's form of a deletion: the hunk shows
// the removed line alone (removedSetting.bare).
var bareUploadCalls = []struct {
	form string
	call func(id, file string) memory.ToolCall
}{
	{"Claude Code Edit to nothing", func(id, file string) memory.ToolCall {
		return claudeCall(id, "Edit", map[string]any{"file_path": file, "old_string": "    allow_failure: true\n", "new_string": ""})
	}},
	{"apply_patch hunk of - lines", func(id, file string) memory.ToolCall {
		return patchCall(id, "*** Begin Patch\n*** Update File: "+file+"\n@@\n-    allow_failure: true\n*** End Patch")
	}},
	{"text editor str_replace to nothing", func(id, file string) memory.ToolCall {
		return claudeCall(id, "str_replace_based_edit_tool", map[string]any{"command": "str_replace", "path": file, "old_str": "    allow_failure: true", "new_str": ""})
	}},
}

// aiderBareBlock is an Aider block taking allow_failure out of file with
// an empty REPLACE, said after say.
func aiderBareBlock(say, file string) string {
	return say + "\n\n" + file + "\n```yaml\n<<<<<<< SEARCH\n    allow_failure: true\n=======\n>>>>>>> REPLACE\n```"
}

// TestGlossUndoneByBareRemoval: a deletion showing no line around it
// (an Edit to nothing, a hunk of "-" lines, an empty REPLACE) is a
// removal whose subject is what the step said with it and its file's
// name: it undoes the statement of a glossed setting's description when
// either shares a word of it, in a later turn or after the statement in
// the turn, and not when neither does, nor with the reading switched off.
func TestGlossUndoneByBareRemoval(t *testing.T) {
	type form struct {
		name string
		// step is the step that makes the deletion, saying say, of file.
		step func(say, file string) Step
	}
	forms := []form{{"Aider SEARCH with an empty REPLACE", func(say, file string) Step {
		return Step{Text: aiderBareBlock(say, file), Results: []memory.ToolResult{{Name: "aider", Content: "Applied edit to " + file}}}
	}}}
	for _, f := range bareUploadCalls {
		forms = append(forms, form{f.form, func(say, file string) Step {
			return Step{Text: say, Calls: []memory.ToolCall{f.call("p1", file)}}
		}})
	}
	tests := []struct {
		name, say, file string
		later           bool // the deletion is a later turn's, not the turn's own after the statement
		gone            bool
	}{
		{name: "the step names the upload, a later turn", say: "The mirror is back: the nightly upload may fail the pipeline again.", file: ".ci/pipeline.yml", later: true, gone: true},
		{name: "the step names the upload, the turn's own", say: "The mirror is back: the nightly upload may fail the pipeline again.", file: ".ci/pipeline.yml", gone: true},
		{name: "the file is named for the upload", say: "Editing now.", file: ".ci/nightly-upload.yml", later: true, gone: true},
		{name: "neither the step nor the file shares a word", say: "Editing now.", file: ".ci/pipeline.yml", later: true},
	}
	for _, f := range forms {
		for _, tc := range tests {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				del := f.step(tc.say, tc.file)
				if rs, _ := turnRemovals(Turn{Steps: []Step{del}}, turnPatches(Turn{Steps: []Step{del}})); len(rs) != 1 || !rs[0].bare || rs[0].key != "allow_failure" {
					t.Fatalf("removals %+v, want allow_failure bare", rs)
				}
				kept := func() (bool, string) {
					steps, later := []Step{{Text: uploadAgain}, del, {Text: "Done."}}, []LaterText(nil)
					if tc.later {
						steps, later = []Step{{Text: uploadAgain}}, laterOf(Turn{SessionID: "s1", Steps: []Step{del, {Text: "Done."}}})
					}
					return nightlyStays(steps, later)
				}
				stays, why := kept()
				if stays == tc.gone {
					t.Fatalf("statement kept %v, want %v (reason %q)", stays, !tc.gone, why)
				}
				if tc.gone && !strings.Contains(why, "removes allow_failure") {
					t.Fatalf("reason %q", why)
				}
				evidenceOff["bare-removal"] = true
				defer delete(evidenceOff, "bare-removal")
				if stays, _ := kept(); !stays {
					t.Fatalf("the statement is cut with the bare reading off")
				}
			})
		}
	}
}

// TestReviseEarlierTurnsByBareRemoval: live, a turn whose only word of
// the removal is a deletion showing no line around it revises an earlier
// turn's statement of the setting's description (its file named for the
// upload), as batch ingest drops it; a slimmed turn reads the same
// removal.
func TestReviseEarlierTurnsByBareRemoval(t *testing.T) {
	for _, form := range bareUploadCalls {
		t.Run(form.form, func(t *testing.T) {
			c := form.call("t", ".ci/nightly-upload.yml")
			tn := Turn{SessionID: "s1", Steps: []Step{{Text: "Editing now.", Calls: []memory.ToolCall{c}}}}
			if later := laterOf(tn); !slices.Equal(laterOf(slim(tn)), later) {
				t.Fatalf("later texts of the slimmed turn %q, of the turn %q", laterOf(slim(tn)), later)
			}
			checkGlossRevisedLive(t, "s-bare", [3]string{
				"Made the nightly upload job non-fatal while the mirror is down (allow_failure: true). The retry loop in `deploy/upload.sh` waits 30 s between attempts.",
				"Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline.",
				"Done, the pipeline is updated.",
			}, []memory.ToolCall{c}, "patch removes allow_failure")
		})
	}
}

// BenchmarkTurnRemovals reads the removed settings of a turn of edits
// (laterOf, as every distillation reads each later turn): an apply_patch
// of a CI file and of a program, a Claude Code Edit of a program.
func BenchmarkTurnRemovals(b *testing.B) {
	var code, ci strings.Builder
	for i := range 40 {
		fmt.Fprintf(&code, " x%d = load(path)\n-y%d = compute(x%d)\n+y%d = compute(x%d, 2)\n", i, i, i, i, i)
		fmt.Fprintf(&ci, "   job%d:\n     stage: publish\n-    allow_failure: true\n     script: ./run%d.sh\n", i, i)
	}
	tn := Turn{SessionID: "s1", Steps: []Step{{Text: "Let me edit the pipeline.", Calls: []memory.ToolCall{
		patchCall("p1", "*** Begin Patch\n*** Update File: .ci/pipeline.yml\n@@\n"+ci.String()+"*** Update File: app/main.py\n@@\n"+code.String()+"*** End Patch"),
		claudeCall("e1", "Edit", map[string]any{"file_path": "app/worker.py", "old_string": strings.Repeat("retries = 3\ntimeout = compute()\n", 40), "new_string": strings.Repeat("retries = 4\n", 40)}),
	}}}}
	b.ReportAllocs()
	for b.Loop() {
		laterOf(tn)
	}
}

// The session's gloss of the nightly upload step (allow_failure) and a
// later statement that says its description in other words, which an
// undo of allow_failure revises.
const (
	uploadGloss = "Made the nightly upload job non-fatal while the mirror is down (allow_failure: true)."
	uploadAgain = "Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline."
)

// nightlyStays distils a turn of steps, with the session's gloss of the
// upload step (uploadGloss) said before it and later as the texts of the
// turns after it, and reports whether its "Marked the nightly ..."
// statement is kept and the reason it was dropped or cut for.
func nightlyStays(steps []Step, later []LaterText) (bool, string) {
	tn := Turn{SessionID: "s1", User: []string{"why does the pipeline pass?"}, Steps: steps}
	tn.held = saidBlocks(Turn{Steps: []Step{{Text: uploadGloss}}})
	stays, why := false, ""
	for _, c := range Distill(tn, later) {
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
