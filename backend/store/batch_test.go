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
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// putN stores n records "batch fact <i> tok<i>x" and returns them as stored.
func putN(t *testing.T, s *Store, n int) []memory.Memory {
	t.Helper()
	var out []memory.Memory
	for i := 0; i < n; i++ {
		m := mem(fmt.Sprintf("batch fact %d about queues tok%dx", i, i))
		m.Project = "p"
		out = append(out, mustPut(t, s, m))
	}
	return out
}

// searchable reports whether id is found by text (for term) and by vector.
func searchable(t *testing.T, s *Store, id, term string, vec []float32) (text, vector bool) {
	t.Helper()
	ctx := context.Background()
	ts, err := s.TextSearch(ctx, term, 10, Filter{IncludeSnoozed: true, IncludeSuperseded: true})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := s.VectorSearch(ctx, vec, 10, Filter{IncludeSnoozed: true, IncludeSuperseded: true})
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(ids(ts), id), slices.Contains(ids(vs), id)
}

func TestApplyBatchAndReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	st := putN(t, s, 6)

	up0 := st[0]
	up0.Importance = 0.9
	up0.AccessCount = 7
	up0.CooldownUntil = t0.Add(48 * time.Hour)
	up0.UpdatedAt = t0.Add(time.Minute)
	up1 := st[1]
	up1.Text = "rewritten batch fact one newword1x"
	up1.Embedding = testEmb.vec(up1.Text)
	up1.UpdatedAt = t0.Add(time.Minute)
	err := s.Apply(ctx, Batch{
		Put:         []memory.Memory{up0, up1},
		Trash:       []TrashRequest{{ID: st[2].ID, Reason: "pruned: importance 0.01"}, {ID: st[3].ID, Reason: "merged into " + st[0].ID}},
		IfUpdatedAt: map[string]time.Time{st[0].ID: st[0].UpdatedAt, st[2].ID: st[2].UpdatedAt},
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		if c := s.Count(); c != 4 {
			t.Errorf("count %d, want 4", c)
		}
		g0, err := s.Get(ctx, st[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if g0.Importance != 0.9 || g0.AccessCount != 7 || !g0.CooldownUntil.Equal(up0.CooldownUntil) || !g0.UpdatedAt.Equal(up0.UpdatedAt) {
			t.Errorf("put not stored as given: %+v", g0)
		}
		g1, _ := s.Get(ctx, st[1].ID)
		if g1.Text != up1.Text || g1.ContentHash != memory.ContentHash(up1.Text) {
			t.Errorf("text put: %+v", g1)
		}
		if tx, vx := searchable(t, s, st[1].ID, "newword1x", up1.Embedding); !tx || !vx {
			t.Errorf("rewritten record not searchable: text %v vector %v", tx, vx)
		}
		if tx, _ := searchable(t, s, st[1].ID, "tok1x", st[1].Embedding); tx {
			t.Error("old text of a rewritten record still in the text index")
		}
		for _, i := range []int{2, 3} {
			if _, err := s.Get(ctx, st[i].ID); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("trashed %d still live: %v", i, err)
			}
			if tx, vx := searchable(t, s, st[i].ID, fmt.Sprintf("tok%dx", i), st[i].Embedding); tx || vx {
				t.Errorf("trashed %d searchable: text %v vector %v", i, tx, vx)
			}
		}
		// Snoozed by the batch: hidden from default searches.
		if vs, _ := s.VectorSearch(ctx, st[0].Embedding, 10, Filter{}); slices.Contains(ids(vs), st[0].ID) {
			t.Error("record snoozed by the batch is returned by a default search")
		}
		tr, err := s.Trash(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr) != 2 || tr[0].Reason == "" || !tr[0].TrashedAt.Equal(t0) || tr[0].Memory.Embedding != nil {
			t.Errorf("trash = %+v", tr)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if info := s2.Info(); info.RepairedOnOpen != 0 || len(info.Warnings) != 0 {
		t.Errorf("reopen after a clean close repaired %d, warnings %q", info.RepairedOnOpen, info.Warnings)
	}
	check(s2)

	// Export leaves the trash out.
	var buf bytes.Buffer
	if err := s2.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), st[2].ID) || strings.Count(buf.String(), "\n") != 4+2 {
		t.Errorf("export includes trashed records or miscounts:\n%s", buf.String())
	}
}

func TestApplyValidatesBeforeChanging(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	st := putN(t, s, 3)
	seq := s.Info().Seq
	bad := st[0]
	bad.Importance = 2
	textOnly := st[1]
	textOnly.Text = "changed without a new embedding"
	ghost := mem("never stored")
	ghost.ID = "ghost"
	later := st[1].UpdatedAt.Add(time.Hour)
	cases := []struct {
		name string
		b    Batch
		is   error
	}{
		{"invalid record", Batch{Put: []memory.Memory{bad}, Trash: []TrashRequest{{ID: st[2].ID}}}, memory.ErrInvalid},
		{"text without embedding", Batch{Put: []memory.Memory{textOnly}, Trash: []TrashRequest{{ID: st[2].ID}}}, memory.ErrInvalid},
		{"unknown put", Batch{Put: []memory.Memory{ghost}, Trash: []TrashRequest{{ID: st[2].ID}}}, memory.ErrNotFound},
		{"unknown trash", Batch{Trash: []TrashRequest{{ID: st[2].ID}, {ID: "nope"}}}, memory.ErrNotFound},
		{"not in trash", Batch{Trash: []TrashRequest{{ID: st[2].ID}}, Restore: []string{st[0].ID}}, memory.ErrNotFound},
		{"id twice", Batch{Put: []memory.Memory{st[0]}, Trash: []TrashRequest{{ID: st[0].ID}}}, memory.ErrInvalid},
		{"precondition", Batch{Trash: []TrashRequest{{ID: st[2].ID}}, IfUpdatedAt: map[string]time.Time{st[1].ID: later}}, ErrConflict},
		{"wrong dim", Batch{Put: []memory.Memory{func() memory.Memory { m := st[0]; m.Embedding = m.Embedding[:3]; return m }()}}, memory.ErrModelMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Apply(ctx, c.b)
			if !errors.Is(err, c.is) {
				t.Fatalf("err = %v, want %v", err, c.is)
			}
			if s.Info().Seq != seq || s.Count() != 3 {
				t.Errorf("a failed batch changed the store: seq %d->%d count %d", seq, s.Info().Seq, s.Count())
			}
			if tr, _ := s.Trash(ctx); len(tr) != 0 {
				t.Errorf("a failed batch trashed %d", len(tr))
			}
		})
	}
	var ce *ConflictError
	err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: st[2].ID}}, IfUpdatedAt: map[string]time.Time{st[1].ID: later}})
	if !errors.As(err, &ce) || !slices.Equal(ce.Changed, []string{st[1].ID}) {
		t.Errorf("conflict error = %v", err)
	}
}

func TestTrashRestorePurge(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	st := putN(t, s, 5)
	var order []string
	_ = s.Iterate(ctx, Filter{}, func(m memory.Memory) error { order = append(order, m.ID); return nil })
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: st[1].ID, Reason: "a"}, {ID: st[3].ID, Reason: "b"}}}); err != nil {
		t.Fatal(err)
	}
	// The same text can be stored again while its record is in the trash.
	again, err := s.Put(ctx, memory.Memory{Text: st[3].Text, Embedding: st[3].Embedding, Project: "p"})
	if err != nil {
		t.Fatalf("re-store of a trashed text: %v", err)
	}
	if f, ok, _ := s.FindByHash(ctx, st[3].ContentHash, "p"); !ok || f.ID != again.ID {
		t.Errorf("FindByHash after re-store = %v %v", f.ID, ok)
	}
	// Restoring it now would duplicate the live copy: a clear conflict.
	err = s.Restore(ctx, st[3].ID)
	var ce *ConflictError
	if !errors.As(err, &ce) || ce.Clashes[st[3].ID] != again.ID || !strings.Contains(err.Error(), again.ID) {
		t.Fatalf("restore over a live duplicate: %v", err)
	}
	if err := s.Delete(ctx, again.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(ctx, st[1].ID, st[3].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(ctx, st[1].ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("second restore: %v", err)
	}
	for _, i := range []int{1, 3} {
		g, err := s.Get(ctx, st[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, st[i]) {
			t.Errorf("restored %d differs:\n got %+v\nwant %+v", i, g, st[i])
		}
		if tx, vx := searchable(t, s, st[i].ID, fmt.Sprintf("tok%dx", i), st[i].Embedding); !tx || !vx {
			t.Errorf("restored %d not searchable: %v %v", i, tx, vx)
		}
	}
	var order2 []string
	_ = s.Iterate(ctx, Filter{}, func(m memory.Memory) error { order2 = append(order2, m.ID); return nil })
	if !slices.Equal(order, order2) {
		t.Errorf("insertion order not restored: %v vs %v", order, order2)
	}

	// Purge: only entries trashed before the cut-off go.
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: st[0].ID}, {ID: st[4].ID}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PurgeTrash(ctx, t0); err != nil || n != 0 {
		t.Errorf("purge before t0 = %d %v", n, err)
	}
	if n, err := s.PurgeTrash(ctx, t0.Add(time.Second)); err != nil || n != 2 {
		t.Errorf("purge = %d %v", n, err)
	}
	if tr, _ := s.Trash(ctx); len(tr) != 0 {
		t.Errorf("trash after purge: %v", tr)
	}
	if err := s.Restore(ctx, st[0].ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("restore of a purged record: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if c := s2.Count(); c != 3 {
		t.Errorf("count after reopen %d", c)
	}
}

// TestApplyIndexCatchUpAtOpen: a batch committed to bbolt whose text-index
// update failed (as after a crash between the two) is repaired at Open.
func TestApplyIndexCatchUpAtOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	st := putN(t, s, 4)
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: st[0].ID}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.text.Close(); err != nil {
		t.Fatal(err)
	}
	up := st[1]
	up.Text = "replacement words zeta9x"
	up.Embedding = testEmb.vec(up.Text)
	err := s.Apply(ctx, Batch{Put: []memory.Memory{up}, Trash: []TrashRequest{{ID: st[2].ID}}, Restore: []string{st[0].ID}})
	if !errors.Is(err, ErrIndexPending) {
		t.Fatalf("apply with a failing text index: %v", err)
	}
	s.text = nil
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	for _, c := range []struct {
		id, term string
		want     bool
	}{{st[1].ID, "zeta9x", true}, {st[1].ID, "tok1x", false}, {st[2].ID, "tok2x", false}, {st[0].ID, "tok0x", true}} {
		ts, _ := s2.TextSearch(ctx, c.term, 5, Filter{})
		if got := slices.Contains(ids(ts), c.id); got != c.want {
			t.Errorf("%s found by %q = %v, want %v", c.id, c.term, got, c.want)
		}
	}
	if dc, _ := s2.text.DocCount(); dc != 3 {
		t.Errorf("text docs %d, want 3", dc)
	}
}

// TestRestoreAcrossModelSwitch: a record trashed before a re-embedding
// holds the old model's vector; Restore refuses it with a clear error,
// RestoreWith embeds its text again and brings it back with the new
// vector (found by it); a restore embedding for an id not restored is
// invalid; a wrong embedder is a model mismatch.
func TestRestoreAcrossModelSwitch(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	recs := putN(t, s, 3)
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: recs[1].ID, Reason: "prune"}}}); err != nil {
		t.Fatal(err)
	}
	v2 := wordEmbedder{model: "words-v2", dim: 16}
	if err := s.Reembed(ctx, v2, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Restore(ctx, recs[1].ID); !errors.Is(err, memory.ErrModelMismatch) || !strings.Contains(err.Error(), "change of embedding model") {
		t.Fatalf("restore of an old model's record: %v", err)
	}
	err := s.Apply(ctx, Batch{Restore: []string{recs[1].ID}, RestoreEmbeddings: map[string][]float32{recs[0].ID: v2.vec("x")}})
	var ve *memory.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("a restore embedding for a record not restored: %v", err)
	}
	if _, err := s.RestoreWith(ctx, testEmb, recs[1].ID); !errors.Is(err, memory.ErrModelMismatch) {
		t.Fatalf("restore with the old embedder: %v", err)
	}
	if _, err := s.RestoreWith(ctx, v2, recs[1].ID); err != nil {
		t.Fatalf("RestoreWith: %v", err)
	}
	m, err := s.Get(ctx, recs[1].ID)
	if err != nil || m.EmbeddingModel != "words-v2" || !slices.Equal(m.Embedding, v2.vec(m.Text)) || m.Text != recs[1].Text {
		t.Fatalf("restored record %+v, %v", m, err)
	}
	if vs, err := s.VectorSearch(ctx, v2.vec(m.Text), 1, Filter{}); err != nil || len(vs) != 1 || vs[0].ID != m.ID {
		t.Fatalf("restored record not found by its new vector: %v %v", vs, err)
	}
	if tr, _ := s.Trash(ctx); len(tr) != 0 {
		t.Fatalf("trash after restore: %d", len(tr))
	}
}

// TestPurgeTrashed: PurgeTrashed deletes the named trash entries for good
// and nothing when one of them is not in the trash; PurgeAllTrash empties
// the trash. A purged record cannot be restored.
func TestPurgeTrashed(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	st := putN(t, s, 4)
	if n, err := s.PurgeAllTrash(ctx); err != nil || n != 0 {
		t.Fatalf("empty an empty trash = %d %v", n, err)
	}
	if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: st[0].ID}, {ID: st[1].ID}, {ID: st[2].ID}}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		ids     []string
		want    int
		wantErr error
		left    int
	}{
		{"none", nil, 0, nil, 3},
		{"live, not trashed", []string{st[0].ID, st[3].ID}, 0, memory.ErrNotFound, 3},
		{"unknown", []string{"no-such-id"}, 0, memory.ErrNotFound, 3},
		{"one, twice", []string{st[0].ID, st[0].ID}, 1, nil, 2},
		{"already purged", []string{st[0].ID}, 0, memory.ErrNotFound, 2},
	} {
		n, err := s.PurgeTrashed(ctx, tc.ids...)
		if n != tc.want || !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
			t.Errorf("%s: PurgeTrashed = %d %v, want %d %v", tc.name, n, err, tc.want, tc.wantErr)
		}
		if tr, _ := s.Trash(ctx); len(tr) != tc.left {
			t.Errorf("%s: %d left in the trash, want %d", tc.name, len(tr), tc.left)
		}
	}
	if err := s.Restore(ctx, st[0].ID); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("restore of a purged record: %v", err)
	}
	if _, err := s.Get(ctx, st[3].ID); err != nil {
		t.Errorf("the live record went with the purge: %v", err)
	}
	if n, err := s.PurgeAllTrash(ctx); err != nil || n != 2 {
		t.Errorf("PurgeAllTrash = %d %v", n, err)
	}
	if tr, _ := s.Trash(ctx); len(tr) != 0 {
		t.Errorf("trash after PurgeAllTrash: %v", tr)
	}
}
