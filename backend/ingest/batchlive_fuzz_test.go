package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// Batch ingest reads a turn's edits from the turn as it happened; live
// capture reads an earlier turn's from the turn it remembered slimmed
// (slim). The fuzz tests here build turns of random edits, in every
// agent's form, from a pool of files and lines (fuzzFiles, fuzzLines) and
// check that both read them alike.

// fuzzFiles are the files a generated edit changes: configuration, a
// program, a script, documentation and an instruction file.
var fuzzFiles = []string{".ci/pipeline.yml", ".ci/nightly-upload.yml", "deploy/.env", "app/main.py", "config/dev.exs", "scripts/build.sh", "README.md", "AGENTS.md"}

// fuzzLines are the lines a generated edit shows: settings (set again,
// given another value), code, a flag, a list line, blank.
var fuzzLines = []string{
	"    allow_failure: true", "    allow_failure: false", "  - name: Upload the nightly build", "    script: ./upload.sh",
	"    stage: publish", "    retry_count: 2", "SKIP_CHECKSUM=1", "retries = 3", "x = load(path)", "  --no-cache \\",
	"- Use pnpm.", "",
}

// fuzzTexts are what a generated step says before its calls.
var fuzzTexts = []string{"", "Let me edit the pipeline.", "The mirror is back: the nightly upload may fail the pipeline again.", "Editing now."}

// fuzzGen reads a fuzz input as a sequence of choices.
type fuzzGen struct {
	b []byte
	i int
}

// pick returns the next choice among n (0 once the input is spent).
func (g *fuzzGen) pick(n int) int {
	if g.i >= len(g.b) {
		return 0
	}
	g.i++
	return int(g.b[g.i-1]) % n
}

// lines returns up to max lines of fuzzLines.
func (g *fuzzGen) lines(max int) []string {
	out := make([]string, g.pick(max+1))
	for i := range out {
		out[i] = fuzzLines[g.pick(len(fuzzLines))]
	}
	return out
}

// call returns a generated edit call (id), and the text of an Aider block
// instead when the form is Aider's ("" otherwise).
func (g *fuzzGen) call(id string) (memory.ToolCall, string) {
	file := fuzzFiles[g.pick(len(fuzzFiles))]
	js := func(name string, in map[string]any) memory.ToolCall {
		b, _ := json.Marshal(in)
		return memory.ToolCall{ID: id, Name: name, Input: string(b)}
	}
	switch g.pick(7) {
	case 0, 1: // apply_patch: an update (a move, sometimes) of hunks of marked lines, or an add or delete
		var b strings.Builder
		b.WriteString("*** Begin Patch\n")
		for range 1 + g.pick(2) {
			f := fuzzFiles[g.pick(len(fuzzFiles))]
			switch g.pick(5) {
			case 0:
				b.WriteString("*** Add File: " + f + "\n")
				for _, l := range g.lines(3) {
					b.WriteString("+" + l + "\n")
				}
				continue
			case 1:
				b.WriteString("*** Delete File: " + f + "\n")
				continue
			}
			b.WriteString("*** Update File: " + f + "\n")
			if g.pick(6) == 0 {
				b.WriteString("*** Move to: " + fuzzFiles[g.pick(len(fuzzFiles))] + "\n")
			}
			for range 1 + g.pick(2) {
				b.WriteString("@@\n")
				for _, l := range g.lines(7) {
					b.WriteString(" -+"[g.pick(3):][:1] + l + "\n")
				}
			}
		}
		b.WriteString("*** End Patch")
		return patchCall(id, b.String()), ""
	case 2:
		return js("Edit", map[string]any{"file_path": file, "old_string": strings.Join(g.lines(5), "\n"), "new_string": strings.Join(g.lines(4), "\n")}), ""
	case 3:
		return js("MultiEdit", map[string]any{"file_path": file, "edits": []map[string]string{
			{"old_string": strings.Join(g.lines(4), "\n"), "new_string": strings.Join(g.lines(3), "\n")},
			{"old_string": strings.Join(g.lines(4), "\n"), "new_string": strings.Join(g.lines(3), "\n")},
		}}), ""
	case 4:
		return js("str_replace_based_edit_tool", map[string]any{"command": "str_replace", "path": file, "old_str": strings.Join(g.lines(5), "\n"), "new_str": strings.Join(g.lines(4), "\n")}), ""
	case 5:
		return js("Write", map[string]any{"file_path": file, "content": strings.Join(g.lines(4), "\n")}), ""
	default:
		block := file + "\n```\n<<<<<<< SEARCH\n" + strings.Join(g.lines(5), "\n") + "\n=======\n" + strings.Join(g.lines(3), "\n") + "\n>>>>>>> REPLACE\n```"
		return memory.ToolCall{}, block
	}
}

// exchanges returns a generated user turn of session (its exchanges
// numbered from turn on, its prompt the userTurn-th): one to three steps,
// each saying a text of fuzzTexts and making up to two edits, then one
// that says it is done; a call's result comes with the next exchange, as
// an agent's loop reads it, and is an error sometimes (the edit did not
// apply). With aider false, no Aider block: the agents live capture
// hears write none.
func (g *fuzzGen) exchanges(session string, turn, userTurn int, aider bool) []memory.Exchange {
	var out []memory.Exchange
	var results []memory.ToolResult // the previous exchange's calls'
	for i := range 1 + g.pick(3) {
		ex := memory.Exchange{SessionID: session, Turn: turn + i, UserTurns: userTurn, Project: "shop", ToolLoop: i > 0, ToolResults: results}
		results = nil
		if i == 0 {
			ex.User = "the mirror is back up"
		}
		ex.Assistant = fuzzTexts[g.pick(len(fuzzTexts))]
		for j := range g.pick(3) {
			id := fmt.Sprintf("c%d-%d-%d", turn, i, j)
			c, block := g.call(id)
			if block != "" {
				if aider {
					ex.Assistant += "\n\n" + block
				}
				continue
			}
			ex.ToolCalls = append(ex.ToolCalls, c)
			results = append(results, memory.ToolResult{ToolUseID: id, Content: "ok", IsError: g.pick(5) == 0})
		}
		out = append(out, ex)
	}
	last := memory.Exchange{SessionID: session, Turn: turn + len(out), UserTurns: userTurn, Project: "shop", ToolLoop: true, ToolResults: results, Assistant: "Done, the pipeline is updated."}
	return append(out, last)
}

// FuzzSlimReadsAlike: a turn's edits read the same from the turn and
// from the turn slimmed, and slimmed again: the later texts (the settings
// removed, the files moved, the instruction lines taken out) and the
// removals with their steps and subjects.
func FuzzSlimReadsAlike(f *testing.F) {
	f.Add([]byte{0, 2, 0, 0, 2, 4, 0, 4, 5, 1})
	f.Add([]byte{1, 1, 2, 2, 0, 3, 0, 1, 0, 0, 1, 5, 1, 6, 1})
	f.Add([]byte{2, 2, 2, 4, 0, 0, 3, 0, 0, 5, 0, 1, 2, 9, 0})
	f.Add([]byte{0, 1, 0, 1, 2, 0, 3, 4, 2, 0, 1, 1, 2, 3, 0, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		tn := GroupTurns((&fuzzGen{b: b}).exchanges("s1", 1, 1, false))[0]
		want := laterOf(tn)
		for round, s := range []Turn{slim(tn), slim(slim(tn))} {
			if got := laterOf(s); !slices.Equal(got, want) {
				t.Fatalf("slimmed %d times, later texts %q; the turn's %q", round+1, got, want)
			}
			rs, steps := turnRemovals(tn, turnPatches(tn))
			srs, ssteps := turnRemovals(s, turnPatches(s))
			if fmt.Sprint(removalsRead(rs), steps) != fmt.Sprint(removalsRead(srs), ssteps) {
				t.Fatalf("slimmed %d times, removals %v %v; the turn's %v %v", round+1, removalsRead(srs), ssteps, removalsRead(rs), steps)
			}
		}
	})
}

// removalsRead renders removals as the gloss link reads them: key,
// bareness, subject.
func removalsRead(rs []removedSetting) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%s bare=%v %v", r.key, r.bare, slices.Sorted(maps.Keys(r.subject)))
	}
	return out
}

// FuzzGlossBatchLive: a session that glosses a setting, states its
// description in other words, then makes random edits (fuzzGen) in one
// or two turns ends with the same memories ingested in batch and captured
// live, where live capture reads a generated turn whole or, cut at one of
// its tool loops that answers no call, as a turn and its continuation
// after the Stop (continueTurn).
func FuzzGlossBatchLive(f *testing.F) {
	f.Add([]byte{0, 2, 0, 0, 2, 4, 0, 4, 5, 1})
	f.Add([]byte{0, 1, 2, 1, 0, 0, 0, 2, 0, 1, 0, 1})
	f.Add([]byte{2, 2, 2, 4, 0, 0, 3, 0, 0, 5, 0, 1, 2, 9, 0})
	// Two sessions whose generated turn removes the glossed setting: live
	// capture must revise turn 2's statement (glossedRemoval) as batch
	// ingest drops it.
	f.Add([]byte{0x53, 0xda, 0xda, 0x2c, 0x14, 0x89, 0x5, 0xa, 0x6, 0xd3, 0x78, 0x41, 0xb7, 0x4b, 0xcb, 0xbd, 0xf8, 0x98, 0x7a, 0x19, 0xdc, 0xdd, 0xc8, 0xe9, 0x66, 0xbf, 0xfa, 0xcf, 0xac, 0x14, 0xda, 0xb3, 0x39, 0x51, 0xa9, 0xe9, 0xa4, 0xcf, 0xfa, 0x46, 0xc5, 0xf6})
	f.Add([]byte{0x59, 0x87, 0x5d, 0xcd, 0x4c, 0x3, 0xee, 0xaf, 0xe1, 0x5f, 0x1b, 0xeb, 0x44, 0x87, 0xf2, 0x56, 0x78, 0xda, 0x58, 0x7c, 0x83, 0xe5, 0xfa, 0x28, 0xed, 0x42, 0xc1, 0x3})
	// A Stop between the call that removes the glossed setting and its
	// result: failed (batch reads nothing; live must not revise turn 2's
	// statement), then applied (live must revise it once it sees so).
	f.Add([]byte{0, 0, 0, 1, 0, 2, 2, 2, 0, 0, 0, 1})
	f.Add([]byte{0, 0, 0, 1, 0, 2, 2, 2, 0, 0, 1, 1})
	f.Fuzz(glossBatchLive)
}

// glossBatchLive replays the session FuzzGlossBatchLive builds of b, batch
// and live, and fails when their stores differ.
func glossBatchLive(t *testing.T, b []byte) {
	t.Helper()
	g := &fuzzGen{b: b}
	const id = "s-fuzz"
	var parts [][]memory.Exchange // what live capture reads at each Stop
	n := 0
	for i, tt := range [][]string{
		{"the nightly upload fails while the mirror is down", "Let me edit the pipeline.", "Made the nightly upload job non-fatal while the mirror is down (allow_failure: true)."},
		{"why is the pipeline green?", "Let me check the last run.", "Marked the nightly upload job as non-fatal so a mirror outage doesn't fail the pipeline."},
	} {
		part := sessionOf(id, tt[0], tt[1:]...)
		for k := range part {
			n++
			part[k].Turn, part[k].UserTurns = n, i+1
		}
		parts = append(parts, part)
	}
	for k := range 1 + g.pick(2) {
		gen := g.exchanges(id, n+1, 3+k, false)
		n += len(gen)
		if cut := g.pick(len(gen)); cut > 0 {
			// A Stop inside the turn, between two of its responses: live
			// capture reads the turn up to there, then its continuation;
			// when the cut falls between a call and its result (the
			// continuation's first response brings the results of the
			// calls before it), live capture must not read the call as
			// applied before it sees whether it failed.
			parts = append(parts, gen[:cut], gen[cut:])
		} else {
			parts = append(parts, gen)
		}
	}
	ctx := context.Background()
	var all []memory.Exchange
	for _, p := range parts {
		all = append(all, p...)
	}
	turns := GroupTurns(all)
	batch, live := newFixture(t, nil), newFixture(t, nil)
	for i, tn := range turns {
		if _, _, err := batch.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], id), SessionState{Ended: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range parts {
		if _, _, err := live.p.ProcessTurn(ctx, GroupTurns(p)[0], nil, SessionState{}); err != nil {
			t.Fatal(err)
		}
	}
	if want, got := liveTexts(t, batch.st), liveTexts(t, live.st); !slices.Equal(want, got) {
		t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q\nparts %+v", want, got, parts)
	}
}
