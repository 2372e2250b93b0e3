package team

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// team is a fresh team database: its owner (the first admin) and the
// server, to connect other roles.
type team struct {
	srv   *pgtest.Server
	db    string
	owner string
}

var teamSeq struct {
	sync.Mutex
	n int
}

// newTeam creates a database owned by a fresh non-superuser role (a
// superuser would bypass row-level security).
func newTeam(t testing.TB) team {
	t.Helper()
	srv := pgtest.Shared(t)
	teamSeq.Lock()
	teamSeq.n++
	owner := fmt.Sprintf("owner%d", teamSeq.n)
	teamSeq.Unlock()
	return team{srv: srv, db: srv.NewDB(t, owner), owner: owner}
}

// url is the connection string for role.
func (tm team) url(role string) string { return tm.srv.ConnString(role, tm.db) }

// open opens the team store as role, closed at t's cleanup.
func (tm team) open(t testing.TB, role string) *Store {
	t.Helper()
	s, err := Open(context.Background(), tm.url(role))
	if err != nil {
		t.Fatalf("open as %s: %v", role, err)
	}
	t.Cleanup(s.Close)
	return s
}

// member creates role and makes it a member (admin when asked).
func (tm team) member(t testing.TB, admin *Store, role string, isAdmin bool) *Store {
	t.Helper()
	tm.srv.Role(t, role)
	if err := admin.SetMember(context.Background(), role, isAdmin); err != nil {
		t.Fatal(err)
	}
	return tm.open(t, role)
}

// raw connects as role without the Store, to try what the database allows.
func (tm team) raw(t testing.TB, role string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, tm.url(role))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

// maintain connects as the team's owner in a session that says it
// migrates (memtray.migrating): the conflict log binds its owner by the
// members' policies (schema 9), but for this session, which passes the
// migrate policy as Migrate's transaction does, as maintenance by hand
// would. Tests age the log's rows with it.
func (tm team) maintain(t testing.TB) *pgx.Conn {
	t.Helper()
	c := tm.raw(t, tm.owner)
	if _, err := c.Exec(context.Background(), "SELECT set_config('memtray.migrating', 'on', false)"); err != nil {
		t.Fatal(err)
	}
	return c
}

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// mem is a valid team memory.
func mem(id, text string) Memory {
	return Memory{ID: id, Text: text, ContentHash: memory.ContentHash(text),
		Kind: memory.KindFact, Type: memory.TypeProject, Project: "memtray", Source: "capture",
		Importance: 0.5, CreatedAt: t0, UpdatedAt: t0}
}

func TestMigrateConcurrently(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	const n = 6
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			s, err := Open(ctx, tm.url(tm.owner))
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent open: %v", err)
		}
	}
	c := tm.raw(t, tm.owner)
	var rows, v int
	if err := c.QueryRow(ctx, "SELECT count(*), max(version) FROM memtray.schema_version").Scan(&rows, &v); err != nil {
		t.Fatal(err)
	}
	if rows != SchemaVersion || v != SchemaVersion {
		t.Errorf("schema_version has %d rows, version %d; want %d, %d", rows, v, SchemaVersion, SchemaVersion)
	}
}

func TestSchemaNewerRefused(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	tm.open(t, tm.owner)
	if _, err := tm.raw(t, tm.owner).Exec(ctx, "INSERT INTO memtray.schema_version (version) VALUES ($1)", SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(ctx, tm.url(tm.owner))
	if !errors.Is(err, ErrSchemaNewer) {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaNewer", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("version %d", SchemaVersion+1)) {
		t.Errorf("the error does not name the versions: %v", err)
	}
}

func TestOpenRefusals(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	// A member's role cannot create the schema of a fresh database.
	tm.srv.Role(t, "plainrole")
	_, err := Open(ctx, tm.url("plainrole"))
	if err == nil || !strings.Contains(err.Error(), "team owner") {
		t.Errorf("open of a fresh database without rights: %v, want the owner's-role message", err)
	}
	tm.open(t, tm.owner)
	// A role that is not a member.
	if _, err := Open(ctx, tm.url("plainrole")); !errors.Is(err, ErrNotMember) {
		t.Errorf("open as a non-member: %v, want ErrNotMember", err)
	}
	// A non-member reads nothing, even with SQL.
	admin := tm.open(t, tm.owner)
	if _, err := admin.Push(ctx, []Memory{mem("a1", "the deploy runs from main")}); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tm.raw(t, "plainrole").QueryRow(ctx, "SELECT count(*) FROM memtray.memories").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a non-member sees %d memories", n)
	}
}

func TestPush(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	alice := tm.open(t, tm.owner)
	bob := tm.member(t, alice, "bob", false)

	a := mem("a1", "The staging deploy needs VPN access.")
	res, err := alice.Push(ctx, []Memory{a, mem("a2", "Migrations run with make migrate.")})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != PushInserted {
			t.Errorf("first push of %s: %s", r.ID, r.Status)
		}
	}
	newer := a
	newer.Text, newer.ContentHash = "The staging deploy needs VPN access and a token.", memory.ContentHash("The staging deploy needs VPN access and a token.")
	newer.UpdatedAt = t0.Add(time.Hour)
	older := a
	older.Importance = 0.9
	older.UpdatedAt = t0.Add(-time.Hour)

	tests := []struct {
		name   string
		who    *Store
		m      Memory
		status PushStatus
		winner string
	}{
		{"retry is a no-op", alice, a, PushUnchanged, ""},
		{"same text, other person", bob, mem("b1", "The staging deploy needs VPN access."), PushDuplicate, "a1"},
		{"same text, white space differs", bob, mem("b2", "The staging  deploy needs\nVPN access. "), PushDuplicate, "a1"},
		{"older version", alice, older, PushStale, ""},
		{"older copy of the version held", alice, func() Memory { m := a; m.UpdatedAt = t0.Add(-time.Hour); return m }(), PushUnchanged, ""},
		{"newer version", alice, newer, PushUpdated, ""},
		{"newer version retried", alice, newer, PushUnchanged, ""},
		{"edit of another's memory", bob, func() Memory { m := newer; m.Importance = 1; m.UpdatedAt = t0.Add(2 * time.Hour); return m }(), PushRefused, ""},
		{"edit onto another memory's text", alice, func() Memory {
			m := mem("a1", "Migrations run with make migrate.")
			m.UpdatedAt = t0.Add(3 * time.Hour)
			return m
		}(), PushDuplicate, "a2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tt.who.Push(ctx, []Memory{tt.m})
			if err != nil {
				t.Fatal(err)
			}
			if res[0].Status != tt.status || res[0].Winner != tt.winner {
				t.Errorf("push: %+v, want %s winner %q", res[0], tt.status, tt.winner)
			}
		})
	}
	got, err := alice.Get(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != newer.Text || got.Owner != tm.owner || got.Importance != 0.5 {
		t.Errorf("a1 is %+v", got)
	}
	// A deleted id is not brought back by a push.
	if err := alice.Delete(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	res, err = alice.Push(ctx, []Memory{mem("a2", "Migrations run with make migrate.")})
	if err != nil || res[0].Status != PushDeleted {
		t.Errorf("push of a deleted id: %+v, %v", res, err)
	}
	// Invalid memories are refused one by one; the rest are pushed.
	bad := mem("x1", "text")
	bad.ContentHash = strings.Repeat("0", 64)
	nul := mem("x4", "fine text")
	nul.Source = "cli\x00"
	res, err = alice.Push(ctx, []Memory{mem("x2", "fine"), bad, nul, mem("x3", "one"), mem("x3", "two")})
	if err != nil {
		t.Fatal(err)
	}
	want := []PushStatus{PushInserted, PushInvalid, PushInvalid, PushInserted, PushInvalid}
	for i, r := range res {
		if r.Status != want[i] || (r.Status == PushInvalid) != (r.Error != "") {
			t.Errorf("push %d (%s): %+v, want %s", i, r.ID, r, want[i])
		}
	}
	if !strings.Contains(res[1].Error, "content hash") || !strings.Contains(res[2].Error, "source") {
		t.Errorf("the reasons: %q, %q", res[1].Error, res[2].Error)
	}
	if got, err := alice.Get(ctx, "x3"); err != nil || got.Text != "one" {
		t.Errorf("x3: %+v, %v", got, err)
	}
}

// A daemon killed mid-push (its transaction never commits) and pushing
// the batch again leaves every memory once; so does one whose push
// committed but whose acknowledgement was lost.
func TestPushAfterCrash(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	s := tm.open(t, tm.owner)
	var batch []Memory
	for i := range 50 {
		batch = append(batch, mem(fmt.Sprintf("m%02d", i), fmt.Sprintf("fact number %d about the build", i)))
	}
	// Crash: half the batch written in a transaction whose connection dies.
	conn, err := pgx.Connect(ctx, tm.url(tm.owner))
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&Store{}).push(ctx, tx, batch[:25]); err != nil {
		t.Fatal(err)
	}
	conn.PgConn().Conn().Close() // no commit, no rollback: the process died

	res, err := s.Push(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != PushInserted {
			t.Errorf("push after a crash: %+v", r)
		}
	}
	// Lost acknowledgement: the same batch again.
	res, err = s.Push(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Status != PushUnchanged {
			t.Errorf("push retried: %+v", r)
		}
	}
	var n, changes int
	c := tm.raw(t, tm.owner)
	if err := c.QueryRow(ctx, "SELECT count(*) FROM memtray.memories").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM memtray.changes").Scan(&changes); err != nil {
		t.Fatal(err)
	}
	if n != 50 || changes != 50 {
		t.Errorf("%d memories and %d changes, want 50 and 50", n, changes)
	}
}

// Two people pushing the same texts at once end with one memory per text.
func TestPushSameTextConcurrently(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	alice := tm.open(t, tm.owner)
	bob := tm.member(t, alice, "bob", false)
	const n = 100
	var wg sync.WaitGroup
	results := make([][]PushResult, 2)
	for w, s := range []*Store{alice, bob} {
		wg.Go(func() {
			var batch []Memory
			for i := range n {
				j := i
				if w == 1 {
					j = n - 1 - i // the other order: deadlock-prone
				}
				batch = append(batch, mem(fmt.Sprintf("w%d_%d", w, j), fmt.Sprintf("shared fact %d", j)))
			}
			res, err := s.Push(ctx, batch)
			if err != nil {
				t.Error(err)
			}
			results[w] = res
		})
	}
	wg.Wait()
	won := map[string]string{} // text index -> winner
	for w, res := range results {
		for _, r := range res {
			var j int
			fmt.Sscanf(r.ID, fmt.Sprintf("w%d_%%d", w), &j)
			key := fmt.Sprint(j)
			winner := r.ID
			if r.Status == PushDuplicate {
				winner = r.Winner
			} else if r.Status != PushInserted {
				t.Errorf("%s: %s", r.ID, r.Status)
			}
			if prev, ok := won[key]; ok && prev != winner {
				t.Errorf("text %s: winners %s and %s", key, prev, winner)
			}
			won[key] = winner
		}
	}
	var count int
	if err := tm.raw(t, tm.owner).QueryRow(ctx, "SELECT count(*) FROM memtray.memories").Scan(&count); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Errorf("%d memories for %d texts", count, n)
	}
}

func TestRowLevelSecurity(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	admin := tm.open(t, tm.owner)
	alice := tm.member(t, admin, "alice", false)
	bob := tm.member(t, admin, "bob", false)
	if _, err := alice.Push(ctx, []Memory{mem("al1", "alice's fact"), mem("al2", "alice's other fact")}); err != nil {
		t.Fatal(err)
	}
	bobSQL := tm.raw(t, "bob")
	// Bob's delete through SQL: the database filters the row out.
	tag, err := bobSQL.Exec(ctx, "DELETE FROM memtray.memories WHERE id = 'al1'")
	if err != nil {
		t.Fatal(err)
	}
	if tag.RowsAffected() != 0 {
		t.Fatalf("bob deleted %d of alice's memories", tag.RowsAffected())
	}
	// And through the store.
	if err := bob.Delete(ctx, "al1"); !errors.Is(err, ErrNotOwner) {
		t.Errorf("bob's delete of alice's memory: %v, want ErrNotOwner", err)
	}
	if _, err := bob.Get(ctx, "al1"); err != nil {
		t.Errorf("alice's memory is gone after bob's delete: %v", err)
	}
	// Nor may he change it, take it over, or write in her name.
	if tag, err := bobSQL.Exec(ctx, "UPDATE memtray.memories SET importance = 1 WHERE id = 'al1'"); err != nil || tag.RowsAffected() != 0 {
		t.Errorf("bob's update: %v rows, %v", tag.RowsAffected(), err)
	}
	_, err = bobSQL.Exec(ctx, `INSERT INTO memtray.memories (id, text, content_hash, created_at, updated_at, owner)
		VALUES ('fake', 'x', $1, now(), now(), 'alice')`, memory.ContentHash("x"))
	if err == nil || !strings.Contains(err.Error(), "row-level security") {
		t.Errorf("bob's insert as alice: %v", err)
	}
	if _, err := bobSQL.Exec(ctx, "INSERT INTO memtray.changes (memory_id, op) VALUES ('al1', 'delete')"); err == nil {
		t.Error("bob wrote the change feed directly")
	}
	if _, err := bobSQL.Exec(ctx, "SELECT memtray.set_member('bob', true)"); err == nil {
		t.Error("bob made himself an admin")
	}
	// Alice deletes her own; an admin deletes anyone's.
	if err := alice.Delete(ctx, "al1"); err != nil {
		t.Errorf("alice's delete of her memory: %v", err)
	}
	if err := alice.Delete(ctx, "al1"); err != nil {
		t.Errorf("a repeated delete: %v", err)
	}
	if err := admin.Delete(ctx, "al2"); err != nil {
		t.Errorf("the admin's delete: %v", err)
	}
	if err := bob.Delete(ctx, "nosuch"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete of an unknown id: %v", err)
	}
	// Restore: bob may not restore alice's; she may.
	if _, err := bob.Restore(ctx, "al1"); !errors.Is(err, ErrNotOwner) {
		t.Errorf("bob's restore of alice's memory: %v, want ErrNotOwner", err)
	}
	res, err := alice.Restore(ctx, "al1")
	if err != nil || res.Status != PushInserted {
		t.Fatalf("alice's restore: %+v, %v", res, err)
	}
	got, err := bob.Get(ctx, "al1")
	if err != nil || got.Owner != "alice" || got.Text != "alice's fact" {
		t.Errorf("restored: %+v, %v", got, err)
	}
}

func TestCountersAndVectors(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	alice := tm.open(t, tm.owner)
	bob := tm.member(t, alice, "bob", false)
	m := mem("c1", "the cache lives in /var/cache/app")
	if _, err := alice.Push(ctx, []Memory{m}); err != nil {
		t.Fatal(err)
	}
	if err := alice.AddCounters(ctx, []store.CounterDelta{{ID: "a-1", MemoryID: "c1", Access: 3, Reinforced: 1}}); err != nil {
		t.Fatal(err)
	}
	d := store.CounterDelta{ID: "b-1", MemoryID: "c1", Access: 2, FeedbackSum: -1, FeedbackN: 2}
	for range 2 { // the retry counts once
		if err := bob.AddCounters(ctx, []store.CounterDelta{d}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := bob.Counters(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := (Counters{Access: 5, Reinforced: 1, FeedbackSum: -1, FeedbackN: 2}); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
	if err := bob.AddCounters(ctx, []store.CounterDelta{{ID: "b-2", MemoryID: "c1", FeedbackSum: 3, FeedbackN: 1}}); err == nil {
		t.Error("a feedback sum beyond its count was accepted")
	}
	if all, err := alice.CountersOf(ctx, []string{"c1", "none"}); err != nil || len(all) != 1 || all["c1"] != got {
		t.Errorf("CountersOf = %+v, %v; want c1's %+v only", all, err, got)
	}
	if err := bob.AddCounters(ctx, []store.CounterDelta{{ID: "b-3", MemoryID: "c1", Access: 1, Baseline: true}}); err == nil {
		t.Error("a baseline was pushed as a growth")
	}
	// Vectors: cached per model; stale after the text changes.
	if err := bob.PutVectors(ctx, "builtin-256", []Vector{{MemoryID: "c1", ContentHash: m.ContentHash, Values: []float32{1, 0, -0.5}}}); err != nil {
		t.Fatal(err)
	}
	vs, err := alice.Vectors(ctx, "builtin-256", []string{"c1"})
	if err != nil || len(vs["c1"]) != 3 || vs["c1"][2] != -0.5 {
		t.Errorf("vectors: %v, %v", vs, err)
	}
	if vs, _ := alice.Vectors(ctx, "other-model", []string{"c1"}); len(vs) != 0 {
		t.Errorf("another model's vectors: %v", vs)
	}
	page, err := alice.Pull(ctx, Cursor{}, PullOptions{Model: "builtin-256"})
	if err != nil {
		t.Fatal(err)
	}
	last := page.Changes[len(page.Changes)-1]
	if last.Counters.Access != 5 || len(last.Vector) != 3 || last.Memory == nil {
		t.Errorf("pulled %+v", last)
	}
	ops := map[Op]int{}
	for _, c := range page.Changes {
		ops[c.Op]++
	}
	if ops[OpPut] != 1 || ops[OpCounters] != 2 {
		t.Errorf("change ops %v, want 1 put and 2 counters", ops)
	}
	edit := m
	edit.Text, edit.ContentHash = "the cache lives in /var/cache/app2", memory.ContentHash("the cache lives in /var/cache/app2")
	edit.UpdatedAt = t0.Add(time.Minute)
	if _, err := alice.Push(ctx, []Memory{edit}); err != nil {
		t.Fatal(err)
	}
	if vs, _ := alice.Vectors(ctx, "builtin-256", []string{"c1"}); len(vs) != 0 {
		t.Errorf("a vector of the old text: %v", vs)
	}
	if err := bob.PutVectors(ctx, "builtin-256", []Vector{{MemoryID: "c1", ContentHash: edit.ContentHash, Values: []float32{0, 1, 0}}}); err != nil {
		t.Fatal(err)
	}
	if vs, _ := alice.Vectors(ctx, "builtin-256", []string{"c1"}); len(vs["c1"]) != 3 || vs["c1"][1] != 1 {
		t.Errorf("the new text's vector: %v", vs)
	}
}

func TestPullTombstonesAndInvalidRows(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	s := tm.open(t, tm.owner)
	if _, err := s.Push(ctx, []Memory{mem("p1", "first"), mem("p2", "second")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "p1"); err != nil {
		t.Fatal(err)
	}
	// A member writing around memtray: a hash that is not the text's.
	if _, err := tm.raw(t, tm.owner).Exec(ctx, `INSERT INTO memtray.memories (id, text, content_hash, created_at, updated_at)
		VALUES ('p3', 'third', $1, now(), now())`, strings.Repeat("a", 64)); err != nil {
		t.Fatal(err)
	}
	page, err := s.Pull(ctx, Cursor{}, PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Changes) != 4 {
		t.Fatalf("%d changes, want 4: %+v", len(page.Changes), page.Changes)
	}
	byOp := func(i int) string {
		c := page.Changes[i]
		return fmt.Sprintf("%s %s live=%v dead=%v invalid=%v", c.Op, c.MemoryID, c.Memory != nil, c.Tombstone != nil, c.Invalid != "")
	}
	want := []string{
		"put p1 live=false dead=true invalid=false", // its state now: deleted
		"put p2 live=true dead=false invalid=false",
		"delete p1 live=false dead=true invalid=false",
		"put p3 live=false dead=false invalid=true",
	}
	for i, w := range want {
		if got := byOp(i); got != w {
			t.Errorf("change %d: %s, want %s", i, got, w)
		}
	}
	if tb := page.Changes[2].Tombstone; tb.DeletedBy != tm.owner || tb.ContentHash != memory.ContentHash("first") {
		t.Errorf("tombstone %+v", tb)
	}
	// Nothing more after the cursor.
	page, err = s.Pull(ctx, page.Next, PullOptions{})
	if err != nil || len(page.Changes) != 0 {
		t.Errorf("second pull: %d changes, %v", len(page.Changes), err)
	}
}

func memoryKindOf(s string) memory.Kind { return memory.Kind(s) }
func memoryTypeOf(s string) memory.Type { return memory.Type(s) }

// A push racing a delete of the same id (it waits on the row being
// deleted, then finds the id free) does not bring the memory back.
func TestPushRacingDelete(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	s := tm.open(t, tm.owner)
	m := mem("race1", "deleted while pushed again")
	if _, err := s.Push(ctx, []Memory{m}); err != nil {
		t.Fatal(err)
	}
	del := tm.raw(t, tm.owner)
	tx, err := del.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "DELETE FROM memtray.memories WHERE id = 'race1'"); err != nil {
		t.Fatal(err)
	}
	// A retried push of the memory, changed meanwhile, so that the bulk
	// check does not settle it: it blocks on the deleted row.
	m.Importance, m.UpdatedAt = 0.8, t0.Add(time.Minute)
	type result struct {
		res []PushResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.Push(ctx, []Memory{m})
		done <- result{res, err}
	}()
	watch := tm.raw(t, tm.owner)
	polltest.Eventually(t, "the push waits for the lock", func() error {
		var waiting int
		if err := watch.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return nil
		}
		select {
		case r := <-done:
			t.Fatalf("the push ended without waiting for the lock: %+v %v", r.res, r.err)
		default:
		}
		return errors.New("no session waits for a lock")
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.res[0].Status != PushDeleted {
		t.Fatalf("push racing the delete: %+v, %v; want deleted", r.res, r.err)
	}
	if _, err := s.Get(ctx, "race1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted memory is back: %v", err)
	}
}

// Members counting at once, each delta pushed twice (a retry): the sums
// are exact.
func TestCountersConcurrently(t *testing.T) {
	tm := newTeam(t)
	ctx := context.Background()
	alice := tm.open(t, tm.owner)
	bob := tm.member(t, alice, "bob", false)
	if _, err := alice.Push(ctx, []Memory{mem("k1", "counted by two people")}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w, s := range []*Store{alice, bob} {
		for g := range 4 {
			wg.Go(func() {
				for i := range 25 {
					d := store.CounterDelta{ID: fmt.Sprintf("%d-%d-%d", w, g, i), MemoryID: "k1", Access: 1, Reinforced: int64(i % 2)}
					for range 2 {
						if err := s.AddCounters(ctx, []store.CounterDelta{d}); err != nil {
							t.Error(err)
						}
					}
				}
			})
		}
	}
	wg.Wait()
	c, err := alice.Counters(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Access != 200 || c.Reinforced != 96 {
		t.Errorf("counters %+v, want access 200 and reinforced 96", c)
	}
}
