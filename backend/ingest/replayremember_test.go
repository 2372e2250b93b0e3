package ingest

import (
	"context"
	"slices"
	"testing"
)

// TestGrownHistoryReadsReplayedTurns: a session ingested when part of it
// was written, then whole by a second process, decides its new turns as
// one whole ingest does: its first turns are replayed (their marks) and
// remembered as said (rememberReplayed), so a list line a replayed turn
// said is dropped as said in an earlier turn, not stored. A turn live
// capture reads again is not remembered twice. With replayOff (as at
// 2308138) the grown run stores the line.
func TestGrownHistoryReadsReplayedTurns(t *testing.T) {
	stored := []string{"how do I export a ledger?", "Let me read the CLI.",
		"Export a ledger with `tally export --ledger LEDGER.yaml --out DIR`; each account goes to its own CSV file in DIR, named after the account id."}
	other := []string{"why are the totals doubled?", "Let me look at the totals.",
		"The totals are doubled because `tally/totals.py` appends a totals row per account and the spreadsheet template sums every row again; the template now skips rows whose `kind` column is `total`."}
	held := []string{"try it on my books", "Let me run it.",
		"Ran it.\n\n- Try it: `tally export --ledger my-books.yaml --out ./reports`\n"}
	tests := []struct {
		name string
		off  bool
		// cut is how many turns the first process ingests.
		cut int
		// again is the stage of the held turn in the grown run.
		again string
		extra int // memories beyond one whole ingest's
	}{
		{"cut before the held turn", false, 2, StageDistill, 0},
		{"cut after the first turn", false, 1, StageDistill, 0},
		{"cut before the held turn, the change off", true, 2, StageStore, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			replayOff = tc.off
			t.Cleanup(func() { replayOff = false })
			turns := rerunSession("grown", [][]string{stored, other, held}, false)
			whole := newFixture(t, nil)
			ingestTurns(t, whole.p, turns)
			want := texts(allMemories(t, whole.st))

			f := newFixture(t, nil)
			ingestTurns(t, f.p, turns[:tc.cut])
			got := ingestTurns(t, pipelineOn(t, f), turns)
			for i := range tc.cut {
				if got[i].Stage != StageReplay {
					t.Errorf("turn %d of the grown run: %s at %s, want a replay", i+1, got[i].Verdict, got[i].Stage)
				}
			}
			if d := got[2]; d.Stage != tc.again {
				t.Errorf("the held turn in the grown run: %s at %s (%s), want stage %s", d.Verdict, d.Stage, d.Reason, tc.again)
			}
			if have := texts(allMemories(t, f.st)); len(have) != len(want)+tc.extra {
				t.Errorf("grown run memories %q, one whole ingest's %q (want %d more)", have, want, tc.extra)
			}
		})
	}
}

// TestReplayRemembersOnce: live capture reading a session's turns again
// (a tailer read twice) replays them and leaves the session's recent
// turns as they were: one per turn.
func TestReplayRemembersOnce(t *testing.T) {
	f := newFixture(t, nil)
	turns := rerunSession("again", [][]string{
		{"how do I export a ledger?", "Export a ledger with `tally export --ledger LEDGER.yaml --out DIR`; each account goes to its own CSV file in DIR."},
		{"why are the totals doubled?", "The totals are doubled because `tally/totals.py` appends a totals row per account and the template sums every row again."},
	}, false)
	live := func() {
		for _, tn := range turns {
			if _, _, err := f.p.ProcessTurn(context.Background(), tn, nil, SessionState{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	live()
	numbers := func() []int {
		var out []int
		for _, e := range f.p.recent.turns("again") {
			out = append(out, e.turn.Turn)
		}
		return out
	}
	before := numbers()
	live()
	if after := numbers(); !slices.Equal(before, after) {
		t.Errorf("recent turns after reading the session again: %v, before %v", after, before)
	}
	if n := len(before); n != len(turns) {
		t.Errorf("recent turns %v, want %d", before, len(turns))
	}
}

// TestGrownHistoryRevisesReplayedTurns: a later turn that corrects what
// an earlier turn stored, ingested after the earlier turn's run (the
// history grew since), revises it as one whole ingest drops it: the
// replayed turn, distilled knowing the whole session, is settled
// (settleReplayed). Another run of the grown history changes nothing.
// With settleReplayOff (as at 1368516) the corrected statement stays.
func TestGrownHistoryRevisesReplayedTurns(t *testing.T) {
	split := []string{"split the parser for the export command", "Let me look.",
		"The `parser.go` file was split into a lexer package and a grammar package for the export command."}
	other := []string{"why are the totals doubled?", "Let me look at the totals.",
		"The totals are doubled because `tally/totals.py` appends a totals row per account and the spreadsheet template sums every row again."}
	reviser := []string{"did you split the parser?", "Let me check the diff.",
		"Instead, we only added the `--limit` flag of `cmd/export.go` but didn't split `parser.go` into packages for the export command."}
	tests := []struct {
		name  string
		off   bool
		cut   int
		extra []string // live texts beyond one whole ingest's
	}{
		{"cut before the correcting turn", false, 2, nil},
		{"cut after the first turn", false, 1, nil},
		{"nothing cut", false, 3, nil},
		{"cut before the correcting turn, the change off", true, 2, []string{split[2]}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			settleReplayOff = tc.off
			t.Cleanup(func() { settleReplayOff = false })
			turns := rerunSession("grown", [][]string{split, other, reviser}, false)
			whole := newFixture(t, nil)
			ingestTurns(t, whole.p, turns)
			want := liveTexts(t, whole.st)
			if slices.Contains(want, split[2]) {
				t.Fatalf("one whole ingest kept the corrected statement: %q", want)
			}

			f := newFixture(t, nil)
			ingestTurns(t, f.p, turns[:tc.cut])
			ingestTurns(t, pipelineOn(t, f), turns)
			got := liveTexts(t, f.st)
			if wantGrown := slices.Sorted(slices.Values(append(slices.Clone(want), tc.extra...))); !slices.Equal(got, wantGrown) {
				t.Errorf("grown run's live memories %q, want %q", got, wantGrown)
			}
			before := texts(allMemories(t, f.st))
			ingestTurns(t, pipelineOn(t, f), turns)
			if after := texts(allMemories(t, f.st)); !slices.Equal(before, after) {
				t.Errorf("another run of the grown history changed the store: %q, before %q", after, before)
			}
		})
	}
}
