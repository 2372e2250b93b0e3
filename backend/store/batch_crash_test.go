package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// helperApplyCrash runs random Apply batches (text rewrites, trash moves,
// restores) mixed with puts until killed, announcing each before it starts
// ("begin ...") and acknowledging it when it returned ("ok"). Text numbers
// start at MEMTRAY_CRASH_BASE.
func helperApplyCrash(dir string) error {
	ctx := context.Background()
	base, _ := strconv.Atoi(os.Getenv("MEMTRAY_CRASH_BASE"))
	seed, _ := strconv.ParseUint(os.Getenv("MEMTRAY_CRASH_SEED"), 10, 64)
	rng := rand.New(rand.NewPCG(seed, 11))
	s, err := Open(ctx, Options{Dir: dir, Model: testEmb.model, Dim: testDim})
	if err != nil {
		return err
	}
	var live, trashed []string
	if err := s.Iterate(ctx, Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		live = append(live, m.ID)
		return nil
	}); err != nil {
		return err
	}
	tr, err := s.Trash(ctx)
	if err != nil {
		return err
	}
	for _, t := range tr {
		trashed = append(trashed, t.Memory.ID)
	}
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		_ = out.Flush()
	}
	say("ready")
	n := base
	pick := func(list *[]string) string {
		i := rng.IntN(len(*list))
		id := (*list)[i]
		*list = slices.Delete(*list, i, i+1)
		return id
	}
	for {
		if rng.IntN(100) < 30 || len(live) < 8 {
			n++
			m := mem(crashText(n))
			m.ID = newID()
			say("begin put %s %d", m.ID, n)
			if _, err := s.Put(ctx, m); err != nil {
				return err
			}
			live = append(live, m.ID)
			say("ok")
			continue
		}
		pool := slices.Clone(live)
		tpool := slices.Clone(trashed)
		var b Batch
		var ps, ts, rs []string
		for i := 0; i < 1+rng.IntN(6) && len(pool) > 4; i++ {
			id := pick(&pool)
			cur, err := s.Get(ctx, id)
			if err != nil {
				return err
			}
			n++
			cur.Text = crashText(n)
			cur.Embedding = testEmb.vec(cur.Text)
			cur.AccessCount++
			cur.Importance = float64(rng.IntN(100)) / 100
			b.Put = append(b.Put, cur)
			ps = append(ps, fmt.Sprintf("%s:%d", id, n))
		}
		for i := 0; i < rng.IntN(5) && len(pool) > 4; i++ {
			id := pick(&pool)
			b.Trash = append(b.Trash, TrashRequest{ID: id, Reason: "crash test"})
			ts = append(ts, id)
		}
		for i := 0; i < rng.IntN(4) && len(tpool) > 0; i++ {
			id := pick(&tpool)
			b.Restore = append(b.Restore, id)
			rs = append(rs, id)
		}
		say("begin apply P=%s T=%s R=%s", strings.Join(ps, ","), strings.Join(ts, ","), strings.Join(rs, ","))
		if err := s.Apply(ctx, b); err != nil {
			return err
		}
		live = append(pool, rs...)
		for _, p := range b.Put {
			live = append(live, p.ID)
		}
		trashed = append(tpool, ts...)
		say("ok")
	}
}

// applyState is what the parent expects: live and trashed records, id ->
// text number.
type applyState struct {
	live, trash map[string]int
}

func (st applyState) clone() applyState {
	c := applyState{live: make(map[string]int, len(st.live)), trash: make(map[string]int, len(st.trash))}
	for k, v := range st.live {
		c.live[k] = v
	}
	for k, v := range st.trash {
		c.trash[k] = v
	}
	return c
}

// applyOp is one announced operation of the child.
type applyOp struct {
	line string
}

// apply returns st with the op applied, and the ids it touches.
func (op applyOp) apply(st applyState) (applyState, []string, int, error) {
	out := st.clone()
	f := strings.Fields(op.line)
	var touched []string
	maxN := 0
	switch {
	case len(f) == 4 && f[1] == "put":
		n, err := strconv.Atoi(f[3])
		if err != nil {
			return out, nil, 0, err
		}
		out.live[f[2]] = n
		return out, []string{f[2]}, n, nil
	case len(f) == 5 && f[1] == "apply":
		list := func(s, prefix string) []string {
			s = strings.TrimPrefix(s, prefix)
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		for _, p := range list(f[2], "P=") {
			id, ns, _ := strings.Cut(p, ":")
			n, err := strconv.Atoi(ns)
			if err != nil {
				return out, nil, 0, err
			}
			out.live[id] = n
			touched = append(touched, id)
			maxN = max(maxN, n)
		}
		for _, id := range list(f[3], "T=") {
			out.trash[id] = out.live[id]
			delete(out.live, id)
			touched = append(touched, id)
		}
		for _, id := range list(f[4], "R=") {
			out.live[id] = out.trash[id]
			delete(out.trash, id)
			touched = append(touched, id)
		}
		return out, touched, maxN, nil
	}
	return out, nil, 0, fmt.Errorf("bad line %q", op.line)
}

// verifyApplyState checks the records and indexes (verifyCrashState) and
// that the trash holds exactly st.trash, none of it searchable.
func verifyApplyState(s *Store, st applyState, touched map[string]bool) error {
	if err := verifyCrashState(s, st.live, touched); err != nil {
		return err
	}
	ctx := context.Background()
	tr, err := s.TrashGet(ctx, mapKeys(st.trash))
	if err != nil {
		return err
	}
	all, err := s.Trash(ctx)
	if err != nil {
		return err
	}
	if len(all) != len(st.trash) || len(tr) != len(st.trash) {
		return fmt.Errorf("trash holds %d (%d of the expected), want %d", len(all), len(tr), len(st.trash))
	}
	for id, n := range st.trash {
		m := tr[id].Memory
		if m.Text != crashText(n) || !slices.Equal(m.Embedding, testEmb.vec(m.Text)) {
			return fmt.Errorf("trashed %s is not intact: %q", id, m.Text)
		}
		if !touched[id] {
			continue
		}
		ts, err := s.TextSearch(ctx, fmt.Sprintf("tok%dx", n), 2, Filter{IncludeSnoozed: true, IncludeSuperseded: true})
		if err != nil {
			return err
		}
		if len(ts) != 0 {
			return fmt.Errorf("trashed %s is found by text: %v", id, ts)
		}
	}
	return nil
}

func mapKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestApplyCrashKill9 kills a child running Apply batches with SIGKILL at
// random moments, many times, and checks after each kill that the store
// opens, that every acknowledged batch is there, and that the batch in
// flight is there entirely or not at all (every record it touches old, or
// every one new, trash included), with both indexes agreeing with the
// records. MEMTRAY_CRASH_ITERS sets the number of kills (default 25, 10
// with -short).
func TestApplyCrashKill9(t *testing.T) {
	t.Parallel() // slow under -race; its own dirs (and helper processes): overlaps the other slow tests
	iters := crashIters(25, 10)
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	state := applyState{live: map[string]int{}, trash: map[string]int{}}
	base := 0
	acked, inFlightApplied, inFlightLost := 0, 0, 0
	for it := 0; it < iters; it++ {
		cmd := helperCmd(t, "applycrash", dir)
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
		ready := make(chan struct{})
		go func() {
			defer close(readDone)
			r := bufio.NewReader(stdout)
			first := true
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				l = strings.TrimSpace(l)
				if first && l == "ready" {
					close(ready)
					first = false
					continue
				}
				lines <- l
			}
		}()
		select {
		case <-ready:
		case <-readDone:
			t.Fatalf("child exited before ready: %s", stderr.String())
		case <-time.After(20 * time.Second):
			t.Fatal("child not ready in 20 s")
		}
		delay := time.Duration(5+rng.IntN(200)) * time.Millisecond
		time.Sleep(delay)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		<-readDone
		close(lines)
		if strings.Contains(stderr.String(), "helper:") {
			t.Fatalf("iteration %d: child failed: %s", it, stderr.String())
		}
		var pending *applyOp
		touched := map[string]bool{}
		for l := range lines {
			if l == "ok" {
				if pending == nil {
					t.Fatal("ok without begin")
				}
				next, _, _, err := pending.apply(state)
				if err != nil {
					t.Fatal(err)
				}
				state, pending = next, nil
				acked++
				continue
			}
			op := applyOp{line: l}
			_, tids, n, err := op.apply(state)
			if err != nil {
				t.Fatal(err)
			}
			base = max(base, n)
			for _, id := range tids {
				touched[id] = true
			}
			pending = &op
		}
		s, err := Open(context.Background(), Options{Dir: dir, Model: testEmb.model, Dim: testDim})
		if err != nil {
			t.Fatalf("iteration %d: Open after kill -9: %v", it, err)
		}
		if w := s.Info().Warnings; len(w) > 0 {
			t.Errorf("iteration %d: warnings %q", it, w)
		}
		errOld := verifyApplyState(s, state, touched)
		if errOld == nil && pending != nil {
			inFlightLost++
		}
		if errOld != nil && pending != nil {
			with, _, _, _ := pending.apply(state)
			if errNew := verifyApplyState(s, with, touched); errNew == nil {
				state, errOld = with, nil
				inFlightApplied++
			} else {
				errOld = fmt.Errorf("neither old state (%v) nor new state with the in-flight %q (%v)", errOld, pending.line, errNew)
			}
		}
		if errOld != nil {
			t.Fatalf("iteration %d (killed after %v): %v", it, delay, errOld)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("iteration %d: Close: %v", it, err)
		}
	}
	t.Logf("%d kills, %d acknowledged operations; in flight at the kill: %d found applied, %d found not applied; %d live, %d trashed at the end",
		iters, acked, inFlightApplied, inFlightLost, len(state.live), len(state.trash))
}
