package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/memtray/memtray/backend/embed/ollamafake"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// killsEnv sets the number of kills (the soak's long run). The default is
// 20 (8 with -short); with the race detector, which makes the daemons it
// starts about four times slower, 10 (5 with -short), about 30 s.
const killsEnv = "MEMTRAY_SOAK_KILLS"

// epochKills is how many kills one install lives through before the
// harness starts a fresh one (so a long soak also kills first starts, and
// the store stays a few thousand memories big).
const epochKills = 50

// harness drives daemons on one install at a time and keeps what it
// verified.
type harness struct {
	t      *testing.T
	ollama *ollamafake.Server
	in     *install
	rng    *lockedRand
	texts  *texts
	// state is what the last started daemon held, verified.
	state state
	// stagePending: a re-embedding was cut, so the store may warn about
	// its unfinished stage until the next one finishes.
	stagePending bool
	est          map[string]time.Duration // how long each phase takes, roughly
	totals       totals
	// unverified counts the kills since the last verified start.
	unverified int
}

// totals are the harness's counts, for the log and the soak table.
type totals struct {
	kills, survived, startKills, epochs int
	killedIn                            map[string]int // phase -> kills that cut it
	acked, searched, repaired, lost     int
	refused                             []string
	stewardApplied, stewardNotApplied   int
	reembedsDone, reembedsCut           int
	startTimes                          []time.Duration
}

func killsWanted() int {
	if v, err := strconv.Atoi(os.Getenv(killsEnv)); err == nil && v > 0 {
		return v
	}
	n := 20
	if testing.Short() {
		n = 8
	}
	if raceBuild {
		n /= 2
	}
	return n
}

// TestDaemonCrashKill9 kills `memtray serve` with SIGKILL at random
// moments of ingest bursts, concurrent adds and deletes, imports, steward
// runs and embedding-model switches, restarts it after each kill and
// checks what it holds: see verify. It reports the kills survived.
func TestDaemonCrashKill9(t *testing.T) {
	kills := killsWanted()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("MEMTRAY_CRASH_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (MEMTRAY_CRASH_SEED repeats the choices), %d kills", seed, kills)
	h := &harness{t: t, ollama: newFakeOllama(t), rng: &lockedRand{r: rand.New(rand.NewPCG(seed, 3))}, texts: newTexts(0),
		est: map[string]time.Duration{"start": 300 * time.Millisecond, actAdds: 800 * time.Millisecond, actIngest: 600 * time.Millisecond,
			actImport: 500 * time.Millisecond, "steward-import": 200 * time.Millisecond, "steward-plan": 100 * time.Millisecond,
			"steward-apply": 100 * time.Millisecond, "steward-undo": 100 * time.Millisecond, actReembed: 600 * time.Millisecond},
		totals: totals{killedIn: map[string]int{}}}
	began := time.Now()
	defer func() { h.report(time.Since(began)) }()

	var pending *ledger // the ledger of the lives killed since the last verified start
	rawRoot := t.TempDir()
	sinceEpoch := 0
	for h.totals.kills < kills {
		if h.in == nil || sinceEpoch >= epochKills {
			if h.in != nil {
				h.finish(pending)
			}
			h.in = newInstall(t, h.ollama.URL(), "crash-a")
			h.state, h.stagePending, pending, sinceEpoch = emptyState("ollama:crash-a"), false, nil, 0
			h.totals.epochs++
		}
		sinceEpoch++
		if h.rng.IntN(10) == 0 {
			h.killAtStart()
			continue
		}
		raw, err := copyStore(h.in, rawRoot)
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.in.start()
		if err != nil {
			t.Fatalf("kill %d: the daemon does not start again: %v", h.totals.kills, err)
		}
		h.totals.startTimes = append(h.totals.startTimes, p.started)
		h.learn("start", p.started)
		t0 := time.Now()
		h.check(p, pending, raw)
		if raw != "" {
			os.RemoveAll(filepath.Dir(raw))
		}
		t1 := time.Now()
		pending = h.live(p)
		h.checkChild(p)
		if os.Getenv("MEMTRAY_CRASH_TRACE") != "" {
			t.Logf("life %d: start %v, check %v, live %v (%d memories)", h.totals.kills, p.started, t1.Sub(t0), time.Since(t1), len(h.state.live))
		}
	}
	h.finish(pending)
}

// finish verifies the install after its last kill, then stops the daemon
// cleanly (SIGTERM) and checks that a clean stop keeps everything too.
func (h *harness) finish(pending *ledger) {
	t := h.t
	p, err := h.in.start()
	if err != nil {
		t.Fatalf("the daemon does not start after the last kill: %v", err)
	}
	h.check(p, pending, "")
	if err := p.stop(); err != nil {
		t.Errorf("memtray serve did not stop cleanly on SIGTERM: %v\n%s", err, tail(p.stderr.String()))
	}
	h.checkChild(p)
	p, err = h.in.start()
	if err != nil {
		t.Fatalf("the daemon does not start after a clean stop: %v", err)
	}
	h.check(p, nil, "")
	if err := p.stop(); err != nil {
		t.Errorf("memtray serve did not stop cleanly on SIGTERM: %v", err)
	}
	h.checkChild(p)
	// Nothing was moved aside as damaged, and no temporary file of a write
	// the kills cut is left behind (atomic writes rename a temporary file):
	// the daemon removes them at start, beside the config file (which
	// other processes may write) once they are a minute old.
	filepath.WalkDir(h.in.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == h.in.home {
			return nil
		}
		name := d.Name()
		if filepath.Dir(path) == h.in.root && strings.HasPrefix(name, ".config.json.tmp") {
			if fi, err := d.Info(); err == nil && time.Since(fi.ModTime()) < time.Minute {
				return nil
			}
		}
		if strings.Contains(name, ".broken-") || strings.Contains(name, ".tmp") || strings.HasSuffix(name, ".new") {
			t.Errorf("left in the install after %d kills: %s", h.totals.kills, path)
		}
		return nil
	})
}

// check verifies a started daemon against pending and, when raw names a
// copy of its store made before it started, that copy (rawCheck); it
// counts the kill as survived when nothing is wrong.
func (h *harness) check(p *proc, pending *ledger, raw string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cut := pending != nil && slices.ContainsFunc(pending.reembeds, func(op *reembedOp) bool { return !op.done })
	if cut {
		h.stagePending = true // the store may have staged vectors of the new model
	}
	now, v := h.verify(ctx, p, h.state, pending)
	if raw != "" {
		h.rawCheck(ctx, raw, h.state, now, &v)
	}
	h.totals.acked += v.acked
	h.totals.searched += v.searched
	h.totals.repaired += v.repaired
	h.totals.lost += v.lost
	if pending != nil {
		h.totals.refused = append(h.totals.refused, pending.refused...)
		for _, op := range pending.reembeds {
			if op.done {
				h.totals.reembedsDone++
			} else {
				h.totals.reembedsCut++
			}
		}
		if n := len(pending.reembeds); n > 0 && now.model == pending.reembeds[n-1].to {
			h.stagePending = false // the last switch went through: no stage is left
		}
	}
	if v.repaired > 0 || v.rawRepaired > 0 || len(v.warnings) > 0 {
		h.t.Logf("kill %d: the daemon's store repaired %d index entries at open (the copy %d); warnings %q",
			h.totals.kills, v.repaired, v.rawRepaired, v.warnings)
	}
	h.state = now
	if len(v.problems) > 0 {
		h.t.Errorf("after kill %d (%d memories, model %s):\n  %s", h.totals.kills, len(now.live), now.model, strings.Join(v.problems, "\n  "))
		h.unverified = 0
		return false
	}
	h.totals.survived += h.unverified
	h.unverified = 0
	return true
}

// killAtStart kills a daemon while it opens the store (or just after).
func (h *harness) killAtStart() {
	d := time.Duration(h.rng.Float64() * 1.2 * float64(h.est["start"]))
	p, err := h.in.startNoWait()
	if err != nil {
		h.t.Fatalf("kill %d: start: %v", h.totals.kills, err)
	}
	time.Sleep(d)
	p.kill()
	h.totals.kills++
	h.unverified++
	h.totals.killedIn["start"]++
	h.totals.startKills++
	h.checkChild(p)
}

// live drives a started daemon through one or two activities and the
// background adds, and kills it at a random moment of the chosen one.
func (h *harness) live(p *proc) *ledger {
	acts := []string{activities[h.rng.IntN(len(activities))]}
	if h.rng.IntN(10) < 3 {
		if second := activities[h.rng.IntN(len(activities))]; second != acts[0] {
			acts = append(acts, second)
		}
	}
	target := acts[0]
	if target == actSteward {
		target = []string{"steward-import", "steward-plan", "steward-apply", "steward-apply", "steward-undo"}[h.rng.IntN(5)]
	}
	delay := time.Duration(h.rng.Float64() * 1.25 * float64(h.est[target]))
	l := newLife(p, h.rng, target, delay)
	var wg sync.WaitGroup
	wg.Go(func() { h.addLoop(l, nil, true) })
	var acts2 sync.WaitGroup
	for _, a := range acts {
		acts2.Go(func() {
			for l.alive() {
				h.run(l, a)
				if a != acts[0] {
					return
				}
				// The chosen activity again, until the kill.
				l.arm()
			}
		})
	}
	// Should the target phase never come (a failed step), kill anyway.
	fallback := time.AfterFunc(2*time.Minute, l.kill)
	acts2.Wait()
	wg.Wait()
	fallback.Stop()
	l.kill()
	h.totals.kills++
	h.unverified++
	for ph, ds := range l.finished {
		for _, d := range ds {
			h.learn(ph, d)
		}
	}
	for ph, ran := range l.cut {
		h.totals.killedIn[ph]++
		if ran > h.est[ph] {
			h.est[ph] = ran * 13 / 10 // it takes longer than thought
		}
	}
	if len(l.cut) == 0 {
		h.totals.killedIn["between phases"]++
	}
	return l.led
}

// learn updates a phase's duration estimate.
func (h *harness) learn(phase string, d time.Duration) {
	if old, ok := h.est[phase]; ok {
		h.est[phase] = (3*old + d) / 4
	} else {
		h.est[phase] = d
	}
}

// checkChild fails on a data race or a panic the daemon printed.
func (h *harness) checkChild(p *proc) {
	if r := p.raced(); r != "" {
		h.t.Fatalf("the daemon raced:\n%s", r)
	}
	s := p.stderr.String()
	for _, bad := range []string{"panic:", "fatal error:"} {
		if i := strings.Index(s, bad); i >= 0 {
			h.t.Fatalf("the daemon crashed by itself:\n%s", s[i:min(len(s), i+4000)])
		}
	}
}

// report logs the totals and, with SOAK_OUT set, writes the soak table's
// rows (see cmd/soakreport) to $SOAK_OUT/crash.json.
func (h *harness) report(took time.Duration) {
	t := h.totals
	var phases []string
	for ph, n := range t.killedIn {
		phases = append(phases, fmt.Sprintf("%s %d", ph, n))
	}
	slices.Sort(phases)
	slices.Sort(t.startTimes)
	var p50, p99 time.Duration
	if n := len(t.startTimes); n > 0 {
		p50, p99 = t.startTimes[n/2], t.startTimes[min(n-1, n*99/100)]
	}
	detail := fmt.Sprintf("%d SIGKILLs of memtray serve in %d installs (%s); %d acknowledged writes checked, %d memories looked up by search; "+
		"%d steward runs found applied, %d not (never half); %d model switches done, %d cut; %d index entries repaired at open; start p50 %v p99 %v; %v",
		t.kills, t.epochs, strings.Join(phases, ", "), t.acked, t.searched, t.stewardApplied, t.stewardNotApplied, t.reembedsDone,
		t.reembedsCut, t.repaired, p50.Round(time.Millisecond), p99.Round(time.Millisecond), took.Round(time.Second))
	h.t.Logf("kills survived: %d of %d; memories lost: %d\n%s", t.survived, t.kills, t.lost, detail)
	if len(t.refused) > 0 {
		h.t.Logf("the daemon refused %d requests while alive, e.g. %q", len(t.refused), t.refused[:min(5, len(t.refused))])
	}
	dir := os.Getenv("SOAK_OUT")
	if dir == "" {
		return
	}
	ok := !h.t.Failed() && t.survived == t.kills && t.lost == 0
	rows := []map[string]any{
		{"name": "crash", "metric": "kills survived", "value": t.survived, "ok": ok, "detail": fmt.Sprintf("%d of %d: %s", t.survived, t.kills, detail)},
		{"name": "crash", "metric": "memories lost", "value": t.lost, "ok": t.lost == 0, "detail": fmt.Sprintf("of %d acknowledged writes, across %d SIGKILLs", t.acked, t.kills)},
	}
	var b strings.Builder
	for _, r := range rows {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(dir, "crash.json"), []byte(b.String()), 0o644)
		if err != nil {
			h.t.Errorf("write the soak result: %v", err)
		}
	}
}

// tail is the end of a log, for messages.
func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
