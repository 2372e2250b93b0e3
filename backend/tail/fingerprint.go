package tail

import (
	"context"
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

// TurnKey names the turn ex begins in the ledger: its Fingerprint for the
// first turn of the session that begins so (ex.Occurrence 0 or 1), the
// fingerprint and the occurrence for the next ones (occurrenceKey). The
// capture proxy counts the occurrence in the request's history, the
// session file's path in the file (Cursor.Seen), so both name the n-th
// "yes" turn alike and each is stored once, none lost.
func TurnKey(ex memory.Exchange) string {
	return occurrenceKey(Fingerprint(ex), ex.Occurrence)
}

// ledger remembers, per session, the fingerprints of the turns stored,
// in one file per session under dir.
type ledger struct {
	dir      string
	mu       sync.Mutex
	sessions map[string]*sessionTurns
	// taking holds the turns the proxy is taking (checked, its copy not
	// durable yet), by claimKey; the channel is closed once it took or
	// dropped the turn. The transcript's copy of such a turn waits for
	// that (wait): stored now it would be stored twice; skipped, and a
	// kill before the proxy's copy is durable would lose it.
	taking map[string]chan struct{}
	// onWait, when set (tests), is called as capture begins waiting for
	// a turn the proxy is taking.
	onWait func()
}

// sessionTurns is one session's fingerprints (order oldest first) and,
// for the proxy, whether the turn it is in was already stored.
type sessionTurns struct {
	set      map[string]bool
	order    []string
	skipping bool
}

func newLedger(dir string) *ledger {
	return &ledger{dir: dir, sessions: map[string]*sessionTurns{}, taking: map[string]chan struct{}{}}
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

// claimKey names a session's turn (its TurnKey) in ledger.taking.
func claimKey(session, key string) string {
	return session + "\x00" + key
}

// proxy decides for an exchange the capture proxy took whether it belongs
// to a turn already stored (from the transcript): an exchange that begins
// a turn is looked up; the tool-loop iterations after it follow its
// verdict. It records nothing on disk: a new turn is recorded (proxyTook)
// only once the proxy's copy of it is on disk or decided, so a kill in
// between leaves the transcript's copy to be stored. Until then the turn
// is marked as being taken (in memory), and its transcript copy waits
// (wait); proxyTook or proxyDropped ends that.
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
	key := TurnKey(ex)
	if st.set[key] {
		st.skipping = true
		return true, nil
	}
	st.skipping = false
	if k := claimKey(ex.SessionID, key); l.taking[k] == nil {
		l.taking[k] = make(chan struct{})
	}
	return false, nil
}

// release ends the proxy's taking of the turn ex begins.
func (l *ledger) release(ex memory.Exchange) {
	if ex.SessionID == "" || ex.ToolLoop {
		return
	}
	k := claimKey(ex.SessionID, TurnKey(ex))
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch := l.taking[k]; ch != nil {
		close(ch)
		delete(l.taking, k)
	}
}

// wait returns once the proxy is not taking the session's turn key (a
// TurnKey; at once when it is not), or ctx ends.
func (l *ledger) wait(ctx context.Context, session, key string) error {
	l.mu.Lock()
	ch := l.taking[claimKey(session, key)]
	onWait := l.onWait
	l.mu.Unlock()
	if ch == nil {
		return nil
	}
	if onWait != nil {
		onWait()
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the capture proxy to take a turn of session %s: %w", session, ctx.Err())
	}
}

// proxyTook records the turn ex begins as the proxy's, once the proxy's
// copy of ex is durable (on disk or decided): the transcript's copy is
// skipped from then on. A tool-loop iteration or an exchange of no
// session records nothing.
func (l *ledger) proxyTook(ex memory.Exchange) error {
	if ex.SessionID == "" || ex.ToolLoop {
		return nil
	}
	defer l.release(ex) // also when it could not be recorded: the transcript's copy is stored then
	return l.add(ex.SessionID, TurnKey(ex))
}
