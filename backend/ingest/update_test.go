package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// ledgerAnswer is the final answer of a turn that changed the ledger's
// retention: a list of what it did, each line about one subject.
const ledgerAnswer = "Retention is configurable now.\n\n" +
	"- `config/ledger.toml`: keep_segments raised to 8, rotation every 64 MiB\n" +
	"- Compactor: runs once a night in `ledger/compact.go`, because the index points at older segments until its nightly rebuild\n" +
	"- docs/ledger.md: describes rotation and retention\n" +
	"- Files: `ledger/compact.go`, `ledger/rotate.go`"

// updatedIn distils the turn answering ledgerAnswer knowing later, a later
// turn's answer, and returns the statements of it cut or dropped because
// later updates them.
func updatedIn(t *testing.T, answer, later string) []string {
	t.Helper()
	turns := twoTurns("s-upd", []string{"make the ledger's retention configurable", answer}, []string{"and now?", later})
	var out []string
	for _, c := range Distill(turns[0], LaterTexts(turns[1:], "s-upd")) {
		if !c.Keep && strings.HasPrefix(c.Reason, reasonUpdated) {
			out = append(out, c.Text)
		}
		for _, k := range c.cuts {
			if strings.HasPrefix(k.reason, reasonUpdated) {
				out = append(out, k.text)
			}
		}
	}
	return out
}

// TestDropUpdated: a statement of the model (a sentence, a list line) is
// cut out of its memory when a later turn states the same lead ("Label:
// …", a leading path or code span) with most of what it said of it again
// and something new; a later statement that only repeats part of it, says
// something else under the same label, introduces a list, or is held by
// the turn's own text whole does not update it, nor does a line of file
// names.
func TestDropUpdated(t *testing.T) {
	for _, tc := range []struct {
		name, later string
		want        []string // the statements of ledgerAnswer updated
	}{
		{"a new value under the same path", "Done:\n- `config/ledger.toml`: keep_segments raised to 12, rotation every 128 MiB",
			[]string{"`config/ledger.toml`: keep_segments raised to 8, rotation every 64 MiB"}},
		{"a label said again with more", "Also:\n- Compactor: runs once a night in `ledger/compact.go` and at startup, because the index points at older segments until its rebuild",
			[]string{"Compactor: runs once a night in `ledger/compact.go`, because the index points at older segments until its nightly rebuild"}},
		{"a path lead without a colon", "docs/ledger.md now describes rotation, retention and the nightly compaction.",
			[]string{"docs/ledger.md: describes rotation and retention"}},
		{"only a part said again", "Recap:\n- `config/ledger.toml`: keep_segments raised", nil},
		{"the same label, another subject", "Also:\n- Compactor: the index cache is shared between parallel subtests", nil},
		{"a line introducing a list", "Also:\n- docs/ledger.md: describes rotation and retention, with these sections:", nil},
		{"held whole by the turn's own text", "Recap:\n- docs/ledger.md: describes rotation and retention of the older segments", nil},
		{"a line of file names", "Also:\n- Files: `ledger/compact.go`, `ledger/index.go`", nil},
		{"another lead", "Also:\n- `config/index.toml`: keep_segments raised to 12, rotation every 128 MiB", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := updatedIn(t, ledgerAnswer, tc.later); !slices.Equal(got, tc.want) {
				t.Errorf("updated %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("off", func(t *testing.T) {
		updateOff["all"] = true
		defer delete(updateOff, "all")
		if got := updatedIn(t, ledgerAnswer, "Done:\n- `config/ledger.toml`: keep_segments raised to 12, rotation every 128 MiB"); len(got) > 0 {
			t.Errorf("updated %q with the rule off", got)
		}
	})
}

// TestLeadOf: the lead of a statement is its short label, else its
// leading code span, else its first word when that is a path, an
// identifier or a setting.
func TestLeadOf(t *testing.T) {
	for _, tc := range []struct{ st, lead, rest string }{
		{"Compactor: deletes old segments", "compactor", "deletes old segments"},
		{"**Retention policy**: eight segments", "retention policy", "eight segments"},
		{"`ledger/flush.go` batches every entry", "ledger/flush.go", " batches every entry"},
		{"ledger/flush.go batches every entry", "ledger/flush.go", "batches every entry"},
		{"KEEP_SEGMENTS=8 keeps eight segments", "keep_segments=8", "keeps eight segments"},
		{"The compactor deletes old segments", "", ""},
		{"When the compactor runs at night, it deletes: old segments", "", ""},
	} {
		if lead, rest := leadOf(tc.st); lead != tc.lead || rest != tc.rest {
			t.Errorf("leadOf(%q) = %q, %q; want %q, %q", tc.st, lead, rest, tc.lead, tc.rest)
		}
	}
}

// TestUpdatedLive: live capture, which stores turn 1 before turn 2 exists,
// ends as batch ingest does: turn 2's update distils turn 1 again, its
// memory loses the updated line and keeps its id and the rest, or, when
// the line was all of it, is superseded by turn 2's memory; the feed
// says why.
func TestUpdatedLive(t *testing.T) {
	ctx := context.Background()
	const (
		recovery = "\n- The recovery code in `ledger/recover.go` truncates the tail of the last segment after a crash, since a torn write leaves half an entry there."
		day      = ", so that one segment holds about a day of ledger entries at the current write rate"
	)
	for _, tc := range []struct {
		name, answer, update string
		whole                bool // the updated line is all turn 1's memory holds
	}{
		{"the rest kept in the same memory", ledgerAnswer,
			"Done, the retention is larger now.\n\n- `config/ledger.toml`: keep_segments raised to 12, rotation every 128 MiB" + recovery, false},
		{"nothing left: superseded", "Retention is configurable now.\n\n- `config/ledger.toml`: keep_segments raised to 8, rotation every 64 MiB" + day,
			"Done, the retention is larger now.\n\n- `config/ledger.toml`: keep_segments raised to 12, rotation every 128 MiB" + day + recovery, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := twoTurns("s-upd-live", []string{"make the ledger's retention configurable", tc.answer}, []string{"make it keep more", tc.update})
			_, live, decs, _ := replayBoth(t, turns)
			first, last := decs[0].MemoryIDs, decs[len(decs)-1] // first: the memories live turn 1 created
			if len(first) != 1 {
				t.Fatalf("live turn 1 stored %d memories, want 1", len(first))
			}
			m, err := live.st.Get(ctx, first[0])
			if err != nil {
				t.Fatal(err)
			}
			if !tc.whole && strings.Contains(m.Text, "64 MiB") {
				t.Errorf("turn 1's memory still holds the updated line: %q", m.Text)
			}
			var said string
			for _, c := range last.Candidates {
				if c.Origin == OriginEarlier && c.MemoryID == first[0] {
					said = c.Reason
				}
			}
			if tc.whole {
				if !m.Superseded() || !slices.Contains(last.MemoryIDs, m.SupersededBy) {
					t.Errorf("turn 1's memory: superseded by %q, want by one of turn 2's %q", m.SupersededBy, last.MemoryIDs)
				}
				if !strings.Contains(said, "updated in turn") {
					t.Errorf("the feed says %q, want it updated", said)
				}
				return
			}
			if m.Superseded() || !strings.Contains(m.Text, "Compactor") {
				t.Errorf("turn 1's memory: superseded %v, text %q; want it standing with the rest", m.Superseded(), m.Text)
			}
			if !strings.Contains(said, "updated later") {
				t.Errorf("the feed says %q, want the update named", said)
			}
		})
	}
}

// TestMayUpdate: live capture distils again an earlier turn a new turn's
// statement updates (updatedBy, as batch ingest's distillation of the
// earlier turn would find it), and no other: not one the new statement
// names only the lead of, nor one it names the lead and some words of
// without being a newer version, nor one whose text holds the new
// statement whole (held.go drops it there), nor one whose statement a
// turn between them updated already.
func TestMayUpdate(t *testing.T) {
	first := twoTurns("s-may", []string{"make the ledger's retention configurable", ledgerAnswer}, []string{"ok", "Fine."})[0]
	remembered := func(later []LaterText) recentTurn {
		cands, _, pending := distill(first, later)
		e := recentTurn{turn: first, kept: map[string]string{}, pending: pending}
		for _, c := range cands {
			if c.Keep {
				e.kept[c.Text] = "m1"
			}
		}
		e.setSaid(first)
		return e
	}
	const update = "Done:\n- `config/ledger.toml`: keep_segments raised to 12, rotation every 128 MiB"
	for _, tc := range []struct {
		name, later string
		between     []string // what a turn between said, the earlier turn distilled knowing it
		want        bool
	}{
		{"an update", update, nil, true},
		{"the lead alone", "Done:\n- `config/ledger.toml`: the index cache is shared between parallel subtests now", nil, false},
		{"the lead and words of the turn's other statements", "Done:\n- `config/ledger.toml`: keep_segments read by the compactor nightly before the index rebuild, through `ledger/mmap.go`", nil, false},
		{"held whole by the earlier text", "Recap:\n- docs/ledger.md: describes rotation and retention of the older segments", nil, false},
		{"no lead", "Done: the retention is larger now.", nil, false},
		{"updated by a turn between already", "Done:\n- `config/ledger.toml`: keep_segments raised to 16, rotation every 256 MiB", []string{update}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := remembered(modelSaid(tc.between...))
			next := twoTurns("s-may", []string{"ok", "Fine."}, []string{"and now?", tc.later})[1]
			if got := mayUpdate(next, []recentTurn{e}, 0)[0]; got != tc.want {
				t.Errorf("mayUpdate = %v, want %v", got, tc.want)
			}
			// What batch ingest finds: the earlier turn distilled knowing
			// both later texts cuts more than knowing the one between.
			before := Distill(first, modelSaid(tc.between...))
			after := Distill(first, modelSaid(append(slices.Clone(tc.between), tc.later)...))
			if changed := !slices.EqualFunc(before, after, func(a, b Candidate) bool { return a.Text == b.Text && a.Keep == b.Keep }); changed != tc.want {
				t.Errorf("distilled again knowing it: changed %v, want %v", changed, tc.want)
			}
		})
	}
}
