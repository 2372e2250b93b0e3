package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// garbleRecordField sets field of record id's JSON, in the records file
// at path, to raw (valid JSON of the wrong type, such as `"high"` for
// importance), through bbolt: the record is valid JSON under a header
// that decodes, and its fields do not decode into a memory. It returns
// the record's new value.
func garbleRecordField(t *testing.T, path, id, field, raw string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var out []byte
	err = db.Update(func(tx *bolt.Tx) error {
		recs := tx.Bucket(bucketRecs)
		h, js, emb, err := splitRecord(recs.Get([]byte(id)), nil)
		if err != nil {
			return err
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(js, &fields); err != nil {
			return err
		}
		fields[field] = json.RawMessage(raw)
		njs, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		out = rawRecord(h, njs, emb)
		return recs.Put([]byte(id), out)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rawRecord packs a record value as encodeRecord does, from a header, the
// JSON as given and the packed embedding.
func rawRecord(h recHeader, js, emb []byte) []byte {
	return append(appendRecordHead(nil, h, js), emb...)
}

// recordGarbles are the ways the tests garble one record in a closed
// store's file: its JSON broken, its whole value no record, a field of the
// wrong type (valid JSON): one of List's columns, or one only a whole
// decode reads (which Open let through at d916b52).
var recordGarbles = []struct {
	name   string
	garble func(t *testing.T, path string, m memory.Memory) []byte
}{
	{"its fields garbled in the file", func(t *testing.T, path string, m memory.Memory) []byte {
		return garbleFileText(t, path, m.Text)
	}},
	{"its bytes not a record", func(t *testing.T, path string, m memory.Memory) []byte {
		return garbleRecordBytes(t, path, m.ID)
	}},
	{"a field of the wrong type", func(t *testing.T, path string, m memory.Memory) []byte {
		return garbleRecordField(t, path, m.ID, "importance", `"high"`)
	}},
	{"a field List does not read of the wrong type", func(t *testing.T, path string, m memory.Memory) []byte {
		return garbleRecordField(t, path, m.ID, "created_at", `12`)
	}},
}

// unreadableFixture is a closed store of n memories, one of which (bad)
// the test garbled, opened again.
type unreadableFixture struct {
	dir    string
	s      *Store
	all    []memory.Memory
	bad    memory.Memory
	others []memory.Memory
}

// openWithUnreadable stores n memories in a new store, closes it, garbles
// the fourth with garble and opens the store again, which must count it
// unreadable.
func openWithUnreadable(t *testing.T, n int, garble func(t *testing.T, path string, m memory.Memory) []byte) *unreadableFixture {
	t.Helper()
	f := &unreadableFixture{dir: t.TempDir()}
	s := openTest(t, f.dir)
	for i := range n {
		f.all = append(f.all, mustPut(t, s, mem(fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times", i, i))))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	f.bad = f.all[3]
	for _, m := range f.all {
		if m.ID != f.bad.ID {
			f.others = append(f.others, m)
		}
	}
	garble(t, filepath.Join(f.dir, dbFile), f.bad)
	f.s = openTest(t, f.dir)
	if info := f.s.Info(); info.Unreadable != 1 || info.Count != n-1 {
		t.Fatalf("Open of the garbled store: %+v", info)
	}
	return f
}

// reopenClean closes the fixture's store, checks that memtray doctor
// finds no damage (the unreadable record gone with every index entry of
// it) and opens it again.
func (f *unreadableFixture) reopenClean(t *testing.T) *Store {
	t.Helper()
	if err := f.s.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Check(context.Background(), f.dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Damaged() || rep.Unreadable != 0 {
		t.Errorf("doctor after the delete: %+v", rep.Problems)
	}
	f.s = openTest(t, f.dir)
	return f.s
}

// wantUnreadableErr checks that err is a write's error for the unreadable
// record: not found (404 through the API), ErrUnreadable, naming the
// record and memtray doctor.
func wantUnreadableErr(t *testing.T, what string, err error, id string) {
	t.Helper()
	if !errors.Is(err, memory.ErrNotFound) || !errors.Is(err, ErrUnreadable) ||
		!strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "memtray doctor") {
		t.Errorf("%s of the unreadable record: %v, want not found and unreadable, naming it and memtray doctor", what, err)
	}
}

// TestWritesOnUnreadableRecord: with one record unreadable (garbled three
// ways), every write path either refuses it with a clear not-found error
// naming memtray doctor (an update, an access, a supersession of it, a
// batch's put), takes it for gone (a batch's precondition), deletes it for
// good (a delete, a move to the trash: the trash keeps nothing of it), or
// passes it by and does its work on the other records (a re-embedding's
// staging and switch, an insert of its text, the text index rebuilt, a
// team enqueue). After a delete the store is clean to memtray doctor.
func TestWritesOnUnreadableRecord(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	const n = 8
	paths := []struct {
		name string
		run  func(t *testing.T, f *unreadableFixture)
	}{
		{"update", func(t *testing.T, f *unreadableFixture) {
			_, err := f.s.Update(ctx, f.bad.ID, func(m *memory.Memory) error { m.Pinned = true; return nil })
			wantUnreadableErr(t, "Update", err, f.bad.ID)
		}},
		{"record access", func(t *testing.T, f *unreadableFixture) {
			got, err := f.s.RecordAccess(ctx, t0, f.bad.ID, f.others[0].ID)
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("RecordAccess: %v, want the unreadable one not found", err)
			}
			if got[f.others[0].ID].AccessCount != 1 || len(got) != 1 {
				t.Errorf("RecordAccess recorded %v, want the other one", got)
			}
		}},
		{"supersede", func(t *testing.T, f *unreadableFixture) {
			_, err := f.s.Supersede(ctx, f.bad.ID, mem("Workers retry a failed upload five times now"))
			wantUnreadableErr(t, "Supersede", err, f.bad.ID)
			if f.s.Count() != n-1 {
				t.Errorf("Supersede wrote something: %d records", f.s.Count())
			}
		}},
		{"batch put", func(t *testing.T, f *unreadableFixture) {
			m := f.bad
			m.Pinned = true
			err := f.s.Apply(ctx, Batch{Put: []memory.Memory{m, f.others[0]}})
			wantUnreadableErr(t, "Apply's put", err, f.bad.ID)
		}},
		{"batch precondition", func(t *testing.T, f *unreadableFixture) {
			err := f.s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: f.others[0].ID, Reason: "test"}},
				IfUpdatedAt: map[string]time.Time{f.bad.ID: f.bad.UpdatedAt, f.others[0].ID: f.others[0].UpdatedAt}})
			var ce *ConflictError
			if !errors.As(err, &ce) || !slices.Equal(ce.Changed, []string{f.bad.ID}) {
				t.Errorf("Apply with the unreadable record's precondition: %v, want it changed", err)
			}
		}},
		{"delete", func(t *testing.T, f *unreadableFixture) {
			if err := f.s.Delete(ctx, f.bad.ID); err != nil {
				t.Fatalf("Delete of the unreadable record: %v", err)
			}
			if info := f.s.Info(); info.Unreadable != 0 || slices.ContainsFunc(info.Warnings, func(w string) bool { return strings.Contains(w, f.bad.ID) }) {
				t.Errorf("after the delete: %+v", info)
			}
			if err := f.s.Delete(ctx, f.bad.ID); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("a second delete: %v", err)
			}
			if s := f.reopenClean(t); s.Info().Unreadable != 0 || s.Count() != n-1 {
				t.Errorf("reopened: %+v", s.Info())
			}
		}},
		{"move to the trash", func(t *testing.T, f *unreadableFixture) {
			err := f.s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: f.bad.ID, Reason: "deleted"}, {ID: f.others[0].ID, Reason: "deleted"}}})
			if err != nil {
				t.Fatalf("Apply's trash of the unreadable record: %v", err)
			}
			trash, err := f.s.Trash(ctx)
			if err != nil || len(trash) != 1 || trash[0].Memory.ID != f.others[0].ID {
				t.Errorf("the trash: %v %v, want the other one alone", trash, err)
			}
			if f.s.Info().Unreadable != 0 || f.s.Count() != n-2 {
				t.Errorf("after the trash: %+v", f.s.Info())
			}
			if err := f.s.Restore(ctx, f.bad.ID); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("Restore of the unreadable record: %v, want not found", err)
			}
			s := f.reopenClean(t)
			if err := s.Restore(ctx, f.others[0].ID); err != nil || s.Count() != n-1 {
				t.Errorf("Restore of the other: %v, %d records", err, s.Count())
			}
		}},
		{"insert of its text", func(t *testing.T, f *unreadableFixture) {
			got, existed, err := f.s.Insert(ctx, Insert{Memory: mem(f.bad.Text), Unique: true})
			if err != nil || existed || got.ID == f.bad.ID {
				t.Errorf("Insert of the unreadable record's text: %v %v %v", got.ID, existed, err)
			}
			res, err := f.s.InsertBatch(ctx, []Insert{{Memory: mem(f.others[0].Text), Unique: true}, {Memory: mem("A new fact about retries"), Unique: true}})
			if err != nil || !res[0].Existed || res[1].Existed {
				t.Errorf("InsertBatch: %+v %v", res, err)
			}
		}},
		{"re-embedding", func(t *testing.T, f *unreadableFixture) {
			v2 := wordEmbedder{model: "words-v2", dim: testDim + 8}
			if err := f.s.ReembedWith(ctx, v2, ReembedOptions{}); err != nil {
				t.Fatalf("ReembedWith: %v", err)
			}
			if info := f.s.Info(); info.Model != v2.model || info.Count != n-1 || info.Unreadable != 1 {
				t.Errorf("after the re-embedding: %+v", info)
			}
			m, err := f.s.Get(ctx, f.others[0].ID)
			if err != nil || len(m.Embedding) != v2.dim {
				t.Errorf("Get after the re-embedding: %d dims, %v", len(m.Embedding), err)
			}
		}},
		{"text index rebuilt", func(t *testing.T, f *unreadableFixture) {
			if err := f.s.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := RebuildTextIndex(ctx, f.dir)
			if err != nil || got != n-1 {
				t.Errorf("RebuildTextIndex: %d %v", got, err)
			}
			f.s = openTest(t, f.dir)
			hits, err := f.s.TextSearchTerms(ctx, []Term{{Text: "retries", Boost: 1}, {Text: "upload", Boost: 1}}, 50, Filter{})
			if err != nil || len(hits) != n-1 {
				t.Errorf("text search after the rebuild: %d %v", len(hits), err)
			}
		}},
	}
	for _, g := range recordGarbles {
		for _, p := range paths {
			t.Run(g.name+"/"+p.name, func(t *testing.T) {
				f := openWithUnreadable(t, n, g.garble)
				p.run(t, f)
				for _, m := range f.others {
					if _, err := f.s.Get(ctx, m.ID); err != nil && !errors.Is(err, memory.ErrNotFound) {
						t.Errorf("Get of another after %s: %v", p.name, err)
					}
				}
			})
		}
	}
}

// TestOpenDecodesWhatReadsDecode: a record whose fields are valid JSON of
// the wrong type (importance "high", a time that is a number, a count
// that is a string) is unreadable to Open as to every read: counted,
// named in a warning, not listed, not found by Get, left out of an export,
// of both search legs; the other records are there.
func TestOpenDecodesWhatReadsDecode(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ field, raw string }{
		{"importance", `"high"`},
		{"created_at", `12`},
		{"access_count", `"3"`},
		{"hits", `{"a":1}`},
		{"feedback_n", `1.5`},
	} {
		t.Run(c.field, func(t *testing.T) {
			f := openWithUnreadable(t, 6, func(t *testing.T, path string, m memory.Memory) []byte {
				return garbleRecordField(t, path, m.ID, c.field, c.raw)
			})
			if !slices.ContainsFunc(f.s.Info().Warnings, func(w string) bool { return strings.Contains(w, "record "+f.bad.ID+" is unreadable") }) {
				t.Errorf("no warning names it: %v", f.s.Info().Warnings)
			}
			if _, err := f.s.Get(ctx, f.bad.ID); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("Get: %v, want not found", err)
			}
			listed, total, err := f.s.List(ctx, ListQuery{})
			if err != nil || total != 5 || slices.Contains(listed, f.bad.ID) {
				t.Errorf("List: %v %d %v", listed, total, err)
			}
			var buf bytes.Buffer
			if err := f.s.Export(ctx, &buf); err != nil {
				t.Fatalf("Export: %v", err)
			}
			if got := exportedIDs(t, buf.Bytes(), 5); slices.Contains(got, f.bad.ID) || len(got) != 5 {
				t.Errorf("Export: %v", got)
			}
			text, err := f.s.TextSearchTerms(ctx, []Term{{Text: "retries", Boost: 1}, {Text: "upload", Boost: 1}}, 50, Filter{})
			if err != nil || len(text) != 5 || slices.Contains(ids(text), f.bad.ID) {
				t.Errorf("TextSearchTerms: %v %v", ids(text), err)
			}
			vec, err := f.s.VectorSearch(ctx, testEmb.vec(f.bad.Text), 50, Filter{})
			if err != nil || slices.Contains(ids(vec), f.bad.ID) {
				t.Errorf("VectorSearch: %v %v", ids(vec), err)
			}
			got, err := f.s.GetMany(ctx, []string{f.bad.ID, f.others[0].ID})
			if err != nil || len(got) != 1 {
				t.Errorf("GetMany: %v %v", got, err)
			}
		})
	}
}
