package team

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// inProject is mem of project p ("" no project).
func inProject(id, text, p string) Memory {
	m := mem(id, text)
	m.Project = p
	if p == "" {
		m.Type = memory.TypeUser
	}
	return m
}

// pushOne pushes m as s and returns its result.
func pushOne(t *testing.T, s *Store, m Memory) PushResult {
	t.Helper()
	res, err := s.Push(context.Background(), []Memory{m})
	if err != nil {
		t.Fatalf("push %s: %v", m.ID, err)
	}
	return res[0]
}

// countText is how many live team memories hold text.
func countText(t *testing.T, tm team, text string) int {
	t.Helper()
	var n int
	if err := tm.raw(t, tm.owner).QueryRow(context.Background(),
		"SELECT count(*) FROM memtray.memories WHERE content_hash = $1", memory.ContentHash(text)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestExactDedupPerProject: the team's exact-text dedup is per project
// (schema 7), as the local store's: a text two projects say is a memory
// of each, by a new push, an edit onto it, a move to another project and
// a restore; within a project, no project ("") included, it is one.
func TestExactDedupPerProject(t *testing.T) {
	tm := newTeam(t)
	alice := tm.open(t, tm.owner)
	bob := tm.member(t, alice, fmt.Sprintf("%s_bob", tm.owner), false)
	const text = "The release job signs the artefacts."
	if r := pushOne(t, alice, inProject("a1", text, "api")); r.Status != PushInserted {
		t.Fatalf("first push: %+v", r)
	}
	later := func(m Memory, base Memory) Memory {
		m.UpdatedAt, m.Base = t0.Add(time.Hour), baseOf(base)
		return m
	}
	tests := []struct {
		name   string
		who    *Store
		setup  []Memory // pushed first, as alice
		m      Memory
		status PushStatus
		winner string
	}{
		{"another project, another member", bob, nil, inProject("b1", text, "web"), PushInserted, ""},
		{"another project, the same member", alice, nil, inProject("a2", text, "cli"), PushInserted, ""},
		{"the same project, another member", bob, nil, inProject("b2", text, "api"), PushDuplicate, "a1"},
		{"the same project, the same member", alice, nil, inProject("a3", text, "web"), PushDuplicate, "b1"},
		{"no project beside a project's", alice, nil, inProject("n1", text, ""), PushInserted, ""},
		{"no project twice", bob, nil, inProject("n2", text, ""), PushDuplicate, "n1"},
		{"an edit onto another project's text", alice, []Memory{inProject("e1", "The release job runs at noon.", "docs")},
			later(inProject("e1", text, "docs"), inProject("e1", "The release job runs at noon.", "docs")), PushUpdated, ""},
		{"an edit onto its project's text", alice, []Memory{inProject("e2", "The release job runs at one.", "api")},
			later(inProject("e2", text, "api"), inProject("e2", "The release job runs at one.", "api")), PushDuplicate, "a1"},
		{"a move to a project holding the text", alice, []Memory{inProject("m1", text, "ops")},
			later(inProject("m1", text, "api"), inProject("m1", text, "ops")), PushDuplicate, "a1"},
		{"a move to a project without it", alice, []Memory{inProject("m2", text, "infra")},
			later(inProject("m2", text, "data"), inProject("m2", text, "infra")), PushUpdated, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, m := range tt.setup {
				if r := pushOne(t, alice, m); r.Status != PushInserted {
					t.Fatalf("set up %s: %+v", m.ID, r)
				}
			}
			if r := pushOne(t, tt.who, tt.m); r.Status != tt.status || r.Winner != tt.winner {
				t.Errorf("push: %+v, want %s winner %q", r, tt.status, tt.winner)
			}
		})
	}
	// api, web, cli, "", docs, ops (m1, whose move was refused), data:
	// one memory of the text each.
	if n := countText(t, tm, text); n != 7 {
		t.Errorf("the team holds the text %d times, want 7 (api, web, cli, no project, docs, ops, data)", n)
	}
	// A restore comes back beside another project's copy, and is a
	// duplicate of its own project's.
	ctx := context.Background()
	if err := alice.Delete(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	if r, err := alice.Restore(ctx, "a2"); err != nil || r.Status != PushInserted {
		t.Errorf("restore of cli's copy beside the others: %+v, %v", r, err)
	}
	if err := alice.Delete(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	if r := pushOne(t, bob, inProject("b3", text, "api")); r.Status != PushInserted {
		t.Fatalf("api's text again, a1 deleted: %+v", r)
	}
	if r, err := alice.Restore(ctx, "a1"); err != nil || r.Status != PushDuplicate || r.Winner != "b3" {
		t.Errorf("restore of a1 with b3 holding api's text: %+v, %v; want a duplicate of b3", r, err)
	}
}

// TestMigrateToPerProject: a database at 6 holding memories migrates to
// 7 keeping them all; before, a text another project holds is a
// duplicate of it (the store-wide index), for this memtray too while a
// member could not migrate (no retry without end); after, it is a memory
// of its own.
func TestMigrateToPerProject(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	old, err := openAs(ctx, tm.url(tm.owner), 6)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	bobRole := fmt.Sprintf("%s_bob", tm.owner)
	tm.srv.Role(t, bobRole)
	if err := old.SetMember(ctx, bobRole, false); err != nil {
		t.Fatal(err)
	}
	const text = "Deploys need the VPN."
	for _, m := range []Memory{inProject("a1", text, "api"), inProject("a2", "Tests run in CI.", "api"), inProject("n1", "I like short answers.", "")} {
		if r := pushOne(t, old, m); r.Status != PushInserted {
			t.Fatalf("push at 6: %+v", r)
		}
	}
	// This memtray as a member on a database at 6 (a member cannot
	// migrate it): the lookup is store-wide, as the index.
	bob := tm.open(t, bobRole)
	if db, used := bob.Schema(); db != 6 || used != 6 {
		t.Fatalf("a member on a database at 6: Schema() = %d, %d", db, used)
	}
	if r := pushOne(t, bob, inProject("b1", text, "web")); r.Status != PushDuplicate || r.Winner != "a1" {
		t.Fatalf("another project's text at 6: %+v, want a duplicate of a1", r)
	}
	owner := tm.open(t, tm.owner)
	if db, used := owner.Schema(); db != SchemaVersion || used != SchemaVersion {
		t.Fatalf("after the owner's migration: Schema() = %d, %d", db, used)
	}
	for id, want := range map[string]string{"a1": text, "a2": "Tests run in CI.", "n1": "I like short answers."} {
		if got, err := owner.Get(ctx, id); err != nil || got.Text != want {
			t.Errorf("%s after the migration: %q, %v", id, got.Text, err)
		}
	}
	var indexes []string
	rows, err := tm.raw(t, tm.owner).Query(ctx, "SELECT indexname::text FROM pg_indexes WHERE schemaname = 'memtray' AND tablename = 'memories' AND indexname LIKE 'memories_content%' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		indexes = append(indexes, s)
	}
	if len(indexes) != 1 || indexes[0] != "memories_content_hash_project" {
		t.Fatalf("indexes after the migration: %v", indexes)
	}
	bob = tm.open(t, bobRole)
	if r := pushOne(t, bob, inProject("b1", text, "web")); r.Status != PushInserted {
		t.Errorf("another project's text at 7: %+v, want inserted", r)
	}
	if r := pushOne(t, bob, inProject("b2", text, "api")); r.Status != PushDuplicate || r.Winner != "a1" {
		t.Errorf("the same project's text at 7: %+v, want a duplicate of a1", r)
	}
}

// TestOlderMemberOnPerProject: a memtray of 6 on a database at 7 (floor
// 3) syncs; the index, not its lookups, decides what is stored, so it
// never writes a text twice in a project: a push of another project's
// text is inserted, one of its project's is a duplicate (of either
// holder: its store-wide lookup, the relink it did at 6).
func TestOlderMemberOnPerProject(t *testing.T) {
	tm := newTeam(t)
	owner := tm.open(t, tm.owner)
	role := fmt.Sprintf("%s_old", tm.owner)
	tm.member(t, owner, role, false)
	old, err := openAs(context.Background(), tm.url(role), 6)
	if err != nil {
		t.Fatalf("a memtray of 6 on a database at 7: %v", err)
	}
	defer old.Close()
	const text = "Backups run nightly."
	if r := pushOne(t, owner, inProject("a1", text, "api")); r.Status != PushInserted {
		t.Fatal(r)
	}
	if r := pushOne(t, old, inProject("o1", text, "web")); r.Status != PushInserted {
		t.Errorf("another project's text from 6: %+v, want inserted", r)
	}
	r := pushOne(t, old, inProject("o2", text, "web"))
	if r.Status != PushDuplicate || (r.Winner != "a1" && r.Winner != "o1") {
		t.Errorf("its project's text from 6: %+v, want a duplicate", r)
	}
	if n := countText(t, tm, text); n != 2 {
		t.Errorf("the team holds the text %d times, want 2", n)
	}
}
