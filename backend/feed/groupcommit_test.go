package feed

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// TestDecisionLogConcurrentAdds: decisions added by several callers at
// once (their commits grouped) are each on disk when Add returns, counted
// once; a decision the store refuses fails alone, told to Failed, and the
// others are stored all the same.
func TestDecisionLogConcurrentAdds(t *testing.T) {
	tests := []struct {
		name           string
		callers, each  int
		invalidEvery   int // every n-th decision has no id (0: none)
		wantStored     int
		wantFailedTold int
	}{
		{"one caller", 1, 20, 0, 20, 0},
		{"eight callers", 8, 25, 0, 200, 0},
		{"eight callers, some invalid", 8, 25, 10, 180, 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st := openStore(t, dir)
			var (
				mu     sync.Mutex
				failed int
			)
			l, err := OpenDecisionLog(LogOptions{Size: 1000, Store: st, Failed: func(error) { mu.Lock(); failed++; mu.Unlock() }})
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for c := range tc.callers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range tc.each {
						n := c*tc.each + i
						dec := memory.Decision{ID: fmt.Sprint("d", n), Verdict: memory.VerdictStored, At: logT0.Add(time.Duration(n) * time.Second)}
						if tc.invalidEvery > 0 && n%tc.invalidEvery == 0 {
							dec.ID = ""
						}
						l.Add(dec, memory.Exchange{User: "u", Assistant: "a"})
					}
				}()
			}
			wg.Wait()
			if failed != tc.wantFailedTold {
				t.Errorf("Failed told %d times, want %d", failed, tc.wantFailedTold)
			}
			// What Add acknowledged is in the store (read directly), and
			// still there after a restart.
			recs, err := st.Decisions(1000)
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tc.wantStored {
				t.Errorf("%d decisions on disk, want %d", len(recs), tc.wantStored)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			st = openStore(t, dir)
			l, err = OpenDecisionLog(LogOptions{Size: 1000, Store: st, Failed: func(err error) { t.Error(err) }})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, h := range l.Hours(time.Time{}) {
				n += h.Verdicts["stored"]
			}
			if n != tc.wantStored || len(l.Newest(1000)) != tc.wantStored {
				t.Errorf("after a restart: counted %d, %d kept, want %d", n, len(l.Newest(1000)), tc.wantStored)
			}
		})
	}
}

// TestDecisionLogListsOnlyStored: the log lists a decision only once it is
// on disk, so a kill never loses one the feed (or /api/decisions) showed.
// A reader lists the log while decisions are added and checks that the
// store holds every decision listed.
func TestDecisionLogListsOnlyStored(t *testing.T) {
	st := openStore(t, t.TempDir())
	l, err := OpenDecisionLog(LogOptions{Size: 1000, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	const n = 100
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			l.Add(memory.Decision{ID: fmt.Sprint("d", i), Verdict: memory.VerdictStored, At: logT0.Add(time.Duration(i) * time.Second)},
				memory.Exchange{User: "u", Assistant: "a"})
		}
	}()
	for checking := true; checking; {
		select {
		case <-done:
			checking = false
		default:
		}
		listed := l.Newest(n)
		recs, err := st.Decisions(n)
		if err != nil {
			t.Fatal(err)
		}
		stored := map[string]bool{}
		for _, r := range recs {
			stored[r.ID] = true
		}
		for _, e := range listed {
			if !stored[e.ID] {
				t.Fatalf("the log lists %s before the store holds it (%d listed, %d stored)", e.ID, len(listed), len(recs))
			}
		}
	}
}
