package tail

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// MaxTurnsPerSession bounds the fingerprints kept for one session (the
// oldest are forgotten first).
const MaxTurnsPerSession = 4096

// Fingerprint names the turn that ex begins, the same way for the capture
// proxy and for a transcript: the session, the user's text and the first
// response (its text and the names of the tools it called), white space
// collapsed. It leaves out the turn's number: the proxy numbers a
// session's requests, which a compaction restarts and side requests
// (titles, summaries) shift, so numbers do not agree across the two.
func Fingerprint(ex memory.Exchange) string {
	h := sha256.New()
	field := func(s string) {
		s = strings.Join(strings.Fields(s), " ")
		fmt.Fprintf(h, "%d:%s\n", len(s), s)
	}
	field(ex.SessionID)
	field(ex.User)
	field(ex.Assistant)
	for _, tc := range ex.ToolCalls {
		field(tc.Name)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// ledger remembers, per session, the fingerprints of the turns stored,
// in one file per session under dir.
type ledger struct {
	dir      string
	mu       sync.Mutex
	sessions map[string]*sessionTurns
}

// sessionTurns is one session's fingerprints (order oldest first) and,
// for the proxy, whether the turn it is in was already stored.
type sessionTurns struct {
	set      map[string]bool
	order    []string
	skipping bool
}

func newLedger(dir string) *ledger {
	return &ledger{dir: dir, sessions: map[string]*sessionTurns{}}
}

func (l *ledger) file(session string) string {
	return filepath.Join(l.dir, hashHex([]byte(session))[:32]+".json")
}

// turnsLocked loads a session's fingerprints the first time it is asked.
func (l *ledger) turnsLocked(session string) (*sessionTurns, error) {
	if st, ok := l.sessions[session]; ok {
		return st, nil
	}
	st := &sessionTurns{set: map[string]bool{}}
	data, err := os.ReadFile(l.file(session))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read the turns of session %s: %w", session, err)
	default:
		var saved struct {
			Turns []string `json:"turns"`
		}
		if err := json.Unmarshal(data, &saved); err != nil {
			return nil, fmt.Errorf("the turns of session %s are damaged: %w", session, err)
		}
		for _, fp := range saved.Turns {
			if !st.set[fp] {
				st.set[fp] = true
				st.order = append(st.order, fp)
			}
		}
	}
	if len(l.sessions) >= 4096 {
		clear(l.sessions) // a cache: the files keep everything
	}
	l.sessions[session] = st
	return st, nil
}

// has reports whether the session has stored the turn fp.
func (l *ledger) has(session, fp string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.turnsLocked(session)
	if err != nil {
		return false, err
	}
	return st.set[fp], nil
}

// add records fps as stored for the session and saves its file.
func (l *ledger) add(session string, fps ...string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.turnsLocked(session)
	if err != nil {
		return err
	}
	return l.addLocked(session, st, fps)
}

func (l *ledger) addLocked(session string, st *sessionTurns, fps []string) error {
	changed := false
	for _, fp := range fps {
		if !st.set[fp] {
			st.set[fp] = true
			st.order = append(st.order, fp)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	if over := len(st.order) - MaxTurnsPerSession; over > 0 {
		for _, fp := range st.order[:over] {
			delete(st.set, fp)
		}
		st.order = append([]string(nil), st.order[over:]...)
	}
	data, err := json.Marshal(struct {
		Session string   `json:"session"`
		Turns   []string `json:"turns"`
	}{session, st.order})
	if err != nil {
		return fmt.Errorf("encode the turns of session %s: %w", session, err)
	}
	if err := config.WriteFileAtomic(l.file(session), data, 0o600); err != nil {
		return fmt.Errorf("save the turns of session %s: %w", session, err)
	}
	return nil
}

// proxy decides for an exchange the capture proxy took whether it belongs
// to a turn already stored (from the transcript): an exchange that begins
// a turn is looked up; the tool-loop iterations after it follow its
// verdict. It records nothing: a new turn is recorded (proxyTook) only
// once the proxy's copy of it is on disk or decided, so a kill in between
// leaves the transcript's copy to be stored.
func (l *ledger) proxy(ex memory.Exchange) (skip bool, err error) {
	if ex.SessionID == "" {
		return false, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st, err := l.turnsLocked(ex.SessionID)
	if err != nil {
		return false, err
	}
	if ex.ToolLoop {
		return st.skipping, nil
	}
	fp := Fingerprint(ex)
	if st.set[fp] {
		st.skipping = true
		return true, nil
	}
	st.skipping = false
	return false, nil
}

// proxyTook records the turn ex begins as the proxy's, once the proxy's
// copy of ex is durable (on disk or decided): the transcript's copy is
// skipped from then on. A tool-loop iteration or an exchange of no
// session records nothing.
func (l *ledger) proxyTook(ex memory.Exchange) error {
	if ex.SessionID == "" || ex.ToolLoop {
		return nil
	}
	return l.add(ex.SessionID, Fingerprint(ex))
}
