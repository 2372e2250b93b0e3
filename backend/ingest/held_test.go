package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestLineContent(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"tally export --ledger books.yaml --out ./out", "tally export --ledger --out"},
		{"`tally export --ledger LEDGER.yaml [--format csv]`", "tally export --ledger --format"},
		{"CLI: tally export --ledger your.yaml --out=dist", "tally export --ledger --out"},
		{"TALLY_DEBUG=1 tally serve --port 8080", "TALLY_DEBUG=1 tally serve --port"},
		{"Run it with --ledger to pick the file.", "Run it with --ledger to pick the file."}, // prose, no command
		{"tally serve", "tally serve"}, // no flag: as it is
	} {
		if got := lineContent(tc.line); got != tc.want {
			t.Errorf("lineContent(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestHeldBy(t *testing.T) {
	held := []heldText{}
	for _, s := range []string{
		"Export with `tally export --ledger LEDGER.yaml --out DIR [--format csv]`; rows are grouped by account.",
		"The settings dialog stores its values via QSettings under Tally/Desktop (default currency, last ledger).",
	} {
		held = append(held, heldText{lowered: lower(s), subject: subjectOf(s)})
	}
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"tally export --ledger my.yaml --out ./reports --format csv", true},                        // the same command, other arguments
		{"CLI: `tally export --ledger books.yaml --out out`", true},                                 // with a label
		{"tally export --ledger my.yaml --out ./reports --since 2024-01", false},                    // a flag not said before
		{"tally import --ledger my.yaml", false},                                                    // another subcommand
		{"Settings dialog: stores values via QSettings under Tally/Desktop", true},                  // every word held
		{"Settings dialog: stores values via QSettings under Tally/Desktop, synced on exit", false}, // says more
		{"QSettings", false}, // one name: too little to tell
	} {
		if got := heldBy(tc.line, held); got != tc.want {
			t.Errorf("heldBy(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestFilesOnly(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"File: `ledger/export.py`", true},
		{"Files: ledger/export.py, ledger/cli.py", true},
		{"docs/export.md", true},
		{"ledger/export.py: writes one CSV per account", false},
		{"Export lives in ledger/export.py", false},
	} {
		if got := filesOnly(tc.line); got != tc.want {
			t.Errorf("filesOnly(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// TestDistillHeldLine: a list line of the final answer that what an earlier
// turn of the session said holds (the same command with other arguments) is
// dropped and shown with reasonHeld; the block's other lines stay, and so
// does a line that only names the files the others are about, even when
// an earlier memory names them too. Without
// earlier turns every line stays.
func TestDistillHeldLine(t *testing.T) {
	answer := "Added per-account totals to the export.\n\n" +
		"- The CSV export now appends a totals row per account, computed by `sum_account()`, so spreadsheet imports no longer sum the rows twice\n" +
		"- Files: `ledger/export.py`, `ledger/totals.py`\n" +
		"- Try it: `tally export --ledger my-books.yaml --out ./reports`\n"
	earlier := "Export a ledger with `tally export --ledger LEDGER.yaml --out DIR` (`ledger/export.py`, `ledger/totals.py`); each account goes to its own CSV file in DIR."
	turn := Turn{SessionID: "s1", User: []string{"add totals per account to the export"}, Steps: []Step{{Text: answer}}}
	for _, tc := range []struct {
		name string
		held []string
		drop bool
	}{
		{"said before", []string{earlier}, true},
		{"nothing said before", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := turn
			for _, h := range tc.held {
				tt.held = append(tt.held, heldText{lowered: lower(h), subject: subjectOf(h)})
			}
			cands := Distill(tt, nil)
			kept := ""
			var heldDrops []string
			for _, c := range cands {
				if c.Keep {
					kept += c.Text + "\n"
				}
				if c.Reason == reasonHeld {
					heldDrops = append(heldDrops, c.Text)
				}
			}
			if !strings.Contains(kept, "totals row per account") || !strings.Contains(kept, "Files: `ledger/export.py`") {
				t.Errorf("the block's new line or its file line was dropped; kept:\n%s", kept)
			}
			if got := strings.Contains(kept, "tally export"); got == tc.drop {
				t.Errorf("command kept = %v, want %v; kept:\n%s", got, !tc.drop, kept)
			}
			if tc.drop && (len(heldDrops) != 1 || !strings.Contains(heldDrops[0], "tally export")) {
				t.Errorf("the dropped line is not shown with %q: %q", reasonHeld, heldDrops)
			}
			if !tc.drop && len(heldDrops) > 0 {
				t.Errorf("dropped as held with nothing said before: %q", heldDrops)
			}
			if tc.drop && !strings.Contains(describeCandidates(cands), reasonHeld+" 1") {
				t.Errorf("describeCandidates does not count it: %s", describeCandidates(cands))
			}
		})
	}
}

// TestHeldAcrossTurns: the second turn of a session repeats, in a list,
// the command the first turn said; batch ingest and live capture both
// drop that line from the second turn's memory, and show it dropped with
// reasonHeld.
func TestHeldAcrossTurns(t *testing.T) {
	ctx := context.Background()
	first := []string{"how do I export a ledger?", "Let me read the CLI.",
		"Export a ledger with `tally export --ledger LEDGER.yaml --out DIR`; each account goes to its own CSV file in DIR, named after the account id."}
	second := []string{"add totals per account", "Let me edit the exporter.",
		"Added per-account totals.\n\n- The CSV export now appends a totals row per account, computed in `ledger/totals.py`, so spreadsheet imports no longer sum the rows twice\n- Try it: `tally export --ledger my-books.yaml --out ./reports`\n"}
	turns := twoTurns("s-held", first, second)
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	batch, live := newFixture(t, nil), newFixture(t, nil)
	for name, f := range map[string]*fixture{"batch": batch, "live": live} {
		var dec memory.Decision
		for i, tn := range turns {
			later, st := LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true}
			if name == "live" {
				later, st = nil, SessionState{}
			}
			d, _, err := f.p.ProcessTurn(ctx, tn, later, st)
			if err != nil {
				t.Fatal(err)
			}
			dec = d
		}
		if !slices.ContainsFunc(dec.Candidates, func(c memory.CandidateVerdict) bool {
			return c.Reason == reasonHeld && strings.Contains(c.Text, "my-books.yaml")
		}) {
			t.Errorf("%s: turn 2 does not show the repeated command dropped: %+v", name, dec.Candidates)
		}
		for _, m := range allMemories(t, f.st) {
			if strings.Contains(m.Text, "my-books.yaml") {
				t.Errorf("%s: the repeated command is stored: %q", name, m.Text)
			}
		}
		if !slices.ContainsFunc(allMemories(t, f.st), func(m memory.Memory) bool { return strings.Contains(m.Text, "totals row per account") }) {
			t.Errorf("%s: turn 2's new line is not stored", name)
		}
	}
}

// TestHeldRecord: what a new turn of a session is distilled with
// (recentTurns.held) is what the session's recent turns said, in order,
// also after a turn is continued (its said grows) and after a turn built
// from a stale copy of the session's turns replaces them; a window handed
// out earlier keeps what it held (a turn distilled again sees what it saw
// first), and the window is the record itself, not a copy.
func TestHeldRecord(t *testing.T) {
	said := func(turn, n int) []heldText {
		var out []heldText
		for i := range n {
			s := fmt.Sprintf("turn %d block %d: the exporter in pkg%d/export.go writes one file per account", turn, i, i)
			out = append(out, heldText{lowered: lower(s), subject: subjectOf(s)})
		}
		return out
	}
	texts := func(hs []heldText) []string {
		var out []string
		for _, h := range hs {
			out = append(out, h.lowered)
		}
		return out
	}
	var r recentTurns
	type handed struct {
		window []heldText
		was    []string
	}
	var windows []handed
	check := func(step string) {
		t.Helper()
		var want []string
		for _, e := range r.turns("s") {
			want = append(want, texts(e.said)...)
		}
		got := r.held("s")
		if !slices.Equal(texts(got), want) {
			t.Fatalf("%s: held %q, want what the recent turns said %q", step, texts(got), want)
		}
		for i, w := range windows {
			if !slices.Equal(texts(w.window), w.was) {
				t.Fatalf("%s: window %d changed: %q, was %q", step, i, texts(w.window), w.was)
			}
		}
		windows = append(windows, handed{got, texts(got)})
	}
	add := func(turns []recentTurn, n, blocks int) []recentTurn {
		rt := recentTurn{turn: Turn{Turn: n, held: r.held("s")}, said: said(n, blocks)}
		return append(turns, rt)
	}
	for n := 1; n <= 4; n++ {
		r.set("s", add(r.turns("s"), n, n%3))
		check(fmt.Sprintf("turn %d", n))
	}
	if got, newest := r.held("s"), r.turns("s")[3].said; len(newest) == 0 || &got[len(got)-1] != &newest[len(newest)-1] {
		t.Errorf("held is a copy, not the session's record")
	}
	// Turn 4 continued: what it said before, then more.
	turns := r.turns("s")
	last := &turns[len(turns)-1]
	last.said = append(slices.Clone(last.said), said(4, 3)[1:]...)
	r.set("s", turns)
	check("turn 4 continued")
	// Two turns from one copy: the second replaces the first.
	stale := r.turns("s")
	r.set("s", add(slices.Clone(stale), 5, 2))
	check("turn 5")
	r.set("s", add(stale, 6, 2))
	check("turn 6 from a copy without turn 5")
	// The session forgotten and begun again.
	delete(r.sessions, "s")
	r.set("s", add(nil, 7, 1))
	check("turn 7 in a new record")
}
