package steward

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// crashRecs is a store of n memories where every operation has work.
func crashRecs(n int) []rec {
	var out []rec
	for i := 0; len(out) < n; i++ {
		topic := fmt.Sprintf("topic%c%c", 'a'+i%26, 'a'+(i/26)%26)
		id := fmt.Sprintf("c%04d", i)
		switch i % 6 {
		case 0:
			out = append(out, rec{id: id, text: "the " + topic + " worker retries failed jobs nightly", typ: memory.TypeProject, created: 200, accessed: -1})
		case 1:
			out = append(out, rec{id: id, text: "a passing remark about " + topic + " and lunch", typ: memory.TypeProject, importance: 0.02, created: 200, accessed: -1})
		case 2:
			out = append(out, rec{id: id, text: "the " + topic + " handler caches results per session", typ: memory.TypeProject, access: 6, reinforced: 2, created: 50, accessed: 1})
		case 3:
			out = append(out, rec{id: id, text: "overview of the " + topic + " package layout", typ: memory.TypeReference, access: 12, reinforced: 1, created: 50, accessed: 1})
		case 4:
			text := "The deploy script for " + topic + " pushes the image to the staging cluster after the tests pass on main"
			out = append(out, rec{id: id, text: text, typ: memory.TypeProject, access: 1, created: 20, accessed: 2},
				rec{id: id + "d", text: text + ".", typ: memory.TypeProject, created: 25, accessed: -1})
		default:
			out = append(out, rec{id: id, text: "the " + topic + " UI polls the event stream", typ: memory.TypeProject, created: 2, accessed: -1})
		}
	}
	return out
}

// helperApplyUndo plans, applies and undoes in a loop until killed.
func helperApplyUndo(dir, sdir string) error {
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dir: dir, Model: testEmb.Model(), Dim: testEmb.Dim(), Clock: memory.FixedClock{T: now}})
	if err != nil {
		return err
	}
	sw := New(st, defaults(), Options{Dir: sdir, Clock: memory.FixedClock{T: now}})
	fmt.Println("ready")
	for {
		p, err := sw.Plan(ctx, PlanOptions{})
		if err != nil {
			return err
		}
		if _, err := sw.Apply(ctx, p, nil); err != nil {
			return err
		}
		if _, err := sw.Undo(ctx); err != nil {
			return err
		}
	}
}

func TestHelperProcess(t *testing.T) {
	if os.Getenv("MEMTRAY_STEWARD_HELPER") != "applyundo" {
		t.Skip("helper process only")
	}
	if err := helperApplyUndo(os.Getenv("MEMTRAY_STEWARD_STORE"), os.Getenv("MEMTRAY_STEWARD_DIR")); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// state is a store's whole content: live records and the trash.
type state struct {
	live  map[string]memory.Memory
	trash []store.TrashedMemory
}

func readState(t *testing.T, st *store.Store) state {
	live, tr := everything(t, st)
	return state{live: live, trash: tr}
}

func (a state) equal(b state) bool {
	return len(diffRecords(a.live, b.live)) == 0 && reflect.DeepEqual(a.trash, b.trash)
}

// TestApplyCrashKill9 kills a process looping plan, apply, undo with
// SIGKILL at random moments, and checks after each kill that the store
// holds either the state before the run or the state after it, entirely,
// and that Undo then brings back the state before exactly.
// MEMTRAY_STEWARD_CRASH_ITERS sets the number of kills (default 15, 6 with
// -short).
func TestApplyCrashKill9(t *testing.T) {
	iters := 15
	if testing.Short() {
		iters = 6
	}
	if v, err := strconv.Atoi(os.Getenv("MEMTRAY_STEWARD_CRASH_ITERS")); err == nil && v > 0 {
		iters = v
	}
	ctx := context.Background()
	root := t.TempDir()
	dir, sdir := filepath.Join(root, "store"), filepath.Join(root, "steward")
	st := openStore(t, dir)
	recs := crashRecs(240)
	ms := make([]memory.Memory, len(recs))
	for i, r := range recs {
		ms[i] = r.memory(t)
	}
	if _, err := st.PutBatch(ctx, ms); err != nil {
		t.Fatal(err)
	}
	old := readState(t, st)
	// The state after one run, computed on a copy.
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(root, "copy")
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	cst := openStore(t, cp)
	csw := New(cst, defaults(), Options{Dir: filepath.Join(root, "copy-steward"), Clock: memory.FixedClock{T: now}})
	p, err := csw.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := csw.Apply(ctx, p, nil); err != nil {
		t.Fatal(err)
	}
	applied := readState(t, cst)
	t.Logf("one run: %v over %d memories, %d trashed", p.Counts, len(recs), len(applied.trash))

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 5))
	sawOld, sawNew, leftovers := 0, 0, 0
	for it := 0; it < iters; it++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "MEMTRAY_STEWARD_HELPER=applyundo", "MEMTRAY_STEWARD_STORE="+dir, "MEMTRAY_STEWARD_DIR="+sdir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if strings.TrimSpace(line) != "ready" {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("iteration %d: child not ready: %q %s", it, line, stderr.String())
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if strings.Contains(stderr.String(), "helper:") {
			t.Fatalf("iteration %d: child failed: %s", it, stderr.String())
		}

		st := openStore(t, dir)
		got := readState(t, st)
		switch {
		case got.equal(old):
			sawOld++
		case got.equal(applied):
			sawNew++
		default:
			if d := diffRecords(applied.live, got.live); len(d) > 0 {
				t.Logf("%d records differ from the state after the run too; the first, %s:\n after the run %s\n found         %s",
					len(d), d[0], show(applied.live[d[0]]), show(got.live[d[0]]))
			}
			t.Fatalf("iteration %d: the store is neither before nor after the run: %d live (want %d or %d), %d trashed; differs from before in %v",
				it, len(got.live), len(old.live), len(applied.live), len(got.trash), diffRecords(old.live, got.live))
		}
		tmps, _ := filepath.Glob(filepath.Join(sdir, tempPrefix+"*"))
		leftovers += len(tmps)
		sw := New(st, defaults(), Options{Dir: sdir, Clock: memory.FixedClock{T: now}})
		if tmps, _ := filepath.Glob(filepath.Join(sdir, tempPrefix+"*")); len(tmps) > 0 {
			t.Errorf("iteration %d: temporary files of the killed writes are left: %v", it, tmps)
		}
		if _, err := sw.Undo(ctx); err != nil && !errors.Is(err, ErrNothingToUndo) {
			t.Fatalf("iteration %d: undo after the kill: %v", it, err)
		}
		if !readState(t, st).equal(old) {
			t.Fatalf("iteration %d: undo after the kill did not restore the state before the run", it)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills: %d found the state before the run, %d the state after; %d temporary files of cut writes removed",
		iters, sawOld, sawNew, leftovers)
}
