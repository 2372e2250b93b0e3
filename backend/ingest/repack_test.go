package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// The findings of repackSession's turn 1: ledgerReplay is the one turn 3
// corrects; ledgerReplayMore is it with a second sentence, so long that
// neither neighbour joins it.
const (
	ledgerFlush      = "The `ledger/flush.go` writer batches every entry of a request into one fsync, so a crash between two entries of one request loses both of them together and never one alone, which the recovery code in `ledger/recover.go` relies on when it truncates the tail."
	ledgerReplay     = "The flaky `TestLedgerReplay` failure comes from the `ledger/replay.go` reader, which sleeps on the real clock instead of the injected `Clock` between two segment reads, so a slow CI machine times the replay out before the second segment is read."
	ledgerReplayMore = ledgerReplay + " The `ledger/replay.go` reader's cursor is reset by each retry, so the replay reads the first segment twice."
	ledgerFsync      = "The `ledger/flush.go` writer fsyncs once per request."
	ledgerSegments   = "The `ledger/segments.go` rotation starts a new segment file every 64 MiB and keeps the last eight of them, deleting older ones when the compactor marks them obsolete, and the retention count is read from `ledger.keep_segments` in `config/ledger.toml`."
)

// repackSession is three turns of one session whose turn 1 states three
// findings in one answer, too long together for one memory (live, the
// first joins middle or stands alone, the segments finding stands
// alone); turn 3 corrects the middle one, so distilling turn 1 again
// joins the first and the segments findings: their statements are kept
// word for word, only packed differently.
func repackSession(id, first, middle string) []Turn {
	return threeTurns(id,
		[]string{"how does the ledger write and replay entries?", "Let me read the ledger package.", first + "\n\n" + middle + "\n\n" + ledgerSegments},
		[]string{"the replay test still fails sometimes", "Let me rerun it with -count=50.",
			"Actually the `ledger/replay.go` clock was not the cause: `TestLedgerReplay` fails because the `ledger/index.go` cache is shared between the parallel subtests, so one subtest reads another's offsets."})
}

// TestRepackIsNoRevision: when a later turn distils an earlier one again
// and packs its kept statements into other memories without cutting any
// of them for a revision, the earlier memories are not revised: none is
// trashed or reported revised, the memory holding their statements now
// is one of them (its id kept) and has the history (accesses,
// reinforcements) of each, the other one, if any, superseded by it; the
// store ends as batch ingest's does.
func TestRepackIsNoRevision(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name          string
		first, middle string
		alone         []string // the findings live turn 1 stores as memories of their own
	}{
		{"one re-packed", ledgerFlush, ledgerReplay, []string{ledgerSegments}},
		{"two joined", ledgerFlush, ledgerReplayMore, []string{ledgerFlush, ledgerSegments}},
		// The segments memory nearly repeats what holds it now: dedup
		// does not take it for an older version to supersede.
		{"near duplicate", ledgerFsync, ledgerReplayMore, []string{ledgerSegments}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := repackSession("s-repack", tc.first, tc.middle)
			ids := map[string]bool{} // the memories of tc.alone
			_, live, decs, _ := replayBothEach(t, turns, func(i int, live *fixture, dec memory.Decision) {
				if i > 0 {
					return
				}
				for _, c := range dec.Candidates {
					if c.Kept && slices.ContainsFunc(tc.alone, func(s string) bool { return c.Text == preview(s) }) {
						ids[c.MemoryID] = true
						// The user's history on it.
						if _, err := live.st.Update(ctx, c.MemoryID, func(m *memory.Memory) error {
							m.AccessCount, m.ReinforcedCount = 4, 2
							return nil
						}); err != nil {
							t.Fatal(err)
						}
					}
				}
				if len(ids) != len(tc.alone) {
					t.Fatalf("live turn 1 stored %d of the findings alone, want %d: %+v", len(ids), len(tc.alone), dec.Candidates)
				}
			})
			last := decs[len(decs)-1]
			for _, c := range last.Candidates {
				if c.Origin == OriginEarlier && ids[c.MemoryID] && strings.Contains(c.Reason, "revised") {
					t.Errorf("turn 3 reports a re-packed memory as revised: %+v", c)
				}
			}
			if !strings.Contains(last.Reason, "revised 1 memories") {
				t.Errorf("turn 3's decision %q, want the corrected memory alone revised", last.Reason)
			}
			var holder *memory.Memory
			for id := range ids {
				m, err := live.st.Get(ctx, id)
				if err != nil {
					t.Fatalf("a re-packed memory is gone: %v", err)
				}
				if !m.Superseded() {
					holder = &m
				} else if !ids[m.SupersededBy] {
					t.Errorf("re-packed memory superseded by %s, want the one holding its statements now", m.SupersededBy)
				}
			}
			if holder == nil || !strings.Contains(holder.Text, ledgerSegments) || !strings.Contains(holder.Text, tc.first) {
				t.Fatalf("no re-packed memory holds the statements packed together now: %+v", holder)
			}
			if n := len(tc.alone); holder.AccessCount != 4*n || holder.ReinforcedCount != 2*n {
				t.Errorf("history: access %d, reinforced %d, want %d, %d", holder.AccessCount, holder.ReinforcedCount, 4*n, 2*n)
			}
			trash, err := live.st.Trash(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range trash {
				if ids[tr.Memory.ID] {
					t.Errorf("a re-packed memory is in the trash: %+v", tr)
				}
			}
		})
	}
}

// TestRevisedWhy: an earlier statement is revised only for the pieces of
// it dropped or cut for a revision (corrected, undone, restated), named
// with their reasons; a piece dropped or cut for another reason (names
// only, offered) or a statement kept in another packing revises nothing.
func TestRevisedWhy(t *testing.T) {
	const text = "The `sync/v1` endpoint ignores the batch size. `cmd/sync`. Run `make sync` to try it."
	for _, tc := range []struct {
		name string
		now  []Candidate
		want string
	}{
		{"re-packed", []Candidate{{Text: "Intro. " + text, Keep: true}}, ""},
		{"names only", []Candidate{{Text: "`cmd/sync`.", Reason: reasonNamesOnly}, {Text: "The `sync/v1` endpoint ignores the batch size.", Keep: true}}, ""},
		{"offered cut", []Candidate{{Text: "The `sync/v1` endpoint ignores the batch size.", Keep: true,
			cuts: []cutPiece{{"Run `make sync` to try it.", "offered or left to do: Run `make sync` to try it."}}}}, ""},
		{"corrected", []Candidate{{Text: "The `sync/v1` endpoint ignores the batch size.", Reason: "revised later: it does read the batch size"}}, "it does read the batch size"},
		{"undone cut", []Candidate{{Text: "`cmd/sync`.", Keep: true,
			cuts: []cutPiece{{"The `sync/v1` endpoint ignores the batch size.", "undone later: I removed `sync/v1`"}}}}, "undone later: I removed `sync/v1`"},
		{"restated", []Candidate{{Text: "Run `make sync` to try it.", Reason: "restated later: Run `make sync` with -v"}}, "restated later: Run `make sync` with -v"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := revisedWhy(tc.now, text); got != tc.want {
				t.Errorf("revisedWhy = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestHeirOf: the statement kept now that holds most of an earlier
// statement's words in order is its heir, also when the earlier one was
// split inside what reads as one sentence (a list without full stops).
func TestHeirOf(t *testing.T) {
	kept := []Candidate{
		{Text: "`hooks.go` merges the start hooks: M80, M355 S1 and custom blocks Translation of machine_control to start/end hooks"},
		{Text: "Save PDL (YAML/JSON): structured machine_control stored opk gcode-hooks --pdl your.pdl.yaml opk gcode-validate --vars vars.json"},
		{Text: "The `ledger/flush.go` writer batches entries."},
	}
	for _, tc := range []struct {
		text string
		want int
	}{
		{"Translation of machine_control to start/end hooks Save PDL (YAML/JSON): structured machine_control stored opk gcode-hooks --pdl your.pdl.yaml opk gcode-validate --vars vars.json", 1},
		{"The `ledger/flush.go` writer batches entries. It fsyncs once.", 2},
		{"Nothing of it is kept now in any form at all.", -1},
	} {
		if got, _ := heirOf(tc.text, kept); got != tc.want {
			t.Errorf("heirOf(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestCarry: a re-packed memory whose statements another memory holds
// now is superseded by it, which takes its history; one superseded
// already (restated by a later turn's memory) is superseded by the
// holder instead, so it never stands again when its restater is revised.
func TestCarry(t *testing.T) {
	ctx := context.Background()
	for _, restated := range []bool{false, true} {
		f := newFixture(t, nil)
		var ids []string
		for _, text := range []string{"The `ledger/flush.go` writer batches entries.", "The `ledger/flush.go` writer batches entries into one fsync.", "The `ledger` restater."} {
			dec, err := f.p.Remember(ctx, memory.Memory{Text: text, Project: "shop"})
			if err != nil || len(dec.MemoryIDs) != 1 {
				t.Fatal(dec, err)
			}
			ids = append(ids, dec.MemoryIDs[0])
		}
		old, next := ids[0], ids[1]
		if _, err := f.st.Update(ctx, old, func(m *memory.Memory) error {
			m.AccessCount, m.ReinforcedCount, m.Hits = 3, 1, []time.Time{t0}
			if restated {
				m.SupersededBy = ids[2]
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		ok, err := f.p.carry(ctx, old, next)
		if err != nil || !ok {
			t.Fatalf("restated %v: carry = %v, %v", restated, ok, err)
		}
		o, err := f.st.Get(ctx, old)
		if err != nil {
			t.Fatal(err)
		}
		n, err := f.st.Get(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		if o.SupersededBy != next || n.Supersedes != old || n.AccessCount != 3 || n.ReinforcedCount != 1 || len(n.Hits) != 1 {
			t.Errorf("restated %v: old superseded by %q (want %s); next supersedes %q, access %d, reinforced %d, hits %d",
				restated, o.SupersededBy, next, n.Supersedes, n.AccessCount, n.ReinforcedCount, len(n.Hits))
		}
		if ok, err := f.p.carry(ctx, old, next); ok || err != nil {
			t.Errorf("restated %v: carried twice: %v, %v", restated, ok, err)
		}
	}
}
