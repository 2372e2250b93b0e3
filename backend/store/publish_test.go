package store

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// publishWrite is one write path of the store, writing record i of a
// publish test: a text of its own (publishText) that a record of id holds
// once the write returns.
type publishWrite struct {
	name string
	// setup writes what the write needs (before the readers look).
	setup func(t *testing.T, s *Store, i int) (id string)
	write func(s *Store, id string, i int) error
}

// publishText is record i's text: one word no other record holds.
func publishText(i int) string {
	return fmt.Sprintf("The zqv%dx service restarts its queue on failure", i)
}

// publishWrites are the store's write paths that make a text readable:
// Put, InsertBatch, Supersede, Update, Apply (a put and a restore) and
// ApplyTeam (a new team memory and a changed one).
var publishWrites = []publishWrite{
	{"put", nil, func(s *Store, id string, i int) error {
		m := mem(publishText(i))
		m.ID = id
		_, err := s.Put(context.Background(), m)
		return err
	}},
	{"insert batch", nil, func(s *Store, id string, i int) error {
		m, o := mem(publishText(i)), mem(fmt.Sprintf("a companion record number %d", i))
		m.ID = id
		_, err := s.InsertBatch(context.Background(), []Insert{{Memory: o}, {Memory: m, Unique: true}})
		return err
	}},
	{"supersede", func(t *testing.T, s *Store, i int) string {
		mustPut(t, s, memory.Memory{ID: fmt.Sprintf("old%d", i), Text: fmt.Sprintf("an older version number %d", i), Embedding: testEmb.vec(fmt.Sprintf("an older version number %d", i))})
		return fmt.Sprintf("w%d", i)
	}, func(s *Store, id string, i int) error {
		m := mem(publishText(i))
		m.ID = id
		_, err := s.Supersede(context.Background(), fmt.Sprintf("old%d", i), m)
		return err
	}},
	{"update", func(t *testing.T, s *Store, i int) string {
		return mustPut(t, s, mem(fmt.Sprintf("a record to edit number %d", i))).ID
	}, func(s *Store, id string, i int) error {
		_, err := s.Update(context.Background(), id, func(m *memory.Memory) error {
			m.Text, m.Embedding = publishText(i), testEmb.vec(publishText(i))
			return nil
		})
		return err
	}},
	{"apply put", func(t *testing.T, s *Store, i int) string {
		return mustPut(t, s, mem(fmt.Sprintf("a record to replace number %d", i))).ID
	}, func(s *Store, id string, i int) error {
		m, err := s.Get(context.Background(), id)
		if err != nil {
			return err
		}
		m.Text, m.Embedding = publishText(i), testEmb.vec(publishText(i))
		return s.Apply(context.Background(), Batch{Put: []memory.Memory{m}})
	}},
	{"apply restore", func(t *testing.T, s *Store, i int) string {
		m := mustPut(t, s, mem(publishText(i)))
		if err := s.Apply(context.Background(), Batch{Trash: []TrashRequest{{ID: m.ID, Reason: "test"}}}); err != nil {
			t.Fatal(err)
		}
		return m.ID
	}, func(s *Store, id string, i int) error {
		return s.Apply(context.Background(), Batch{Restore: []string{id}})
	}},
	{"apply team", nil, func(s *Store, id string, i int) error {
		m := teamMem(publishText(i))
		m.ID, m.CreatedAt, m.UpdatedAt, m.Scope = id, t0, t0, memory.ScopeTeam
		_, err := s.ApplyTeam(context.Background(), TeamChanges{Put: []memory.Memory{m}})
		return err
	}},
	{"apply team update", func(t *testing.T, s *Store, i int) string {
		m := teamMem(fmt.Sprintf("a team record to change number %d", i))
		m.ID, m.CreatedAt, m.UpdatedAt, m.Scope = fmt.Sprintf("tu%d", i), t0, t0, memory.ScopeTeam
		if _, err := s.ApplyTeam(context.Background(), TeamChanges{Put: []memory.Memory{m}}); err != nil {
			t.Fatal(err)
		}
		return m.ID
	}, func(s *Store, id string, i int) error {
		m := teamMem(publishText(i))
		m.ID, m.CreatedAt, m.UpdatedAt, m.Scope = id, t0, t0.Add(time.Hour), memory.ScopeTeam
		_, err := s.ApplyTeam(context.Background(), TeamChanges{Put: []memory.Memory{m}})
		return err
	}},
}

// publishReader is one way to read a record: it reports whether it
// returned record id holding text.
type publishReader struct {
	name string
	read func(s *Store, id, text string) (bool, error)
}

var publishReaders = []publishReader{
	{"Get", func(s *Store, id, text string) (bool, error) {
		m, err := s.Get(context.Background(), id)
		return err == nil && m.Text == text, nil
	}},
	{"GetMany", func(s *Store, id, text string) (bool, error) {
		ms, err := s.GetMany(context.Background(), []string{id})
		return ms[id].Text == text, err
	}},
	{"Iterate", func(s *Store, id, text string) (bool, error) {
		found := false
		err := s.Iterate(context.Background(), Filter{}, func(m memory.Memory) error {
			found = found || (m.ID == id && m.Text == text)
			return nil
		})
		return found, err
	}},
	{"FindByHash", func(s *Store, id, text string) (bool, error) {
		ctx := context.Background()
		h := memory.ContentHash(text)
		m, ok, err := s.FindByHash(ctx, h, "")
		if !ok {
			m, ok, err = s.FindByHash(ctx, h, "team")
		}
		return ok && m.ID == id, err
	}},
	{"Export", func(s *Store, id, text string) (bool, error) {
		var b bytes.Buffer
		err := s.Export(context.Background(), &b)
		return bytes.Contains(b.Bytes(), []byte(`"id":"`+id+`","text":"`+text+`"`)), err
	}},
	{"List", func(s *Store, id, text string) (bool, error) {
		got, _, err := s.List(context.Background(), ListQuery{Text: text})
		return slices.Contains(got, id), err
	}},
}

// legsMiss says what of the two search legs misses record id holding
// text ("" when both find it): its one word in the text index, its vector
// in the vector index.
func legsMiss(s *Store, id, text string) string {
	ctx := context.Background()
	var miss string
	terms := s.Analyze(text)
	word := terms[slices.IndexFunc(terms, func(t string) bool { return len(t) > 3 && t[:3] == "zqv" })]
	hits, err := s.TextSearchTerms(ctx, []Term{{Text: word, Boost: 1}}, 5, Filter{})
	if err != nil || !slices.Contains(ids(hits), id) {
		miss += fmt.Sprintf(" the text leg for %q found %v (%v);", word, ids(hits), err)
	}
	vh, err := s.VectorSearch(ctx, testEmb.vec(text), 3, Filter{})
	if err != nil || !slices.Contains(ids(vh), id) {
		miss += fmt.Sprintf(" the vector leg found %v (%v);", ids(vh), err)
	}
	return miss
}

// TestReadableIsSearchable: while each write path writes a record, every
// way to read records polls for it; the moment one returns it, both
// search legs must find it. Before the store published its writes in
// order (publish.go), Get, GetMany, Iterate and FindByHash returned a
// record from its commit on, before its vector and its words were
// indexed, and List from the moment its entry was published, before its
// words were.
func TestReadableIsSearchable(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	const rounds = 6
	for _, w := range publishWrites {
		t.Run(w.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			for i := range 10 {
				mustPut(t, s, mem(fmt.Sprintf("filler record number %d about the shop", i)))
			}
			for i := range rounds {
				id := fmt.Sprintf("w%d", i)
				if w.setup != nil {
					id = w.setup(t, s, i)
				}
				text := publishText(i)
				var wg sync.WaitGroup
				var mu sync.Mutex
				var problems []string
				start := make(chan struct{})
				for _, r := range publishReaders {
					ready := make(chan struct{})
					wg.Go(func() {
						close(ready)
						<-start
						for {
							ok, err := r.read(s, id, text)
							if err != nil {
								mu.Lock()
								problems = append(problems, fmt.Sprintf("%s: %v", r.name, err))
								mu.Unlock()
								return
							}
							if ok {
								if miss := legsMiss(s, id, text); miss != "" {
									mu.Lock()
									problems = append(problems, fmt.Sprintf("%s returned %s, but%s", r.name, id, miss))
									mu.Unlock()
								}
								return
							}
							runtime.Gosched()
						}
					})
					<-ready
				}
				close(start)
				if err := w.write(s, id, i); err != nil {
					t.Fatalf("write %d: %v", i, err)
				}
				wg.Wait()
				for _, p := range problems {
					t.Errorf("round %d: %s", i, p)
				}
			}
		})
	}
}

// TestReadWaitsForPublication pauses a team pull between its commit and
// everything after it (Store.afterCommit): the pulled record is in bbolt,
// its words and its vector in no index yet. A read of records started
// then must not return the record before it is published (at d916b52
// each returned it at once, and both search legs missed it: the miss
// TestTeamThreeDaemons saw right after three daemons converged).
func TestReadWaitsForPublication(t *testing.T) {
	for _, r := range publishReaders {
		t.Run(r.name, func(t *testing.T) {
			s := openTest(t, t.TempDir())
			mustPut(t, s, mem("a filler record about the shop"))
			const id = "pulled"
			text := publishText(7)
			applyTeam := publishWrites[slices.IndexFunc(publishWrites, func(w publishWrite) bool { return w.name == "apply team" })]
			readAcrossPublication(t, s, r.name+" returned the record",
				func() error { return applyTeam.write(s, id, 7) },
				func() (bool, error) { return r.read(s, id, text) },
				func() string { return legsMiss(s, id, text) })
		})
	}
}

// TestSideReadsWaitForPublication: the reads of what a write put beside
// its record — the team outbox (its put, with the record) and the trash
// (the record moved there) — started while the write is paused between
// its commit and its publication, do not return what it wrote before it is
// published. At 9937c7b both read bbolt without waiting: the outbox gave
// the push a record no search found yet, and the trash listed a memory
// that List and both search legs still held as live.
func TestSideReadsWaitForPublication(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// setup writes what write needs and returns the id to look for.
		setup func(t *testing.T, s *Store) string
		write func(s *Store, id string) error
		// seen says whether the read returned the write's effect on id.
		seen func(s *Store, id string) (bool, error)
		// after checks the published state once seen returned true.
		after func(s *Store, id string) string
	}{
		{"outbox", func(t *testing.T, s *Store) string { return "pushed" },
			func(s *Store, id string) error {
				m := teamMem(publishText(3))
				m.ID = id
				_, err := s.Put(ctx, m)
				return err
			},
			func(s *Store, id string) (bool, error) {
				out, _, err := s.Outbox(ctx, 0)
				return slices.ContainsFunc(out, func(e OutboxEntry) bool { return e.ID == id && !e.Delete }), err
			},
			func(s *Store, id string) string { return legsMiss(s, id, publishText(3)) }},
		{"trash", func(t *testing.T, s *Store) string {
			m := mem(publishText(4))
			m.ID = "binned"
			return mustPut(t, s, m).ID
		},
			func(s *Store, id string) error {
				return s.Apply(ctx, Batch{Trash: []TrashRequest{{ID: id, Reason: "test"}}})
			},
			func(s *Store, id string) (bool, error) {
				tr, err := s.Trash(ctx)
				return slices.ContainsFunc(tr, func(m TrashedMemory) bool { return m.Memory.ID == id }), err
			},
			func(s *Store, id string) string {
				got, _, err := s.List(ctx, ListQuery{})
				if err != nil || slices.Contains(got, id) {
					return fmt.Sprintf(" List still holds it (%v)", err)
				}
				return ""
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTeam(t, t.TempDir())
			mustPut(t, s, mem("a filler record about the shop"))
			id := c.setup(t, s)
			readAcrossPublication(t, s, "the "+c.name+" read returned the write",
				func() error { return c.write(s, id) },
				func() (bool, error) { return c.seen(s, id) },
				func() string { return c.after(s, id) })
		})
	}
}

// readAcrossPublication runs write with s paused between its commit and
// its publication (Store.afterCommit) and meanwhile polls seen until it
// returns the write's effect: returning it while the write is paused
// fails the test; once the write is released and done, after says what
// the published state misses ("" for nothing). what names the read and
// what it returned, for the messages.
func readAcrossPublication(t *testing.T, s *Store, what string, write func() error, seen func() (bool, error), after func() string) {
	t.Helper()
	paused, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.afterCommit = func() { once.Do(func() { close(paused); <-release }) }
	wrote := make(chan error, 1)
	go func() { wrote <- write() }()
	<-paused
	read := make(chan string, 1)
	go func() {
		for {
			ok, err := seen()
			switch {
			case err != nil:
				read <- err.Error()
			case ok:
				read <- after()
			default:
				// A read of the entries (List) does not hold the write
				// until it is published.
				runtime.Gosched()
				continue
			}
			return
		}
	}()
	// A read that returns the write while it is paused does so at once;
	// give it the time to, then let the write go.
	select {
	case miss := <-read:
		close(release)
		t.Fatalf("%s before it was published:%s", what, miss)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if miss := <-read; miss != "" {
		t.Errorf("%s, but%s", what, miss)
	}
}
