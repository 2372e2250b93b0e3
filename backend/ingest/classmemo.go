package ingest

import (
	"strings"
	"sync"
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

// maxClassMemoBytes bounds the bytes of the sentences classMemo keeps.
const maxClassMemoBytes = 1 << 20

// classMemoEntryBytes is what an entry takes beyond its sentence's bytes:
// the key's string header and flag, the class's string header, the map's
// own share.
const classMemoEntryBytes = 64

// classKey is a sentence and whether it was said between tool calls.
type classKey struct {
	text     string
	toolLoop bool
}

// sentenceMemo remembers classifySentence's answers; it is safe for
// concurrent use.
type sentenceMemo struct {
	mu    sync.Mutex
	m     map[classKey]string
	bytes int
}

// classMemo is the process's memo of sentence classes.
var classMemo sentenceMemo

// class returns classifySentence(st, toolLoop), remembered.
func (m *sentenceMemo) class(st string, toolLoop bool) string {
	k := classKey{st, toolLoop}
	m.mu.Lock()
	c, ok := m.m[k]
	m.mu.Unlock()
	if ok {
		return c
	}
	c = classifySentence(st, toolLoop)
	size := len(st) + classMemoEntryBytes
	if size > maxClassMemoBytes/16 {
		return c // a very long "sentence" (a pasted blob): not worth keeping
	}
	k.text = strings.Clone(st) // not the turn's text it may be cut from
	m.mu.Lock()
	if m.m == nil || m.bytes+size > maxClassMemoBytes {
		m.m, m.bytes = make(map[classKey]string), 0
	}
	if _, ok := m.m[k]; !ok {
		m.m[k] = c
		m.bytes += size
	}
	m.mu.Unlock()
	return c
}

// cueMemo remembers whether a lowered sentence holds a revisionCue match
// at all: dropRevised reads every later sentence of the session at each
// distillation, and most hold none.
var cueMemo cueSeen

// cueSeen remembers, per lowered sentence, whether revisionCue matches in
// it, within the same bound as sentenceMemo; it is safe for concurrent
// use.
type cueSeen struct {
	mu    sync.Mutex
	m     map[string]bool
	bytes int
}

// has reports whether revisionCue matches in lt, remembered.
func (m *cueSeen) has(lt string) bool {
	m.mu.Lock()
	c, ok := m.m[lt]
	m.mu.Unlock()
	if ok {
		return c
	}
	c = revisionCue.MatchString(lt)
	size := len(lt) + classMemoEntryBytes
	if size > maxClassMemoBytes/16 {
		return c
	}
	k := strings.Clone(lt)
	m.mu.Lock()
	if m.m == nil || m.bytes+size > maxClassMemoBytes {
		m.m, m.bytes = make(map[string]bool), 0
	}
	if _, ok := m.m[k]; !ok {
		m.m[k] = c
		m.bytes += size
	}
	m.mu.Unlock()
	return c
}
