package store

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestCheckOpenStore: Store.Check on a store this process holds, healthy
// and with damage made by the test through the open store's own files
// and indexes: what it says, and that it commits nothing.
func TestCheckOpenStore(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		damage func(t *testing.T, s *Store, ids []string)
		area   string // "" : no damage
		want   string
	}{
		{"healthy", func(*testing.T, *Store, []string) {}, "", ""},
		{"a record's bytes garbled", func(t *testing.T, s *Store, ids []string) {
			if err := s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketRecs).Put([]byte(ids[3]), []byte("not a record"))
			}); err != nil {
				t.Fatal(err)
			}
		}, "records", "cannot be read"},
		{"a record missing from the text index", func(t *testing.T, s *Store, ids []string) {
			if err := s.text.Delete(ids[5]); err != nil {
				t.Fatal(err)
			}
		}, "text", "1 records are missing from the text index"},
		{"the order bucket loses a record", func(t *testing.T, s *Store, ids []string) {
			if err := s.db.Update(func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(bucketOrder).Cursor().First()
				return tx.Bucket(bucketOrder).Delete(k)
			}); err != nil {
				t.Fatal(err)
			}
		}, "order", "missing from the insertion order"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			var ids []string
			for i := 0; i < 30; i++ {
				ids = append(ids, mustPut(t, s, mem(fmt.Sprintf("live check fact %d word%d", i, i))).ID)
			}
			c.damage(t, s, ids)
			txBefore := s.db.Stats().TxN
			var wtx int
			_ = s.db.View(func(tx *bolt.Tx) error { wtx = tx.ID(); return nil })
			r, err := s.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if c.area == "" {
				if r.Damaged() || r.Records != 30 || r.TextIndexed != 30 || r.Vectors != 30 {
					t.Errorf("healthy store: %+v", r)
				}
			} else if !hasProblem(r, c.area, c.want) {
				t.Errorf("no %s problem saying %q: %+v", c.area, c.want, r.Problems)
			}
			var after int
			_ = s.db.View(func(tx *bolt.Tx) error { after = tx.ID(); return nil })
			if after != wtx {
				t.Errorf("Check committed %d transactions", after-wtx)
			}
			if s.db.Stats().TxN <= txBefore {
				t.Error("Check opened no read transaction")
			}
		})
	}
}

// hasProblem says r has a problem of area whose text contains want.
func hasProblem(r *CheckReport, area, want string) bool {
	for _, p := range r.Problems {
		if p.Area == area && strings.Contains(p.What, want) {
			return true
		}
	}
	return false
}

// TestCheckOpenStoreWhileWriting runs Store.Check again and again while
// records are put, rewritten and deleted and other buckets are written
// (commits that hold no store lock): a healthy store must never be
// reported damaged (a meta page read while a commit writes it, or a text
// index snapshot out of step with the records, would be).
func TestCheckOpenStoreWhileWriting(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	for i := 0; i < 50; i++ {
		mustPut(t, s, mem(fmt.Sprintf("seed fact %d word%d", i, i)))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // records: put, rewrite, delete
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			m, err := s.Put(ctx, mem(fmt.Sprintf("written while checking %d word%d", i, i)))
			if err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 {
				if err := s.Delete(ctx, m.ID); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	go func() { // commits outside the store's write lock
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := s.update(func(tx *bolt.Tx) error {
				b, err := tx.CreateBucketIfNotExists([]byte("livecheck_test"))
				if err != nil {
					return err
				}
				return b.Put([]byte(fmt.Sprint(i%64)), make([]byte, 512))
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := 0; i < 40; i++ {
		r, err := s.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Damaged() {
			t.Errorf("check %d while writing: %+v", i, r.Problems)
			break
		}
	}
	close(stop)
	wg.Wait()
}
