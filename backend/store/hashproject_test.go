package store

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestExactDedupPerProject: every exact-text dedup of the store is per
// project (FindByHash): a text that project "alpha" holds is stored again
// for project "beta" (and for no project, "" being a project of its own),
// by Insert.Unique, a batch, an import of an export file, a team pull and
// a restore from the trash; within one project it is stored once. The
// store is on disk and opened again before the checks: the content-hash
// index is read as written, nothing is migrated.
func TestExactDedupPerProject(t *testing.T) {
	ctx := context.Background()
	const text = "the deploy gate runs the smoke tests first"
	inProject := func(p string) memory.Memory {
		m := mem(text)
		m.Project = p
		return m
	}
	// exported is an export file holding text once, of project p.
	exported := func(t *testing.T, p string) []byte {
		src := openTest(t, t.TempDir())
		mustPut(t, src, inProject(p))
		var b bytes.Buffer
		if err := src.Export(ctx, &b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	tests := []struct {
		name string
		// write writes text for project through one dedup path and says
		// whether it was stored (false: found there already).
		write func(t *testing.T, s *Store, project string) bool
	}{
		{"insert unique", func(t *testing.T, s *Store, p string) bool {
			_, existed, err := s.Insert(ctx, Insert{Memory: inProject(p), Unique: true})
			if err != nil {
				t.Fatal(err)
			}
			return !existed
		}},
		{"batch", func(t *testing.T, s *Store, p string) bool {
			res, err := s.InsertBatch(ctx, []Insert{{Memory: inProject(p), Unique: true}, {Memory: inProject(p), Unique: true}})
			if err != nil {
				t.Fatal(err)
			}
			if !res[1].Existed || res[1].Memory.ID != res[0].Memory.ID {
				t.Errorf("the text twice in one project's batch: %+v, want the second to name the first", res[1])
			}
			return !res[0].Existed
		}},
		{"import", func(t *testing.T, s *Store, p string) bool {
			rep, err := s.Import(ctx, bytes.NewReader(exported(t, p)), ImportOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return rep.Imported == 1
		}},
		{"team pull", func(t *testing.T, s *Store, p string) bool {
			m := inProject(p)
			m.ID = s.NewID()
			res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{m}})
			if err != nil {
				t.Fatal(err)
			}
			return res.Put == 1
		}},
		{"restore", func(t *testing.T, s *Store, p string) bool {
			// Stored beside the others (Put does not dedup), trashed,
			// restored: a clash only with a record of its own project.
			m := mustPut(t, s, inProject(p))
			if err := s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: m.ID}}}); err != nil {
				t.Fatal(err)
			}
			err := s.Restore(ctx, m.ID)
			var ce *ConflictError
			if errors.As(err, &ce) {
				return false
			}
			if err != nil {
				t.Fatal(err)
			}
			return true
		}},
	}
	for _, tc := range tests {
		for _, p := range []string{"beta", ""} {
			t.Run(tc.name+" into "+p, func(t *testing.T) {
				dir := t.TempDir()
				s := openTest(t, dir)
				alpha := mustPut(t, s, inProject("alpha"))
				if !tc.write(t, s, p) {
					t.Fatalf("project %q: the text was found in project alpha; want it stored for %q", p, p)
				}
				if tc.write(t, s, p) {
					t.Errorf("project %q: the text was stored twice in one project", p)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				s = openTest(t, dir)
				h := memory.ContentHash(text)
				for _, want := range []string{"alpha", p} {
					got, ok, err := s.FindByHash(ctx, h, want)
					if err != nil || !ok || got.Project != want {
						t.Errorf("FindByHash(%q) = %q %v %v, want a memory of that project", want, got.Project, ok, err)
					}
				}
				if got, _, _ := s.FindByHash(ctx, h, "alpha"); got.ID != alpha.ID {
					t.Errorf("FindByHash(alpha) = %s, want %s", got.ID, alpha.ID)
				}
				if _, ok, _ := s.FindByHash(ctx, h, "gamma"); ok {
					t.Error("FindByHash(gamma) found a memory of another project")
				}
			})
		}
	}
}
