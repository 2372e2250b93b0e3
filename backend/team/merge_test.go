package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// baseOf is m's shared fields as a push's base.
func baseOf(m Memory) *store.TeamBase {
	b := store.BaseOf(m.Local())
	return &b
}

// withText is m with text (and its hash).
func withText(m Memory, text string) Memory {
	m.Text, m.ContentHash = text, memory.ContentHash(text)
	return m
}

// TestMerge: a push applied onto its base keeps the team's changes since
// the base and takes the fields the push changed; a field both changed
// to different values is a conflict.
func TestMerge(t *testing.T) {
	base := mem("m1", "the cache is flushed hourly")
	teamText := withText(base, "the cache is flushed every ten minutes")
	tests := []struct {
		name     string
		cur, m   Memory
		want     Memory
		conflict bool
	}{
		{"nothing changed", base, base, base, false},
		{"the team's text, the push's importance", teamText, func() Memory { m := base; m.Importance = 0.3; return m }(),
			func() Memory { m := teamText; m.Importance = 0.3; return m }(), false},
		{"the team's text, the push's kind and origin", teamText, func() Memory { m := base; m.Kind, m.KindOrigin = memory.KindDecision, memory.KindGiven; return m }(),
			func() Memory { m := teamText; m.Kind, m.KindOrigin = memory.KindDecision, memory.KindGiven; return m }(), false},
		{"the team's importance, the push's text", func() Memory { m := base; m.Importance = 0.9; return m }(), withText(base, "the cache is never flushed"),
			func() Memory { m := withText(base, "the cache is never flushed"); m.Importance = 0.9; return m }(), false},
		{"the same change both sides", teamText, teamText, teamText, false},
		{"the push's text on the team's text", teamText, withText(base, "the cache is flushed daily"), teamText, true},
		{"the push's type on the team's type", func() Memory { m := base; m.Type = memory.TypeReference; return m }(),
			func() Memory { m := base; m.Type = memory.TypeFeedback; return m }(), Memory{}, true},
		{"the push's importance on the team's", func() Memory { m := base; m.Importance = 0.9; return m }(),
			func() Memory { m := base; m.Importance = 0.1; return m }(), Memory{}, true},
		{"a kind's origin alone on the team's kind", func() Memory { m := base; m.Kind = memory.KindConfig; return m }(),
			func() Memory { m := base; m.KindOrigin = memory.KindGiven; return m }(), Memory{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, conflict := merge(*baseOf(base), tt.cur, tt.m)
			if conflict != tt.conflict {
				t.Fatalf("conflict = %v, want %v", conflict, tt.conflict)
			}
			if !conflict && (!sameVersion(got, tt.want) || got.Text != tt.want.Text || got.ID != tt.cur.ID) {
				t.Fatalf("merged %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPushOntoBase: against the database, a push carrying its base is
// applied onto it: a change of fields the team did not change since is
// merged onto the team's version (PushMerged, the team's newer text kept
// however the clocks order the two), a change of a field the team also
// changed is refused (PushStale) even when newer by UpdatedAt, a push
// that changes nothing the team lacks writes nothing, a delete of a text
// the team changed since is refused (ErrStale), and another member's
// memory stays refused.
func TestPushOntoBase(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	alice := tm.open(t, tm.owner)
	bob := tm.member(t, alice, "bob_base", false)
	v0 := mem("b1", "the deploy needs the VPN")
	if _, err := alice.Push(ctx, []Memory{v0}); err != nil {
		t.Fatal(err)
	}
	// b's edit, pushed first.
	edit := withText(v0, "the deploy needs the VPN and a hardware key")
	edit.UpdatedAt, edit.Base = t0.Add(time.Minute), baseOf(v0)
	push := func(who *Store, m Memory) PushResult {
		t.Helper()
		res, err := who.Push(ctx, []Memory{m})
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	if r := push(alice, edit); r.Status != PushUpdated {
		t.Fatalf("the edit onto the team's version: %+v, want updated", r)
	}
	// a, based on v0, later by the clock: its decay merges, its text
	// edit is refused.
	decay := v0
	decay.Importance, decay.UpdatedAt, decay.Base = 0.3, t0.Add(time.Hour), baseOf(v0)
	tests := []struct {
		name   string
		who    *Store
		m      Memory
		status PushStatus
		text   string
		imp    float64
	}{
		{"a decay based on the older version", alice, decay, PushMerged, edit.Text, 0.3},
		{"the decay again", alice, decay, PushMerged, edit.Text, 0.3},
		{"a text edit based on the older version, newer by the clock", alice,
			func() Memory {
				m := withText(decay, "the deploy needs nothing")
				m.UpdatedAt = t0.Add(2 * time.Hour)
				return m
			}(), PushStale, edit.Text, 0.3},
		{"nothing changed from the older version", alice, func() Memory { m := v0; m.Base = baseOf(v0); m.UpdatedAt = t0.Add(3 * time.Hour); return m }(), PushMerged, edit.Text, 0.3},
		{"another member's change", bob, func() Memory {
			m := edit
			m.Importance, m.Base, m.UpdatedAt = 0.3, baseOf(edit), t0.Add(4*time.Hour)
			m.Kind = memory.KindConfig
			return m
		}(), PushRefused, edit.Text, 0.3},
		{"the owner's text edit on the team's version", alice, func() Memory {
			m := withText(edit, "the deploy needs the VPN, a key and a ticket")
			m.Importance, m.Base, m.UpdatedAt = 0.3, baseOf(func() Memory { x := edit; x.Importance = 0.3; return x }()), t0.Add(-time.Hour)
			return m
		}(), PushUpdated, "the deploy needs the VPN, a key and a ticket", 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := push(tt.who, tt.m); r.Status != tt.status {
				t.Fatalf("push: %+v, want %s", r, tt.status)
			}
			got, err := alice.Get(ctx, "b1")
			if err != nil || got.Text != tt.text || got.Importance != tt.imp {
				t.Fatalf("the team holds %q importance %v (%v), want %q %v", got.Text, got.Importance, err, tt.text, tt.imp)
			}
		})
	}
	if err := alice.DeleteFrom(ctx, "b1", baseOf(v0)); !errors.Is(err, ErrStale) {
		t.Fatalf("a delete based on the older text: %v, want ErrStale", err)
	}
	cur, err := alice.Get(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	stale := cur
	stale.Importance = 0.9 // a change of another field does not stop it
	if err := alice.DeleteFrom(ctx, "b1", baseOf(stale)); err != nil {
		t.Fatalf("a delete based on the team's text: %v", err)
	}
	if _, err := alice.Get(ctx, "b1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the delete: %v", err)
	}
}

// TestSchemaUpgradeToBases: a team database at schema version 2 (as the
// memtray before bases left it) stays usable by a member whose role may
// not migrate it, pushes with a base merging there as on version 3
// (nothing new is stored); the owner's next connection migrates it to 3,
// which a memtray of version 2 refuses (ErrSchemaNewer: it would push
// without bases).
func TestSchemaUpgradeToBases(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	owner := tm.open(t, tm.owner)
	role := fmt.Sprintf("%s_b", tm.owner)
	tm.srv.Role(t, role)
	if err := owner.SetMember(ctx, role, true); err != nil {
		t.Fatal(err)
	}
	version := func() (int, string) {
		t.Helper()
		var v int
		var comment *string
		if err := tm.raw(t, tm.owner).QueryRow(ctx, `SELECT (SELECT max(version) FROM memtray.schema_version),
			obj_description('memtray.memories'::regclass, 'pg_class')`).Scan(&v, &comment); err != nil {
			t.Fatal(err)
		}
		if comment == nil {
			return v, ""
		}
		return v, *comment
	}
	// Back to version 2.
	if _, err := tm.raw(t, tm.owner).Exec(ctx, `COMMENT ON TABLE memtray.memories IS NULL;
		DROP TABLE memtray.conflicts; DROP TRIGGER memories_writer ON memtray.memories;
		DROP FUNCTION memtray.memories_writer();
		ALTER TABLE memtray.memories DROP COLUMN pushed_by, DROP COLUMN pushed_from;
		DELETE FROM memtray.schema_version WHERE version >= 3`); err != nil {
		t.Fatal(err)
	}
	if v, c := version(); v != 2 || c != "" {
		t.Fatalf("set up: version %d, comment %q", v, c)
	}
	m, err := Open(ctx, tm.url(role))
	if err != nil {
		t.Fatalf("a member's open of a version 2 schema: %v", err)
	}
	defer m.Close()
	if v, _ := version(); v != 2 {
		t.Fatalf("a member migrated it to %d", v)
	}
	v0 := mem("u1", "the upgrade keeps the team's edits")
	edit := withText(v0, "the upgrade keeps the team's newer edits")
	edit.UpdatedAt, edit.Base = t0.Add(time.Minute), baseOf(v0)
	decay := v0
	decay.Importance, decay.UpdatedAt, decay.Base = 0.2, t0.Add(time.Hour), baseOf(v0)
	for _, step := range []struct {
		m    Memory
		want PushStatus
	}{{v0, PushInserted}, {edit, PushUpdated}, {decay, PushMerged}} {
		if res, err := m.Push(ctx, []Memory{step.m}); err != nil || res[0].Status != step.want {
			t.Fatalf("push on version 2: %+v, %v, want %s", res, err, step.want)
		}
	}
	if got, err := m.Get(ctx, "u1"); err != nil || got.Text != edit.Text || got.Importance != 0.2 {
		t.Fatalf("on version 2 the team holds %q %v (%v), want the edit with the decay", got.Text, got.Importance, err)
	}
	tm.open(t, tm.owner) // the owner connects: version 3, then 4
	if v, c := version(); v != SchemaVersion || !strings.Contains(c, "base") {
		t.Fatalf("after the owner's connection: version %d, comment %q", v, c)
	}
}
