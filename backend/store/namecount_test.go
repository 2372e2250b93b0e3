package store

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/memtray/memtray/backend/memory"
)

// TestOpenTrustsStoredNameCounts checks Open takes a record's names count
// from what Close stored (internalNames) only when the record's text is the
// one it was counted from (same tseq, same mapping version), and counts
// every other record's names from its text. The stored counts are
// rewritten with numbers no text gives, so that a count Open took from
// them shows.
func TestOpenTrustsStoredNameCounts(t *testing.T) {
	texts := []string{
		"Build with --firmware and ./out/ then run make()",
		"Set $HOME before JIRA-123 is closed",
		"The billing service retries",
	}
	// seq is the store's sequence number the value Close left was
	// written at: the rewritten values keep it, so that Close writes
	// one again only because a record was not counted.
	var seq uint64
	cases := []struct {
		name string
		// rewrite returns the stored value to write in place of the
		// one Close left, given the ids (in byte order) and tseqs.
		rewrite func(ids []string, tseqs []uint64) []byte
		// want are the names counts Open must give each record, -1:
		// its text's (nameLength).
		want []int32
	}{
		{"trusted", func(ids []string, tseqs []uint64) []byte {
			return namesValue(seq, mappingVersion, ids, tseqs, []uint64{50, 60, 70})
		}, []int32{50, 60, 70}},
		{"another tseq is counted", func(ids []string, tseqs []uint64) []byte {
			return namesValue(seq, mappingVersion, ids, []uint64{tseqs[0], tseqs[1] + 1, tseqs[2]}, []uint64{50, 60, 70})
		}, []int32{50, -1, 70}},
		{"a missing record is counted", func(ids []string, tseqs []uint64) []byte {
			return namesValue(seq, mappingVersion, []string{ids[0], ids[2]}, []uint64{tseqs[0], tseqs[2]}, []uint64{50, 70})
		}, []int32{50, -1, 70}},
		{"another mapping version is counted", func(ids []string, tseqs []uint64) []byte {
			return namesValue(seq, mappingVersion+"x", ids, tseqs, []uint64{50, 60, 70})
		}, []int32{-1, -1, -1}},
		{"a truncated value keeps what it read", func(ids []string, tseqs []uint64) []byte {
			v := namesValue(seq, mappingVersion, ids, tseqs, []uint64{50, 60, 70})
			return v[:len(v)-3]
		}, []int32{50, 60, -1}},
		{"none", func([]string, []uint64) []byte { return nil }, []int32{-1, -1, -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			byText := map[string]string{}
			for _, text := range texts {
				byText[mustPut(t, s, mem(text)).ID] = text
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			ids, tseqs := storedNames(t, dir)
			seq = savedNamesSeq(textInternal(t, dir, internalNames, nil))
			if len(ids) != len(texts) {
				t.Fatalf("Close stored the names of %d records, want %d", len(ids), len(texts))
			}
			textInternal(t, dir, internalNames, func() []byte { return tc.rewrite(ids, tseqs) })
			s = openTest(t, dir)
			total := 0
			for i, id := range ids {
				want := tc.want[i]
				if want < 0 {
					want = nameLength(byText[id])
				}
				s.mu.RLock()
				got := s.entries[id].names
				s.mu.RUnlock()
				if got != want {
					t.Errorf("record %d (%q): %d names, want %d", i, byText[id], got, want)
				}
				total += int(want)
			}
			if _, names := s.textTokens(); names != total {
				t.Errorf("store's names count %d, want %d", names, total)
			}
			// A value that missed a record is written whole again.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if ids, _ := storedNames(t, dir); len(ids) != len(texts) {
				t.Errorf("after a reopen, Close stored the names of %d records, want %d", len(ids), len(texts))
			}
		})
	}
}

// TestCloseStoresNameCounts checks the counts Close stores are the
// records' own after writes of every kind, and that an Open after a Close
// with no write between finds them unchanged.
func TestCloseStoresNameCounts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	a := mustPut(t, s, mem("Build with --firmware and ./out/ then run make()"))
	b := mustPut(t, s, mem("Set $HOME before JIRA-123 is closed"))
	c := mustPut(t, s, mem("The billing service retries"))
	if _, err := s.Update(ctx, c.ID, func(m *memory.Memory) error {
		m.Text, m.Embedding = "Billing reads config/billing.yaml with -v", testEmb.vec("Billing reads config/billing.yaml with -v")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	want := map[string]int32{
		a.ID: nameLength(a.Text),
		c.ID: nameLength("Billing reads config/billing.yaml with -v"),
	}
	for round := 0; round < 2; round++ {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		got := storedNameCounts(t, dir)
		if len(got) != len(want) {
			t.Fatalf("round %d: stored %v, want %v", round, got, want)
		}
		for id, n := range want {
			if got[id] != n {
				t.Errorf("round %d: stored %d names for %s, want %d", round, got[id], id, n)
			}
		}
		s = openTest(t, dir)
	}
}

// namesValue is an internalNames value of mapping version mv written at seq.
func namesValue(seq uint64, mv string, ids []string, tseqs, counts []uint64) []byte {
	buf := binary.AppendUvarint(nil, uint64(len(mv)))
	buf = append(buf, mv...)
	buf = binary.AppendUvarint(buf, seq)
	for i, id := range ids {
		buf = binary.AppendUvarint(buf, uint64(len(id)))
		buf = append(buf, id...)
		buf = binary.AppendUvarint(buf, tseqs[i])
		buf = binary.AppendUvarint(buf, counts[i])
	}
	return buf
}

// storedNames returns the ids and tseqs internalNames holds in the
// closed store in dir.
func storedNames(t *testing.T, dir string) (ids []string, tseqs []uint64) {
	t.Helper()
	nc := newNameCounts(textInternal(t, dir, internalNames, nil))
	for !nc.done {
		ids, tseqs = append(ids, string(nc.id)), append(tseqs, nc.cur.tseq)
		nc.next()
	}
	return ids, tseqs
}

// storedNameCounts returns the counts internalNames holds in the closed
// store in dir, by id.
func storedNameCounts(t *testing.T, dir string) map[string]int32 {
	t.Helper()
	out := map[string]int32{}
	nc := newNameCounts(textInternal(t, dir, internalNames, nil))
	for !nc.done {
		out[string(nc.id)] = nc.cur.count
		nc.next()
	}
	return out
}

// textInternal returns the internal value key of the text index of the
// closed store in dir, after setting it to set when set is a func.
func textInternal(t *testing.T, dir, key string, set func() []byte) []byte {
	t.Helper()
	cfg := textConfig()
	delete(cfg, "unsafe_batch")
	idx, err := bleve.OpenUsing(filepath.Join(dir, textDir), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := idx.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	if set != nil {
		if v := set(); v == nil {
			err = idx.DeleteInternal([]byte(key))
		} else {
			err = idx.SetInternal([]byte(key), v)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	v, err := idx.GetInternal([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
