package store

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// TestChangedSince: every write path marks what it writes as changed,
// whatever timestamps the record carries (an import or a restore keeps
// old ones), and nothing else.
func TestChangedSince(t *testing.T) {
	ctx := context.Background()
	old := t0.Add(-365 * 24 * time.Hour)
	// The store holds "base" and "kept" (and "gone" in the trash) before
	// each case's write.
	tests := []struct {
		name  string
		write func(t *testing.T, s *Store, ids map[string]string) []string // the ids written
	}{
		{"nothing", func(*testing.T, *Store, map[string]string) []string { return nil }},
		{"put", func(t *testing.T, s *Store, _ map[string]string) []string {
			return []string{mustPut(t, s, mem("a new note")).ID}
		}},
		{"insert batch", func(t *testing.T, s *Store, _ map[string]string) []string {
			got, err := s.InsertBatch(ctx, []Insert{{Memory: mem("one")}, {Memory: mem("two")}})
			if err != nil {
				t.Fatal(err)
			}
			return []string{got[0].Memory.ID, got[1].Memory.ID}
		}},
		{"update", func(t *testing.T, s *Store, ids map[string]string) []string {
			if _, err := s.Update(ctx, ids["base"], func(m *memory.Memory) error { m.AccessCount++; return nil }); err != nil {
				t.Fatal(err)
			}
			return []string{ids["base"]}
		}},
		{"supersede", func(t *testing.T, s *Store, ids map[string]string) []string {
			n, err := s.Supersede(ctx, ids["base"], mem("the base, corrected"))
			if err != nil {
				t.Fatal(err)
			}
			return []string{ids["base"], n.ID}
		}},
		{"restore keeps old timestamps", func(t *testing.T, s *Store, ids map[string]string) []string {
			if err := s.Restore(ctx, ids["gone"]); err != nil {
				t.Fatal(err)
			}
			m, err := s.Get(ctx, ids["gone"])
			if err != nil || !m.UpdatedAt.Equal(old) {
				t.Fatalf("restored %v (%v), want updated_at %v", m.UpdatedAt, err, old)
			}
			return []string{ids["gone"]}
		}},
		{"import with old timestamps", func(t *testing.T, s *Store, _ map[string]string) []string {
			src := openTest(t, t.TempDir())
			m := mem("an exported note from last year")
			m.CreatedAt, m.UpdatedAt = old, old
			m = mustPut(t, src, m)
			rep, err := s.Import(ctx, bytes.NewReader(export(t, src)), ImportOptions{})
			if err != nil || rep.Imported != 1 {
				t.Fatalf("import %+v: %v", rep, err)
			}
			got, err := s.Get(ctx, m.ID)
			if err != nil || !got.UpdatedAt.Equal(old) {
				t.Fatalf("imported %v (%v), want updated_at %v", got.UpdatedAt, err, old)
			}
			return []string{m.ID}
		}},
		{"team pull", func(t *testing.T, s *Store, _ map[string]string) []string {
			m := teamMem("the team's note on the release train")
			m.ID, m.CreatedAt, m.UpdatedAt = "team1", old, old
			if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{m}}); err != nil {
				t.Fatal(err)
			}
			return []string{"team1"}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openTeam(t, t.TempDir())
			ids := map[string]string{}
			for _, name := range []string{"base", "kept", "gone"} {
				m := mem("the " + name + " note")
				m.CreatedAt, m.UpdatedAt = old, old
				ids[name] = mustPut(t, s, m).ID
			}
			if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: ids["gone"], Reason: "test"}}}); err != nil {
				t.Fatal(err)
			}
			all, seq, err := s.ChangedSince(ctx, 0)
			if err != nil || len(all) != 2 || seq != s.Info().Seq {
				t.Fatalf("ChangedSince(0) = %v, %d, %v; want base and kept at %d", all, seq, err, s.Info().Seq)
			}
			want := tc.write(t, s, ids)
			got, now, err := s.ChangedSince(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			if g := slices.Sorted(maps.Keys(got)); !slices.Equal(g, slices.Sorted(slices.Values(want))) {
				t.Errorf("changed %v, want %v", g, want)
			}
			if len(want) > 0 && now <= seq {
				t.Errorf("sequence %d after the write, was %d", now, seq)
			}
			if again, _, _ := s.ChangedSince(ctx, now); len(again) != 0 {
				t.Errorf("changed since now: %v", again)
			}
		})
	}
}

// TestChangedSinceReopen: the sequence numbers survive a reopen, and a
// closed store is an error.
func TestChangedSinceReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	a := mustPut(t, s, mem("first"))
	_, seq, err := s.ChangedSince(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := mustPut(t, s, mem("second"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ChangedSince(ctx, 0); !errors.Is(err, errClosed) {
		t.Errorf("closed store: %v", err)
	}
	s = openTest(t, dir)
	got, _, err := s.ChangedSince(ctx, seq)
	if _, ok := got[b.ID]; err != nil || len(got) != 1 || !ok {
		t.Errorf("after reopen: %v, %v; want only %s (not %s)", got, err, b.ID, a.ID)
	}
}
