package teamsync

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// failingWords is words failing every call after the first ok ones (a
// remote embedder going away mid-pull).
type failingWords struct {
	words
	ok    int64
	calls *atomic.Int64
	model string
}

func (f failingWords) Model() string { return f.model }

var errEmbedDown = errors.New("embedder down")

func (f failingWords) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if f.calls.Add(1) > f.ok {
		return nil, errEmbedDown
	}
	return f.words.Embed(ctx, texts)
}

// TestPullPipeline: a join pulled in pages, embedded on several workers
// and applied while the next pages are read: every memory arrives once
// with its vector, in serial and pipelined pulls alike; a failure of
// the embedding stage mid-pull stops it with the pages before it applied
// and their cursor stored, and the next pull resumes after them.
func TestPullPipeline(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, _ := newTeamDB(t, srv)
	ctx := context.Background()
	admin := tdb.open(t, tdb.owner)
	const n = 230
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	want := map[string]string{}
	for i := 0; i < n; i += 23 { // ten transactions
		var batch []team.Memory
		for k := i; k < i+23; k++ {
			m := benchMemory(k, at)
			batch = append(batch, m)
			want[m.ID] = m.Text
		}
		if _, err := admin.Push(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	connect := func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, tdb.url(tdb.owner)) }
	open := func(t *testing.T, emb memory.Embedder, serial bool, workers int) (*store.Store, *Syncer) {
		st, err := store.Open(ctx, store.Options{Dir: t.TempDir(), Model: emb.Model(), Dim: dim, Shared: Shared([]string{"*"})})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		// Pages of 40 changes cut at transactions: six pages.
		sy, err := New(Options{Store: st, Embedder: emb, Connect: connect, PullBatch: 40, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sy.Close)
		sy.serial = serial
		return st, sy
	}
	check := func(t *testing.T, st *store.Store) {
		t.Helper()
		got := map[string]string{}
		err := st.Iterate(ctx, store.Filter{IncludeSuperseded: true, IncludeSnoozed: true}, func(m memory.Memory) error {
			got[m.ID] = m.Text
			if len(m.Embedding) != dim || m.Embedding[0] != embedOne(t, m.Text)[0] {
				return fmt.Errorf("%s has the embedding %v", m.ID, m.Embedding[:min(3, len(m.Embedding))])
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("the store holds %d memories, want %d", len(got), len(want))
		}
		for id, text := range want {
			if got[id] != text {
				t.Errorf("%s = %q, want %q", id, got[id], text)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		serial  bool
		workers int
	}{
		{"serial, one worker", true, 1},
		{"pipelined, one worker", false, 1},
		{"pipelined, four workers", false, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, sy := open(t, words{}, tc.serial, tc.workers)
			rep, err := sy.PullNow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Put != n || rep.Changes != n {
				t.Errorf("report %+v, want %d put", rep, n)
			}
			check(t, st)
			// The vectors it embedded are cached for the next daemon.
			page, err := admin.Pull(ctx, team.Cursor{}, team.PullOptions{Limit: n, Model: words{}.Model()})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page.Changes {
				if len(c.Vector) != dim {
					t.Fatalf("%s has no cached vector", c.MemoryID)
				}
			}
		})
	}
	// The vectors of test-words-v1 are cached now: the failing embedder
	// has a model of its own, which nobody cached.
	for _, serial := range []bool{true, false} {
		t.Run(fmt.Sprintf("embedder fails mid-pull, serial=%v", serial), func(t *testing.T) {
			var calls atomic.Int64
			model := fmt.Sprintf("test-words-fail-%v", serial)
			st, sy := open(t, failingWords{ok: 2, calls: &calls, model: model}, serial, 1)
			_, err := sy.PullNow(ctx)
			if !errors.Is(err, errEmbedDown) {
				t.Fatalf("pull with the embedder failing on the third page: %v", err)
			}
			// Pages of two transactions (46 changes): at most the two
			// embedded pages are applied, all of the serial pull's.
			before := st.Count()
			if before%46 != 0 || before > 92 || (serial && before != 92) {
				t.Errorf("the failed pull left %d memories", before)
			}
			if k, err := st.OutboxLen(); err != nil || k != 0 {
				t.Errorf("a pull queued %d pushes (%v)", k, err)
			}
			sy.Close()
			_, sy2 := func() (*store.Store, *Syncer) {
				sy2, err := New(Options{Store: st, Embedder: failingWords{ok: 1 << 30, calls: &calls, model: model}, Connect: connect, PullBatch: 40})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(sy2.Close)
				sy2.serial = serial
				return st, sy2
			}()
			rep, err := sy2.PullNow(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Put != n-before {
				t.Errorf("the resumed pull put %d, want %d", rep.Put, n-before)
			}
			check(t, st)
		})
	}
}
