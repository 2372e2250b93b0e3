package store

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestOptionsNewID: a store given Options.NewID names with it every memory
// it names (Put without an id, an Insert restoring an id that is taken)
// and hands its ids out through Store.NewID; without it the ids are 32
// random lowercase hex characters.
func TestOptionsNewID(t *testing.T) {
	counter := func() func() string {
		n := 0
		return func() string { n++; return fmt.Sprintf("seq-%d", n) }
	}
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	for _, tc := range []struct {
		name  string
		newID func() string
		check func(t *testing.T, put, restored, handed string)
	}{
		{"given", counter(), func(t *testing.T, put, restored, handed string) {
			if put != "seq-1" || restored != "seq-2" || handed != "seq-3" {
				t.Errorf("ids %q %q %q, want seq-1 seq-2 seq-3", put, restored, handed)
			}
		}},
		{"random", nil, func(t *testing.T, put, restored, handed string) {
			for _, id := range []string{put, restored, handed} {
				if !hex32.MatchString(id) {
					t.Errorf("id %q is not 32 lowercase hex characters", id)
				}
			}
			if put == restored || restored == handed || put == handed {
				t.Errorf("ids repeat: %q %q %q", put, restored, handed)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := Open(ctx, Options{Dir: t.TempDir(), Model: testEmb.model, Dim: testEmb.dim, Clock: memory.FixedClock{T: t0}, NewID: tc.newID})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			put := mustPut(t, s, mem("the cache lives in redis"))
			m := mem("the queue lives in nats")
			m.ID = put.ID // taken: the restore gets a new one
			restored, _, err := s.Insert(ctx, Insert{Memory: m, Restore: true})
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, put.ID, restored.ID, s.NewID())
		})
	}
}
