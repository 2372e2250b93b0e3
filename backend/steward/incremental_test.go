package steward

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestIncrementalScanSeesOldTimestamps: the incremental merge scan picks
// what changed by the store's write sequence, so a near-duplicate that
// comes back with old timestamps (imported from an export file, restored
// from the trash, pulled from the team) is compared on the next plan, not
// only on a full scan.
func TestIncrementalScanSeesOldTimestamps(t *testing.T) {
	ctx := context.Background()
	text := "The deploy script pushes the api image to staging after the tests pass."
	dup := text + " ."
	old := daysAgo(200)
	other := rec{id: "other", text: "Unrelated note: the frontend uses svelte with vite and typescript", typ: memory.TypeProject, created: 5, accessed: -1}
	stored := rec{id: "dupa", text: text, typ: memory.TypeProject, created: 20, accessed: -1}
	cases := []struct {
		name string
		// before runs before the first plan; write after it.
		before, write func(t *testing.T, st *store.Store)
	}{
		{"import", nil, func(t *testing.T, st *store.Store) {
			src := openStore(t, t.TempDir())
			m := rec{id: "dupb", text: dup, typ: memory.TypeProject, created: 200, accessed: -1}.memory(t)
			m.UpdatedAt = old
			if _, err := src.Put(ctx, m); err != nil {
				t.Fatal(err)
			}
			var exp bytes.Buffer
			if err := src.Export(ctx, &exp); err != nil {
				t.Fatal(err)
			}
			if rep, err := st.Import(ctx, &exp, store.ImportOptions{}); err != nil || rep.Imported != 1 {
				t.Fatalf("import %+v: %v", rep, err)
			}
		}},
		{"restore", func(t *testing.T, st *store.Store) {
			m := rec{id: "dupb", text: dup, typ: memory.TypeProject, created: 200, accessed: -1}.memory(t)
			m.UpdatedAt = old
			if _, err := st.Put(ctx, m); err != nil {
				t.Fatal(err)
			}
			if err := st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: "dupb", Reason: "test"}}}); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, st *store.Store) {
			if err := st.Restore(ctx, "dupb"); err != nil {
				t.Fatal(err)
			}
		}},
		{"team pull", nil, func(t *testing.T, st *store.Store) {
			m := rec{id: "dupb", text: dup, typ: memory.TypeProject, created: 200, accessed: -1}.memory(t)
			m.UpdatedAt = old
			if _, err := st.ApplyTeam(ctx, store.TeamChanges{Put: []memory.Memory{m}}); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, sw := fixture(t, defaults(), stored, other)
			if tc.before != nil {
				tc.before(t, st)
			}
			p1, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
			if err != nil {
				t.Fatal(err)
			}
			if p1.Counts[OpMerge] != 0 || p1.MergeQueried != 2 {
				t.Fatalf("first plan: merges %d, queried %d", p1.Counts[OpMerge], p1.MergeQueried)
			}
			tc.write(t, st)
			if m, err := st.Get(ctx, "dupb"); err != nil || !m.UpdatedAt.Equal(old) {
				t.Fatalf("dupb: updated_at %v (%v), want the old %v", m.UpdatedAt, err, old)
			}
			sw.clock = memory.FixedClock{T: now.Add(time.Hour)}
			p2, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
			if err != nil {
				t.Fatal(err)
			}
			if p2.MergeSince.IsZero() {
				t.Fatal("second plan not incremental")
			}
			if p2.Counts[OpMerge] != 1 || p2.MergeQueried != 1 {
				t.Fatalf("incremental plan after the %s: merges %d, queried %d; want the merge of dupa and dupb", tc.name, p2.Counts[OpMerge], p2.MergeQueried)
			}
			if a := p2.Actions[0]; !(a.ID == "dupa" && a.MergedIDs[0] == "dupb") && !(a.ID == "dupb" && a.MergedIDs[0] == "dupa") {
				t.Errorf("merge %s <- %v", a.ID, a.MergedIDs)
			}
		})
	}
}

// TestIncrementalScanFallsBackToFull: a mark the store cannot answer for
// makes the next merge scan a full one: a store behind the mark's write
// sequence (another store under the same steward directory) or a mark
// written before it recorded the sequence.
func TestIncrementalScanFallsBackToFull(t *testing.T) {
	ctx := context.Background()
	a, b := mergeRecs("The deploy script pushes the api image to staging after the tests pass.", "The deploy script pushes the api image to staging after the tests pass .")
	other := rec{id: "other", text: "Unrelated note: the frontend uses svelte with vite and typescript", typ: memory.TypeProject, created: 5, accessed: -1}
	cases := []struct {
		name  string
		after func(t *testing.T, sw *Steward) *Steward // the steward of the second plan
	}{
		{"same store", func(_ *testing.T, sw *Steward) *Steward { return sw }},
		{"another store", func(t *testing.T, sw *Steward) *Steward {
			st, _ := fixture(t, defaults(), a, b)
			return New(st, defaults(), Options{Dir: sw.opts.Dir, Clock: sw.clock})
		}},
		{"mark without seq", func(t *testing.T, sw *Steward) *Steward {
			led, err := loadLedger(sw.opts.Dir)
			if err != nil {
				t.Fatal(err)
			}
			mk := led.Merge["store"]
			mk.Seq = 0
			led.Merge["store"] = mk
			if err := led.save(sw.opts.Dir, now, sw.opts.MinInterval); err != nil {
				t.Fatal(err)
			}
			return sw
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, sw := fixture(t, defaults(), a, b, other)
			// More writes than the other store has, so its sequence is behind.
			for range 3 {
				if _, err := st.Update(ctx, "other", func(m *memory.Memory) error { m.AccessCount++; return nil }); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}}); err != nil {
				t.Fatal(err)
			}
			sw2 := tc.after(t, sw)
			sw2.clock = memory.FixedClock{T: now.Add(time.Hour)}
			p, err := sw2.Plan(ctx, PlanOptions{Ops: []string{OpMerge}})
			if err != nil {
				t.Fatal(err)
			}
			if full := p.MergeSince.IsZero(); full != (tc.name != "same store") {
				t.Errorf("full scan %v (queried %d)", full, p.MergeQueried)
			}
			if p.Counts[OpMerge] != 1 {
				t.Errorf("merges %d, want 1", p.Counts[OpMerge])
			}
		})
	}
}
