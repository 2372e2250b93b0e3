package store

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// crashText is the text of record number n: unique, with a unique token.
func crashText(n int) string {
	return fmt.Sprintf("crash record %d mentions tok%dx among ordinary words about databases and queues", n, n)
}

// helperCrash runs random writes until killed, announcing each operation
// before it starts ("begin ...") and acknowledging it when it returned
// ("ok"). Text numbers start at MEMTRAY_CRASH_BASE.
func helperCrash(dir string) error {
	ctx := context.Background()
	base, _ := strconv.Atoi(os.Getenv("MEMTRAY_CRASH_BASE"))
	seed, _ := strconv.ParseUint(os.Getenv("MEMTRAY_CRASH_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 7))
	s, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		return err
	}
	var live []string
	if err := s.Iterate(ctx, Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		live = append(live, m.ID)
		return nil
	}); err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		_ = out.Flush()
	}
	say("ready")
	n := base
	for {
		op := rng.IntN(100)
		switch {
		case op < 55 || len(live) < 5:
			n++
			m := mem(crashText(n))
			m.ID = newID()
			say("begin put %s %d", m.ID, n)
			if _, err := s.Put(ctx, m); err != nil {
				return err
			}
			live = append(live, m.ID)
		case op < 65:
			var batch []memory.Memory
			var parts []string
			for i := 0; i < 1+rng.IntN(8); i++ {
				n++
				m := mem(crashText(n))
				m.ID = newID()
				batch = append(batch, m)
				parts = append(parts, fmt.Sprintf("%s:%d", m.ID, n))
			}
			say("begin batch %s", strings.Join(parts, ","))
			if _, err := s.PutBatch(ctx, batch); err != nil {
				return err
			}
			for _, m := range batch {
				live = append(live, m.ID)
			}
		case op < 85:
			n++
			id := live[rng.IntN(len(live))]
			say("begin upd %s %d", id, n)
			text := crashText(n)
			if _, err := s.Update(ctx, id, func(m *memory.Memory) error {
				m.Text = text
				m.Embedding = testEmb.vec(text)
				m.AccessCount++
				return nil
			}); err != nil {
				return err
			}
		default:
			i := rng.IntN(len(live))
			id := live[i]
			say("begin del %s", id)
			if err := s.Delete(ctx, id); err != nil {
				return err
			}
			live = slices.Delete(live, i, i+1)
		}
		say("ok")
	}
}

// crashOp is one announced operation of the child.
type crashOp struct {
	kind string         // put, batch, upd, del
	recs map[string]int // id -> text number (put, batch, upd)
	id   string         // del
}

func parseCrashLine(line string) (crashOp, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "begin" {
		return crashOp{}, false
	}
	op := crashOp{kind: f[1], recs: map[string]int{}}
	switch f[1] {
	case "put", "upd":
		if len(f) != 4 {
			return op, false
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			return op, false
		}
		op.recs[f[2]] = n
	case "batch":
		for _, p := range strings.Split(f[2], ",") {
			id, ns, ok := strings.Cut(p, ":")
			n, err := strconv.Atoi(ns)
			if !ok || err != nil {
				return op, false
			}
			op.recs[id] = n
		}
	case "del":
		op.id = f[2]
	default:
		return op, false
	}
	return op, true
}

// apply returns expected with op applied.
func (op crashOp) apply(expected map[string]int) map[string]int {
	out := make(map[string]int, len(expected)+len(op.recs))
	for k, v := range expected {
		out[k] = v
	}
	if op.kind == "del" {
		delete(out, op.id)
		return out
	}
	for id, n := range op.recs {
		out[id] = n
	}
	return out
}

// verifyCrashState checks that the store holds exactly want (id -> text
// number) and that both indexes agree with the records: counts of all
// three, every record intact, and searches for every record in touched
// plus up to 200 others.
func verifyCrashState(s *Store, want map[string]int, touched map[string]bool) error {
	ctx := context.Background()
	if c := s.Count(); c != len(want) {
		return fmt.Errorf("count %d, want %d", c, len(want))
	}
	dc, err := s.text.DocCount()
	if err != nil {
		return err
	}
	if int(dc) != len(want) {
		return fmt.Errorf("text index holds %d docs, want %d", dc, len(want))
	}
	if vc := s.vec.count(); vc != len(want) {
		return fmt.Errorf("vector index holds %d docs, want %d", vc, len(want))
	}
	sampled := 0
	for id, n := range want {
		m, err := s.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("acknowledged record %s: %w", id, err)
		}
		text := crashText(n)
		if m.Text != text || !slices.Equal(m.Embedding, testEmb.vec(text)) || m.ContentHash != memory.ContentHash(text) {
			return fmt.Errorf("record %s is not intact: %q", id, m.Text)
		}
		if !touched[id] {
			if sampled >= 200 {
				continue
			}
			sampled++
		}
		ts, err := s.TextSearch(ctx, fmt.Sprintf("tok%dx", n), 2, Filter{})
		if err != nil {
			return err
		}
		if len(ts) != 1 || ts[0].ID != id {
			return fmt.Errorf("text search for record %s (n=%d) gave %v", id, n, ts)
		}
		vs, err := s.VectorSearch(ctx, m.Embedding, 1, Filter{})
		if err != nil {
			return err
		}
		if len(vs) != 1 || vs[0].Score < 0.999 {
			return fmt.Errorf("vector search for record %s gave %v", id, vs)
		}
	}
	return nil
}

// TestCrashKill9 kills a writing child process with SIGKILL at random
// moments, many times, and checks after each kill that the store opens,
// holds every acknowledged write intact, and that both indexes agree with
// the records. MEMTRAY_CRASH_ITERS sets the number of kills (default 40, 12
// with -short).
func TestCrashKill9(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	iters := crashIters(40, 12)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	expected := map[string]int{}
	base := 0
	totalAcked, totalRepaired := 0, 0
	for it := 0; it < iters; it++ {
		cmd := helperCmd(t, "crash", dir)
		cmd.Env = append(cmd.Env, fmt.Sprintf("MEMTRAY_CRASH_BASE=%d", base), fmt.Sprintf("MEMTRAY_CRASH_SEED=%d", rng.Uint64()))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1<<16)
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			r := bufio.NewReader(stdout)
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return // a partial last line is not an acknowledgement
				}
				lines <- strings.TrimSpace(l)
			}
		}()
		// Kill during Open/reconciliation sometimes, mostly during writes.
		var delay time.Duration
		if rng.IntN(5) == 0 {
			delay = time.Duration(rng.IntN(150)) * time.Millisecond
		} else {
			ready := time.After(20 * time.Second)
		wait:
			for {
				select {
				case l := <-lines:
					if l == "ready" {
						break wait
					}
					t.Fatalf("unexpected line before ready: %q", l)
				case <-readDone:
					t.Fatalf("child exited before ready: %s", stderr.String())
				case <-ready:
					t.Fatal("child not ready in 20 s")
				}
			}
			delay = time.Duration(10+rng.IntN(250)) * time.Millisecond
		}
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		<-readDone
		close(lines)
		if strings.Contains(stderr.String(), "helper:") {
			t.Fatalf("iteration %d: child failed: %s", it, stderr.String())
		}

		var pending *crashOp
		touched := map[string]bool{}
		for l := range lines {
			switch {
			case l == "ready":
			case l == "ok":
				if pending == nil {
					t.Fatal("ok without begin")
				}
				expected = pending.apply(expected)
				totalAcked++
				pending = nil
			default:
				op, ok := parseCrashLine(l)
				if !ok {
					t.Fatalf("bad line %q", l)
				}
				pending = &op
				for id, n := range op.recs {
					base = max(base, n)
					touched[id] = true
				}
				if op.id != "" {
					touched[op.id] = true
				}
			}
		}

		s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
		if err != nil {
			t.Fatalf("iteration %d: Open after kill -9: %v", it, err)
		}
		totalRepaired += s.Info().RepairedOnOpen
		if w := s.Info().Warnings; len(w) > 0 {
			t.Errorf("iteration %d: warnings %q", it, w)
		}
		errA := verifyCrashState(s, expected, touched)
		if errA != nil && pending != nil {
			with := pending.apply(expected)
			if errB := verifyCrashState(s, with, touched); errB == nil {
				expected, errA = with, nil
			} else {
				errA = fmt.Errorf("%v; with the in-flight %s applied: %v", errA, pending.kind, errB)
			}
		}
		if errA != nil {
			t.Fatalf("iteration %d (killed after %v, %d records expected): %v", it, delay, len(expected), errA)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("iteration %d: Close: %v", it, err)
		}
	}
	t.Logf("%d kills, %d acknowledged writes, %d records at the end, %d index entries repaired at open", iters, totalAcked, len(expected), totalRepaired)
}

// helperDiskFull opens the store, then limits the size of any file it
// writes (RLIMIT_FSIZE) so that writes soon fail with EFBIG like on a full
// disk; it reports acknowledged ids and the first error, and checks that
// reads still work.
func helperDiskFull(dir string) error {
	ctx := context.Background()
	signal.Ignore(syscall.SIGXFSZ)
	s, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		return err
	}
	fi, err := os.Stat(dir + "/" + dbFile)
	if err != nil {
		return err
	}
	lim := uint64(fi.Size()) + 1<<20
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		return fmt.Errorf("setrlimit: %w", err)
	}
	var acked []string
	filler := strings.Repeat("padding words to fill the disk quickly ", 700)
	for i := 0; i < 10000; i++ {
		m := mem(fmt.Sprintf("diskfull record %d %s", i, filler))
		out, err := s.Put(ctx, m)
		if err != nil {
			fmt.Printf("err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
			for _, id := range acked {
				if _, err := s.Get(ctx, id); err != nil {
					return fmt.Errorf("read after write error: %w", err)
				}
			}
			return nil
		}
		acked = append(acked, out.ID)
		fmt.Printf("ack %s\n", out.ID)
	}
	return errors.New("writes never failed")
}

func TestDiskFullLosesNothing(t *testing.T) {
	dir := t.TempDir()
	cmd := helperCmd(t, "diskfull", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	all, _ := io.ReadAll(stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v: %s", err, stderr.String())
	}
	var acked []string
	var werr string
	for _, l := range strings.Split(strings.TrimSpace(string(all)), "\n") {
		if id, ok := strings.CutPrefix(l, "ack "); ok {
			acked = append(acked, id)
		} else if e, ok := strings.CutPrefix(l, "err "); ok {
			werr = e
		}
	}
	if werr == "" || len(acked) == 0 {
		t.Fatalf("expected some writes then an error; got %d acks, err %q", len(acked), werr)
	}
	if !strings.Contains(werr, "put") || !strings.Contains(werr, "file too large") {
		t.Errorf("write error lacks context: %q", werr)
	}
	s := openTest(t, dir)
	if s.Count() != len(acked) {
		t.Errorf("count %d, acknowledged %d", s.Count(), len(acked))
	}
	for _, id := range acked {
		if _, err := s.Get(context.Background(), id); err != nil {
			t.Errorf("acknowledged %s lost: %v", id, err)
		}
	}
	if ts, _ := s.TextSearch(context.Background(), "diskfull", 1000, Filter{}); len(ts) != len(acked) {
		t.Errorf("text index has %d of %d after reopen", len(ts), len(acked))
	}
	t.Logf("%d writes acknowledged before: %s", len(acked), werr)
}

// TestCrashKill9FirstOpen kills a child while it creates a new store (the
// first Open of a data dir: bbolt, then the text index) at random moments,
// and checks that the next Open finds a sound store without warnings: a
// half-created text index must not read as a damaged one.
// MEMTRAY_CRASH_ITERS sets the number of kills (default 30, 10 with -short).
func TestCrashKill9FirstOpen(t *testing.T) {
	iters := crashIters(30, 10)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	cut := 0
	for it := 0; it < iters; it++ {
		dir := t.TempDir()
		cmd := helperCmd(t, "crash", dir)
		cmd.Env = append(cmd.Env, "MEMTRAY_CRASH_SEED=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(60_000)) * time.Microsecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if strings.Contains(stderr.String(), "helper:") {
			t.Fatalf("iteration %d: child failed: %s", it, stderr.String())
		}
		if _, err := os.Stat(dir + "/" + textDir + textNewSuffix); err == nil {
			cut++ // killed while it made the text index
		}
		s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
		if err != nil {
			t.Fatalf("iteration %d: Open after a kill during the first Open: %v", it, err)
		}
		if w := s.Info().Warnings; len(w) > 0 {
			t.Errorf("iteration %d: warnings %q", it, w)
		}
		if _, err := os.Stat(dir + "/" + textDir + textNewSuffix); err == nil {
			t.Errorf("iteration %d: the half-made text index is left behind", it)
		}
		m := mustPut(t, s, mem(crashText(1e9))) // the child's texts count from 1
		if ts, err := s.TextSearch(context.Background(), "tok1000000000x", 2, Filter{}); err != nil || len(ts) != 1 || ts[0].ID != m.ID {
			t.Errorf("iteration %d: text search after the first Open: %v %v", it, ts, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills during a first Open, %d of them while it made the text index", iters, cut)
}
