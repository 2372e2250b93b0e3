package ingest

import (
	"strings"
	"sync"
	"unsafe"
)

// A session's sentences are classified again and again: every
// distillation of a turn reads the sentences of the later turns it is
// given (dropRevised, sessionGlosses, dropUpdated), what the turn said
// (saidBlocks) is read again each time the turn is distilled again or
// remembered, and live capture distils an earlier turn again for each
// revision or update a new turn makes. classifySentence is a pure function
// of the sentence and of whether it was said between tool calls, and runs
// a dozen regular expressions, so its answers are remembered: classMemo
// holds them until its keys reach maxClassMemoBytes, then starts again
// empty (a session's recent sentences are read again soon, old ones
// rarely).

// The process holds two memos (classMemo, cueMemo), shared by every
// session and by batch ingest alike. They are a cache, not a session's
// state: each is bounded on its own, at maxClassMemoBytes, and they are
// not counted in maxRecentBytes, the bound of live capture's record of
// recent turns (session.go). What they take beside it is at most about
// 2 × maxClassMemoBytes, twice that for a moment when one starts again
// while its old map is not collected yet.

// maxClassMemoBytes bounds the bytes a memo takes: its keys' texts and,
// for each entry, what its map takes (memo.entryBytes).
const maxClassMemoBytes = 1 << 20

// memo remembers a pure function's answers by key, until the keys' bytes
// reach maxClassMemoBytes, then starts again empty (a session's recent
// sentences are read again soon, old ones rarely); it is safe for
// concurrent use.
type memo[K comparable, V any] struct {
	mu    sync.Mutex
	m     map[K]V
	bytes int
}

// entryBytes is what an entry of m takes beyond its text's bytes, at
// most: its slot (key and value) two and a half times (a table grows by
// doubling before it is full, so up to half its slots are free; its
// control bytes; its slots' array rounded up to whole pages, a sixth more
// for a full table), and a word for the text's allocation rounded up to
// its size class. TestMemoBoundHoldsMemory measures it.
func (m *memo[K, V]) entryBytes() int {
	var slot struct {
		k K
		v V
	}
	return 5*int(unsafe.Sizeof(slot))/2 + int(unsafe.Sizeof(uintptr(0)))
}

// get returns f's answer for k, remembered: n is the bytes of k's text,
// and clone returns k with its text copied, so that the memo does not
// hold the turn's whole text a sentence was cut from. A key of more than
// a sixteenth of the bound (a pasted blob) is not remembered.
func (m *memo[K, V]) get(k K, n int, clone func(K) K, f func() V) V {
	m.mu.Lock()
	v, ok := m.m[k]
	m.mu.Unlock()
	if ok {
		return v
	}
	v = f()
	size := n + m.entryBytes()
	if size > maxClassMemoBytes/16 {
		return v
	}
	k = clone(k)
	m.mu.Lock()
	if m.m == nil || m.bytes+size > maxClassMemoBytes {
		m.m, m.bytes = make(map[K]V), 0
	}
	if _, ok := m.m[k]; !ok {
		m.m[k] = v
		m.bytes += size
	}
	m.mu.Unlock()
	return v
}

// classKey is a sentence and whether it was said between tool calls.
type classKey struct {
	text     string
	toolLoop bool
}

// sentenceMemo remembers classifySentence's answers; it is safe for
// concurrent use.
type sentenceMemo struct{ memo[classKey, string] }

// classMemo is the process's memo of sentence classes.
var classMemo sentenceMemo

// class returns classifySentence(st, toolLoop), remembered.
func (m *sentenceMemo) class(st string, toolLoop bool) string {
	return m.get(classKey{st, toolLoop}, len(st), func(k classKey) classKey {
		k.text = strings.Clone(k.text)
		return k
	}, func() string { return classifySentence(st, toolLoop) })
}

// cueMemo remembers whether a lowered sentence holds a revisionCue match
// at all: dropRevised reads every later sentence of the session at each
// distillation, and most hold none.
var cueMemo cueSeen

// cueSeen remembers, per lowered sentence, whether revisionCue matches in
// it, within the same bound as sentenceMemo; it is safe for concurrent
// use.
type cueSeen struct{ memo[string, bool] }

// has reports whether revisionCue matches in lt, remembered.
func (m *cueSeen) has(lt string) bool {
	return m.get(lt, len(lt), strings.Clone, func() bool { return revisionCue.MatchString(lt) })
}
