package teamsync

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// words is a small deterministic bag-of-words embedder.
type words struct{}

const dim = 32

func (words) Model() string { return "test-words-v1" }
func (words) Dim() int      { return dim }
func (words) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%dim]++
		}
		var sq float64
		for _, f := range v {
			sq += float64(f * f)
		}
		if sq == 0 {
			v[0], sq = 1, 1
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(sq))
		}
		out[i] = v
	}
	return out, nil
}

func embedOne(t testing.TB, text string) []float32 {
	v, _ := words{}.Embed(context.Background(), []string{text})
	return v[0]
}

// teamDB is a fresh team database on srv with its owner role.
type teamDB struct {
	srv   *pgtest.Server
	db    string
	owner string
}

var roleSeq struct {
	sync.Mutex
	n int
}

func uniq(prefix string) string {
	roleSeq.Lock()
	defer roleSeq.Unlock()
	roleSeq.n++
	return fmt.Sprintf("%s%d_%d", prefix, os.Getpid(), roleSeq.n)
}

// newTeamDB creates a database owned by a fresh role, migrates it and
// adds members (roles named after them).
func newTeamDB(t *testing.T, srv *pgtest.Server, members ...string) (teamDB, map[string]string) {
	t.Helper()
	owner := uniq("owner")
	tdb := teamDB{srv: srv, db: srv.NewDB(t, owner), owner: owner}
	admin := tdb.open(t, owner)
	roles := map[string]string{}
	for _, m := range members {
		r := uniq(m)
		srv.Role(t, r)
		if err := admin.SetMember(context.Background(), r, false); err != nil {
			t.Fatal(err)
		}
		roles[m] = r
	}
	return tdb, roles
}

func (tdb teamDB) url(role string) string { return tdb.srv.ConnString(role, tdb.db) }

func (tdb teamDB) open(t testing.TB, role string) *team.Store {
	t.Helper()
	s, err := team.Open(context.Background(), tdb.url(role))
	if err != nil {
		t.Fatalf("open team as %s: %v", role, err)
	}
	t.Cleanup(s.Close)
	return s
}

// node is one daemon's local side: a store on disk and its syncer.
type node struct {
	name  string
	dir   string
	st    *store.Store
	sy    *Syncer
	stop  context.CancelFunc
	done  chan struct{}
	url   string
	share []string
	// clock, when set, is the daemon's clock (its store's and its
	// syncer's): one off by minutes, as a machine's may be.
	clock memory.Clock
	// applied are the ids Options.Applied was told of, by op.
	mu      sync.Mutex
	applied map[string]string
}

func startNode(t *testing.T, name, dir, url string, projects []string) *node {
	t.Helper()
	n := &node{name: name, dir: dir, url: url, share: projects}
	n.start(t)
	t.Cleanup(n.close)
	return n
}

func (n *node) start(t *testing.T) {
	t.Helper()
	st, err := store.Open(context.Background(), store.Options{Dir: n.dir, Model: words{}.Model(), Dim: dim, Shared: Shared(n.share), Clock: n.clock})
	if err != nil {
		t.Fatal(err)
	}
	var now func() time.Time
	if n.clock != nil {
		now = n.clock.Now
	}
	sy, err := New(Options{Store: st, Embedder: words{}, PullInterval: 300 * time.Millisecond, PushInterval: 30 * time.Millisecond, Now: now, Projects: n.share,
		MaxBackoff: 300 * time.Millisecond, Batch: 50,
		Applied: n.told,
		Connect: func(ctx context.Context) (*team.Store, error) { return team.Open(ctx, n.url) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n.st, n.sy, n.stop, n.done = st, sy, cancel, make(chan struct{})
	go func() { defer close(n.done); sy.Run(ctx) }()
}

// told records what Options.Applied tells n of (n.applied).
func (n *node) told(put, trashed []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.applied == nil {
		n.applied = map[string]string{}
	}
	for _, id := range put {
		n.applied[id] = "put"
	}
	for _, id := range trashed {
		n.applied[id] = "trashed"
	}
}

// toldOf is what Options.Applied last told n of id ("" if nothing), and
// forgets it.
func (n *node) toldOf(id string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	op := n.applied[id]
	delete(n.applied, id)
	return op
}

func (n *node) close() {
	if n.stop == nil {
		return
	}
	n.stop()
	<-n.done
	_ = n.st.Close()
	n.stop = nil
}

// write stores a memory as the daemon's write path would.
func (n *node) write(t testing.TB, text, project string, typ memory.Type) memory.Memory {
	t.Helper()
	m, err := n.st.Put(context.Background(), memory.Memory{Text: text, Project: project, Type: typ, Embedding: embedOne(t, text)})
	if err != nil {
		t.Fatal(err)
	}
	n.sy.Kick()
	return m
}

// texts is every live memory's text by id.
func (n *node) texts(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := n.st.Iterate(context.Background(), store.Filter{IncludeSuperseded: true, IncludeSnoozed: true}, func(m memory.Memory) error {
		out[m.ID] = m.Text
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// converged checks that every node holds exactly want (texts by id).
func converged(t *testing.T, want map[string]string, nodes ...*node) func() error {
	return func() error {
		for _, n := range nodes {
			got := n.texts(t)
			for id, text := range want {
				if got[id] != text {
					return fmt.Errorf("%s lacks %s (%q)", n.name, id, text)
				}
			}
			if len(got) != len(want) {
				return fmt.Errorf("%s holds %d memories, want %d", n.name, len(got), len(want))
			}
			if k, _ := n.st.OutboxLen(); k != 0 {
				return fmt.Errorf("%s outbox holds %d", n.name, k)
			}
		}
		return nil
	}
}

// teamTexts is the team database's live memories.
func teamTexts(t testing.TB, ts *team.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	var cur team.Cursor
	live := map[string]*team.Memory{}
	for {
		p, err := ts.Pull(context.Background(), cur, team.PullOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range p.Changes {
			live[c.MemoryID] = c.Memory
		}
		cur = p.Next
		if !p.More {
			break
		}
	}
	for id, m := range live {
		if m != nil {
			out[id] = m.Text
		}
	}
	return out
}

// TestTwoDaemonsShare: team memories written on one daemon reach the
// other, with updates, deletes and counters; personal ones never reach
// the database.
func TestTwoDaemonsShare(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})

	m1 := a.write(t, "the shop deploys from the release branch", "shop", memory.TypeProject)
	m2 := b.write(t, "the shop's staging database is rebuilt nightly", "shop", memory.TypeProject)
	pa := a.write(t, "alice prefers tabs", "shop", memory.TypeUser)
	pb := b.write(t, "a note about another project", "garden", memory.TypeProject)
	want := map[string]string{m1.ID: m1.Text, m2.ID: m2.Text}
	polltest.Eventually(t, "team memories on both daemons", func() error {
		wa := map[string]string{m1.ID: m1.Text, m2.ID: m2.Text, pa.ID: pa.Text}
		wb := map[string]string{m1.ID: m1.Text, m2.ID: m2.Text, pb.ID: pb.Text}
		if err := converged(t, wa, a)(); err != nil {
			return err
		}
		return converged(t, wb, b)()
	})
	admin := tdb.open(t, tdb.owner)
	if got := teamTexts(t, admin); len(got) != 2 || got[m1.ID] != m1.Text || got[m2.ID] != m2.Text {
		t.Fatalf("the team database holds %v, want only %v", got, want)
	}

	// An update, a counter on each side, a delete.
	ctx := context.Background()
	if _, err := a.st.Update(ctx, m1.ID, func(m *memory.Memory) error {
		m.Text, m.Embedding = "the shop deploys from main", embedOne(t, "the shop deploys from main")
		m.AccessCount += 2
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.Update(ctx, m1.ID, func(m *memory.Memory) error { m.AccessCount++; return nil }); err != nil {
		t.Fatal(err)
	}
	a.sy.Kick()
	b.sy.Kick()
	polltest.Eventually(t, "the update and both counters everywhere", func() error {
		for _, n := range []*node{a, b} {
			m, err := n.st.Get(ctx, m1.ID)
			if err != nil {
				return err
			}
			if m.Text != "the shop deploys from main" || m.AccessCount != 3 {
				return fmt.Errorf("%s: %q access %d", n.name, m.Text, m.AccessCount)
			}
		}
		return nil
	})
	if err := b.st.Delete(ctx, m2.ID); err != nil {
		t.Fatal(err)
	}
	b.sy.Kick()
	polltest.Eventually(t, "the delete on a", func() error {
		if _, err := a.st.Get(ctx, m2.ID); !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("m2 still on a: %v", err)
		}
		return nil
	})
	if tr, err := a.st.TrashGet(ctx, []string{m2.ID}); err != nil || !strings.Contains(tr[m2.ID].Reason, roles["bob"]) {
		t.Fatalf("a's trash = %+v, %v; want the delete by bob", tr, err)
	}
	// The loop tells of a page once it is applied: the store may show it
	// a moment before.
	polltest.Eventually(t, "a told of the put and the delete", func() error {
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.applied[m2.ID] != "trashed" || a.applied[m1.ID] != "put" {
			return fmt.Errorf("a was told of %v", a.applied)
		}
		return nil
	})
	st := a.sy.Status()
	if !st.Connected || st.LastError != "" || st.Outbox != 0 || st.Role != roles["alice"] {
		t.Fatalf("status = %+v", st)
	}
}

// TestSameTextTwice: the same fact captured on two daemons before either
// pushed becomes one team memory, and both daemons keep that one.
func TestSameTextTwice(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	const text = "the build needs go 1.26"
	da, db := t.TempDir(), t.TempDir()
	// Written while the team is unreachable (a wrong database name).
	a := startNode(t, "a", da, tdb.srv.ConnString(roles["alice"], "nowhere"), []string{"*"})
	b := startNode(t, "b", db, tdb.srv.ConnString(roles["bob"], "nowhere"), []string{"*"})
	ma := a.write(t, text, "shop", memory.TypeProject)
	mb := b.write(t, text, "shop", memory.TypeProject)
	polltest.Eventually(t, "the error in the status", func() error {
		if st := a.sy.Status(); st.Connected || st.LastError == "" || st.Outbox != 1 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	a.close()
	b.close()
	a.url, b.url = tdb.url(roles["alice"]), tdb.url(roles["bob"])
	a.start(t)
	b.start(t)
	polltest.Eventually(t, "one memory on both", func() error {
		ga, gb := a.texts(t), b.texts(t)
		if len(ga) != 1 || len(gb) != 1 {
			return fmt.Errorf("a %v, b %v", ga, gb)
		}
		for id := range ga {
			if gb[id] != text || (id != ma.ID && id != mb.ID) {
				return fmt.Errorf("a %v, b %v", ga, gb)
			}
		}
		return nil
	})
	if got := teamTexts(t, tdb.open(t, tdb.owner)); len(got) != 1 {
		t.Fatalf("team holds %v", got)
	}
}

// TestRestoreFromTrash: a team memory deleted by one member goes to the
// others' trash; restoring it there (an undo) restores it in the team, and
// every daemon gets it back.
func TestRestoreFromTrash(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"shop"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"shop"})
	ctx := context.Background()
	m := a.write(t, "the shop's backups run at 02:00 UTC", "shop", memory.TypeProject)
	polltest.Eventually(t, "b has it", func() error { _, err := b.st.Get(ctx, m.ID); return err })
	if err := a.st.Delete(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	a.sy.Kick()
	polltest.Eventually(t, "b's trash has it", func() error {
		tr, err := b.st.TrashGet(ctx, []string{m.ID})
		if err != nil || len(tr) != 1 {
			return fmt.Errorf("trash %v, %v", tr, err)
		}
		return nil
	})
	// bob restores alice's memory: the team refuses (only its owner or an
	// admin may), and it stays live on bob's machine alone.
	if err := b.st.Restore(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	b.sy.Kick()
	polltest.Eventually(t, "b's restore refused and acknowledged", func() error {
		if n, _ := b.st.OutboxLen(); n != 0 {
			return fmt.Errorf("outbox %d", n)
		}
		return nil
	})
	if got := teamTexts(t, tdb.open(t, tdb.owner)); len(got) != 0 {
		t.Fatalf("the team holds %v after another member's restore", got)
	}
	// The owner's undo: a trashes its memory (the steward's path) and
	// restores it; the team restores it and b gets it back.
	m2 := a.write(t, "the shop's restores are tested monthly", "shop", memory.TypeProject)
	polltest.Eventually(t, "b has the second", func() error { _, err := b.st.Get(ctx, m2.ID); return err })
	if err := a.st.Apply(ctx, store.Batch{Trash: []store.TrashRequest{{ID: m2.ID, Reason: "test"}}}); err != nil {
		t.Fatal(err)
	}
	a.sy.Kick()
	polltest.Eventually(t, "the trash reaches b", func() error {
		if _, err := b.st.Get(ctx, m2.ID); !errors.Is(err, memory.ErrNotFound) {
			return fmt.Errorf("still live on b: %v", err)
		}
		return nil
	})
	if err := a.st.Restore(ctx, m2.ID); err != nil {
		t.Fatal(err)
	}
	a.sy.Kick()
	polltest.Eventually(t, "the owner's restore reaches b", func() error { _, err := b.st.Get(ctx, m2.ID); return err })
	if got := teamTexts(t, tdb.open(t, tdb.owner)); got[m2.ID] != m2.Text {
		t.Fatalf("the team holds %v", got)
	}
}

// TestStatusCountsPushes: a push of several batches counts each memory
// once in the status (the running total was added again per batch).
func TestStatusCountsPushes(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice")
	a := startNode(t, "a", t.TempDir(), tdb.srv.ConnString(roles["alice"], "nowhere"), []string{"*"})
	const n = 120 // batches of 50
	for i := range n {
		a.write(t, fmt.Sprintf("fact number %d of the shop's runbook", i), "shop", memory.TypeProject)
	}
	a.close()
	a.url = tdb.url(roles["alice"])
	a.start(t)
	polltest.Eventually(t, "the outbox drained", func() error {
		if st := a.sy.Status(); st.Outbox != 0 || !st.Connected {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	if st := a.sy.Status(); st.Pushed != n {
		t.Fatalf("status counts %d pushed, want %d", st.Pushed, n)
	}
}

// TestSameTextTwoProjects: a text the team holds in one project, written
// in another on a second daemon, is a team memory of each (schema 7),
// and both daemons keep both, each in its project: the second push is no
// duplicate, so its daemon does not relink its memory to the first
// project's, which its project's prompts never reach. Within a project
// the same text stays one memory (TestSameTextTwice).
func TestSameTextTwoProjects(t *testing.T) {
	srv := pgtest.Shared(t)
	tdb, roles := newTeamDB(t, srv, "alice", "bob")
	a := startNode(t, "a", t.TempDir(), tdb.url(roles["alice"]), []string{"*"})
	b := startNode(t, "b", t.TempDir(), tdb.url(roles["bob"]), []string{"*"})
	ctx := context.Background()
	const text = "run make lint before every commit"
	ma := a.write(t, text, "shop", memory.TypeProject)
	polltest.Eventually(t, "b has shop's memory", func() error { _, err := b.st.Get(ctx, ma.ID); return err })
	mb := b.write(t, text, "garden", memory.TypeProject)
	if mb.ID == ma.ID {
		t.Fatalf("b's local store deduplicated garden's text into shop's memory %s", ma.ID)
	}
	want := map[string]string{ma.ID: text, mb.ID: text}
	polltest.Eventually(t, "both memories on both daemons", converged(t, want, a, b))
	for _, n := range []*node{a, b} {
		for id, p := range map[string]string{ma.ID: "shop", mb.ID: "garden"} {
			m, err := n.st.Get(ctx, id)
			if err != nil || m.Project != p {
				t.Errorf("%s: %s is of %q (%v), want %q", n.name, id, m.Project, err, p)
			}
		}
	}
	if got := teamTexts(t, tdb.open(t, tdb.owner)); len(got) != 2 || got[ma.ID] != text || got[mb.ID] != text {
		t.Fatalf("the team holds %v, want both", got)
	}
	if rep := b.sy.Status(); rep.Relinked != 0 {
		t.Errorf("b relinked %d memories, want none", rep.Relinked)
	}
}
