package store

import (
	"context"
	"errors"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	bolt "go.etcd.io/bbolt"
)

// TestMine: a conflict copy's restore applies onto the live memory the
// fields the copy changed from its base, and keeps the live memory's
// others (the team's changes); with no base known, every shared field of
// the copy.
func TestMine(t *testing.T) {
	base := memory.Memory{Text: "the cron runs at two", Kind: memory.KindFact, Type: memory.TypeProject, Importance: 0.5}
	live := base
	live.Text, live.Kind = "the cron runs at four", memory.KindDecision // the team's edit
	cp := base
	cp.Text, cp.Importance = "the cron runs at three", 0.9 // this machine's
	b := BaseOf(base)
	tests := []struct {
		name string
		base *TeamBase
		want memory.Memory
	}{
		{"the copy's changes onto the team's", &b, memory.Memory{Text: cp.Text, Kind: memory.KindDecision, Type: memory.TypeProject, Importance: 0.9}},
		{"no base", nil, memory.Memory{Text: cp.Text, Kind: memory.KindFact, Type: memory.TypeProject, Importance: 0.9}},
		{"an unknown base", &UnknownBase, memory.Memory{Text: cp.Text, Kind: memory.KindFact, Type: memory.TypeProject, Importance: 0.9}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mine(live, cp, tc.base)
			if got.Text != tc.want.Text || got.Kind != tc.want.Kind || got.Type != tc.want.Type || got.Importance != tc.want.Importance {
				t.Fatalf("mine = %q %s %s %v, want %q %s %s %v", got.Text, got.Kind, got.Type, got.Importance,
					tc.want.Text, tc.want.Kind, tc.want.Type, tc.want.Importance)
			}
			if got.ContentHash != memory.ContentHash(got.Text) {
				t.Fatal("the content hash is not the text's")
			}
		})
	}
}

// TestConflictCopy: ApplyTeam's put of the team's version, named in
// Conflicts, keeps the local version it replaces as a conflict copy in
// the trash (not when the two agree, nor twice); the trash lists it with
// its mark; its restore edits the live memory (queued for the push) and
// takes it out of the trash; a purge forgets its mark.
func TestConflictCopy(t *testing.T) {
	ctx := context.Background()
	s := openTeam(t, t.TempDir())
	m := mustPut(t, s, teamMem("the nightly export is gzipped"))
	team := m
	team.Text, team.Embedding = "the nightly export is zstd-compressed", testEmb.vec("the nightly export is zstd-compressed")
	// The team's version is the base: as a pull of it; the local edit
	// the team refused.
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{m}}); err != nil {
		t.Fatal(err)
	}
	const mineText = "the nightly export is gzipped and signed"
	if _, err := s.Update(ctx, m.ID, func(x *memory.Memory) error {
		x.Text, x.Embedding = mineText, testEmb.vec(mineText)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	es, _, err := s.Outbox(ctx, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("outbox %v (%v)", es, err)
	}
	if err := s.AckOutbox(ctx, es, nil); err != nil { // refused: acknowledged, not accepted
		t.Fatal(err)
	}
	c := TeamConflict{ID: m.ID, CopyID: s.NewID(), Reason: "conflict copy"}
	for range 2 { // a take repeated after a stop keeps one copy
		if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{team}, Conflicts: []TeamConflict{c}}); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := s.Trash(ctx)
	if err != nil || len(tr) != 1 || tr[0].Memory.ID != c.CopyID || tr[0].Memory.Text != mineText ||
		tr[0].Conflict == nil || tr[0].Conflict.Of != m.ID || tr[0].Conflict.Theirs != team.Text {
		t.Fatalf("trash %+v (%v), want the conflict copy", tr, err)
	}
	if got, _ := s.Get(ctx, m.ID); got.Text != team.Text {
		t.Fatalf("live %q, want the team's", got.Text)
	}
	if _, err := s.Get(ctx, c.CopyID); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("the copy is live (%v)", err)
	}
	if err := s.Restore(ctx, c.CopyID); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, m.ID)
	if err != nil || got.Text != mineText {
		t.Fatalf("live %q (%v) after the restore, want the copy's edit", got.Text, err)
	}
	if tr, _ := s.Trash(ctx); len(tr) != 0 {
		t.Fatalf("trash %+v after the restore", tr)
	}
	es, _, _ = s.Outbox(ctx, 0)
	if len(es) != 1 || es[0].ID != m.ID || es[0].Base == nil || es[0].Base.ContentHash != memory.ContentHash(team.Text) {
		t.Fatalf("outbox %+v, want the edit based on the team's version", es)
	}
	if err := s.AckOutbox(ctx, es, nil); err != nil {
		t.Fatal(err)
	}
	// The same text from the team: no copy. Another: a copy, purged.
	c2 := TeamConflict{ID: m.ID, CopyID: s.NewID(), Reason: "conflict copy"}
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{got}, Conflicts: []TeamConflict{c2}}); err != nil {
		t.Fatal(err)
	}
	if tr, _ := s.Trash(ctx); len(tr) != 0 {
		t.Fatalf("trash %+v, want no copy of an equal version", tr)
	}
	if _, err := s.ApplyTeam(ctx, TeamChanges{Put: []memory.Memory{team}, Conflicts: []TeamConflict{c2}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PurgeTrashed(ctx, c2.CopyID); err != nil || n != 1 {
		t.Fatalf("purge %d (%v)", n, err)
	}
	if err := s.view(func(tx *bolt.Tx) error {
		if trashConflict(tx, []byte(c2.CopyID)) != nil {
			t.Error("the purged copy's mark stays")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
