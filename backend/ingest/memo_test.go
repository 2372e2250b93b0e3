package ingest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestMayLead: every lead leadOf returns is one mayLead tries (a label of
// any length, a code span, a first word), so that mayUpdate's filter
// skips no sentence leadOf would give a pending lead; and a sentence
// naming none of the leads is skipped.
func TestMayLead(t *testing.T) {
	long := "pkg/" + strings.Repeat("very_long_directory_name/", 5) + "settings.toml"
	for _, st := range []string{
		"Compactor: deletes old segments",
		"**Retention policy**: eight segments",
		"`ledger/flush.go` batches every entry",
		"ledger/flush.go batches every entry",
		"KEEP_SEGMENTS=8 keeps eight segments",
		"- `config/ledger.toml`: keep_segments raised to 12",
		long + ": holds the retention, read at start", // a label past leadKeys' 80 bytes
		"`" + long + "` holds the retention",
		"*_ Indexer_*: rebuilt nightly",
	} {
		lead, _ := leadOf(st)
		if lead == "" {
			t.Fatalf("leadOf(%q) found no lead: not a case of this test", st)
		}
		if !mayLead(st, map[string]bool{lead: true}) {
			t.Errorf("mayLead(%q, {%q}) = false: leadOf's lead not tried", st, lead)
		}
		if mayLead(st, map[string]bool{"unrelated/lead.go": true}) {
			t.Errorf("mayLead(%q, {unrelated/lead.go}) = true", st)
		}
	}
}

// TestMayUpdateReadsOnlyLeads: a new turn that updates an earlier turn's
// statement and pastes a long file updates it (as without the filter),
// and mayUpdate classifies none of the pasted lines, whose leads no
// pending statement has: they are not in the process's class memo.
func TestMayUpdateReadsOnlyLeads(t *testing.T) {
	first := twoTurns("s-may-lead", []string{"make the ledger's retention configurable", ledgerAnswer}, []string{"ok", "Fine."})[0]
	cands, _, pending := distill(first, nil)
	if len(pending) == 0 {
		t.Fatal("the earlier turn has no pending statement: not a case of this test")
	}
	e := recentTurn{turn: first, kept: map[string]string{}, pending: pending}
	for _, c := range cands {
		if c.Keep {
			e.kept[c.Text] = "m1"
		}
	}
	e.setSaid(first)
	var paste strings.Builder
	paste.WriteString("Here is the file:\n\n```go\n")
	var lines []string
	for k := range 400 {
		l := fmt.Sprintf("segment_%d_of_may_lead.size = load(%q, %d)", k, fmt.Sprintf("size-%d", k), 7*k)
		lines = append(lines, l)
		paste.WriteString(l + "\n")
	}
	paste.WriteString("```")
	next := twoTurns("s-may-lead", []string{"ok", "Fine."}, []string{"and now?", paste.String(),
		"Done:\n- `config/ledger.toml`: keep_segments raised to 12, rotation every 128 MiB"})[1]
	if got := mayUpdate(next, []recentTurn{e}, 0); !got[0] {
		t.Errorf("mayUpdate = %v, want turn 0 updated", got)
	}
	for _, l := range lines[len(lines)-3:] {
		classMemo.mu.Lock()
		_, in := classMemo.m[classKey{l, false}]
		classMemo.mu.Unlock()
		if in {
			t.Errorf("pasted line %q classified by mayUpdate", l)
		}
	}
	leadFilterOff = true
	defer func() { leadFilterOff = false }()
	if got := mayUpdate(next, []recentTurn{e}, 0); !got[0] {
		t.Errorf("lead filter off: mayUpdate = %v, want turn 0 updated", got)
	}
}

// TestRevisionsBatch: a batch request's turns (every one revising) read
// through one Revisions decide what they decide without it, and the
// request's memo holds the sentences read, within maxRevMemoBytes.
func TestRevisionsBatch(t *testing.T) {
	ctx := context.Background()
	turns := insteadSession("s-revs", 12)
	run := func(revs *Revisions) []string {
		f := newFixture(t, nil)
		later := NewLater(turns)
		var out []string
		for i, tn := range turns {
			dec, _, err := f.p.ProcessTurn(ctx, tn, later.After(i, tn.SessionID), SessionState{Ended: true, Revisions: revs})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, decisionText(dec))
		}
		return out
	}
	revs := NewRevisions()
	with, without := run(revs), run(nil)
	if !slices.Equal(with, without) {
		for i := range with {
			if with[i] != without[i] {
				t.Errorf("turn %d decided with Revisions:\n%s\nwithout:\n%s", i+1, with[i], without[i])
			}
		}
	}
	if len(revs.rm.m) == 0 {
		t.Error("the request's Revisions read nothing")
	}
	if revs.rm.bytes > maxRevMemoBytes() {
		t.Errorf("Revisions holds %d bytes, over %d", revs.rm.bytes, maxRevMemoBytes())
	}
}

// decisionText is what a decision kept and dropped, for comparing two.
func decisionText(dec memory.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", dec.Verdict, dec.Reason)
	for _, c := range dec.Candidates {
		fmt.Fprintf(&b, " %v %s %q\n", c.Kept, c.Reason, c.Text)
	}
	return b.String()
}

// TestReviserMemoBound: a reviserMemo holds at most its bound
// (maxRevMemoBytes; 16 KiB here),
// counting each sentence it remembers, and starts again empty past it; a
// sentence longer than a sixteenth of it is not remembered.
func TestReviserMemoBound(t *testing.T) {
	rm := newReviserMemo()
	rm.limit = 16 << 10
	n := 0
	for k := 0; n < 3*rm.limit; k++ {
		st := fmt.Sprintf("Queue %d holds %d rows of table %d.", k, k%5, k)
		rm.of(st, k%2 == 0)
		n += len(st) + revEntryBytes
		if rm.bytes > rm.limit {
			t.Fatalf("after %d sentences the memo holds %d bytes, over %d", k+1, rm.bytes, rm.limit)
		}
		if k%997 != 0 {
			continue
		}
		want := 0
		for key := range rm.m {
			want += len(key.text) + revEntryBytes
		}
		if want != rm.bytes {
			t.Fatalf("memo counts %d bytes, its entries take %d", rm.bytes, want)
		}
	}
	blob := strings.Repeat("the old cache ", rm.limit/16/14+1)
	rm.of(blob, false)
	if _, ok := rm.m[revKey{blob, false}]; ok {
		t.Error("a blob past a sixteenth of the bound was remembered")
	}
}
