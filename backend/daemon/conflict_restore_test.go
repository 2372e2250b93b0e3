package daemon

import (
	"context"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestRestoreConflictCopyAnnounced: restoring a conflict copy (the trash
// in the UI, memtray trash restore) edits the memory it is a copy of, and
// the UI is told so: an "updated" event naming that memory, which the
// open detail and the lists reload by; no event names the copy's id,
// which no memory has. A plain restore still announces "restored" with
// its own id.
func TestRestoreConflictCopyAnnounced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, _ := serve(t, testConfig(t))
	m, err := d.memories.Add(ctx, httpapi.AddRequest{Text: "the nightly export is gzipped and signed", Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := d.memories.Add(ctx, httpapi.AddRequest{Text: "the release train leaves on Thursdays", Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	// The team's version replaces this machine's, which is kept as a
	// conflict copy (as teamsync's takeStale asks).
	theirs, err := d.store.Get(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	theirs.Text, theirs.ContentHash = "the nightly export is zstd-compressed", memory.ContentHash("the nightly export is zstd-compressed")
	ms := []memory.Memory{theirs}
	if err := store.EmbedInto(ctx, d.emb, ms); err != nil {
		t.Fatal(err)
	}
	c := store.TeamConflict{ID: m.ID, CopyID: d.store.NewID(), Reason: "conflict copy"}
	if _, err := d.store.ApplyTeam(ctx, store.TeamChanges{Put: ms, Conflicts: []store.TeamConflict{c}}); err != nil {
		t.Fatal(err)
	}
	if err := d.store.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: plain.ID, Reason: "by hand"}}}); err != nil {
		t.Fatal(err)
	}
	sub := d.bus.Subscribe(256)
	defer sub.Close()
	if err := d.stewardSvc.Restore(ctx, []string{c.CopyID, plain.ID}); err != nil {
		t.Fatal(err)
	}
	if got, err := d.store.Get(ctx, m.ID); err != nil || got.Text != m.Text {
		t.Fatalf("after the restore the memory holds %q (%v), want the copy's text", got.Text, err)
	}
	// Published by the restore before it returned.
	got := map[string][]string{}
	for drained := false; !drained; {
		select {
		case e := <-sub.C():
			if me, ok := e.Data.(httpapi.MemoryEvent); ok && e.Type == httpapi.EventMemory {
				got[me.Op] = append(got[me.Op], me.IDs...)
			}
		default:
			drained = true
		}
	}
	if !slices.Contains(got[httpapi.MemoryUpdated], m.ID) {
		t.Errorf("memory events %v: want %s (the memory the copy edits) updated", got, m.ID)
	}
	if !slices.Equal(got[httpapi.MemoryRestored], []string{plain.ID}) {
		t.Errorf("memory events %v: want %s restored, alone", got, plain.ID)
	}
	for op, ids := range got {
		if slices.Contains(ids, c.CopyID) {
			t.Errorf("a %q event names the copy %s, which no memory has: %v", op, c.CopyID, got)
		}
	}
}
