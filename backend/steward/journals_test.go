package steward

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// twoRuns applies a run the user chose (merge and prune) and then a
// scheduled one (the decays and snooze, planned afresh), on disjoint
// memories, and returns the store's states before, between and after with
// the two results.
func twoRuns(t *testing.T) (sw *Steward, get func() map[string]memory.Memory, s0, s1, s2 map[string]memory.Memory, manual, sched Result) {
	t.Helper()
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	get = func() map[string]memory.Memory {
		m, _ := everything(t, st)
		return m
	}
	s0 = get()
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if manual, err = sw.Apply(ctx, p, []string{OpMerge, OpPrune}); err != nil || len(manual.Applied) == 0 {
		t.Fatalf("manual run: %+v %v", manual, err)
	}
	s1 = get()
	p, err = sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sched, err = sw.ApplyScheduled(ctx, p, []string{OpDecayStale, OpDecayUnreinforced, OpSnoozeSticky}); err != nil || len(sched.Applied) == 0 {
		t.Fatalf("scheduled run: %+v %v", sched, err)
	}
	s2 = get()
	a, b := diffRecords(s0, s1), diffRecords(s1, s2)
	for _, id := range a {
		if slices.Contains(b, id) {
			t.Fatalf("the runs overlap on %s (%v, %v): the fixture no longer fits this test", id, a, b)
		}
	}
	return sw, get, s0, s1, s2, manual, sched
}

// TestUndoRunsInOrder: each undo reverts the newest run left, and after
// both the store is exactly as before the first.
func TestUndoRunsInOrder(t *testing.T) {
	ctx := context.Background()
	sw, get, s0, s1, _, manual, sched := twoRuns(t)
	runs, err := sw.Runs()
	if err != nil || len(runs) != 2 || runs[0].RunID != sched.RunID || runs[1].RunID != manual.RunID {
		t.Fatalf("runs %+v %v", runs, err)
	}
	if !slices.Equal(runs[1].Ops, []string{OpMerge, OpPrune}) || runs[1].Counts[OpMerge] != 1 || runs[1].Memories != 3 || runs[1].Scheduled {
		t.Errorf("manual run listed as %+v", runs[1])
	}
	if !runs[0].Scheduled {
		t.Errorf("scheduled run listed as %+v", runs[0])
	}
	if res, err := sw.Undo(ctx); err != nil || res.RunID != sched.RunID {
		t.Fatalf("first undo: %+v %v", res, err)
	}
	if d := diffRecords(s1, get()); len(d) != 0 {
		t.Errorf("after the first undo, differ from after the manual run: %v", d)
	}
	if res, err := sw.Undo(ctx); err != nil || res.RunID != manual.RunID || res.Counts["restored"] != 2 {
		t.Fatalf("second undo: %+v %v", res, err)
	}
	if d := diffRecords(s0, get()); len(d) != 0 {
		t.Errorf("after both undos, differ from the start: %v", d)
	}
	if _, err := sw.Undo(ctx); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("third undo: %v", err)
	}
}

// TestUndoEarlierRun: the run the user applied is undone after a scheduled
// run; the scheduled run's changes stay, and undoing it afterwards gives
// the store exactly as it was.
func TestUndoEarlierRun(t *testing.T) {
	ctx := context.Background()
	sw, get, s0, s1, s2, manual, sched := twoRuns(t)
	res, err := sw.UndoRun(ctx, manual.RunID)
	if err != nil || res.RunID != manual.RunID || res.Counts["restored"] != 2 || len(res.Skipped) != 0 {
		t.Fatalf("undo of the manual run: %+v %v", res, err)
	}
	now := get()
	for _, id := range diffRecords(s0, s1) {
		if d := diffRecords(map[string]memory.Memory{id: s0[id]}, map[string]memory.Memory{id: now[id]}); len(d) != 0 {
			t.Errorf("%s not back as before the manual run", id)
		}
	}
	for _, id := range diffRecords(s1, s2) {
		if d := diffRecords(map[string]memory.Memory{id: s2[id]}, map[string]memory.Memory{id: now[id]}); len(d) != 0 {
			t.Errorf("%s lost the scheduled run's change", id)
		}
	}
	if runs, err := sw.Runs(); err != nil || len(runs) != 1 || runs[0].RunID != sched.RunID {
		t.Errorf("runs left: %+v %v", runs, err)
	}
	if _, err := sw.UndoRun(ctx, manual.RunID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("undo of an undone run: %v", err)
	}
	if _, err := sw.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if d := diffRecords(s0, get()); len(d) != 0 {
		t.Errorf("after both undos, differ from the start: %v", d)
	}
}

// TestJournalsMigrated: the single journal of an older version (undo.json,
// and undo.prev.json a kill left beside it) is found and undone, newest
// first.
func TestJournalsMigrated(t *testing.T) {
	ctx := context.Background()
	sw, get, s0, _, _, manual, sched := twoRuns(t)
	dir := sw.opts.Dir
	refs, err := sw.journals()
	if err != nil || len(refs) != 2 {
		t.Fatalf("journals %+v %v", refs, err)
	}
	for i, name := range []string{legacyJournalPrev, legacyJournal} {
		if err := os.Rename(refs[i].path, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(dir, runsDir)); err != nil {
		t.Fatal(err)
	}
	sw = New(sw.st, defaults(), Options{Dir: dir, Clock: sw.opts.Clock})
	runs, err := sw.Runs()
	if err != nil || len(runs) != 2 || runs[0].RunID != sched.RunID || runs[1].RunID != manual.RunID {
		t.Fatalf("runs after migration %+v %v", runs, err)
	}
	for _, name := range []string{legacyJournalPrev, legacyJournal} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left: %v", name, err)
		}
	}
	for range 2 {
		if _, err := sw.Undo(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if d := diffRecords(s0, get()); len(d) != 0 {
		t.Errorf("after both undos, differ from the start: %v", d)
	}
	// A file in its place that is no journal is reported, not overwritten.
	if err := os.WriteFile(filepath.Join(dir, legacyJournal), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Runs(); err == nil {
		t.Error("a broken undo.json was not reported")
	}
}

// TestJournalDepth: only the newest JournalDepth journals are kept.
func TestJournalDepth(t *testing.T) {
	_, sw := fixture(t, defaults())
	var ids []string
	for i := range JournalDepth + 3 {
		id := fmt.Sprintf("20250901T120000Z-%08x", i)
		ids = append(ids, id)
		if _, err := sw.writeJournal(&journal{Version: 1, Run: Run{RunID: id, At: now}}); err != nil {
			t.Fatal(err)
		}
		sw.pruneJournals()
	}
	runs, err := sw.Runs()
	if err != nil || len(runs) != JournalDepth {
		t.Fatalf("%d runs kept, want %d: %v", len(runs), JournalDepth, err)
	}
	for i, r := range runs {
		if want := ids[len(ids)-1-i]; r.RunID != want {
			t.Errorf("run %d is %s, want %s", i, r.RunID, want)
		}
	}
}

// TestPhantomJournalDropped: the journal of a run a kill stopped before
// its batch (the store as before the run) is removed by the next New; the
// journal of a run that was applied stays.
func TestPhantomJournalDropped(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept, err := sw.Apply(ctx, p, []string{OpSnoozeSticky})
	if err != nil || len(kept.Applied) == 0 {
		t.Fatalf("first run: %+v %v", kept, err)
	}
	p, err = sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantDecay := p.Counts[OpDecayStale]
	phantom, err := sw.Apply(ctx, p, []string{OpMerge, OpPrune, OpDecayStale})
	if err != nil || phantom.Trashed == 0 || wantDecay == 0 {
		t.Fatalf("second run: %+v %v (%d decays planned)", phantom, err, wantDecay)
	}
	// The second run's journal and ledger, as a kill after its undo's
	// batch leaves them: the run is undone, its journal and the ledger of
	// after the run written back.
	refs, err := sw.journals()
	if err != nil || len(refs) != 2 {
		t.Fatalf("journals %+v %v", refs, err)
	}
	b, err := os.ReadFile(refs[1].path)
	if err != nil {
		t.Fatal(err)
	}
	ledgerPath := filepath.Join(sw.opts.Dir, ledgerFile)
	led, err := os.ReadFile(ledgerPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Undo(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(refs[1].path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ledgerPath, led, 0o600); err != nil {
		t.Fatal(err)
	}
	if runs, _ := sw.Runs(); len(runs) != 2 {
		t.Fatalf("setup: %d runs", len(runs))
	}
	sw = New(st, defaults(), Options{Dir: sw.opts.Dir, Clock: sw.opts.Clock})
	runs, err := sw.Runs()
	if err != nil || len(runs) != 1 || runs[0].RunID != kept.RunID {
		t.Fatalf("runs after New: %+v %v", runs, err)
	}
	// The ledger is as before the run: its decays are planned again.
	if p, err := sw.Plan(ctx, PlanOptions{}); err != nil || p.Counts[OpDecayStale] != wantDecay {
		t.Errorf("decays planned after New: %v, want %d (%v)", p.Counts, wantDecay, err)
	}
	// An applied run's journal is never taken for a phantom.
	sw = New(st, defaults(), Options{Dir: sw.opts.Dir, Clock: sw.opts.Clock})
	if runs, err := sw.Runs(); err != nil || len(runs) != 1 {
		t.Fatalf("runs after a second New: %+v %v", runs, err)
	}
}

// TestJournalEmbeddings: a journal holds a record's embedding only when
// the run changed its text; a version 1 journal, with every embedding,
// still undoes exactly.
func TestJournalEmbeddings(t *testing.T) {
	for _, v1 := range []bool{false, true} {
		t.Run(fmt.Sprintf("version 1: %v", v1), func(t *testing.T) {
			ctx := context.Background()
			// dupb, the survivor, takes dupa's better text.
			base := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
			a, b := mergeRecs(base+" via scripts/deploy.sh", base)
			recs := []rec{a, b}
			for _, r := range mixedRecs() {
				if r.id != "dupa" && r.id != "dupb" {
					recs = append(recs, r)
				}
			}
			st, sw := fixture(t, defaults(), recs...)
			before, _ := everything(t, st)
			p, err := sw.Plan(ctx, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sw.Apply(ctx, p, nil); err != nil {
				t.Fatal(err)
			}
			j, ref, err := sw.readJournal("")
			if err != nil {
				t.Fatal(err)
			}
			withVec := 0
			for _, r := range j.Records {
				changed := r.After != nil && r.After.Text != r.Before.Text
				if changed != (len(r.Embedding) > 0) {
					t.Errorf("%s: text changed %v, embedding journaled %v", r.Before.ID, changed, len(r.Embedding) > 0)
				}
				if changed {
					withVec++
				}
			}
			if withVec != 1 || len(j.Records) < 4 {
				t.Fatalf("%d of %d records journaled with their vector, want the merge survivor only", withVec, len(j.Records))
			}
			if v1 {
				j.Version = 1
				for i := range j.Records {
					j.Records[i].Embedding = pack(before[j.Records[i].Before.ID].Embedding)
				}
				b, err := json.Marshal(j)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(ref.path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sw.Undo(ctx); err != nil {
				t.Fatal(err)
			}
			if after, tr := everything(t, st); len(diffRecords(before, after)) != 0 || len(tr) != 0 {
				t.Errorf("not back exactly: %v, trash %d", diffRecords(before, after), len(tr))
			}
		})
	}
}

// TestJournalBytes: the oldest journals go when the kept ones hold more
// than journalBytes together; the newest stays whatever its size.
func TestJournalBytes(t *testing.T) {
	defer func(b int64) { journalBytes = b }(journalBytes)
	_, sw := fixture(t, defaults())
	big := &journal{Version: journalVersion, Run: Run{At: now, PlanID: strings.Repeat("x", 4000)}}
	for i := range 5 {
		big.RunID = fmt.Sprintf("20250901T120000Z-%08x", i)
		if _, err := sw.writeJournal(big); err != nil {
			t.Fatal(err)
		}
	}
	refs, _ := sw.journals()
	fi, err := os.Stat(refs[0].path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		budget int64
		want   int
	}{{5 * fi.Size(), 5}, {3*fi.Size() + 10, 3}, {1, 1}} {
		journalBytes = tc.budget
		sw.pruneJournals()
		if runs, err := sw.Runs(); err != nil || len(runs) != tc.want || runs[0].RunID != big.RunID {
			t.Errorf("budget %d: %d runs kept (newest %v), want %d (%v)", tc.budget, len(runs), runs, tc.want, err)
		}
	}
}

// TestReadJournalHead: the head is read up to the records when the journal
// says how many there are, and the records are counted when it does not
// (a journal of before); a broken journal is an error.
func TestReadJournalHead(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Run
		err        bool
	}{
		{"current", `{"version":2,"run_id":"r1","plan_id":"p1","at":"2025-09-01T12:00:00Z","ops":["prune"],"counts":{"prune":2},"memories":2,"records":[{},{}],"ledger":[]}`,
			Run{RunID: "r1", PlanID: "p1", At: now, Ops: []string{"prune"}, Counts: map[string]int{"prune": 2}, Memories: 2}, false},
		{"records cut short after the head", `{"version":2,"run_id":"r1","memories":5,"records":[{"before":`,
			Run{RunID: "r1", Memories: 5}, false},
		{"version 1: records counted", `{"version":1,"run_id":"r2","at":"2025-09-01T12:00:00Z","records":[{"x":1},{},{}],"ledger":[{"op":"merge"}]}`,
			Run{RunID: "r2", At: now, Memories: 3}, false},
		{"not an object", `[1,2]`, Run{}, true},
		{"broken", `{"run_id":"r3","records":[{`, Run{}, true},
		{"wrong type", `{"run_id":7}`, Run{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "j.json")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			h, err := readJournalHead(path)
			if (err != nil) != tc.err {
				t.Fatalf("err %v, want error %v", err, tc.err)
			}
			if !tc.err && (h.RunID != tc.want.RunID || h.PlanID != tc.want.PlanID || !h.At.Equal(tc.want.At) || h.Memories != tc.want.Memories ||
				!slices.Equal(h.Ops, tc.want.Ops) || fmt.Sprint(h.Counts) != fmt.Sprint(tc.want.Counts)) {
				t.Errorf("head %+v, want %+v", h, tc.want)
			}
		})
	}
}
