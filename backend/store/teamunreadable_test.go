package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// pulledMem is team memory i as a pull brings it.
func pulledMem(i int, text string) memory.Memory {
	m := teamMem(text)
	m.ID, m.CreatedAt, m.UpdatedAt, m.Scope = fmt.Sprintf("team%d", i), t0, t0, memory.ScopeTeam
	return m
}

// TestApplyTeamOverUnreadable: a pull that changes or deletes a local
// record Open found unreadable applies every change, that one too: the
// team's version replaces the unreadable bytes (a put, even with a local
// write of it waiting in the outbox, which can never be pushed), or the
// delete removes them; the cursor is stored; the change is counted
// (TeamApplied.Unreadable). The record is then read, searched, listed and
// iterated once, its old text's hash finds nothing, Info.Unreadable and
// its warning are gone, and a reopen finds nothing to skip. At d916b52
// such a pull failed as a whole ("record team3: corrupt record") and every
// pull after it did too.
func TestApplyTeamOverUnreadable(t *testing.T) {
	ctx := context.Background()
	garbles := []struct {
		name   string
		garble func(t *testing.T, path, id, text string)
	}{
		{"fields garbled", func(t *testing.T, path, _, text string) { garbleFileText(t, path, text) }},
		{"bytes not a record", func(t *testing.T, path, id, _ string) { garbleRecordBytes(t, path, id) }},
	}
	changes := []struct {
		name string
		// waiting writes a local edit of the record before it is garbled:
		// it waits in the outbox.
		waiting bool
		del     bool
	}{
		{"put", false, false},
		{"put over a waiting write", true, false},
		{"delete", false, true},
	}
	for _, g := range garbles {
		for _, c := range changes {
			t.Run(g.name+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				s := openTeam(t, dir)
				var pulled []memory.Memory
				for i := range 6 {
					pulled = append(pulled, pulledMem(i, fmt.Sprintf("Team worker %d retries a failed upload of part-%d.bin", i, i)))
				}
				if _, err := s.ApplyTeam(ctx, TeamChanges{Put: pulled}); err != nil {
					t.Fatal(err)
				}
				bad := pulled[3]
				if c.waiting {
					if _, err := s.Update(ctx, bad.ID, func(m *memory.Memory) error { m.Importance = 0.9; return nil }); err != nil {
						t.Fatal(err)
					}
					if out, _, err := s.Outbox(ctx, 0); err != nil || !slices.ContainsFunc(out, func(e OutboxEntry) bool { return e.ID == bad.ID }) {
						t.Fatalf("the local write does not wait in the outbox: %+v %v", out, err)
					}
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				g.garble(t, filepath.Join(dir, dbFile), bad.ID, bad.Text)
				s = openTeam(t, dir)
				if s.Info().Unreadable != 1 {
					t.Fatalf("Info before the pull: %+v", s.Info())
				}

				// The pull: the unreadable record changed (or deleted),
				// one other changed, one new, one other deleted.
				next := pulledMem(3, "Team worker 3 now retries a failed upload of part-3.bin five times")
				next.UpdatedAt = t0.Add(time.Hour)
				other := pulledMem(1, "Team worker 1 now retries a failed upload of part-1.bin twice")
				other.UpdatedAt = t0.Add(time.Hour)
				ch := TeamChanges{Put: []memory.Memory{other, pulledMem(9, "Team worker 9 uploads part-9.bin once")},
					Delete: []TeamDelete{{ID: pulled[5].ID, Reason: "deleted from the team"}}, Cursor: []byte("cursor-2")}
				if c.del {
					ch.Delete = append(ch.Delete, TeamDelete{ID: bad.ID, Reason: "deleted from the team"})
				} else {
					ch.Put = append(ch.Put, next)
				}
				res, err := s.ApplyTeam(ctx, ch)
				if err != nil {
					t.Fatalf("ApplyTeam: %v", err)
				}
				wantPut, wantDel := 3, 1
				if c.del {
					wantPut, wantDel = 2, 2
				}
				if res.Put != wantPut || res.Deleted != wantDel || res.Unreadable != 1 || !slices.Equal(res.UnreadableIDs, []string{bad.ID}) || res.Kept != 0 {
					t.Fatalf("applied %+v", res)
				}
				if cur, err := s.TeamCursor(); err != nil || string(cur) != "cursor-2" {
					t.Fatalf("cursor %q %v", cur, err)
				}
				checkAfterPull(t, s, bad, next, c.del)
				if !c.del {
					if out, _, err := s.Outbox(ctx, 0); err != nil || slices.ContainsFunc(out, func(e OutboxEntry) bool { return e.ID == bad.ID }) {
						t.Errorf("the outbox still names %s: %v", bad.ID, err)
					}
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				s = openTeam(t, dir)
				if info := s.Info(); info.Unreadable != 0 || len(info.Warnings) != 0 {
					t.Errorf("Info after a reopen: %+v", info)
				}
				checkAfterPull(t, s, bad, next, c.del)
			})
		}
	}
}

// checkAfterPull checks the record bad, unreadable before the pull, is
// now next (or gone when del) for every read and both search legs, once,
// and that its old text's hash finds nothing.
func checkAfterPull(t *testing.T, s *Store, bad, next memory.Memory, del bool) {
	t.Helper()
	ctx := context.Background()
	if info := s.Info(); info.Unreadable != 0 || slices.ContainsFunc(info.Warnings, func(w string) bool { return strings.Contains(w, bad.ID) }) {
		t.Errorf("Info: %+v", info)
	}
	m, err := s.Get(ctx, bad.ID)
	switch {
	case del && !errors.Is(err, memory.ErrNotFound):
		t.Errorf("Get of the deleted record: %+v %v", m, err)
	case !del && (err != nil || m.Text != next.Text || m.Scope != memory.ScopeTeam):
		t.Errorf("Get: %+v %v", m, err)
	}
	var iterated []string
	if err := s.Iterate(ctx, Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		iterated = append(iterated, m.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	listed, total, err := s.List(ctx, ListQuery{})
	if err != nil {
		t.Fatal(err)
	}
	want := 6 // 6 pulled, one deleted by the team, one new
	if del {
		want = 5
	}
	if n := len(iterated); n != want || total != want || len(listed) != want || s.Count() != want {
		t.Errorf("Iterate %d %v, List %d, Count %d; want %d", n, iterated, total, s.Count(), want)
	}
	if slices.Contains(iterated, bad.ID) == del {
		t.Errorf("Iterate %v (the record deleted: %v)", iterated, del)
	}
	if _, ok, err := s.FindByHash(ctx, bad.ContentHash, bad.Project); err != nil || ok {
		t.Errorf("FindByHash of the old text: %v %v", ok, err)
	}
	var buf bytes.Buffer
	if err := s.Export(ctx, &buf); err != nil {
		t.Fatalf("Export: %v", err)
	}
	exportedIDs(t, buf.Bytes(), want)
	if del {
		return
	}
	hits, err := s.TextSearchTerms(ctx, []Term{{Text: "five", Boost: 1}}, 5, Filter{})
	if err != nil || !slices.Equal(ids(hits), []string{bad.ID}) {
		t.Errorf("text search for its new word: %v %v", ids(hits), err)
	}
	if vh, err := s.VectorSearch(ctx, testEmb.vec(next.Text), 1, Filter{}); err != nil || len(vh) != 1 || vh[0].ID != bad.ID {
		t.Errorf("vector search for its text: %v %v", vh, err)
	}
}

// TestApplyTeamKeepsWhatCanBeRead: a pulled put over a local record Open
// found unreadable keeps what can still be read of it. A move out of the
// team waiting in the outbox says the user made it personal here: the
// put's copy stays personal and the move is still pushed. A record whose
// JSON is valid but for a field of the wrong type keeps its scope and
// local fields (the pin). A record whose bytes say nothing, with no move
// waiting, takes the team's copy and scope, and the pull names it
// (TeamApplied.ScopeUnknown) for the sync's log. At 9937c7b every such put
// took the team's scope and dropped the waiting move: a memory made
// personal here became a team memory again.
func TestApplyTeamKeepsWhatCanBeRead(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		personal bool // made personal here before the damage
		pushed   bool // and that move pushed (the outbox acknowledged)
		garble   func(t *testing.T, path string, m memory.Memory)
		// want: the scope after the pull, the pin kept, the move still
		// waiting, named as a scope the pull could not read.
		scope   memory.Scope
		pinned  bool
		leaving bool
		unknown bool
	}{
		{"wrong-type field, personal, pushed", true, true, fieldGarble, memory.ScopePersonal, true, false, false},
		{"wrong-type field, team", false, false, fieldGarble, memory.ScopeTeam, true, false, false},
		{"wrong-type field, personal, waiting", true, false, fieldGarble, memory.ScopePersonal, true, true, false},
		{"bytes not a record, personal, waiting", true, false, bytesGarble, memory.ScopePersonal, false, true, false},
		{"JSON broken, personal, waiting", true, false, textGarble, memory.ScopePersonal, false, true, false},
		{"bytes not a record, personal, pushed", true, true, bytesGarble, memory.ScopeTeam, false, false, true},
		{"JSON broken, team", false, false, textGarble, memory.ScopeTeam, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTeam(t, dir)
			var pulled []memory.Memory
			for i := range 4 {
				pulled = append(pulled, pulledMem(i, fmt.Sprintf("Team worker %d retries a failed upload of part-%d.bin", i, i)))
			}
			if _, err := s.ApplyTeam(ctx, TeamChanges{Put: pulled}); err != nil {
				t.Fatal(err)
			}
			bad := pulled[2]
			if _, err := s.Update(ctx, bad.ID, func(m *memory.Memory) error {
				m.Pinned = true
				if c.personal {
					m.Scope = memory.ScopePersonal
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if c.pushed {
				out, _, err := s.Outbox(ctx, 0)
				if err != nil || !slices.ContainsFunc(out, func(e OutboxEntry) bool { return e.ID == bad.ID && e.Delete }) {
					t.Fatalf("the move out of the team does not wait: %+v %v", out, err)
				}
				if err := s.AckOutbox(ctx, out, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			c.garble(t, filepath.Join(dir, dbFile), bad)
			s = openTeam(t, dir)
			if s.Info().Unreadable != 1 {
				t.Fatalf("Info before the pull: %+v", s.Info())
			}
			next := pulledMem(2, "Team worker 2 now retries a failed upload of part-2.bin five times")
			next.UpdatedAt = t0.Add(time.Hour)
			res, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{next}})
			if err != nil || res.Put != 1 || res.Unreadable != 1 {
				t.Fatalf("ApplyTeam: %+v, %v", res, err)
			}
			if got := slices.Contains(res.ScopeUnknown, bad.ID); got != c.unknown {
				t.Errorf("ScopeUnknown %v, want %s named: %v", res.ScopeUnknown, bad.ID, c.unknown)
			}
			m, err := s.Get(ctx, bad.ID)
			if err != nil || m.Text != next.Text || m.Scope != c.scope || m.Pinned != c.pinned {
				t.Errorf("after the pull: %v, text %q, scope %q (want %q), pinned %v (want %v)", err, m.Text, m.Scope, c.scope, m.Pinned, c.pinned)
			}
			out, _, err := s.Outbox(ctx, 0)
			leaving := slices.ContainsFunc(out, func(e OutboxEntry) bool { return e.ID == bad.ID && e.Delete })
			if err != nil || leaving != c.leaving {
				t.Errorf("the move out of the team waits: %v (want %v): %+v %v", leaving, c.leaving, out, err)
			}
		})
	}
}

func fieldGarble(t *testing.T, path string, m memory.Memory) {
	garbleRecordField(t, path, m.ID, "importance", `"high"`)
}
func bytesGarble(t *testing.T, path string, m memory.Memory) { garbleRecordBytes(t, path, m.ID) }
func textGarble(t *testing.T, path string, m memory.Memory)  { garbleFileText(t, path, m.Text) }
