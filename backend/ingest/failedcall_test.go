package ingest

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// failedResult is the error result of the call id (the patch did not
// apply, the string to replace was not found).
func failedResult(id string) []memory.ToolResult {
	return []memory.ToolResult{{ToolUseID: id, Content: "error: the patch did not apply", IsError: true}}
}

// TestFailedCallSameLiveAndBatch: a tool call whose result says it failed
// changed nothing, so it moves, removes and edits nothing; live capture,
// which remembers a session's earlier turns slimmed and distils them again
// when a later turn revises something, reads it as batch ingest reads the
// whole transcript (callFailed). Each session's last turn moves another
// file, so that live capture distils the earlier turns again.
func TestFailedCallSameLiveAndBatch(t *testing.T) {
	const helper = "The helper lives in `tools/` at the repository root, and `run_helper.sh` must be executable because `Port.open` with `:spawn_executable` refuses a script without the exec bit."
	movePatch := "*** Begin Patch\n*** Update File: tools/run_helper.sh\n*** Move to: priv/bin/run_helper.sh\n@@\n-#!/bin/sh\n+#!/usr/bin/env sh\n*** End Patch"
	edit := func(id, old, new string) memory.ToolCall {
		in, _ := json.Marshal(map[string]string{"file_path": "/repo/CLAUDE.md", "old_string": old, "new_string": new})
		return memory.ToolCall{ID: id, Name: "Edit", Input: string(in)}
	}
	tests := []struct {
		name   string
		turns  [][]memory.Exchange // each turn's exchanges, numbered by the test
		absent string              // a text neither store may hold
		stays  string              // a text both stores must hold
	}{
		{
			name: "a Codex patch that fails to move the file",
			turns: [][]memory.Exchange{{
				{User: "where does the tail helper live?", Assistant: helper + " Moving it under `priv`.", ToolCalls: []memory.ToolCall{patchCall("p1", movePatch)}},
				{ToolLoop: true, ToolResults: failedResult("p1"), Assistant: "The patch did not apply; the helper stays where it is."},
			}},
			stays: "lives in `tools/`",
		},
		{
			name: "a Codex patch that fails to remove a setting",
			turns: [][]memory.Exchange{
				{
					{User: "the nightly upload fails while the mirror is down", Assistant: "Let me edit the pipeline.", ToolCalls: []memory.ToolCall{bashCall("b1", "cat .ci/pipeline.yml")}},
					{ToolLoop: true, ToolResults: []memory.ToolResult{{ToolUseID: "b1", Content: "ok"}}, Assistant: "Made the nightly upload job non-fatal while the mirror is down (allow_failure: true). The retry loop in `deploy/upload.sh` waits 30 s between attempts."},
				},
				{
					{User: "the mirror is back up", Assistant: "Let me edit the pipeline.", ToolCalls: []memory.ToolCall{patchCall("p2", uploadPatch)}},
					{ToolLoop: true, ToolResults: failedResult("p2"), Assistant: "The patch did not apply to the pipeline file."},
				},
			},
			stays: "non-fatal",
		},
		{
			name: "a Claude Code edit of CLAUDE.md that fails",
			turns: [][]memory.Exchange{
				{
					{User: "record the package manager rule", Assistant: "I'll update CLAUDE.md.", ToolCalls: []memory.ToolCall{edit("e1", "## Setup", "## Setup\n"+ruleYarn)}},
					{ToolLoop: true, ToolResults: []memory.ToolResult{{ToolUseID: "e1", Name: "Edit", Content: "ok"}}, Assistant: "Updated."},
				},
				{
					{User: "put pnpm in the package manager rule", Assistant: "I'll update CLAUDE.md.", ToolCalls: []memory.ToolCall{edit("e2", ruleYarn, rulePnpm)}},
					{ToolLoop: true, ToolResults: []memory.ToolResult{{ToolUseID: "e2", Name: "Edit", Content: "String to replace not found in file.", IsError: true}}, Assistant: "The edit did not apply."},
				},
			},
			absent: "pnpm-lock.yaml",
			stays:  "yarn.lock",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "s-failed-" + strings.ReplaceAll(tc.name, " ", "-")
			last := []memory.Exchange{
				{User: "tidy the scripts folder", Assistant: "Moving the old notes out.", ToolCalls: []memory.ToolCall{bashCall("m1", "mv /r/scripts/NOTES.txt /r/docs/NOTES.txt")}},
				{ToolLoop: true, ToolResults: []memory.ToolResult{{ToolUseID: "m1", Content: ""}}, Assistant: "Done."},
			}
			var all []memory.Exchange
			for u, turn := range append(slices.Clone(tc.turns), last) {
				for _, ex := range turn {
					ex.SessionID, ex.Project, ex.Turn, ex.UserTurns = id, "shop", len(all)+1, u+1
					all = append(all, ex)
				}
			}
			turns := GroupTurns(all)
			if len(turns) != len(tc.turns)+1 {
				t.Fatalf("%d turns", len(turns))
			}
			_, _, _, got := replayBoth(t, turns)
			joined := strings.Join(got, "\n")
			if !strings.Contains(joined, tc.stays) || (tc.absent != "" && strings.Contains(joined, tc.absent)) {
				t.Fatalf("store %q: want %q kept and %q absent (a failed call changed nothing)", got, tc.stays, tc.absent)
			}
		})
	}
}

// TestSlimmedTurnCountsCalls: the tool calls and results a slimmed turn
// keeps (a moved file's patch whole, a written file's path, a removal's
// lines, an Edit's result) count toward maxRecentBytes with its text, and
// a failed call is not kept at all: sessions whose turns each keep a large
// move patch stay within the bound.
func TestSlimmedTurnCountsCalls(t *testing.T) {
	var body strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&body, "+retry_%d = %d\n", i, i%9)
	}
	move := patchCall("p1", "*** Begin Patch\n*** Update File: tools/retry.conf\n*** Move to: conf/retry.conf\n@@\n"+body.String()+"*** End Patch")
	write, _ := json.Marshal(map[string]string{"file_path": "/r/conf/retry.conf", "content": body.String()})
	ok := []memory.ToolResult{{ToolUseID: "p1", Content: "Success."}}
	step := func(c memory.ToolCall, rs []memory.ToolResult) Turn {
		return Turn{Turn: 1, User: []string{"move the retry config"}, Steps: []Step{{Text: "Moving it.", Calls: []memory.ToolCall{c}}, {Text: "Done.", Results: rs}}}
	}
	tests := []struct {
		name     string
		turn     Turn
		min, max int // bounds of callSize
	}{
		{"a move patch, its headers kept", step(move, ok), 1, 1024},
		{"a failed move patch, not kept", step(move, failedResult("p1")), 0, 0},
		{"a Write, only its path kept", step(memory.ToolCall{ID: "p1", Name: "Write", Input: string(write)}, ok), 1, 1024},
		{"a removal patch, its lines kept", step(patchCall("p1", uploadPatch), ok), 1, len(patchCall("p1", uploadPatch).Input) + 1024},
		{"a shell command, not kept", step(bashCall("p1", "make test"), ok), 0, 0},
		{"a shell move in a long script, its cd, mv and rm kept", step(bashCall("p1", longScript), ok), 1, 256},
		{"an Edit's cat -n snippet, not kept", step(snippetEdit, snippetResult), 1, 128},
		{"an Edit's fenced edit of an instruction file, kept", step(snippetEdit, fencedResult), len(fencedResult[0].Content), len(fencedResult[0].Content) + 128},
	}
	for _, tc := range tests {
		var e recentTurn
		e.setTurn(tc.turn)
		kept := 0
		for _, s := range e.turn.Steps {
			for _, c := range s.Calls {
				kept += len(c.ID) + len(c.Name) + len(c.Input)
			}
			for _, r := range s.Results {
				kept += len(r.ToolUseID) + len(r.Name) + len(r.Content)
			}
		}
		if e.callSize < kept || e.callSize < tc.min || e.callSize > tc.max || e.bytes() < e.size+e.callSize {
			t.Errorf("%s: callSize %d, the slimmed turn keeps %d bytes of calls and results, want %d..%d", tc.name, e.callSize, kept, tc.min, tc.max)
		}
	}

	// Sessions of one turn that keeps the move patch whole (slimOff):
	// more than the bound holds, counted.
	slimOff["patch"] = true
	defer delete(slimOff, "patch")
	var e recentTurn
	e.setTurn(step(move, ok))
	var r recentTurns
	sessions := 2*maxRecentBytes/len(move.Input) + 2
	for i := range sessions {
		r.set(fmt.Sprintf("s%d", i), []recentTurn{e})
	}
	kept := 0
	for _, s := range r.sessions {
		for _, e := range s.turns {
			for _, st := range e.turn.Steps {
				for _, c := range st.Calls {
					kept += len(c.Input)
				}
			}
		}
	}
	if kept > maxRecentBytes || r.size > maxRecentBytes {
		t.Fatalf("%d sessions kept, their patches %d bytes (%d counted), bound %d", len(r.sessions), kept, r.size, maxRecentBytes)
	}
}

// A shell call that moves and deletes files amid a long script, and an
// Edit whose result is Claude Code's `cat -n` snippet of the file or a
// fenced edit of an instruction file (SpecStory's), for the slimmed
// turn's tests.
var (
	longScript = "cd app && " + strings.Repeat("npm run lint -- --fix --max-warnings=0 src/components/retry/*.tsx 2>&1 | tail -40; ", 40) +
		"git mv scripts/tail_wrapper.sh priv/scripts/tail_wrapper.sh && rm -f build/old.log && echo done; cat <<EOF > notes.txt\nrm -rf dist\nEOF"
	snippetEdit   = memory.ToolCall{ID: "p1", Name: "Edit", Input: `{"file_path":"/r/lib/retry.ex","old_string":"3","new_string":"5"}`}
	snippetResult = []memory.ToolResult{{ToolUseID: "p1", Name: "Edit", Content: "The file /r/lib/retry.ex has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n" +
		strings.Repeat("    12\t  def retry(job, attempts \\\\ 5), do: Worker.run(job, attempts)\n", 300)}}
	fencedResult = []memory.ToolResult{{ToolUseID: "p1", Name: "Edit", Content: "Applied.\n```markdown:CLAUDE.md\n## Build\n- Run the linter before each commit.\n```\n" + strings.Repeat("unrelated output line\n", 40)}}
)

// TestSlimReadsTheSame: what a slimmed turn keeps of a shell call that
// moves files (only its cd, mv and rm commands) and of an Edit's result
// (its content only when it may hold a fenced edit of an instruction
// file) reads as the whole turn does: the same moves and deletions with
// the same descriptions, the same edits of instruction files, the same
// later texts and the same statements.
func TestSlimReadsTheSame(t *testing.T) {
	ok := []memory.ToolResult{{ToolUseID: "p1", Content: "Success."}}
	turn := func(c memory.ToolCall, rs []memory.ToolResult) Turn {
		return Turn{Turn: 1, User: []string{"tidy the scripts"}, Steps: []Step{
			{Text: "The wrapper is in `scripts/` at the repo root, and `build/old.log` holds the last failure. Let me update the CLAUDE.md rules.", Calls: []memory.ToolCall{c}},
			{Text: "Done: the retry default is 5 now because the queue drops leases after 40 seconds.", Results: rs}}}
	}
	codex, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", longScript}, "workdir": "/w/app"})
	tabbed := bashCall("p1", "echo rm -x; mv\tscripts/a.sh bin/a.sh") // its mv has no "mv " of its own: kept whole
	for _, tc := range []struct {
		name    string
		turn    Turn
		smaller bool // the slimmed turn keeps less of the shell call or of the Edit's result
	}{
		{"Claude Code's Bash", turn(bashCall("p1", longScript), ok), true},
		{"Codex's shell, argv and workdir", turn(memory.ToolCall{ID: "p1", Name: "shell", Input: string(codex)}, ok), true},
		{"a move read only with the rest of its line", turn(tabbed, ok), false},
		{"an Edit's snippet", turn(snippetEdit, snippetResult), true},
		{"an Edit's fenced edit", turn(snippetEdit, fencedResult), false},
	} {
		s := slim(tc.turn)
		full, kept := tc.turn.Steps, s.Steps
		size := func(st []Step) int {
			n := 0
			for _, x := range st {
				for _, c := range x.Calls {
					if c.Name != "Edit" { // an Edit's input is not kept either way (bareEditCall)
						n += len(c.Input)
					}
				}
				for _, r := range x.Results {
					if r.Name == "Edit" { // other results are not kept either way
						n += len(r.Content)
					}
				}
			}
			return n
		}
		if got, whole := size(kept), size(full); tc.smaller != (got < whole) {
			t.Errorf("%s: the slimmed turn keeps %d bytes of its call and result, the turn %d", tc.name, got, whole)
		}
		if a, b := turnRelocations(tc.turn, turnPatches(tc.turn)), turnRelocations(s, turnPatches(s)); !slices.Equal(a, b) || strings.Contains(tc.name, "Bash") && len(a) != 2 {
			t.Errorf("%s: the slimmed turn moves %v, the turn %v", tc.name, b, a)
		}
		ea, _ := stepEdits(tc.turn, turnPatches(tc.turn))
		eb, _ := stepEdits(s, turnPatches(s))
		if fmt.Sprint(ea) != fmt.Sprint(eb) || tc.name == "an Edit's fenced edit" && len(ea) != 1 {
			t.Errorf("%s: the slimmed turn edits %v, the turn %v", tc.name, eb, ea)
		}
		if !slices.Equal(laterOf(s), laterOf(tc.turn)) {
			t.Errorf("%s: later texts of the slimmed turn %q, of the turn %q", tc.name, laterOf(s), laterOf(tc.turn))
		}
		if a, b := distilledTexts(tc.turn), distilledTexts(s); !slices.Equal(a, b) {
			t.Errorf("%s: the slimmed turn distils to %q, the turn to %q", tc.name, b, a)
		}
	}
}

// distilledTexts returns the texts of the statements Distill keeps of t,
// and of those it drops with why.
func distilledTexts(t Turn) []string {
	var out []string
	for _, c := range Distill(t, nil) {
		out = append(out, fmt.Sprintf("%v %s (%s) %v", c.Keep, c.Text, c.Reason, c.cuts))
	}
	return out
}

// TestSlimPairsEditResults: a slimmed turn keeps a failed Edit result (of
// SpecStory, paired with the Edit calls in order) without its text, so
// that the edit results after it are read with the same calls' texts as
// in the whole turn.
func TestSlimPairsEditResults(t *testing.T) {
	fence := "```diff\n  ## Build\n+ - Run the linter before each commit.\n```"
	tn := Turn{Turn: 1, User: []string{"record the lint rule"}, Steps: []Step{
		{Text: "Let me update the store.mdc rule.", Calls: []memory.ToolCall{{Name: "Edit"}}},
		{Text: "That did not apply; let me put it in AGENTS.md instead.", Calls: []memory.ToolCall{{Name: "Edit"}}, Results: []memory.ToolResult{{Name: "Edit", Content: "The model made no changes to the file.", IsError: true}}},
		{Text: "Done.", Results: []memory.ToolResult{{Name: "Edit", Content: fence}}},
	}}
	files := func(t Turn) []string {
		es, _ := stepEdits(t, turnPatches(t))
		var out []string
		for _, e := range es {
			out = append(out, e.file)
		}
		return out
	}
	want, got := files(tn), files(slim(tn))
	if !slices.Equal(want, []string{"AGENTS.md"}) || !slices.Equal(got, want) {
		t.Fatalf("edits of the slimmed turn %q, of the turn %q (want AGENTS.md)", got, want)
	}
}

// TestSlimPatchHeaders: a slimmed turn keeps of a patch that adds, moves
// or deletes a file only its headers and the settings it removes: the
// slimmed call reads as the same moves, added file and removals, and the
// slimmed turn as the same later texts.
func TestSlimPatchHeaders(t *testing.T) {
	var body strings.Builder
	for i := range 200 {
		fmt.Fprintf(&body, "+line %d of the new file\n", i)
	}
	for _, tc := range []struct{ name, patch string }{
		{"a file added", "*** Begin Patch\n*** Add File: docs/retry.md\n" + body.String() + "*** End Patch"},
		{"a file moved and edited", "*** Begin Patch\n*** Update File: tools/run.sh\n*** Move to: priv/bin/run.sh\n@@\n-#!/bin/sh\n+#!/usr/bin/env sh\n*** End Patch"},
		{"a file deleted beside an update", "*** Begin Patch\n*** Update File: lib/a.ex\n@@\n-x\n+y\n*** Delete File: config/legacy.toml\n*** Add File: config/new.toml\n" + body.String() + "*** End Patch"},
		{"a move and a removed setting", "*** Begin Patch\n*** Update File: tools/run.sh\n*** Move to: priv/bin/run.sh\n@@\n-#!/bin/sh\n+#!/usr/bin/env sh\n" + strings.TrimPrefix(uploadPatch, "*** Begin Patch\n")},
	} {
		c := patchCall("p1", tc.patch)
		tn := Turn{Turn: 1, User: []string{"tidy the tools"}, Steps: []Step{{Text: "Editing.", Calls: []memory.ToolCall{c}}, {Text: "Done.", Results: []memory.ToolResult{{ToolUseID: "p1", Content: "Success."}}}}}
		s := slim(tn)
		if len(s.Steps[0].Calls) != 1 {
			t.Fatalf("%s: slimmed calls %+v", tc.name, s.Steps[0].Calls)
		}
		k := s.Steps[0].Calls[0]
		p, q := callPatch(c), callPatch(k)
		if q == nil || len(k.Input) >= len(c.Input) {
			t.Errorf("%s: kept %q", tc.name, k.Input)
			continue
		}
		if !slices.Equal(p.relocations(), q.relocations()) || p.added() != q.added() || fmt.Sprint(p.removedSettings()) != fmt.Sprint(q.removedSettings()) {
			t.Errorf("%s: slimmed patch reads %v %q %v, the patch %v %q %v", tc.name, q.relocations(), q.added(), q.removedSettings(), p.relocations(), p.added(), p.removedSettings())
		}
		if !slices.Equal(laterOf(s), laterOf(tn)) {
			t.Errorf("%s: later texts of the slimmed turn %q, of the turn %q", tc.name, laterOf(s), laterOf(tn))
		}
	}
}

// TestResultsMatchedToCalls: a call's result is found wherever the turn
// holds it (callResult): by its id in any later response (parallel calls
// in Claude Code's and Codex's own record shapes, testdata/results: two
// edits of the pipeline, the first refused after the model's next
// response), else by its place among the calls of its name. The refused
// edit removes nothing; the applied one removes its setting.
func TestResultsMatchedToCalls(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format transcript.Format
	}{
		{"claude-parallel.jsonl", transcript.FormatClaudeCode},
		{"codex-parallel.jsonl", transcript.FormatCodex},
	} {
		t.Run(tc.file, func(t *testing.T) {
			exs, _, err := transcript.ParseFileAs(filepath.Join("testdata", "results", tc.file), tc.format, transcript.Options{Project: "shop"})
			if err != nil {
				t.Fatal(err)
			}
			turns := GroupTurns(exs)
			if len(turns) != 1 {
				t.Fatalf("%d turns, want 1", len(turns))
			}
			tn := turns[0]
			var far bool // the refused edit's result comes two responses or more after it
			for i, s := range tn.Steps {
				for _, c := range s.Calls {
					for k := i + 2; k < len(tn.Steps); k++ {
						far = far || slices.ContainsFunc(tn.Steps[k].Results, func(r memory.ToolResult) bool { return r.ToolUseID == c.ID && r.IsError })
					}
				}
			}
			if !far {
				t.Fatalf("fixture: no refused call whose result comes after the next response: %+v", tn.Steps)
			}
			rs, _ := turnRemovals(tn, turnPatches(tn))
			if got := removalsRead(rs); len(got) != 1 || !strings.HasPrefix(got[0], "retry_count ") {
				t.Fatalf("removals %q, want retry_count's alone (allow_failure's edit was refused)", got)
			}
		})
	}
	t.Run("by place", func(t *testing.T) {
		edit := func(old string) memory.ToolCall {
			in, _ := json.Marshal(map[string]string{"file_path": ".ci/pipeline.yml", "old_string": old, "new_string": ""})
			return memory.ToolCall{Name: "Edit", Input: string(in)}
		}
		tn := GroupTurns([]memory.Exchange{
			{SessionID: "s", Turn: 1, User: "make the nightly upload strict again", Assistant: "Editing the pipeline.",
				ToolCalls: []memory.ToolCall{{Name: "Terminal", Input: `{"summary":"cat .ci/pipeline.yml"}`}, edit("    allow_failure: true\n"), edit("    retry_count: 2\n")}},
			{SessionID: "s", Turn: 2, ToolLoop: true, Assistant: "Done.", ToolResults: []memory.ToolResult{
				{Name: "Edit", Content: "String to replace not found", IsError: true}, {Name: "Edit", Content: "updated"}}},
		})[0]
		if !callFailed(tn, 0, 1) || callFailed(tn, 0, 2) {
			t.Fatalf("failed: the first edit %v (want true), the second %v (want false)", callFailed(tn, 0, 1), callFailed(tn, 0, 2))
		}
		if _, ok := callResult(tn, 0, 0); ok {
			t.Fatalf("the Terminal call, which has no result, is answered by an edit's")
		}
	})
}

// TestAwaitedCallNeverAnswered: a turn that ends on a call without its
// result (awaitedCalls) is read by live capture as batch ingest reads a
// call without a result: made. When no continuation brings the result,
// both stores end alike, the glossed statements revised by the removal.
func TestAwaitedCallNeverAnswered(t *testing.T) {
	var exs []memory.Exchange
	for i, tt := range []struct {
		user, reply string
		calls       []memory.ToolCall
	}{
		{"the nightly upload fails while the mirror is down", "Made the nightly upload job non-fatal while the mirror is down (allow_failure: true).", nil},
		{"why is the pipeline green?", "Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline.", nil},
		{"the mirror is back up", "Making the nightly upload strict again.", []memory.ToolCall{patchCall("p3", uploadPatch)}},
		{"what else uses the mirror?", "Only the docs job reads from the mirror, through `scripts/docs.sh`.", nil},
	} {
		exs = append(exs, memory.Exchange{SessionID: "s-await", Turn: i + 1, UserTurns: i + 1, Project: "shop", User: tt.user, Assistant: tt.reply, ToolCalls: tt.calls})
	}
	turns := GroupTurns(exs)
	if len(turns) != 4 || len(awaitedCalls(turns[2])) != 1 {
		t.Fatalf("fixture: %d turns, turn 3 awaits %v", len(turns), awaitedCalls(turns[2]))
	}
	_, _, _, texts := replayBoth(t, turns) // fails when live capture's store differs from batch ingest's
	if slices.ContainsFunc(texts, func(s string) bool { return strings.Contains(s, "non-fatal") }) {
		t.Fatalf("the removed setting's statements stand: %q", texts)
	}
}
