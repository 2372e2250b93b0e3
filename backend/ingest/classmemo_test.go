package ingest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestSentenceMemo: the memo answers what classifySentence does, keeps a
// sentence said between tool calls apart from the same sentence in a
// final answer (their classes differ), and stays within its bound.
func TestSentenceMemo(t *testing.T) {
	change := "Added `RetryQueue` in `backend/queue/retry.go`, which backs off for 30 s."
	tests := []struct {
		text     string
		toolLoop bool
		want     string
	}{
		{change, false, ClassChange},
		{change, true, ClassNarration},
		{"The `cache_ttl` setting defaults to 300 s because the worker restarts hourly.", false, ClassFinding},
		{"Let me check the logs.", true, ClassNarration},
		{"Should I also update the README?", false, ClassQuestion},
	}
	var m sentenceMemo
	for round := range 2 { // the second round reads the memo
		for _, tc := range tests {
			if got := m.class(tc.text, tc.toolLoop); got != tc.want {
				t.Errorf("round %d: %q (tool loop %v): %s, want %s", round, tc.text, tc.toolLoop, got, tc.want)
			}
			if got := classifySentence(tc.text, tc.toolLoop); got != tc.want {
				t.Errorf("classifySentence(%q, %v) = %s, want %s", tc.text, tc.toolLoop, got, tc.want)
			}
		}
	}
	if len(m.m) != len(tests) {
		t.Errorf("memo holds %d entries, want %d", len(m.m), len(tests))
	}
	// The same answers through sentenceClass, from every origin.
	for _, origin := range []string{OriginFinal, OriginSummary, OriginToolLoop} {
		want := classifySentence(change, origin == OriginToolLoop)
		if got := sentenceClass(change, origin); got != want {
			t.Errorf("sentenceClass(change, %s) = %s, want %s", origin, got, want)
		}
	}
	// The bound: past maxClassMemoBytes it starts again; a very long text
	// is not kept.
	long := strings.Repeat("word ", maxClassMemoBytes/16)
	m.class(long, false)
	if _, ok := m.m[classKey{long, false}]; ok {
		t.Errorf("a %d-byte text was kept", len(long))
	}
	for i := 0; m.bytes <= maxClassMemoBytes-4096 && i < 1<<20; i++ {
		m.class(strings.Repeat("x", 1000)+string(rune('a'+i%26))+strings.Repeat("y", i/26), false)
	}
	m.class(strings.Repeat("z", 5000), false)
	if m.bytes > maxClassMemoBytes {
		t.Errorf("memo holds %d bytes, bound %d", m.bytes, maxClassMemoBytes)
	}
}

// TestSentenceMemoConcurrent: concurrent distillations share the memo
// (run with -race).
func TestSentenceMemoConcurrent(t *testing.T) {
	var m sentenceMemo
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				st := "The `limit` setting defaults to " + string(rune('0'+(g+i)%10)) + " because of the quota."
				if got, want := m.class(st, false), classifySentence(st, false); got != want {
					t.Errorf("%q: %s, want %s", st, got, want)
				}
			}
		}()
	}
	wg.Wait()
}

// TestCueMemo: correctingCues, with the memo telling a sentence without
// a revision cue, answers what the cue's own scan does, the first time
// and again.
func TestCueMemo(t *testing.T) {
	tests := []struct {
		lt   string
		want bool // correcting
	}{
		{"actually, the port is 8443, not 8080.", true},
		{"the port is 8443 in staging.", false},
		{"if the build still fails, clear the cache.", false},
		{"it turns out the lock file was stale.", true},
	}
	for round := range 2 {
		for _, tc := range tests {
			if got := correcting(tc.lt); got != tc.want {
				t.Errorf("round %d: correcting(%q) = %v, want %v", round, tc.lt, got, tc.want)
			}
			if got, want := cueMemo.has(tc.lt), revisionCue.MatchString(tc.lt); got != want {
				t.Errorf("round %d: cueMemo.has(%q) = %v, want %v", round, tc.lt, got, want)
			}
		}
	}
}

// TestMemoBoundHoldsMemory: a memo filled up to its bound takes about
// maxClassMemoBytes of memory, its map's slots and free slots with its
// keys' texts (memo.entryBytes), for short sentences and long ones, of
// both memos the process keeps: the bound that keeps them out of
// maxRecentBytes (session.go) holds. An entry counted for less than its
// slots take lets a memo of short sentences grow past the bound.
func TestMemoBoundHoldsMemory(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	// Each memo is filled through get with a constant answer: classifying
	// a sentence fills the process's other memo too.
	fill := func(n int, room func() bool, add func(string)) {
		for i := 0; room(); i++ {
			add(fmt.Sprintf("%0*d", n, i))
		}
	}
	const slack = maxClassMemoBytes / 10 // the collector's own, a text's allocation rounding
	for _, n := range []int{20, 40, 120, 1000} {
		var m sentenceMemo
		before := heap()
		fill(n, func() bool { return m.bytes+n+m.entryBytes() <= maxClassMemoBytes }, func(s string) {
			m.get(classKey{s, false}, len(s), func(k classKey) classKey { k.text = strings.Clone(k.text); return k }, func() string { return ClassFinding })
		})
		if got := heap() - before; got > maxClassMemoBytes+slack {
			t.Errorf("sentence memo of %d-byte sentences: %d entries take %d bytes, bound %d", n, len(m.m), got, maxClassMemoBytes)
		}
		runtime.KeepAlive(&m)
		var c cueSeen
		before = heap()
		fill(n, func() bool { return c.bytes+n+c.entryBytes() <= maxClassMemoBytes }, func(s string) { c.get(s, len(s), strings.Clone, func() bool { return false }) })
		if got := heap() - before; got > maxClassMemoBytes+slack {
			t.Errorf("cue memo of %d-byte sentences: %d entries take %d bytes, bound %d", n, len(c.m), got, maxClassMemoBytes)
		}
		runtime.KeepAlive(&c)
	}
}
