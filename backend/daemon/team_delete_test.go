package daemon

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
)

// TestTeamDeleteGoesToTrash: a team memory deleted by hand (memories
// Delete: the CLI, the API, MCP, the window) leaves the team through its
// tombstone, as before, and sits in the trash of its owner and of the other
// daemons; its owner's restore brings it back in the team and everywhere.
func TestTeamDeleteGoesToTrash(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 2)
	ctx := context.Background()
	a, _ := serve(t, tdb.teamConfig(t, 0))
	b, _ := serve(t, tdb.teamConfig(t, 1))
	m, err := a.memories.Add(ctx, httpapi.AddRequest{Text: teamText(0, 1), Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	converge(t, tdb, []*Daemon{a, b})
	if err := a.memories.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	inTrash := func(d *Daemon) error {
		tr, err := d.store.TrashGet(ctx, []string{m.ID})
		if err != nil || len(tr) != 1 {
			return fmt.Errorf("trash %v, %v", tr, err)
		}
		if _, err := d.store.Get(ctx, m.ID); !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("still live: %v", err)
		}
		return nil
	}
	if err := inTrash(a); err != nil {
		t.Fatalf("a after its delete: %v", err)
	}
	polltest.Eventually(t, "the delete leaves the team and reaches b's trash", func() error {
		if live, _ := tdb.live(t); live[m.ID] != "" {
			return fmt.Errorf("the team still holds %s", m.ID)
		}
		return inTrash(b)
	})
	if err := a.stewardSvc.Restore(ctx, []string{m.ID}); err != nil {
		t.Fatal(err)
	}
	all := converge(t, tdb, []*Daemon{a, b})
	if all[m.ID] != m.Text {
		t.Fatalf("after the owner's restore the team holds %v", all)
	}
}
