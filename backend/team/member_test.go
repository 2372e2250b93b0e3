package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestValidRole: role names from the command line are checked before
// they reach the database.
func TestValidRole(t *testing.T) {
	for _, tc := range []struct {
		role string
		ok   bool
	}{
		{"alice", true},
		{"dev-team.bob", true},
		{"Ünïcode", true},
		{strings.Repeat("r", 63), true},
		{"", false},
		{strings.Repeat("r", 64), false},
		{"a\x00b", false},
		{"bad\xffutf8", false},
	} {
		if err := ValidRole(tc.role); (err == nil) != tc.ok {
			t.Errorf("ValidRole(%q) = %v, want ok %v", tc.role, err, tc.ok)
		}
	}
}

// TestMembersAcrossSchemaUpgrade: a team database at schema version 1 (as
// an older memtray left it) stays usable by a member whose role may not
// migrate it: the member's daemon pushes and pulls, and the member list
// says the owner must migrate; once the owner connected (migrating to 2),
// the list works for admins and refuses others. Before, the member's Open
// failed on the migration and its daemon stopped syncing.
func TestMembersAcrossSchemaUpgrade(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	role := fmt.Sprintf("%s_m", tm.owner)
	tm.srv.Role(t, role)
	if err := owner.SetMember(ctx, role, true); err != nil {
		t.Fatal(err)
	}
	// Back to version 1.
	if _, err := tm.raw(t, tm.owner).Exec(ctx, `DROP FUNCTION memtray.list_members();
		COMMENT ON TABLE memtray.memories IS NULL;
		DELETE FROM memtray.schema_version WHERE version >= 2`); err != nil {
		t.Fatal(err)
	}
	m, err := Open(ctx, tm.url(role))
	if err != nil {
		t.Fatalf("a member's open of a version 1 schema: %v", err)
	}
	defer m.Close()
	if res, err := m.Push(ctx, []Memory{mem("v1push", "Pushed by a member on the version 1 schema.")}); err != nil || res[0].Status != PushInserted {
		t.Fatalf("push on version 1: %+v, %v", res, err)
	}
	if _, err := m.Pull(ctx, Cursor{}, PullOptions{}); err != nil {
		t.Fatalf("pull on version 1: %v", err)
	}
	if _, err := m.Members(ctx); !errors.Is(err, ErrNeedsOwner) {
		t.Fatalf("members on version 1: %v, want ErrNeedsOwner", err)
	}
	// The owner connects: version 2 (and on).
	tm.open(t, tm.owner)
	m2 := tm.open(t, role)
	ms, err := m2.Members(ctx)
	if err != nil || len(ms) != 2 {
		t.Fatalf("members as an admin on version 2: %+v, %v", ms, err)
	}
	plain := tm.member(t, owner, role+"p", false)
	if _, err := plain.Members(ctx); !errors.Is(err, ErrNotAdmin) {
		t.Errorf("members as a plain member: %v, want ErrNotAdmin", err)
	}
	if was, err := plain.RemoveMember(ctx, role); !errors.Is(err, ErrNotAdmin) || was {
		t.Errorf("remove as a plain member: %v, %v, want ErrNotAdmin", was, err)
	}
	if err := m2.SetMember(ctx, "nosuchrole_x", false); !errors.Is(err, ErrNoRole) {
		t.Errorf("set a role the server lacks: %v, want ErrNoRole", err)
	}
}
