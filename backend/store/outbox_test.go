package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// teamPolicy shares project "team" unless the scope says otherwise, as
// the daemon's policy does with team.projects ["team"].
func teamPolicy(m *memory.Memory) bool {
	switch m.Scope {
	case memory.ScopeTeam:
		return true
	case memory.ScopePersonal:
		return false
	}
	return m.Project == "team" && m.Type != memory.TypeUser
}

func openTeam(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim,
		Clock: memory.FixedClock{T: t0}, Shared: teamPolicy})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func teamMem(text string) memory.Memory {
	m := mem(text)
	m.Project = "team"
	return m
}

// outboxState is the outbox as "id:put" / "id:delete" and the deltas'
// sums per memory.
func outboxState(t *testing.T, s *Store) (map[string]string, map[string]CounterDelta) {
	t.Helper()
	es, ds, err := s.Outbox(context.Background(), 0)
	if err != nil {
		t.Fatalf("Outbox: %v", err)
	}
	out := map[string]string{}
	for _, e := range es {
		op := "put"
		if e.Delete {
			op = "delete"
		} else if e.Memory.ID != e.ID {
			t.Fatalf("entry %s carries memory %q", e.ID, e.Memory.ID)
		}
		out[e.ID] = op
	}
	sums := map[string]CounterDelta{}
	for _, d := range ds {
		x := sums[d.MemoryID]
		x.Access += d.Access
		x.Reinforced += d.Reinforced
		x.FeedbackN += d.FeedbackN
		x.FeedbackSum += d.FeedbackSum
		sums[d.MemoryID] = x
	}
	return out, sums
}

// TestOutboxWrites: every write path queues team memories, and only
// them, in its own transaction; the latest write of a memory decides.
func TestOutboxWrites(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	a := mustPut(t, s, teamMem("the deploy runs from the release branch"))
	p := mustPut(t, s, mem("personal: no project"))
	u := teamMem("I like tabs")
	u.Type = memory.TypeUser
	u = mustPut(t, s, u)
	forced := mem("shared although it has no project")
	forced.Scope = memory.ScopeTeam
	forced = mustPut(t, s, forced)
	got, _ := outboxState(t, s)
	want := map[string]string{a.ID: "put", forced.ID: "put"}
	if !mapsEqual(got, want) {
		t.Fatalf("after puts outbox = %v, want %v", got, want)
	}

	// Counters grow: a delta; personal counters never queue.
	for _, id := range []string{a.ID, p.ID} {
		if _, err := s.Update(ctx, id, func(m *memory.Memory) error { m.AccessCount += 2; m.FeedbackN++; m.FeedbackSum += 1; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	_, sums := outboxState(t, s)
	if d := sums[a.ID]; d.Access != 2 || d.FeedbackN != 1 || d.FeedbackSum != 1 || len(sums) != 1 {
		t.Fatalf("deltas = %+v", sums)
	}

	// Moving to personal queues a delete; supersede queues both.
	if _, err := s.Update(ctx, forced.ID, func(m *memory.Memory) error { m.Scope = memory.ScopePersonal; return nil }); err != nil {
		t.Fatal(err)
	}
	next := teamMem("the deploy runs from main")
	n, err := s.Supersede(ctx, a.ID, next)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = outboxState(t, s)
	want = map[string]string{a.ID: "put", forced.ID: "delete", n.ID: "put"}
	if !mapsEqual(got, want) {
		t.Fatalf("outbox = %v, want %v", got, want)
	}
	// Trash (the steward's path) queues a delete.
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: n.ID, Reason: "test"}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ = outboxState(t, s); got[n.ID] != "delete" {
		t.Fatalf("after trash outbox = %v", got)
	}
	// Restoring it (an undo) queues a restore, which a later write keeps.
	if err := s.Restore(ctx, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, n.ID, func(m *memory.Memory) error { m.Importance = 0.7; return nil }); err != nil {
		t.Fatal(err)
	}
	es, _, err := s.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.ID == n.ID && (!e.Restore || e.Delete || e.Memory.Importance != 0.7) {
			t.Fatalf("after restore the entry is %+v", e)
		}
	}
	// Moving a personal memory to the team queues it with its counters.
	if _, err := s.Update(ctx, p.ID, func(m *memory.Memory) error { m.Scope = memory.ScopeTeam; return nil }); err != nil {
		t.Fatal(err)
	}
	got, sums = outboxState(t, s)
	if got[p.ID] != "put" || sums[p.ID].Access != 2 {
		t.Fatalf("moved to team: outbox %v deltas %+v", got, sums[p.ID])
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestOutboxAck: an acknowledgement removes an entry only if no write
// queued it again since it was read; the outbox survives a reopen.
func TestOutboxAck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTeam(t, dir)
	a := mustPut(t, s, teamMem("alpha team fact"))
	b := mustPut(t, s, teamMem("beta team fact"))
	es, ds, err := s.Outbox(ctx, 0)
	if err != nil || len(es) != 2 {
		t.Fatalf("Outbox = %v, %v", es, err)
	}
	// b is written again after the read: its ack must not drop it.
	if _, err := s.Update(ctx, b.ID, func(m *memory.Memory) error { m.Importance = 0.9; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.AckOutbox(ctx, es, deltaIDs(ds)); err != nil {
		t.Fatal(err)
	}
	got, _ := outboxState(t, s)
	if !mapsEqual(got, map[string]string{b.ID: "put"}) {
		t.Fatalf("after ack outbox = %v (a=%s)", got, a.ID)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTeam(t, dir)
	if n, err := s.OutboxLen(); err != nil || n != 1 {
		t.Fatalf("after reopen OutboxLen = %d, %v", n, err)
	}
	// EnqueueShared queues every team memory again.
	if n, err := s.EnqueueShared(ctx); err != nil || n != 2 {
		t.Fatalf("EnqueueShared = %d, %v", n, err)
	}
}

// TestOutboxLenCountsDeltas: an access of a pushed team memory queues its
// counters alone, and the memory still counts as waiting until they are
// pushed (the team status said "synced" while the counts were behind).
func TestOutboxLenCountsDeltas(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	a := mustPut(t, s, teamMem("alpha team fact"))
	es, ds, err := s.Outbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AckOutbox(ctx, es, deltaIDs(ds)); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{1, 1} { // two accesses: one memory waiting
		if _, err := s.Update(ctx, a.ID, func(m *memory.Memory) error { m.AccessCount++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n, err := s.OutboxLen(); err != nil || n != want {
			t.Fatalf("after access %d: OutboxLen = %d, %v, want %d", i+1, n, err, want)
		}
	}
	es, ds, err = s.Outbox(ctx, 0)
	if err != nil || len(es) != 0 || len(ds) != 2 {
		t.Fatalf("Outbox = %v, %v, %v: want no entry, 2 deltas", es, ds, err)
	}
	if err := s.AckOutbox(ctx, es, deltaIDs(ds)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.OutboxLen(); err != nil || n != 0 {
		t.Fatalf("after the ack: OutboxLen = %d, %v", n, err)
	}
}

func deltaIDs(ds []CounterDelta) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestNoOutboxWithoutPolicy: a store without Options.Shared queues
// nothing.
func TestNoOutboxWithoutPolicy(t *testing.T) {
	s := openTest(t, t.TempDir())
	mustPut(t, s, teamMem("a team fact in a store without a team"))
	if n, err := s.OutboxLen(); err != nil || n != 0 {
		t.Fatalf("OutboxLen = %d, %v", n, err)
	}
	if _, err := s.EnqueueShared(context.Background()); err == nil {
		t.Fatal("EnqueueShared without a policy: no error")
	}
}

// TestApplyTeam: pulled changes are stored and searchable, never queued;
// a local write waiting in the outbox wins until pushed; deletes go to the
// trash; the cursor is stored with them.
func TestApplyTeam(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTeam(t, dir)
	local := mustPut(t, s, teamMem("local edit waits for its push"))
	dup := mustPut(t, s, mem("a personal copy of a team text"))
	remote := func(id, text string) memory.Memory {
		m := teamMem(text)
		m.ID, m.CreatedAt, m.UpdatedAt, m.AccessCount = id, t0, t0, 7
		return m
	}
	r1 := remote("r1", "the staging database is rebuilt nightly")
	r2 := remote(local.ID, "a teammate's older version")
	r3 := remote("r3", "a personal copy of a team text")
	r3.Project = dup.Project // the copy's project: exact-text dedup is per project
	res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{r1, r2, r3}, Cursor: []byte("c1:10")})
	if err != nil {
		t.Fatal(err)
	}
	if want := (TeamApplied{Put: 1, Kept: 1, Skipped: 1, KeptPuts: []string{local.ID}, PutIDs: []string{"r1"}}); !reflect.DeepEqual(res, want) {
		t.Fatalf("ApplyTeam = %+v", res)
	}
	got, err := s.Get(ctx, "r1")
	if err != nil || got.Scope != memory.ScopeTeam || got.AccessCount != 7 {
		t.Fatalf("Get r1 = %+v, %v", got, err)
	}
	if l, _ := s.Get(ctx, local.ID); l.Text != local.Text {
		t.Fatalf("local write overwritten: %q", l.Text)
	}
	if sc, err := s.VectorSearch(ctx, testEmb.vec("staging database rebuilt nightly"), 1, Filter{}); err != nil || len(sc) != 1 || sc[0].ID != "r1" {
		t.Fatalf("VectorSearch = %v, %v", sc, err)
	}
	outbox, _ := outboxState(t, s)
	if _, queued := outbox["r1"]; queued {
		t.Fatalf("a pulled memory was queued: %v", outbox)
	}
	// A local access of a pulled memory is a delta alone, not a put: a put
	// would push this copy's text, as the newest version, over a newer
	// edit of the team's not pulled yet. The next pull keeps the delta.
	if _, err := s.Update(ctx, "r1", func(m *memory.Memory) error { m.AccessCount++; return nil }); err != nil {
		t.Fatal(err)
	}
	if outbox, sums := outboxState(t, s); outbox["r1"] != "" || sums["r1"].Access != 1 {
		t.Fatalf("after an access: outbox %v, deltas %+v: want a delta of 1 and no entry", outbox, sums["r1"])
	}
	es, _, _ := s.Outbox(ctx, 0)
	var ack []OutboxEntry
	for _, e := range es {
		if e.ID == "r1" {
			ack = append(ack, e)
		}
	}
	if err := s.AckOutbox(ctx, ack, nil); err != nil {
		t.Fatal(err)
	}
	r1b := r1
	r1b.Text, r1b.Embedding, r1b.UpdatedAt = "the staging database is rebuilt weekly", testEmb.vec("staging weekly"), t0.Add(1)
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{r1b}, Delete: []TeamDelete{{ID: dup.ID, Reason: "deleted by the team"}}, Cursor: []byte("c1:11")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "r1"); got.Text != r1b.Text || got.AccessCount != 8 {
		t.Fatalf("r1 after update = %q access %d, want 8 (7 + the pending delta)", got.Text, got.AccessCount)
	}
	if _, err := s.Get(ctx, dup.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("deleted memory: %v", err)
	}
	tr, err := s.TrashGet(ctx, []string{dup.ID})
	if err != nil || tr[dup.ID].Reason != "deleted by the team" {
		t.Fatalf("trash = %+v, %v", tr, err)
	}
	// A pulled memory the user keeps personal here stays personal when the
	// team changes it again.
	if _, err := s.Update(ctx, "r1", func(m *memory.Memory) error { m.Scope = memory.ScopePersonal; return nil }); err != nil {
		t.Fatal(err)
	}
	es, _, _ = s.Outbox(ctx, 0)
	if err := s.AckOutbox(ctx, es, nil); err != nil {
		t.Fatal(err)
	}
	r1c := r1b
	r1c.Importance, r1c.UpdatedAt = 0.8, t0.Add(2)
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{r1c}, Cursor: []byte("c1:11")}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(ctx, "r1"); got.Scope != memory.ScopePersonal || got.Importance != 0.8 {
		t.Fatalf("r1 kept personal: scope %q importance %v", got.Scope, got.Importance)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTeam(t, dir)
	if c, err := s.TeamCursor(); err != nil || !bytes.Equal(c, []byte("c1:11")) {
		t.Fatalf("TeamCursor = %q, %v", c, err)
	}
	var terms []Term
	for _, w := range s.Analyze("weekly") {
		terms = append(terms, Term{Text: w, Boost: 1})
	}
	if sc, _ := s.TextSearchTerms(ctx, terms, 5, Filter{}); !slices.Contains(ids(sc), "r1") {
		t.Fatalf("text search after reopen = %v", sc)
	}
}

// TestExportKeepsScope: export and import carry a memory's scope.
func TestExportKeepsScope(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	m := mem("exported with its scope")
	m.Scope = memory.ScopePersonal
	mustPut(t, s, m)
	var buf bytes.Buffer
	if err := s.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	d := openTest(t, t.TempDir())
	if _, err := d.Import(ctx, &buf, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []memory.Scope
	_ = d.Iterate(ctx, Filter{}, func(m memory.Memory) error { got = append(got, m.Scope); return nil })
	if !slices.Equal(got, []memory.Scope{memory.ScopePersonal}) {
		t.Fatalf("imported scopes = %v", got)
	}
}

// TestApplyTeamBatchOrder: several new memories in one ApplyTeam each get
// their own place in the insertion order, so Iterate and List see them
// all (a shared order key lost all but one).
func TestApplyTeamBatchOrder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTeam(t, dir)
	var puts []memory.Memory
	for i, text := range []string{"first pulled fact", "second pulled fact", "third pulled fact"} {
		m := teamMem(text)
		m.ID = fmt.Sprintf("p%d", i)
		m.CreatedAt, m.UpdatedAt = t0, t0
		puts = append(puts, m)
	}
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: puts}); err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		var got []string
		if err := s.Iterate(ctx, Filter{}, func(m memory.Memory) error { got = append(got, m.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"p0", "p1", "p2"}) {
			t.Fatalf("round %d: Iterate = %v", round, got)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openTeam(t, dir)
	}
}

// TestApplyTeamSkipsInvalid: a pulled memory the store's rules refuse is
// skipped and counted, and the rest of the page (and its cursor) applied,
// so one bad row in the team database never stops a daemon's pulls.
func TestApplyTeamSkipsInvalid(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	good := teamMem("a valid pulled fact")
	good.ID, good.CreatedAt, good.UpdatedAt = "ok1", t0, t0
	badID := good
	badID.ID = "not an id!"
	badVec := teamMem("a pulled fact with a vector of another size")
	badVec.ID, badVec.Embedding = "bad2", []float32{1, 2}
	empty := teamMem("x")
	empty.ID, empty.Text = "bad3", " "
	res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{badID, good, badVec, empty}, Cursor: []byte("c1:5")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Put != 1 || res.Invalid != 3 {
		t.Fatalf("ApplyTeam = %+v, want 1 put and 3 invalid", res)
	}
	if c, _ := s.TeamCursor(); string(c) != "c1:5" {
		t.Fatalf("cursor %q", c)
	}
}

// FuzzApplyTeam: whatever a member wrote into the team database (ids,
// texts, kinds, vectors), ApplyTeam either applies or skips each put and
// never fails the page, and the store's count and records agree after it.
// One store takes every input (opening one per input is too slow to fuzz).
func FuzzApplyTeam(f *testing.F) {
	f.Add("m1", "the deploy runs from main", "fact", "project", "shop", 0.5, float32(1), "", "")
	f.Add("not an id!", "x", "gossip", "secret", "", 1.5, float32(0), "m1", "m1")
	f.Add("m2", " \t", "", "", "p", -1.0, float32(-1), "m2", "")
	f.Add(strings.Repeat("a", 65), "caf\xe9", "decision", "user", strings.Repeat("p", 300), 0.0, float32(2), "", "zz")
	ctx := context.Background()
	s := openTeam(f, f.TempDir())
	mustPut(f, s, teamMem("a local team memory"))
	f.Fuzz(func(t *testing.T, id, text, kind, typ, project string, importance float64, v float32, supersedes, del string) {
		vec := testEmb.vec(text)
		vec[0] = v
		m := memory.Memory{ID: id, Text: text, Kind: memory.Kind(kind), Type: memory.Type(typ), Project: project,
			Importance: importance, Supersedes: supersedes, Embedding: vec, CreatedAt: t0, UpdatedAt: t0}
		ch := TeamChanges{Put: []memory.Memory{m, m}, Cursor: []byte("c1:1")}
		if del != "" {
			ch.Delete = []TeamDelete{{ID: del, Reason: "fuzz"}}
		}
		res, err := s.ApplyTeam(ctx, ch)
		if err != nil {
			t.Fatalf("ApplyTeam: %v", err)
		}
		if res.Put+res.Kept+res.Skipped+res.Invalid != 2 {
			t.Fatalf("ApplyTeam = %+v for 2 puts", res)
		}
		n := 0
		if err := s.Iterate(ctx, Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(memory.Memory) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != s.Count() {
			t.Fatalf("Iterate sees %d records, Count says %d", n, s.Count())
		}
	})
}

// TestApplyTeamKeepsRestore: a team delete pulled while a local restore of
// the memory waits in the outbox (the owner's undo, racing the pull of its
// own delete) leaves the memory live and the restore queued, so the push
// restores it in the team; a plain local edit loses to the delete.
func TestApplyTeamKeepsRestore(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	r := mustPut(t, s, teamMem("restored by its owner"))
	e := mustPut(t, s, teamMem("edited while the team deleted it"))
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: r.ID, Reason: "steward"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	res, err := s.ApplyTeam(ctx, TeamChanges{Delete: []TeamDelete{{ID: r.ID, Reason: "deleted from the team"}, {ID: e.ID, Reason: "deleted from the team"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("the restored memory was deleted: %v (%+v)", err, res)
	}
	if _, err := s.Get(ctx, e.ID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the edited memory survived the team's delete: %v", err)
	}
	got, _ := outboxState(t, s)
	if len(got) != 1 || got[r.ID] != "put" {
		t.Fatalf("outbox = %v, want only the restore", got)
	}
	es, _, _ := s.Outbox(ctx, 0)
	if !es[0].Restore {
		t.Fatalf("the entry is %+v, want a restore", es[0])
	}
}

// TestTeamRefusals: SetTeamRefusals keeps its value across a reopen and
// refuses one larger than MaxTeamRefusals, keeping the last one.
func TestTeamRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	if b, err := s.TeamRefusals(); err != nil || len(b) != 0 {
		t.Fatalf("before any: %q %v", b, err)
	}
	for _, tc := range []struct {
		val     []byte
		wantErr error
	}{
		{[]byte(`[{"id":"a"}]`), nil},
		{make([]byte, MaxTeamRefusals+1), memory.ErrInvalid},
	} {
		if err := s.SetTeamRefusals(ctx, tc.val); !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("SetTeamRefusals(%d bytes) = %v, want %v", len(tc.val), err, tc.wantErr)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if b, err := s.TeamRefusals(); err != nil || string(b) != `[{"id":"a"}]` {
		t.Fatalf("after a reopen: %q %v", b, err)
	}
}

// TestAckOutboxRefusals: the refusals are stored in the acknowledgement's
// transaction, with the entries removed; nil leaves them as they are, and
// one larger than MaxTeamRefusals fails the whole acknowledgement.
func TestAckOutboxRefusals(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	mustPut(t, s, teamMem("alpha team fact"))
	es, _, err := s.Outbox(ctx, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("Outbox = %v, %v", es, err)
	}
	if err := s.AckOutboxRefusals(ctx, es, nil, make([]byte, MaxTeamRefusals+1)); !errors.Is(err, memory.ErrInvalid) {
		t.Fatalf("too large: %v, want ErrInvalid", err)
	}
	if n, _ := s.OutboxLen(); n != 1 {
		t.Fatalf("a failed ack left %d entries, want 1", n)
	}
	for _, tc := range []struct {
		refusals []byte
		want     string
	}{
		{[]byte(`{"refused":[{"id":"a"}]}`), `{"refused":[{"id":"a"}]}`},
		{nil, `{"refused":[{"id":"a"}]}`},
		{[]byte(`[]`), `[]`},
	} {
		if err := s.AckOutboxRefusals(ctx, es, nil, tc.refusals); err != nil {
			t.Fatal(err)
		}
		if n, _ := s.OutboxLen(); n != 0 {
			t.Fatalf("after the ack: %d entries", n)
		}
		if b, err := s.TeamRefusals(); err != nil || string(b) != tc.want {
			t.Fatalf("after AckOutboxRefusals(%q): %q %v, want %q", tc.refusals, b, err, tc.want)
		}
	}
}
