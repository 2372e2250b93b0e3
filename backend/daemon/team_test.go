package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/polltest"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/store"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// teamDB is a team database on its own PostgreSQL server (the fault
// tests stop and restart it), with its owner's store for reading it.
type teamDB struct {
	srv   *pgtest.Server
	db    string
	admin *team.Store
	roles []string
}

// newTeamDB starts a server, creates the team database and n members.
func newTeamDB(t *testing.T, n int) *teamDB {
	t.Helper()
	srv := pgtest.Start(t)
	tdb := &teamDB{srv: srv, db: srv.NewDB(t, "teamowner")}
	admin, err := team.Open(context.Background(), srv.ConnString("teamowner", tdb.db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	tdb.admin = admin
	for i := range n {
		r := fmt.Sprintf("member%d", i)
		srv.Role(t, r)
		if err := admin.SetMember(context.Background(), r, false); err != nil {
			t.Fatal(err)
		}
		tdb.roles = append(tdb.roles, r)
	}
	return tdb
}

// teamConfig is a daemon's config with team memory on as member i,
// projects "shop" shared, the connection string in a 0600 file of its own
// (not the environment, which tests running side by side share).
func (tdb *teamDB) teamConfig(t *testing.T, i int) config.Config {
	t.Helper()
	cfg := testConfig(t)
	urlFile := filepath.Join(t.TempDir(), "team-url")
	if err := os.WriteFile(urlFile, []byte(tdb.srv.ConnString(tdb.roles[i], tdb.db)), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.Team = config.Team{Share: true, URLEnv: "MEMTRAY_TEST_NO_SUCH_VAR", URLFile: urlFile, Projects: []string{"shop"}, PullInterval: config.Duration(300 * time.Millisecond)}
	return cfg
}

// live is the team database's live memories: text by id, and how many
// hold each text.
func (tdb *teamDB) live(t *testing.T) (map[string]string, map[string]int) {
	t.Helper()
	ids, texts, err := tdb.tryLive()
	if err != nil {
		t.Fatal(err)
	}
	return ids, texts
}

// tryLive is live, failing with the database (which a test restarts).
func (tdb *teamDB) tryLive() (map[string]string, map[string]int, error) {
	var cur team.Cursor
	state := map[string]*team.Memory{}
	for {
		p, err := tdb.admin.Pull(context.Background(), cur, team.PullOptions{})
		if err != nil {
			return nil, nil, err
		}
		for _, c := range p.Changes {
			state[c.MemoryID] = c.Memory
		}
		cur = p.Next
		if !p.More {
			break
		}
	}
	ids, texts := map[string]string{}, map[string]int{}
	for id, m := range state {
		if m != nil {
			ids[id] = m.Text
			texts[m.Text]++
		}
	}
	return ids, texts, nil
}

// teamText is a distinct fact for daemon d, number i: words of its own so
// the write pipeline's duplicate check keeps every one.
func teamText(d, i int) string {
	syl := []string{"ka", "lo", "mi", "ve", "ru", "ta", "zo", "ne", "pi", "gu", "sa", "do"}
	word := func(n int) string {
		var b strings.Builder
		for range 3 {
			b.WriteString(syl[n%len(syl)])
			n /= len(syl)
		}
		return b.String()
	}
	n := d*1000 + i*7
	return fmt.Sprintf("The %s service of the shop keeps its %s queue on host %s, restarted by %s on failure.",
		word(n), word(n+1), word(n+2), word(n+3))
}

// shared is a daemon's local team memories (text by id).
func shared(t *testing.T, d *Daemon) map[string]string {
	t.Helper()
	out := map[string]string{}
	pol := d.teamShared()
	err := d.store.Iterate(context.Background(), store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		if pol(&m) {
			out[m.ID] = m.Text
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// converge waits until every daemon holds every team memory of every
// daemon and of the database, with its outbox empty, and returns them.
func converge(t *testing.T, tdb *teamDB, ds []*Daemon) map[string]string {
	t.Helper()
	var all map[string]string
	polltest.Eventually(t, "all daemons converge", func() error {
		var err error
		if all, _, err = tdb.tryLive(); err != nil {
			return err
		}
		for i, d := range ds {
			if st := d.team.Status(); st.Outbox != 0 {
				return fmt.Errorf("daemon %d: outbox %d (%s)", i, st.Outbox, st.LastError)
			}
			got := shared(t, d)
			for id, text := range all {
				if got[id] != text {
					lm, gerr := d.store.Get(context.Background(), id)
					return fmt.Errorf("daemon %d lacks %s %q (status %+v) local: %+v %v", i, id, text, d.team.Status(), lm, gerr)
				}
			}
			for id := range got {
				if _, ok := all[id]; !ok {
					return fmt.Errorf("daemon %d holds %s, which the team does not", i, id)
				}
			}
		}
		return nil
	})
	return all
}

// TestTeamThreeDaemons: three daemons on one team database, writing
// concurrently: every team memory reaches every daemon's recall, personal
// memories never reach the database.
func TestTeamThreeDaemons(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 3)
	ctx := context.Background()
	var ds []*Daemon
	for i := range 3 {
		d, _ := serve(t, tdb.teamConfig(t, i))
		ds = append(ds, d)
	}
	const per = 8
	var personal sync.Map
	var wg sync.WaitGroup
	for di, d := range ds {
		wg.Go(func() {
			for i := range per {
				if _, err := d.memories.Add(ctx, httpapi.AddRequest{Text: teamText(di, i), Project: "shop"}); err != nil {
					t.Errorf("daemon %d add: %v", di, err)
				}
			}
			p := fmt.Sprintf("Daemon %d's owner likes the %s colour scheme in every editor.", di, []string{"amber", "teal", "violet"}[di])
			if _, err := d.memories.Add(ctx, httpapi.AddRequest{Text: p, Type: "user", Project: "shop"}); err != nil {
				t.Errorf("daemon %d add: %v", di, err)
			}
			o := fmt.Sprintf("The garden project %d waters the %s beds at dawn.", di, []string{"north", "south", "east"}[di])
			if _, err := d.memories.Add(ctx, httpapi.AddRequest{Text: o, Project: "garden"}); err != nil {
				t.Errorf("daemon %d add: %v", di, err)
			}
			personal.Store(p, true)
			personal.Store(o, true)
		})
	}
	wg.Wait()
	all := converge(t, tdb, ds)
	if len(all) < 3*per*3/4 {
		t.Fatalf("the team holds %d memories of the %d written", len(all), 3*per)
	}
	_, counts := tdb.live(t)
	for text, n := range counts {
		if _, ok := personal.Load(text); ok {
			t.Errorf("a personal memory reached the database: %q", text)
		}
		if n != 1 {
			t.Errorf("%q is held %d times", text, n)
		}
	}
	// Recall: each daemon finds each team memory by its words, at once:
	// a record the convergence check read (Iterate) is published, its
	// words and its vector indexed (store/publish.go). A miss says what
	// the search found instead.
	for di, d := range ds {
		for id, text := range all {
			hits, err := d.memories.Search(ctx, httpapi.SearchRequest{Query: text, K: 5})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			var got []string
			for _, h := range hits {
				found = found || h.Memory.ID == id
				got = append(got, fmt.Sprintf("%s %q", h.Memory.ID, h.Memory.Text))
			}
			if !found {
				bm, berr := d.memories.Search(ctx, httpapi.SearchRequest{Query: text, K: 5, Mode: "bm25"})
				for _, h := range bm {
					got = append(got, "bm25: "+h.Memory.ID)
				}
				lm, gerr := d.store.Get(ctx, id)
				lm.Embedding = nil
				t.Errorf("daemon %d: a search for %q does not find %s (local %+v %v); it found %v (bm25 error %v)", di, text, id, lm, gerr, got, berr)
			}
		}
		st, err := d.Services().Status.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ts, _ := d.Services().Team.TeamStatus(ctx)
		if !ts.Enabled || !ts.Connected || ts.LastError != "" || ts.Outbox != 0 {
			t.Errorf("daemon %d team status = %+v (stats %d memories)", di, ts, st.Store.Count)
		}
	}
}

// teamOutage is how long TestTeamPostgresDown keeps PostgreSQL down: the
// 30 s issue 23 names. The test runs in parallel with the package's other
// parallel tests; its daemons' backoff cap (team.pull_interval) is 2 s, so
// the retries reach the cap after about 3 s and run at it for the rest.
const teamOutage = 30 * time.Second

// teamOutageCap is the daemons' team.pull_interval in TestTeamPostgresDown,
// which is also the cap of their retry backoff.
const teamOutageCap = 2 * time.Second

// backoffLog records the waits the team sync loop logs between retries.
type backoffLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (b *backoffLog) Enabled(context.Context, slog.Level) bool { return true }
func (b *backoffLog) WithAttrs([]slog.Attr) slog.Handler       { return b }
func (b *backoffLog) WithGroup(string) slog.Handler            { return b }
func (b *backoffLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "team sync failed; retrying" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "in" {
			b.mu.Lock()
			b.waits = append(b.waits, a.Value.Duration())
			b.mu.Unlock()
		}
		return true
	})
	return nil
}

// atCap counts the logged waits equal to c, and returns the longest.
func (b *backoffLog) atCap(c time.Duration) (int, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, longest := 0, time.Duration(0)
	for _, w := range b.waits {
		longest = max(longest, w)
		if w == c {
			n++
		}
	}
	return n, longest
}

// TestTeamPostgresDown: PostgreSQL stops for 30 s while three connected
// daemons keep writing; local writes and search keep working, the status
// says the database is unreachable, the retries back off to their cap,
// and once it is back every outbox drains and the daemons converge. Then
// the server is killed (kill -9) and restarted with the daemons connected
// and writing: they converge again, nothing lost or doubled. The
// connection strings come from 0600 files (url_file), so the test can run
// in parallel.
func TestTeamPostgresDown(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 3)
	ctx := context.Background()
	var ds []*Daemon
	var logs []*backoffLog
	for i := range 3 {
		cfg := testConfig(t)
		urlFile := filepath.Join(t.TempDir(), "team-url")
		if err := os.WriteFile(urlFile, []byte(tdb.srv.ConnString(tdb.roles[i], tdb.db)), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg.Team = config.Team{Share: true, URLEnv: "MEMTRAY_TEST_NO_SUCH_VAR", URLFile: urlFile, Projects: []string{"shop"},
			PullInterval: config.Duration(teamOutageCap)}
		bl := &backoffLog{}
		d, _ := serveWith(t, Options{Config: cfg, Version: "test", Logger: slog.New(bl)})
		ds, logs = append(ds, d), append(logs, bl)
	}
	// acked are the memories the writes were acknowledged as (the write
	// pipeline may fold a write into a similar earlier memory of its own
	// daemon: then the id is that memory's).
	n, acked := 0, map[string]bool{}
	write := func() {
		t.Helper()
		for di, d := range ds {
			m, err := d.memories.Add(ctx, httpapi.AddRequest{Text: teamText(di, n), Project: "shop"})
			if err != nil {
				t.Fatalf("a local write (round %d): %v", n, err)
			}
			acked[m.ID] = true
		}
		n++
	}
	// every checks the team holds every acknowledged write once.
	every := func(when string, all map[string]string) {
		t.Helper()
		for id := range acked {
			if _, ok := all[id]; !ok {
				t.Errorf("%s: the team lacks %s, acknowledged", when, id)
			}
		}
		if len(all) != len(acked) {
			t.Errorf("%s: the team holds %d memories, %d were acknowledged (%d rounds of writes)", when, len(all), len(acked), n)
		}
	}
	write()
	converge(t, tdb, ds)
	tdb.srv.Stop()
	down := time.Now()
	for time.Since(down) < teamOutage {
		write()
		time.Sleep(time.Second)
	}
	for i, d := range ds {
		st := d.team.Status()
		if st.Connected || st.LastError == "" || st.Outbox == 0 {
			t.Errorf("daemon %d after the outage: status %+v", i, st)
		}
		if at, longest := logs[i].atCap(teamOutageCap); at < 3 || longest != teamOutageCap {
			t.Errorf("daemon %d: %d retries waited the cap %v (longest %v)", i, at, teamOutageCap, longest)
		}
	}
	// Local recall works meanwhile.
	if hits, err := ds[0].memories.Search(ctx, httpapi.SearchRequest{Query: teamText(0, n-1), K: 3}); err != nil || len(hits) == 0 {
		t.Fatalf("local search with the database down: %v, %v", hits, err)
	}
	if err := tdb.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	every("after the outage", converge(t, tdb, ds))
	// A crash of the server with the daemons connected, between writes.
	write()
	tdb.srv.Kill()
	write()
	if err := tdb.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	write()
	every("after the crash", converge(t, tdb, ds))
	_, texts := tdb.live(t)
	for text, k := range texts {
		if k != 1 {
			t.Errorf("%q is held %d times", text, k)
		}
	}
}

// teamChildEnv names, for TestTeamChild, the data dir and config of the
// daemon it runs in a process of its own (the kill -9 test).
const teamChildEnv = "MEMTRAY_TEST_TEAM_CHILD"

// TestTeamChild is not a test: TestTeamKillMidPush runs this binary with
// -test.run=TestTeamChild to get a daemon it can kill -9. It writes team
// memories one by one, printing "ACK <id>" as each is acknowledged, until
// it is killed (or, with "drain" mode, writes nothing and serves).
func TestTeamChild(t *testing.T) {
	spec := os.Getenv(teamChildEnv)
	if spec == "" {
		t.Skip("run by TestTeamKillMidPush")
	}
	mode, cfgPath, _ := strings.Cut(spec, ":")
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), Options{Config: cfg, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = d.Serve(context.Background(), nil) }()
	if mode == "drain" {
		select {}
	}
	for i := 0; ; i++ {
		m, err := d.memories.Add(context.Background(), httpapi.AddRequest{Text: teamText(7, i), Project: "shop"})
		if err != nil {
			fmt.Printf("ERR %v\n", err)
			continue
		}
		fmt.Printf("ACK %s\n", m.ID)
	}
}

// TestTeamKillMidPush: a daemon killed with SIGKILL while it writes and
// pushes, then started again, loses nothing it acknowledged and doubles
// nothing in the team database.
func TestTeamKillMidPush(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 1)
	cfg := tdb.teamConfig(t, 0)
	cfgPath := cfg.DataDir + "/config.json"
	cfg.File = cfgPath
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := config.WriteFileAtomic(cfgPath, js, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(mode string) (*exec.Cmd, *bufio.Scanner) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTeamChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), teamChildEnv+"="+mode+":"+cfgPath)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, bufio.NewScanner(out)
	}
	cmd, sc := run("write")
	acked := map[string]bool{}
	// Kill once the team holds some of its memories while it still writes:
	// pushes are in flight.
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "ACK "); ok {
			acked[id] = true
		}
		if len(acked)%10 == 0 {
			if ids, _ := tdb.live(t); len(ids) >= 20 {
				break
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(acked) == 0 {
		t.Fatal("the child acknowledged nothing")
	}
	before, _ := tdb.live(t)
	run("drain")
	polltest.Eventually(t, "every acknowledged memory in the team", func() error {
		ids, counts, err := tdb.tryLive()
		if err != nil {
			return err
		}
		for id := range acked {
			if _, ok := ids[id]; !ok {
				return fmt.Errorf("%s (acknowledged) is not in the team: %d of %d there", id, len(ids), len(acked))
			}
		}
		for text, n := range counts {
			if n != 1 {
				return fmt.Errorf("%q is held %d times", text, n)
			}
		}
		return nil
	})
	t.Logf("killed with %d acknowledged, %d pushed; after the restart all %d are there once", len(acked), len(before), len(acked))
}

// TestTeamSteward: one daemon at a time is the team's steward; another
// daemon's scheduled sweep leaves team memories alone and still tends its
// personal ones.
func TestTeamSteward(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 2)
	ctx := context.Background()
	a, _ := serve(t, tdb.teamConfig(t, 0))
	b, _ := serve(t, tdb.teamConfig(t, 1))
	tm, err := b.memories.Add(ctx, httpapi.AddRequest{Text: teamText(1, 1), Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	pm, err := b.memories.Add(ctx, httpapi.AddRequest{Text: teamText(1, 2), Project: "garden"})
	if err != nil {
		t.Fatal(err)
	}
	if !a.team.Steward(ctx) {
		t.Fatal("a did not become the steward of a fresh team")
	}
	if !a.team.Steward(ctx) {
		t.Fatal("a lost the steward's lock it holds")
	}
	if b.team.Steward(ctx) {
		t.Fatal("b became a steward while a is")
	}
	pl := &steward.Plan{Counts: map[string]int{"prune": 2}, Actions: []steward.Action{{Op: "prune", ID: tm.ID}, {Op: "prune", ID: pm.ID}}}
	got := b.teamSweepPlan(ctx, pl)
	if len(got.Actions) != 1 || got.Actions[0].ID != pm.ID || got.Counts["prune"] != 1 {
		t.Fatalf("b's sweep plan = %+v, want only the personal memory's action", got.Actions)
	}
	if got := a.teamSweepPlan(ctx, pl); len(got.Actions) != 2 {
		t.Fatalf("the steward's sweep plan = %+v, want both actions", got.Actions)
	}
}

// TestTeamOffSweep: a daemon with team memory off whose store synced with
// a team before leaves the copies of team memories out of its scheduled
// sweep (their decay and prune are the team steward's, and a change of
// them would reach the team when team memory is on again, a decay meeting
// the steward's own as a conflict) and still tends its personal ones. A
// store that never synced with a team is swept whole.
func TestTeamOffSweep(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 1)
	ctx := context.Background()
	cfg := tdb.teamConfig(t, 0)
	on, _, stop := startServing(t, Options{Config: cfg, Version: "test"})
	tm, err := on.memories.Add(ctx, httpapi.AddRequest{Text: teamText(1, 1), Project: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	pm, err := on.memories.Add(ctx, httpapi.AddRequest{Text: teamText(1, 2), Project: "garden"})
	if err != nil {
		t.Fatal(err)
	}
	on.team.Kick()
	polltest.Eventually(t, "the team memory pushed", func() error {
		if st := on.team.Status(); st.Outbox != 0 || !st.Connected || st.Pushed == 0 {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	stop()

	cfg.Team.Share = false
	off, _ := serve(t, cfg)
	if off.team != nil {
		t.Fatal("team memory is on")
	}
	pl := &steward.Plan{Counts: map[string]int{"prune": 2}, Actions: []steward.Action{{Op: "prune", ID: tm.ID}, {Op: "prune", ID: pm.ID}}}
	got := off.teamSweepPlan(ctx, pl)
	if len(got.Actions) != 1 || got.Actions[0].ID != pm.ID || got.Counts["prune"] != 1 {
		t.Fatalf("the sweep plan with team memory off = %+v, want only the personal memory's action", got.Actions)
	}
	never, _ := serve(t, testConfig(t))
	if got := never.teamSweepPlan(ctx, pl); len(got.Actions) != 2 {
		t.Fatalf("the sweep plan of a store that never synced = %+v, want both actions", got.Actions)
	}
}

// TestTeamAPI: the team routes through the HTTP client: the status in
// /api/stats and /api/team, a scope change (and a bad one refused), a push
// of everything and a pull; a daemon with team memory off says so.
func TestTeamAPI(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 1)
	ctx := context.Background()
	d, addr := serve(t, tdb.teamConfig(t, 0))
	c := httpapi.NewClient(addr, d.Token())
	m, err := c.Add(ctx, httpapi.AddRequest{Text: "The garden sensors report soil moisture every ten minutes.", Project: "garden"})
	if err != nil {
		t.Fatal(err)
	}
	if m, err = c.SetScope(ctx, m.ID, memory.ScopeTeam); err != nil || m.Scope != memory.ScopeTeam {
		t.Fatalf("SetScope = %+v, %v", m.Scope, err)
	}
	if _, err := c.SetScope(ctx, m.ID, "world"); err == nil || !strings.Contains(err.Error(), "scope") {
		t.Fatalf("a bad scope: %v", err)
	}
	pr, err := c.TeamPush(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.TeamPull(ctx); err != nil {
		t.Fatal(err)
	}
	ids, _ := tdb.live(t)
	if ids[m.ID] != m.Text {
		t.Fatalf("the team holds %v after a push (%+v)", ids, pr)
	}
	st, err := c.Stats(ctx)
	if err != nil || st.Team == nil || !st.Team.Enabled || !st.Team.Connected || st.Team.Outbox != 0 {
		t.Fatalf("stats team = %+v, %v", st.Team, err)
	}
	if ts, err := c.TeamStatus(ctx); err != nil || ts.Role != "member0" {
		t.Fatalf("team status = %+v, %v", ts, err)
	}

	off, offAddr := serve(t, testConfig(t))
	oc := httpapi.NewClient(offAddr, off.Token())
	if ts, err := oc.TeamStatus(ctx); err != nil || ts.Enabled {
		t.Fatalf("team off: status %+v, %v", ts, err)
	}
	if _, err := oc.TeamPush(ctx, false); err == nil || !strings.Contains(err.Error(), "team memory is off") {
		t.Fatalf("team off: push %v", err)
	}
}

// TestTeamSettingsAPI: the team's settings where a user sees them, against
// a real PostgreSQL. GET /api/team says what the team database holds (the
// conflict retention, who set it, the schema's version and floor, whether
// this member is an admin); PATCH /api/team/settings changes the retention
// for an admin only, validated as memtray team settings
// --conflict-retention-days is (1 to 3650 days; a clear error per field),
// needs the token, and a refused change leaves what is stored as it was.
func TestTeamSettingsAPI(t *testing.T) {
	t.Parallel()
	tdb := newTeamDB(t, 2)
	ctx := context.Background()
	if err := tdb.admin.SetMember(ctx, tdb.roles[1], true); err != nil {
		t.Fatal(err)
	}
	member, maddr := serve(t, tdb.teamConfig(t, 0))
	admin, aaddr := serve(t, tdb.teamConfig(t, 1))
	mc, ac := httpapi.NewClient(maddr, member.Token()), httpapi.NewClient(aaddr, admin.Token())
	settingsOf := func(c *httpapi.Client) httpapi.TeamSettings {
		t.Helper()
		var set *httpapi.TeamSettings
		polltest.Eventually(t, "the team's settings in GET /api/team", func() error {
			ts, err := c.TeamStatus(ctx)
			if err != nil || ts.Settings == nil {
				return fmt.Errorf("status %+v, %v", ts, err)
			}
			set = ts.Settings
			return nil
		})
		return *set
	}
	got := settingsOf(mc)
	want := httpapi.TeamSettings{ConflictRetentionDays: 90, ChangedBy: "teamowner", MinDays: 1, MaxDays: 3650, Settable: true,
		Admin: false, Schema: team.SchemaVersion, Floor: 3, Known: team.SchemaVersion, Used: team.SchemaVersion}
	got.ChangedAt, got.ReadAt = time.Time{}, time.Time{}
	if got != want {
		t.Fatalf("the member's GET /api/team settings = %+v, want %+v", got, want)
	}
	if got := settingsOf(ac); !got.Admin {
		t.Fatalf("the admin's settings say it is no admin: %+v", got)
	}
	days := func(n int) httpapi.TeamSettingsUpdate { return httpapi.TeamSettingsUpdate{ConflictRetentionDays: &n} }
	if _, err := mc.SetTeamSettings(ctx, days(30)); err == nil || !strings.Contains(err.Error(), "only a team admin") {
		t.Fatalf("a member's PATCH: %v, want refused as not an admin", err)
	}
	set, err := ac.SetTeamSettings(ctx, days(30))
	if err != nil || set.ConflictRetentionDays != 30 || set.ChangedBy != tdb.roles[1] || !set.Admin {
		t.Fatalf("the admin's PATCH = %+v, %v; want 30 days set by %s", set, err, tdb.roles[1])
	}
	if st, err := tdb.admin.Settings(ctx); err != nil || st.ConflictRetention != 30*24*time.Hour {
		t.Fatalf("the team database holds %+v, %v; want 30 days", st, err)
	}
	for _, tc := range []struct {
		name, body string
		status     int
		says       string
	}{
		{"zero days", `{"conflict_retention_days":0}`, http.StatusBadRequest, "from 1 to 3650, not 0"},
		{"too many days", `{"conflict_retention_days":3651}`, http.StatusBadRequest, "from 1 to 3650, not 3651"},
		{"negative", `{"conflict_retention_days":-5}`, http.StatusBadRequest, "from 1 to 3650, not -5"},
		{"not whole", `{"conflict_retention_days":2.5}`, http.StatusBadRequest, "conflict_retention_days"},
		{"not a number", `{"conflict_retention_days":"thirty"}`, http.StatusBadRequest, "conflict_retention_days"},
		{"nothing to change", `{}`, http.StatusBadRequest, "give the conflict retention in days"},
		{"an unknown field", `{"retention":30}`, http.StatusBadRequest, "unknown field"},
	} {
		code, answer := rawCall(t, aaddr, admin.Token(), http.MethodPatch, "/api/team/settings", strings.NewReader(tc.body), int64(len(tc.body)), nil)
		if code != tc.status || !strings.Contains(answer, tc.says) {
			t.Errorf("%s: PATCH %s = %d %s; want %d saying %q", tc.name, tc.body, code, answer, tc.status, tc.says)
		}
	}
	if code, answer := rawCall(t, aaddr, "wrong", http.MethodPatch, "/api/team/settings", strings.NewReader(`{"conflict_retention_days":7}`), 29, nil); code != http.StatusUnauthorized {
		t.Errorf("PATCH without the token = %d %s, want 401", code, answer)
	}
	if st, err := tdb.admin.Settings(ctx); err != nil || st.ConflictRetention != 30*24*time.Hour || st.ChangedBy != tdb.roles[1] {
		t.Fatalf("after the refused changes the team database holds %+v, %v; want 30 days set by %s", st, err, tdb.roles[1])
	}
	polltest.Eventually(t, "the member's daemon reads the new retention at a pull", func() error {
		if got := settingsOf(mc); got.ConflictRetentionDays != 30 || got.ChangedBy != tdb.roles[1] {
			return fmt.Errorf("the member's settings %+v", got)
		}
		return nil
	})

	off, offAddr := serve(t, testConfig(t))
	if _, err := httpapi.NewClient(offAddr, off.Token()).SetTeamSettings(ctx, days(30)); err == nil || !strings.Contains(err.Error(), "team memory is off") {
		t.Fatalf("team off: PATCH %v", err)
	}
}

// TestStatsEventFollowsTeam: the "stats" event every open UI receives
// carries the team sync's state, so the Overview follows the daemon
// without a reload: a daemon whose role is not a member yet says it is
// not connected, then connected once an admin adds it (a connection made
// after the page loaded), with the team's settings; a retention another
// admin sets in the database reaches the event at the daemon's next pull
// (the settings' write notifies the daemons, schema 8). At 9937c7b the
// event had no team, and the Overview showed the status of its load.
func TestStatsEventFollowsTeam(t *testing.T) {
	ctx := context.Background()
	tdb := newTeamDB(t, 0)
	tdb.srv.Role(t, "late")
	tdb.roles = append(tdb.roles, "late")
	d, addr := serveWith(t, Options{Config: tdb.teamConfig(t, 0), Version: "test", StatsTick: 50 * time.Millisecond})
	feed := openFeed(t, ctx, addr, d.Token(), "")
	team := func(e sseEvent) httpapi.TeamStatus {
		var ev httpapi.StatsEvent
		if err := json.Unmarshal([]byte(e.Data), &ev); err != nil || ev.Team == nil {
			t.Fatalf("a stats event without the team: %s (%v)", e.Data, err)
		}
		return *ev.Team
	}
	e := await(t, feed, httpapi.EventStats, func(e sseEvent) bool { return strings.Contains(e.Data, "not a member") })
	if st := team(e); !st.Enabled || st.Connected {
		t.Fatalf("before the role is a member the event says %+v", st)
	}
	if err := tdb.admin.SetMember(ctx, "late", false); err != nil {
		t.Fatal(err)
	}
	e = await(t, feed, httpapi.EventStats, func(e sseEvent) bool {
		return strings.Contains(e.Data, `"connected":true`) && strings.Contains(e.Data, `"settings"`)
	})
	if st := team(e); st.Role != "late" || st.Settings.ConflictRetentionDays != 90 {
		t.Fatalf("once a member the event says %+v", st)
	}
	if err := tdb.admin.SetConflictRetention(ctx, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	e = await(t, feed, httpapi.EventStats, func(e sseEvent) bool { return strings.Contains(e.Data, `"conflict_retention_days":30`) })
	if st := team(e); st.Settings.ChangedBy != "teamowner" {
		t.Fatalf("after the admin's change the event says %+v", st.Settings)
	}
}
