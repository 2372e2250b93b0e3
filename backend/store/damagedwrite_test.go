package store

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// TestWritesOnDamagedVector: every write path a user action takes on a
// memory whose stored vector is damaged (an edit of its fields, an
// access, a reinforcement, a snooze through a batch, a supersession, the
// trash and back, a team put, a delete) succeeds. A write that brings no
// new vector keeps the damaged one bit for bit, out of the vector index
// and on the list (warning, RepairVectors); one that brings a sound
// vector repairs the record; a changed text still needs a new vector, and
// no write stores a new damaged vector. At 914b286 every "kept" case
// failed ("embedding contains NaN or Inf", or the dimension).
func TestWritesOnDamagedVector(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	ctx := context.Background()
	at := t0.Add(time.Hour)
	type outcome int
	const (
		kept     outcome = iota // written; the damaged vector kept, still listed
		repaired                // written with a sound vector: indexed, off the list
		gone                    // the record is no longer live: off the list
		refused                 // an error; nothing written
	)
	cases := []struct {
		name  string
		write func(s *Store, id string) error
		want  outcome
	}{
		{"update a field", func(s *Store, id string) error {
			_, err := s.Update(ctx, id, func(m *memory.Memory) error { m.Importance, m.Pinned = 0.9, true; return nil })
			return err
		}, kept},
		{"reinforce (UpdateMarked)", func(s *Store, id string) error {
			_, err := s.UpdateMarked(ctx, id, func(m *memory.Memory) error {
				m.ReinforcedCount++
				m.LastReinforcedAt = at
				return nil
			}, nil)
			return err
		}, kept},
		{"record access", func(s *Store, id string) error {
			got, err := s.RecordAccess(ctx, at, id)
			if err == nil && got[id].AccessCount != 1 {
				return errors.New("access not counted")
			}
			return err
		}, kept},
		{"snooze through a batch put", func(s *Store, id string) error {
			m, err := s.Get(ctx, id)
			if err != nil {
				return err
			}
			m.CooldownUntil = at.Add(24 * time.Hour)
			return s.Apply(ctx, Batch{Put: []memory.Memory{m}, IfUpdatedAt: map[string]time.Time{id: m.UpdatedAt}})
		}, kept},
		{"superseded by a new memory", func(s *Store, id string) error {
			_, err := s.Supersede(ctx, id, mem("the superseding memory of the damaged one"))
			return err
		}, kept},
		{"trashed and restored", func(s *Store, id string) error {
			if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: id, Reason: "test"}}}); err != nil {
				return err
			}
			if strings.Contains(strings.Join(s.Info().Warnings, " "), id) {
				return errors.New("a trashed record is still named as damaged")
			}
			return s.Restore(ctx, id)
		}, kept},
		{"edited with a new text and its vector", func(s *Store, id string) error {
			_, err := s.Update(ctx, id, func(m *memory.Memory) error {
				m.Text += " (edited)"
				m.Embedding = testEmb.vec(m.Text)
				return nil
			})
			return err
		}, repaired},
		{"a team put with the team's vector", func(s *Store, id string) error {
			m, err := s.Get(ctx, id)
			if err != nil {
				return err
			}
			m.Scope, m.Embedding, m.UpdatedAt = memory.ScopeTeam, testEmb.vec(m.Text), at
			res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{m}})
			if err == nil && res.Put != 1 {
				return errors.New("the team put was not applied")
			}
			return err
		}, repaired},
		{"deleted", func(s *Store, id string) error { return s.Delete(ctx, id) }, gone},
		{"text edited, the damaged vector kept", func(s *Store, id string) error {
			_, err := s.Update(ctx, id, func(m *memory.Memory) error { m.Text += " (edited)"; return nil })
			return err
		}, refused},
		{"a new damaged vector", func(s *Store, id string) error {
			_, err := s.Update(ctx, id, func(m *memory.Memory) error {
				m.Embedding = slices.Repeat([]float32{float32(math.Inf(1))}, testDim)
				return nil
			})
			return err
		}, refused},
	}
	damages := []struct {
		name   string
		damage func(t *testing.T, path, id string)
	}{
		{"NaN", func(t *testing.T, path, id string) { rewriteVector(t, path, id, setFloat(0, float32(math.NaN()))) }},
		{"one number short", func(t *testing.T, path, id string) {
			rewriteVector(t, path, id, func(emb []byte) []byte { return emb[:len(emb)-4] })
		}},
	}
	for _, d := range damages {
		for _, tc := range cases {
			t.Run(d.name+"/"+tc.name, func(t *testing.T) {
				dir, path := damagedStore(t, vecDamageRecords)
				id := firstRecordID(t, path)
				d.damage(t, path, id)
				s := openTest(t, dir)
				before, err := s.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				err = tc.write(s, id)
				if (err != nil) != (tc.want == refused) {
					t.Fatalf("write = %v, want an error: %v", err, tc.want == refused)
				}
				after, gerr := s.Get(ctx, id)
				_, indexed := s.vec.rows[id]
				named := strings.Contains(strings.Join(s.Info().Warnings, " "), id)
				switch tc.want {
				case kept, refused:
					if gerr != nil || !sameVector(after.Embedding, before.Embedding) || indexed || !named || !slices.Equal(s.damaged, []string{id}) {
						t.Fatalf("after: %v, vector kept %v, indexed %v, named %v, damaged %v: want the damaged vector kept, out of the index, named",
							gerr, sameVector(after.Embedding, before.Embedding), indexed, named, s.damaged)
					}
					n, err := s.RepairVectors(ctx, testEmb)
					if err != nil || n != 1 {
						t.Fatalf("RepairVectors after the write = %d, %v, want 1", n, err)
					}
					hits, err := s.VectorSearch(ctx, testEmb.vec(after.Text), 1, Filter{IncludeSnoozed: true, IncludeSuperseded: true})
					if err != nil || len(hits) != 1 || hits[0].ID != id {
						t.Errorf("vector search after the repair = %v, %v, want %s", ids(hits), err, id)
					}
				case repaired:
					if gerr != nil || !indexed || named || len(s.damaged) != 0 {
						t.Errorf("after: %v, indexed %v, named %v, damaged %v: want it indexed, off the list", gerr, indexed, named, s.damaged)
					}
				case gone:
					if !errors.Is(gerr, memory.ErrNotFound) || named || len(s.damaged) != 0 {
						t.Errorf("after: %v, named %v, damaged %v: want it gone, off the list", gerr, named, s.damaged)
					}
				}
			})
		}
	}
}
