package steward

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// mixedRecs is a store where every operation has work, plus memories no
// operation may touch.
func mixedRecs() []rec {
	dup := "The deploy script pushes the api service image to the staging cluster after the integration tests pass on the main branch"
	pinned := rec{id: "pinned", text: "pinned rule: never force push to main", typ: memory.TypeFeedback, importance: 0.01, access: 30, created: 400, accessed: -1, pinned: true}
	superseded := rec{id: "superseded", text: "old way to run the migrations by hand", typ: memory.TypeProject, importance: 0.01, created: 400, accessed: -1, superseded: true}
	recs := []rec{
		{id: "dupa", text: dup + ".", typ: memory.TypeProject, importance: 0.4, created: 20, accessed: -1},
		{id: "dupb", text: dup + " via scripts/deploy.sh", typ: memory.TypeProject, importance: 0.6, access: 4, reinforced: 1, created: 30, accessed: 1},
		{id: "stale", text: "the billing worker retries failed invoices nightly", typ: memory.TypeProject, importance: 0.5, created: 200, accessed: -1},
		{id: "prune", text: "someone mentioned the coffee machine on floor two", typ: memory.TypeProject, importance: 0.02, created: 200, accessed: -1},
		{id: "active", text: "the search handler caches query embeddings per session", typ: memory.TypeProject, importance: 0.5, access: 6, reinforced: 2, created: 50, accessed: 1},
		{id: "sticky", text: "overview of the whole repository layout and its packages", typ: memory.TypeReference, importance: 0.5, access: 12, reinforced: 1, created: 50, accessed: 1},
		{id: "fresh", text: "the UI polls the events stream every two seconds", typ: memory.TypeProject, created: 2, accessed: -1},
		pinned, superseded,
	}
	return recs
}

func TestPlanApplyUndoExact(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	before, _ := everything(t, st)
	count := st.Count()

	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after, tr := everything(t, st); len(diffRecords(before, after)) != 0 || len(tr) != 0 {
		t.Fatal("Plan changed the store")
	}
	wantCounts := map[string]int{OpMerge: 1, OpDecayStale: 2, OpBoostActive: 1, OpPrune: 1, OpDecayUnreinforced: 1, OpSnoozeSticky: 1}
	if !reflect.DeepEqual(p.Counts, wantCounts) || p.Scanned != len(mixedRecs()) {
		t.Fatalf("plan counts %v scanned %d; actions %+v", p.Counts, p.Scanned, p.Actions)
	}
	for _, id := range []string{"pinned", "superseded", "fresh"} {
		if a := actionsFor(p, id); len(a) != 0 {
			t.Errorf("%s has actions: %+v", id, a)
		}
	}

	res, err := sw.Apply(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 7 || len(res.Skipped) != 0 || res.Trashed != 2 {
		t.Fatalf("apply result %+v", res)
	}
	mid, tr := everything(t, st)
	if changed := diffRecords(before, mid); !slices.Equal(changed, []string{"active", "dupa", "dupb", "prune", "stale", "sticky"}) {
		t.Errorf("apply changed %v", changed)
	}
	if len(tr) != 2 || st.Count() != count-2 {
		t.Errorf("trash %d, count %d", len(tr), st.Count())
	}
	if m := mid["sticky"]; !m.CooldownUntil.Equal(now.Add(30*day)) || m.Importance != 0.45 || !m.UpdatedAt.Equal(now) {
		t.Errorf("sticky after apply: %+v", m)
	}
	if runs, err := sw.Runs(); err != nil || len(runs) != 1 || runs[0].RunID != res.RunID || runs[0].Memories != 6 {
		t.Errorf("runs after apply: %+v %v", runs, err)
	}

	ures, err := sw.Undo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ures.Counts["reverted"] != 4 || ures.Counts["restored"] != 2 || len(ures.Skipped) != 0 {
		t.Errorf("undo result %+v", ures)
	}
	// Every record is back exactly: every field, UpdatedAt (which Apply set
	// to now) and the embedding included; the trash is empty again.
	after, tr := everything(t, st)
	if d := diffRecords(before, after); len(d) != 0 {
		for _, id := range d {
			t.Errorf("%s differs after undo:\n before %s\n after  %s", id, show(before[id]), show(after[id]))
		}
	}
	if len(tr) != 0 || st.Count() != count {
		t.Errorf("after undo: trash %d, count %d", len(tr), st.Count())
	}
	// Restored memories are searchable again.
	vs, err := st.VectorSearch(ctx, before["prune"].Embedding, 1, store.Filter{})
	if err != nil || len(vs) != 1 || vs[0].ID != "prune" {
		t.Errorf("restored memory not found by vector: %v %v", vs, err)
	}
	ts, err := bm25Search(ctx, st, "coffee machine", 3, store.Filter{})
	if err != nil || len(ts) != 1 || ts[0].ID != "prune" {
		t.Errorf("restored memory not found by text: %v %v", ts, err)
	}
	if _, err := sw.Undo(ctx); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("second undo: %v", err)
	}
	// The same plan applies again (the ledger was restored too).
	if res, err := sw.Apply(ctx, p, nil); err != nil || len(res.Applied) != 7 {
		t.Errorf("re-apply after undo: %v %+v", err, res)
	}
}

func TestUndoNothing(t *testing.T) {
	_, sw := fixture(t, defaults())
	if _, err := sw.Undo(context.Background()); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("undo on a fresh steward: %v", err)
	}
}

func TestApplySkipsChangedSincePlan(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// A recall bumps "sticky" (store clock: now); the user edits "dupa"
	// (the merge's loser) after the plan.
	if _, err := st.Update(ctx, "sticky", func(m *memory.Memory) error { m.AccessCount++; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Update(ctx, "dupa", func(m *memory.Memory) error { m.Importance = 0.9; return nil }); err != nil {
		t.Fatal(err)
	}
	res, err := sw.Apply(ctx, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]bool{}
	for _, s := range res.Skipped {
		skipped[s.Op+"/"+s.ID] = true
	}
	for _, k := range []string{"decay_unreinforced/sticky", "snooze_sticky/sticky", "merge/dupb"} {
		if !skipped[k] {
			t.Errorf("%s not skipped: %+v", k, res.Skipped)
		}
	}
	if len(res.Applied) != 4 {
		t.Errorf("applied %d, want 4 (stale, active, prune: decay and prune)", len(res.Applied))
	}
	m, _ := st.Get(ctx, "sticky")
	if !m.CooldownUntil.IsZero() || m.Importance != 0.5 || m.AccessCount != 13 {
		t.Errorf("changed memory was modified anyway: %+v", m)
	}
	if _, err := st.Get(ctx, "dupa"); err != nil {
		t.Errorf("changed loser was trashed: %v", err)
	}
}

func TestApplySubsetOfOperations(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sw.Apply(ctx, p, []string{OpSnoozeSticky})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 1 || res.Applied[0].Op != OpSnoozeSticky {
		t.Fatalf("applied %+v", res.Applied)
	}
	m, _ := st.Get(ctx, "sticky")
	if m.Importance != 0.5 || !m.CooldownUntil.Equal(now.Add(30*day)) {
		t.Errorf("sticky after snooze only: importance %v cooldown %v", m.Importance, m.CooldownUntil)
	}
	if st.Count() != len(mixedRecs()) {
		t.Error("a snooze-only apply trashed something")
	}
	if _, err := sw.Apply(ctx, p, []string{"explode"}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("unknown op: %v", err)
	}
}

// TestUndoKeepsLaterChanges: memories changed after the run are reverted
// field by field; what came later (a recall's access) stays.
func TestUndoKeepsLaterChanges(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	// The run happens an hour before the store's clock, so the recalls
	// below (stamped by the store at now) are told apart from it.
	sw.clock = memory.FixedClock{T: now.Add(-time.Hour)}
	before, _ := everything(t, st)
	p, _ := sw.Plan(ctx, PlanOptions{})
	if _, err := sw.Apply(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	sw.clock = memory.FixedClock{T: now.Add(time.Hour)}
	hit := now.Add(-30 * time.Minute)
	for _, id := range []string{"dupb", "active"} {
		if _, err := st.Update(ctx, id, func(m *memory.Memory) error {
			m.AccessCount++
			m.Hits = append(m.Hits, hit)
			m.LastAccessed = hit
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := sw.Undo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts["rebased"] != 2 || res.Counts["reverted"] != 2 || res.Counts["restored"] != 2 {
		t.Errorf("undo counts %v", res.Counts)
	}
	for _, id := range []string{"dupb", "active"} {
		m, _ := st.Get(ctx, id)
		b := before[id]
		if m.Text != b.Text || m.Importance != b.Importance || m.AccessCount != b.AccessCount+1 ||
			!m.LastAccessed.Equal(hit) || len(m.Hits) != len(b.Hits)+1 || !slices.Equal(m.Embedding, b.Embedding) {
			t.Errorf("%s rebased wrongly:\n got    %s\n before %s", id, show(m), show(b))
		}
	}
	if _, err := st.Get(ctx, "dupa"); err != nil {
		t.Errorf("merged memory not restored: %v", err)
	}
}

// TestRateLimited: an hourly schedule does not compound the importance
// operations; after MinInterval they apply again.
func TestRateLimited(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	ops := []string{OpDecayStale, OpBoostActive, OpDecayUnreinforced}
	p, _ := sw.Plan(ctx, PlanOptions{Ops: ops})
	if _, err := sw.Apply(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	sw.clock = memory.FixedClock{T: now.Add(time.Hour)}
	p2, _ := sw.Plan(ctx, PlanOptions{Ops: ops})
	if len(p2.Actions) != 0 {
		t.Errorf("an hour later: %+v", p2.Actions)
	}
	sw.clock = memory.FixedClock{T: now.Add(DefaultMinInterval + time.Hour)}
	p3, _ := sw.Plan(ctx, PlanOptions{Ops: ops})
	if p3.Counts[OpDecayStale] != 2 || p3.Counts[OpDecayUnreinforced] != 1 {
		t.Errorf("a week later: %v", p3.Counts)
	}
	m, _ := st.Get(ctx, "stale")
	if m.Importance != 0.4 {
		t.Errorf("stale decayed to %v", m.Importance)
	}
}

func TestPlanScope(t *testing.T) {
	ctx := context.Background()
	recs := mixedRecs()
	recs[2].project = "other" // stale
	_, sw := fixture(t, defaults(), recs...)
	p, err := sw.Plan(ctx, PlanOptions{Project: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Scanned != 1 || len(p.Actions) != 1 || p.Actions[0].ID != "stale" || p.Scope != "project:other" {
		t.Errorf("project plan: scanned %d, %+v", p.Scanned, p.Actions)
	}
	if _, err := sw.Plan(ctx, PlanOptions{Project: "x", All: true}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("project with all: %v", err)
	}
	if _, err := sw.Plan(ctx, PlanOptions{Ops: []string{"nope"}}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("unknown op: %v", err)
	}
}

// show prints a memory without its embedding.
func show(m memory.Memory) string {
	n := len(m.Embedding)
	m.Embedding = nil
	return fmt.Sprintf("%+v (embedding %d)", m, n)
}

// TestApplyAcrossModelSwitch: a re-embedding that switches the store's
// model between Apply reading the records and writing the run (a daemon
// re-embeds while it serves) makes the write fail with ErrModelMismatch
// (a merge survivor carries the old model's vector); Apply reads the
// records again and applies the run with the new vectors.
func TestApplyAcrossModelSwitch(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := embed.NewLexical()
	switched := 0
	sw.beforeWrite = func() {
		if switched++; switched == 1 {
			if err := st.Reembed(ctx, other, nil); err != nil {
				t.Fatalf("reembed: %v", err)
			}
		}
	}
	res, err := sw.Apply(ctx, p, nil)
	if err != nil {
		t.Fatalf("apply across a model switch: %v", err)
	}
	if len(res.Applied) != 7 || switched != 2 {
		t.Errorf("applied %d actions in %d attempts; want 7 in 2", len(res.Applied), switched)
	}
	all, _ := everything(t, st)
	for id, m := range all {
		want, err := other.Embed(ctx, []string{m.Text})
		if err != nil {
			t.Fatal(err)
		}
		if m.EmbeddingModel != other.Model() || !slices.Equal(m.Embedding, want[0]) {
			t.Errorf("%s holds a vector of %q, not %s's of its text", id, m.EmbeddingModel, other.Model())
		}
	}
	if _, ok := all["dupa"]; ok {
		t.Error("the merge's loser is still live")
	}
}

// TestUndoAndRestoreAcrossModelSwitch: a run applied, then a change of
// embedding model (the store re-embedded, the trash and the journal still
// holding the old model's vectors), then an undo: every record comes back
// as before the run but for its vector, which is the new model's of its
// text; without an embedder the store refuses the old vectors and nothing
// changes. Restoring from the trash after a switch works the same way.
func TestUndoAndRestoreAcrossModelSwitch(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	before, _ := everything(t, st)
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Apply(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	other := embed.NewLexical()
	if err := st.Reembed(ctx, other, nil); err != nil {
		t.Fatal(err)
	}
	mid, midTrash := everything(t, st)
	if len(midTrash) != 2 {
		t.Fatalf("trash holds %d", len(midTrash))
	}

	// Without an embedder: a clear refusal, nothing changed.
	if _, err := sw.Undo(ctx); !errors.Is(err, memory.ErrModelMismatch) {
		t.Fatalf("undo without an embedder across a switch: %v", err)
	}
	if now, tr := everything(t, st); len(diffRecords(mid, now)) != 0 || len(tr) != 2 {
		t.Fatal("a refused undo changed the store")
	}

	sw.opts.Embedder = other
	res, err := sw.Undo(ctx)
	if err != nil {
		t.Fatalf("undo across a switch: %v", err)
	}
	if res.Counts["reverted"] != 4 || res.Counts["restored"] != 2 || len(res.Skipped) != 0 {
		t.Errorf("undo result %+v", res)
	}
	after, tr := everything(t, st)
	if len(tr) != 0 || len(after) != len(before) {
		t.Fatalf("after undo: %d live, trash %d", len(after), len(tr))
	}
	checkOther := func(id string, m memory.Memory) {
		t.Helper()
		want, err := other.Embed(ctx, []string{m.Text})
		if err != nil {
			t.Fatal(err)
		}
		if m.EmbeddingModel != other.Model() || !slices.Equal(m.Embedding, want[0]) {
			t.Errorf("%s holds a vector of %q, not %s's of its text", id, m.EmbeddingModel, other.Model())
		}
	}
	for id, b := range before {
		a := after[id]
		checkOther(id, a)
		a.Embedding, a.EmbeddingModel = b.Embedding, b.EmbeddingModel
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s differs after undo but for its vector:\n before %s\n after  %s", id, show(b), show(a))
		}
	}
	if ts, err := bm25Search(ctx, st, "coffee machine", 3, store.Filter{}); err != nil || len(ts) != 1 || ts[0].ID != "prune" {
		t.Errorf("restored memory not found by text: %v %v", ts, err)
	}
	vec, _ := other.Embed(ctx, []string{before["prune"].Text})
	if vs, err := st.VectorSearch(ctx, vec[0], 1, store.Filter{}); err != nil || len(vs) != 1 || vs[0].ID != "prune" {
		t.Errorf("restored memory not found by its new vector: %v %v", vs, err)
	}

	// Trash, switch back, restore from the trash.
	p, err = sw.Plan(ctx, PlanOptions{Ops: []string{OpPrune}})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := sw.Apply(ctx, p, nil); err != nil || res.Trashed != 1 {
		t.Fatalf("prune: %+v %v", res, err)
	}
	if err := st.Reembed(ctx, testEmb, nil); err != nil {
		t.Fatal(err)
	}
	sw.opts.Embedder = testEmb
	if _, err := sw.Restore(ctx, "prune"); err != nil {
		t.Fatalf("restore across a switch: %v", err)
	}
	m, err := st.Get(ctx, "prune")
	want, _ := testEmb.Embed(ctx, []string{before["prune"].Text})
	if err != nil || m.EmbeddingModel != testEmb.Model() || !slices.Equal(m.Embedding, want[0]) || m.Text != before["prune"].Text {
		t.Errorf("restored across a switch: %+v %v", m, err)
	}
}

// TestNewRemovesTemporaryFiles: a process killed while it wrote the undo
// journal or the ledger leaves a temporary file; the next steward on the
// directory removes it and reads the journal and ledger as they were.
func TestNewRemovesTemporaryFiles(t *testing.T) {
	ctx := context.Background()
	st, sw := fixture(t, defaults(), mixedRecs()...)
	p, err := sw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Apply(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	dir := sw.opts.Dir
	for _, name := range []string{filepath.Join(runsDir, tempPrefix+"00000009-x.json-123"), tempPrefix + ledgerFile + "-456"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(`{"half":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sw2 := New(st, defaults(), Options{Dir: dir, Clock: sw.opts.Clock})
	for _, d := range []string{dir, filepath.Join(dir, runsDir)} {
		if tmps, _ := filepath.Glob(filepath.Join(d, tempPrefix+"*")); len(tmps) != 0 {
			t.Errorf("left: %v", tmps)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ledgerFile)); err != nil {
		t.Errorf("ledger: %v", err)
	}
	if res, err := sw2.Undo(ctx); err != nil || res.Counts["reverted"] == 0 {
		t.Errorf("undo with the new steward: %+v %v", res, err)
	}
}

// bm25Search is a BM25 search for free text, each analysed term at weight 1.
func bm25Search(ctx context.Context, st *store.Store, q string, n int, f store.Filter) ([]store.Scored, error) {
	var terms []store.Term
	for _, w := range st.Analyze(q) {
		terms = append(terms, store.Term{Text: w, Boost: 1})
	}
	return st.TextSearchTerms(ctx, terms, n, f)
}
