package feed

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// killLogSize is the decision log's size in the kill test: larger than
// what a child adds, so nothing is pruned and every decision is counted.
const killLogSize = 100000

// TestDecisionLogKillHelper is the child of TestDecisionLogKill9 (it runs
// only with MEMTRAY_FEED_KILL_DIR set): four callers add decisions to the
// log in that store until killed, printing "ok ID" when Add returned.
func TestDecisionLogKillHelper(t *testing.T) {
	dir := os.Getenv("MEMTRAY_FEED_KILL_DIR")
	if dir == "" {
		t.Skip("the child of TestDecisionLogKill9")
	}
	st, err := store.Open(context.Background(), store.Options{Dir: dir, Model: "test", Dim: 4})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	l, err := OpenDecisionLog(LogOptions{Size: killLogSize, Store: st, Failed: func(err error) {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	run := os.Getenv("MEMTRAY_FEED_KILL_RUN")
	for c := range 4 {
		go func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("%s-%d-%d", run, c, i)
				l.Add(memory.Decision{ID: id, Verdict: memory.VerdictStored, At: time.Now()}, memory.Exchange{User: "u", Assistant: "a"})
				mu.Lock()
				fmt.Fprintln(out, "ok", id)
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	select {}
}

// TestDecisionLogKill9 kills a child adding decisions from four callers
// at once (their commits grouped) at random moments and checks after each
// kill that every decision Add acknowledged is stored, and that the hourly
// counters count exactly the decisions stored (a group is stored with its
// counts, or not at all).
func TestDecisionLogKill9(t *testing.T) {
	if os.Getenv("MEMTRAY_FEED_KILL_DIR") != "" {
		t.Skip("in the child")
	}
	iters := 8
	if testing.Short() {
		iters = 3
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	acked := map[string]bool{}
	for it := range iters {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestDecisionLogKillHelper$")
		cmd.Env = append(os.Environ(), "MEMTRAY_FEED_KILL_DIR="+dir, fmt.Sprint("MEMTRAY_FEED_KILL_RUN=r", it))
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
		go func() {
			defer close(lines)
			r := bufio.NewReader(stdout)
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return // a partial last line is not an acknowledgement
				}
				lines <- strings.TrimSpace(l)
			}
		}()
		if l, ok := <-lines; !ok || l != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("iteration %d: the child did not start: %q %s", it, l, stderr.String())
		}
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if strings.Contains(stderr.String(), "helper:") {
			t.Fatalf("iteration %d: the child failed: %s", it, stderr.String())
		}
		n := 0
		for l := range lines {
			id, ok := strings.CutPrefix(l, "ok ")
			if !ok {
				t.Fatalf("iteration %d: bad line %q", it, l)
			}
			acked[id] = true
			n++
		}
		st, err := store.Open(context.Background(), store.Options{Dir: dir, Model: "test", Dim: 4})
		if err != nil {
			t.Fatalf("iteration %d: open after the kill: %v", it, err)
		}
		recs, err := st.Decisions(killLogSize)
		if err != nil {
			t.Fatal(err)
		}
		hours, err := st.DecisionHours(time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		stored := map[string]bool{}
		for _, r := range recs {
			stored[r.ID] = true
		}
		for id := range acked {
			if !stored[id] {
				t.Errorf("iteration %d: decision %s was acknowledged but is not stored", it, id)
			}
		}
		counted := 0
		for _, h := range hours {
			counted += h.Verdicts["stored"]
		}
		if counted != len(recs) {
			t.Errorf("iteration %d: the counters count %d decisions, %d are stored", it, counted, len(recs))
		}
		t.Logf("iteration %d: %d acknowledged in this life, %d stored in all", it, n, len(recs))
		if t.Failed() {
			return
		}
	}
	if len(acked) == 0 {
		t.Fatal("no decision was acknowledged: the kills came too early")
	}
}
