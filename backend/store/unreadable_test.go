package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// garbleFileText breaks the JSON of every copy of the record whose text
// holds needle, in the records file at path (a quote where the text's
// first byte was): its header decodes, its fields do not; every page of
// bbolt's is intact. It returns the garbled bytes.
func garbleFileText(t *testing.T, path, needle string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(needle)) {
		t.Fatalf("no record holding %q in %s", needle, path)
	}
	bad := append([]byte(`"`), needle[1:]...)
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte(needle), bad), 0o600); err != nil {
		t.Fatal(err)
	}
	return bad
}

// garbleRecordBytes replaces record id's stored value in the records file
// at path with bytes that are no record at all (its header does not
// decode), through bbolt, and returns them.
func garbleRecordBytes(t *testing.T, path, id string) []byte {
	t.Helper()
	bad := []byte("\x07 this is not a memtray record")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketRecs).Put([]byte(id), bad) }); err != nil {
		t.Fatal(err)
	}
	return bad
}

// TestOneUnreadableRecordBreaksNoRead: a store file with one record
// garbled by the test (its fields, or its whole value) opens with a
// warning naming it and Info.Unreadable 1, and every read then skips it
// as Open did — List and GetMany, Iterate, the text and vector searches,
// Get (not found), FindByHash, Export (and an Import of that export), the
// team outbox —
// with every other record there; the garbled bytes are left as they are.
func TestOneUnreadableRecordBreaksNoRead(t *testing.T) {
	ctx := context.Background()
	const n = 12
	cases := []struct {
		name   string
		garble func(t *testing.T, path, id, text string) []byte
	}{
		{"its fields garbled in the file", func(t *testing.T, path, _, text string) []byte {
			return garbleFileText(t, path, text)
		}},
		{"its bytes not a record", func(t *testing.T, path, id, _ string) []byte {
			return garbleRecordBytes(t, path, id)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTeam(t, dir)
			var all []memory.Memory
			for i := range n {
				all = append(all, mustPut(t, s, teamMem(fmt.Sprintf("Worker %d retries a failed upload of batch-%d.bin three times", i, i))))
			}
			bad := all[3]
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, dbFile)
			garbled := c.garble(t, path, bad.ID, bad.Text)

			s = openTeam(t, dir)
			info := s.Info()
			if info.Unreadable != 1 || info.Count != n-1 || !slices.ContainsFunc(info.Warnings, func(w string) bool {
				return strings.Contains(w, "record "+bad.ID+" is unreadable")
			}) {
				t.Fatalf("Info: %+v", info)
			}
			want := map[string]bool{}
			var allIDs []string
			for _, m := range all {
				allIDs = append(allIDs, m.ID)
				if m.ID != bad.ID {
					want[m.ID] = true
				}
			}
			check := func(what string, got []string) {
				t.Helper()
				slices.Sort(got)
				var w []string
				for id := range want {
					w = append(w, id)
				}
				slices.Sort(w)
				if !slices.Equal(got, w) {
					t.Errorf("%s: %d records %v, want the %d others", what, len(got), got, len(w))
				}
			}

			listed, total, err := s.List(ctx, ListQuery{})
			if err != nil || total != n-1 {
				t.Fatalf("List: %d %v", total, err)
			}
			check("List", listed)
			got, err := s.GetMany(ctx, allIDs)
			if err != nil {
				t.Fatalf("GetMany: %v", err)
			}
			check("GetMany", slices.Collect(maps.Keys(got)))

			var iterated []string
			if err := s.Iterate(ctx, Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
				iterated = append(iterated, m.ID)
				return nil
			}); err != nil {
				t.Fatalf("Iterate: %v", err)
			}
			check("Iterate", iterated)

			text, err := s.TextSearchTerms(ctx, []Term{{Text: "retries", Boost: 1}, {Text: "upload", Boost: 1}}, 50, Filter{})
			if err != nil {
				t.Fatalf("TextSearchTerms: %v", err)
			}
			check("TextSearchTerms", ids(text))
			vec, err := s.VectorSearch(ctx, testEmb.vec(bad.Text), 50, Filter{})
			if err != nil {
				t.Fatalf("VectorSearch: %v", err)
			}
			check("VectorSearch", ids(vec))

			if _, err := s.Get(ctx, bad.ID); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("Get of the unreadable record: %v, want not found", err)
			}
			if m, err := s.Get(ctx, all[4].ID); err != nil || m.Text != all[4].Text {
				t.Errorf("Get of another: %v", err)
			}
			out, _, err := s.Outbox(ctx, 0)
			if err != nil {
				t.Fatalf("Outbox: %v", err)
			}
			var pushed []string
			for _, e := range out {
				pushed = append(pushed, e.ID)
			}
			check("Outbox", pushed)

			if _, ok, err := s.FindByHash(ctx, bad.ContentHash, bad.Project); err != nil || ok {
				t.Errorf("FindByHash of the unreadable record: %v %v", ok, err)
			}
			if m, ok, err := s.FindByHash(ctx, all[4].ContentHash, all[4].Project); err != nil || !ok || m.ID != all[4].ID {
				t.Errorf("FindByHash of another: %v %v", ok, err)
			}

			var buf bytes.Buffer
			if err := s.Export(ctx, &buf); err != nil {
				t.Fatalf("Export: %v", err)
			}
			check("Export", exportedIDs(t, buf.Bytes(), n-1))
			other := openTest(t, t.TempDir())
			if rep, err := other.Import(ctx, bytes.NewReader(buf.Bytes()), ImportOptions{}); err != nil || rep.Imported != n-1 {
				t.Errorf("Import of the export: %+v %v", rep, err)
			}

			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, garbled) {
				t.Error("the garbled record's bytes are gone from the records file")
			}
		})
	}
}

// exportedIDs returns the ids of an export stream's records, checking
// that its header and trailer count n.
func exportedIDs(t *testing.T, b []byte, n int) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for i := 0; sc.Scan(); i++ {
		var line struct {
			ID    string `json:"id"`
			Count *int   `json:"count"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("export line %d: %v", i, err)
		}
		switch {
		case line.Count != nil:
			if *line.Count != n {
				t.Errorf("export line %d counts %d, want %d", i, *line.Count, n)
			}
		case line.ID != "":
			out = append(out, line.ID)
		}
	}
	return out
}
