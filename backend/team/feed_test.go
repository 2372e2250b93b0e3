package team

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// puller pulls the feed from its own cursor and counts each change seq it
// is given.
type puller struct {
	s      *Store
	limit  int
	cursor Cursor
	seen   map[int64]int
}

func (p *puller) pull(t *testing.T) int {
	t.Helper()
	n := 0
	for {
		page, err := p.s.Pull(context.Background(), p.cursor, PullOptions{Limit: p.limit})
		if err != nil {
			t.Error(err)
			return n
		}
		for _, c := range page.Changes {
			p.seen[c.Seq]++
		}
		n += len(page.Changes)
		// The cursor survives its text form, as a daemon stores it.
		text, _ := page.Next.MarshalText()
		if err := p.cursor.UnmarshalText(text); err != nil {
			t.Error(err)
			return n
		}
		if !page.More {
			return n
		}
	}
}

// Transactions begin in one order and commit in another, many at once,
// some roll back; pullers poll all along. Every committed change is read
// exactly once by each puller, none of a rolled-back one.
func TestFeedOutOfOrderCommits(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	s := tm.open(t, tm.owner)
	pool, err := pgxpool.New(ctx, tm.url(tm.owner)+"&pool_max_conns=20")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	rounds, writers := 25, 8
	if testing.Short() {
		rounds = 5
	}
	rng := rand.New(rand.NewPCG(1, 2))

	// A background puller polling during the writes, with small pages.
	stop := make(chan struct{})
	bg := &puller{s: s, limit: 3, seen: map[int64]int{}}
	var bgWG sync.WaitGroup
	bgWG.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			bg.pull(t)
		}
	})
	// A puller the test calls between commits: it sees each round's
	// out-of-order state deterministically.
	fg := &puller{s: s, limit: 1000, seen: map[int64]int{}}

	rolledBack := map[string]bool{}
	for r := range rounds {
		type writer struct {
			written chan struct{}
			commit  chan bool // true: commit, false: roll back
			done    chan error
		}
		ws := make([]writer, writers)
		for i := range ws {
			w := writer{written: make(chan struct{}), commit: make(chan bool), done: make(chan error, 1)}
			ws[i] = w
			var batch []Memory
			for k := range 1 + rng.IntN(3) {
				id := fmt.Sprintf("r%dw%dm%d", r, i, k)
				batch = append(batch, mem(id, "fact "+id))
			}
			go func() {
				tx, err := pool.Begin(ctx)
				if err != nil {
					close(w.written)
					w.done <- err
					return
				}
				_, err = (&Store{}).push(ctx, tx, batch)
				close(w.written)
				if err != nil {
					tx.Rollback(ctx)
					w.done <- err
					return
				}
				if <-w.commit {
					w.done <- tx.Commit(ctx)
				} else {
					w.done <- tx.Rollback(ctx)
				}
			}()
			// Begin in order: the next writer starts after this one holds
			// its transaction id.
			<-w.written
		}
		order := rng.Perm(writers)
		if r%2 == 0 {
			// The newest first: a cursor on seq would skip the rest.
			slices.Sort(order)
			slices.Reverse(order)
		}
		for _, i := range order {
			commit := rng.IntN(6) != 0
			if !commit {
				rolledBack[fmt.Sprintf("r%dw%d", r, i)] = true
			}
			ws[i].commit <- commit
			if err := <-ws[i].done; err != nil {
				t.Fatalf("round %d writer %d: %v", r, i, err)
			}
			fg.pull(t)
		}
	}
	close(stop)
	bgWG.Wait()
	bg.pull(t)
	fg.pull(t)

	// What the feed holds, read directly.
	rows, err := pool.Query(ctx, "SELECT seq, memory_id FROM memtray.changes")
	if err != nil {
		t.Fatal(err)
	}
	all := map[int64]string{}
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			t.Fatal(err)
		}
		all[seq] = id
		for rb := range rolledBack {
			if strings.HasPrefix(id, rb+"m") {
				t.Errorf("change %d of rolled-back %s is in the feed", seq, id)
			}
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(all) == 0 {
		t.Fatal("no changes")
	}
	for _, p := range []*puller{bg, fg} {
		for seq := range all {
			if p.seen[seq] != 1 {
				t.Errorf("limit %d puller: change %d (%s) read %d times", p.limit, seq, all[seq], p.seen[seq])
			}
		}
		for seq := range p.seen {
			if _, ok := all[seq]; !ok {
				t.Errorf("limit %d puller: read change %d that the feed does not hold", p.limit, seq)
			}
		}
	}
	t.Logf("%d changes in %d rounds of %d writers, %d rolled back; background puller's cursor %s",
		len(all), rounds, writers, len(rolledBack), bg.cursor)
}

// The failure the cursor exists for: a transaction that began first and
// commits last is read after a later one was.
func TestFeedReadsLateCommit(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	s := tm.open(t, tm.owner)
	pool, err := pgxpool.New(ctx, tm.url(tm.owner))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	early, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Store{}).push(ctx, early, []Memory{mem("early", "began first")}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Push(ctx, []Memory{mem("late", "began second, committed first")}); err != nil {
		t.Fatal(err)
	}
	p := &puller{s: s, limit: 10, seen: map[int64]int{}}
	if n := p.pull(t); n != 1 {
		t.Fatalf("first pull: %d changes, want 1", n)
	}
	if p.cursor.Xmin > 0 && len(p.cursor.Done) == 0 {
		t.Errorf("cursor %s does not hold the transaction read above its xmin", p.cursor)
	}
	if err := early.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	page, err := s.Pull(ctx, p.cursor, PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Changes) != 1 || page.Changes[0].MemoryID != "early" {
		t.Fatalf("after the late commit: %+v, want the early memory", page.Changes)
	}
}

// A page cut at the limit never splits a transaction, and successive
// pages return everything once.
func TestFeedPages(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	s := tm.open(t, tm.owner)
	var big []Memory
	for i := range 30 {
		big = append(big, mem(fmt.Sprintf("big%d", i), fmt.Sprintf("one of thirty %d", i)))
	}
	if _, err := s.Push(ctx, big); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := s.Push(ctx, []Memory{mem(fmt.Sprintf("one%d", i), fmt.Sprintf("alone %d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	var cur Cursor
	seen := map[string]int{}
	pages := 0
	for {
		page, err := s.Pull(ctx, cur, PullOptions{Limit: 4})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		xids := map[uint64]int{}
		for _, c := range page.Changes {
			seen[c.MemoryID]++
			xids[c.Xid]++
		}
		if len(page.Changes) > 0 && page.Changes[0].MemoryID == "big0" && len(page.Changes) != 30 {
			t.Errorf("the 30-memory transaction came in a page of %d", len(page.Changes))
		}
		cur = page.Next
		if !page.More {
			break
		}
		if pages > 100 {
			t.Fatal("the pages do not end")
		}
	}
	if b, err := s.Backlog(ctx, cur); err != nil || b.Changes != 0 || !b.Oldest.IsZero() {
		t.Errorf("backlog at the end: %+v, %v", b, err)
	}
	if b, err := s.Backlog(ctx, Cursor{}); err != nil || b.Changes != 40 || b.Oldest.IsZero() {
		t.Errorf("backlog from the start: %+v, %v", b, err)
	}
	if len(seen) != 40 {
		t.Errorf("%d memories seen, want 40", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", id, n)
		}
	}
}

func TestWatch(t *testing.T) {
	tm := newTeam(t)
	ctx, cancel := context.WithCancel(context.Background())
	s := tm.open(t, tm.owner)
	wake := s.Watch(ctx)
	<-wake // connected
	if _, err := s.Push(ctx, []Memory{mem("w1", "wake the watchers")}); err != nil {
		t.Fatal(err)
	}
	<-wake // the commit's notification
	// Restart of the server is part 2's fault test; here the channel closes
	// with ctx.
	cancel()
	for range wake {
	}
}
