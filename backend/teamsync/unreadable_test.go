package teamsync

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// garbleText breaks the fields of the record holding text in the records
// file of the (closed) store in dir: a quote where its first byte was, so
// its header decodes and its JSON does not (the store opens, skipping it
// as unreadable).
func garbleText(t *testing.T, dir, text string) {
	t.Helper()
	path := filepath.Join(dir, "memtray.db") // the store's records file
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(text)) {
		t.Fatalf("no record holding %q in %s", text, path)
	}
	if err := os.WriteFile(path, bytes.ReplaceAll(b, []byte(text), append([]byte(`"`), text[1:]...)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPullOverUnreadable: a daemon whose copy of a team memory is
// unreadable (its bytes garbled while it was stopped) pulls the team's
// edit of it and a new memory: the edit replaces the unreadable copy, the
// new memory arrives, the pull reports no error and the store no
// unreadable record. At d916b52 that pull failed as a whole, at every
// retry, and the daemon never received another team change.
func TestPullOverUnreadable(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	ctx := context.Background()

	m1 := a.write(t, "the shop warms its cache at nine every morning", "shop", memory.TypeProject)
	m2 := a.write(t, "the shop rotates its logs weekly", "shop", memory.TypeProject)
	polltest.Eventually(t, "both memories on both daemons", converged(t, map[string]string{m1.ID: m1.Text, m2.ID: m2.Text}, a, b))

	b.close()
	garbleText(t, b.dir, m1.Text)
	b.start(t)
	if n := b.st.Info().Unreadable; n != 1 {
		t.Fatalf("b opened with %d unreadable records, want 1", n)
	}

	next := "the shop warms its cache at eight every morning"
	if _, err := a.st.Update(ctx, m1.ID, func(m *memory.Memory) error {
		m.Text, m.Embedding = next, embedOne(t, next)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m3 := a.write(t, "the shop's invoices are sent on the first", "shop", memory.TypeProject)
	want := map[string]string{m1.ID: next, m2.ID: m2.Text, m3.ID: m3.Text}
	polltest.Eventually(t, "the edit over the unreadable copy and the new memory on b", func() error {
		if err := converged(t, want, a, b)(); err != nil {
			return fmt.Errorf("%w (b's status %+v)", err, b.sy.Status())
		}
		if st := b.sy.Status(); st.LastError != "" {
			return fmt.Errorf("b's last error: %s", st.LastError)
		}
		return nil
	})
	if info := b.st.Info(); info.Unreadable != 0 {
		t.Errorf("b's store after the pull: %+v", info)
	}
	hits, err := b.st.TextSearchTerms(ctx, []store.Term{{Text: "eight", Boost: 1}}, 5, store.Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != m1.ID {
		t.Errorf("b's text search for the edit's word: %v %v", hits, err)
	}
}
