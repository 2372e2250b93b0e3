package store

import (
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestSupersede(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	old := mustPut(t, s, mem("the test database listens on port 5432"))
	next, err := s.Supersede(ctx, old.ID, mem("the test database listens on port 55432"))
	if err != nil {
		t.Fatal(err)
	}
	if next.Supersedes != old.ID {
		t.Errorf("next.Supersedes = %q, want %q", next.Supersedes, old.ID)
	}
	got, err := s.Get(ctx, old.ID)
	if err != nil || got.SupersededBy != next.ID {
		t.Fatalf("old.SupersededBy = %q (%v), want %q", got.SupersededBy, err, next.ID)
	}
	hits, err := s.VectorSearch(ctx, testEmb.vec("test database port"), 5, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].ID != next.ID {
		t.Errorf("search returns %v, want only the new version", ids(hits))
	}
	text, err := s.TextSearch(ctx, "database", 5, Filter{IncludeSuperseded: true})
	if err != nil || len(text) != 2 {
		t.Errorf("text search with history: %v (%v), want both versions", ids(text), err)
	}
	if s.Count() != 2 {
		t.Errorf("count = %d, want 2", s.Count())
	}
	// Errors: unknown id, already superseded; nothing changes.
	if _, err := s.Supersede(ctx, "nope", mem("x y z")); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("unknown id: %v", err)
	}
	if _, err := s.Supersede(ctx, old.ID, mem("another version")); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("already superseded: %v", err)
	}
	if s.Count() != 2 {
		t.Errorf("count after errors = %d, want 2", s.Count())
	}
	// Durable: both links survive a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	got, err = s.Get(ctx, old.ID)
	if err != nil || got.SupersededBy != next.ID {
		t.Errorf("after reopen old.SupersededBy = %q (%v)", got.SupersededBy, err)
	}
	if n, err := s.Get(ctx, next.ID); err != nil || n.Supersedes != old.ID {
		t.Errorf("after reopen next.Supersedes = %q (%v)", n.Supersedes, err)
	}
}
