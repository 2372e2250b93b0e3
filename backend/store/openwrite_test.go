package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// committedTx is the id of the newest transaction committed to the
// records file in dir (the store closed).
func committedTx(t *testing.T, dir string) int {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, dbFile), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin(false)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	return tx.ID()
}

// TestOpenWritesNothing opens a healthy store with nothing to do and
// checks that Open commits no transaction: the records file is the same
// byte for byte and its newest transaction the same. A store with
// tombstones its text index already reflects has them pruned once (one
// transaction), then opens without a write.
func TestOpenWritesNothing(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		deletes int
		writes  []int // transactions committed by each reopen
	}{
		{"records only", 0, []int{0, 0}},
		{"tombstones pruned once", 3, []int{1, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			var ids []string
			for i := 0; i < 20; i++ {
				ids = append(ids, mustPut(t, s, mem(fmt.Sprintf("fact %d about the open path word%d", i, i))).ID)
			}
			for _, id := range ids[:c.deletes] {
				if err := s.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, dbFile)
			for i, want := range c.writes {
				before, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				tx := committedTx(t, dir)
				s := openTest(t, dir)
				if n := s.Count(); n != 20-c.deletes {
					t.Fatalf("reopen %d: %d records, want %d", i, n, 20-c.deletes)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if got := committedTx(t, dir) - tx; got != want {
					t.Errorf("reopen %d committed %d transactions, want %d", i, got, want)
				}
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if want == 0 && !bytes.Equal(before, after) {
					t.Errorf("reopen %d changed the records file", i)
				}
			}
		})
	}
}

// BenchmarkReopen measures Open of a healthy store of 10 and of 1000
// records with nothing to do, in this process, Close left out of the
// time: the cost the records file's commit and fsync added to every Open.
func BenchmarkReopen(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testEmb.dim})
			if err != nil {
				b.Fatal(err)
			}
			ms := make([]memory.Memory, n)
			for i := range ms {
				ms[i] = mem(fmt.Sprintf("reopened fact %d about word%d and word%d", i, i, i%17))
			}
			if _, err := s.PutBatch(context.Background(), ms); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s, err := Open(context.Background(), Options{Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer() // Close waits for the text index's persister: not Open's cost
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
