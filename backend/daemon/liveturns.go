package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
)

// Live turns. The capture proxy sees a session one exchange (one model
// request) at a time, but the write pipeline distils whole user turns: a
// finding stated between tool calls is judged with the rest of its turn,
// as `memtray ingest` judges it from the transcript. So the proxy's
// exchanges are buffered per session until the turn ends:
//
//   - an exchange whose response calls no tool: the model stopped
//     answering (what Claude Code's Stop hook reports, seen first);
//   - the session's next exchange that begins a turn (ingest.StartsTurn);
//   - capture.transcripts.idle with no exchange of the session;
//   - a Stop or SessionEnd hook naming the session (a Stop whose last
//     response called a tool is left to the idle timer: its result is
//     still coming);
//   - the turn growing past maxLiveExchanges or maxLiveBytes (it is cut
//     there), or all buffered turns past maxLiveTotal (the session seen
//     longest ago is ended);
//   - the daemon shutting down, or, for turns a kill left on disk, the
//     next start.
//
// The ended turn goes through processTurn (the headless hold, revisions
// of earlier turns). An exchange that ends its turn is decided with it
// before the proxy's worker takes it (an error leaves it untaken and
// counted, as before); every other one is appended, secrets masked, to a
// file of its session under LiveTurnsDir first, and the file is removed
// once the turn is decided: a restart loses no exchange the proxy took.
// Headless sessions are then held as whole turns (headless.go).

// LiveTurnsDir, in the data dir, holds the exchanges of the turns the
// capture proxy is assembling: one JSON Lines file per session, named like
// the hold's.
const LiveTurnsDir = "live-turns"

// Bounds of the live turns.
const (
	maxLiveExchanges = 512
	maxLiveBytes     = 16 << 20
	maxLiveTotal     = 64 << 20
)

// liveSession is the buffered turn of one session.
type liveSession struct {
	id   string
	exs  []memory.Exchange
	size int
	last time.Time
}

// liveTurns buffers the proxy's exchanges per session. Its mutex is held
// while a turn is processed, so a session's turns are decided in order.
type liveTurns struct {
	mu       sync.Mutex
	dir      string
	sessions map[string]*liveSession
	size     int
	// ends carries the sessions hooks said stopped or ended.
	ends chan liveEnd
}

// openLive reads the turns an earlier run left buffered; they are decided
// when runLive starts. A line it cannot read is skipped (counted in the
// error, which the caller logs).
func openLive(dataDir string) (*liveTurns, error) {
	l := &liveTurns{dir: filepath.Join(dataDir, LiveTurnsDir), sessions: map[string]*liveSession{}, ends: make(chan liveEnd, 64)}
	files, err := readSessionFiles(l.dir, "live turns", parseLive, func(ex memory.Exchange) string { return ex.SessionID })
	for id, exs := range files {
		s := &liveSession{id: id, exs: exs}
		for _, ex := range exs {
			s.size += ex.Size()
		}
		l.sessions[id] = s
		l.size += s.size
	}
	return l, err
}

// parseLive reads the lines of a live turn file: valid exchanges of one
// session, and how many lines were not.
func parseLive(data []byte) (exs []memory.Exchange, bad int) {
	return parseSessionLines(data, func(ex memory.Exchange, first *memory.Exchange) bool {
		return ingest.Validate(ex) == nil && ex.SessionID != "" && (first == nil || ex.SessionID == first.SessionID)
	})
}

func (l *liveTurns) file(session string) string {
	return filepath.Join(l.dir, holdFileName(session))
}

// append saves one more exchange of a session.
func (l *liveTurns) append(ex memory.Exchange) error {
	line, err := json.Marshal(ex)
	if err != nil {
		return fmt.Errorf("live turns: %w", err)
	}
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("live turns: %w", err)
	}
	f, err := os.OpenFile(l.file(ex.SessionID), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("live turns: %w", err)
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("live turns: %w", err)
	}
	return nil
}

// captureExchange is the proxy's handler: it adds ex to its session's
// turn, and decides the turn it ends. It returns once ex is decided or on
// disk.
func (d *Daemon) captureExchange(ctx context.Context, ex memory.Exchange) error {
	if ex.SessionID == "" {
		return d.process(ctx, ex) // no session to assemble a turn of
	}
	l := d.turn
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.sessions[ex.SessionID]
	if s != nil && ingest.StartsTurn(ex) {
		if err := d.endLive(ctx, s, nil); err != nil {
			return err
		}
		s = nil
	}
	if s == nil {
		s = &liveSession{id: ex.SessionID}
	}
	if len(ex.ToolCalls) == 0 {
		// The model stopped answering: the turn ends with ex, which
		// needs no saving (an error leaves it untaken, the rest kept).
		return d.endLive(ctx, s, &ex)
	}
	ex = redactExchange(ex)
	if err := l.append(ex); err != nil {
		d.noteProcessed(memory.Decision{}, err)
		return err
	}
	l.sessions[ex.SessionID] = s
	n := ex.Size()
	s.exs = append(s.exs, ex)
	s.size += n
	s.last = d.clock.Now()
	l.size += n
	if len(s.exs) >= maxLiveExchanges || s.size >= maxLiveBytes {
		if err := d.endLive(ctx, s, nil); err != nil {
			d.log.Warn("could not decide a captured turn cut at its bound; trying again when it ends", "err", err)
		}
		return nil
	}
	for l.size > maxLiveTotal {
		var oldest *liveSession
		for _, o := range l.sessions {
			if oldest == nil || o.last.Before(oldest.last) || (o.last.Equal(oldest.last) && o.id < oldest.id) {
				oldest = o
			}
		}
		if err := d.endLive(ctx, oldest, nil); err != nil {
			d.log.Warn("could not decide the oldest captured turn to make room; trying again later", "err", err)
			break
		}
	}
	return nil
}

// endLive decides the buffered turn of s, with last (when not nil) as its
// last exchange, and forgets it. Under l.mu. On an error the buffered
// exchanges stay (and on disk) and are tried again when the turn ends next.
func (d *Daemon) endLive(ctx context.Context, s *liveSession, last *memory.Exchange) error {
	l := d.turn
	exs := s.exs
	if last != nil {
		exs = append(slices.Clip(exs), *last)
	}
	for _, t := range ingest.GroupTurns(exs) {
		if err := d.processTurn(ctx, t); err != nil {
			return fmt.Errorf("decide a captured turn of session %s: %w", s.id, err)
		}
	}
	if len(s.exs) == 0 {
		return nil
	}
	delete(l.sessions, s.id)
	l.size -= s.size
	if err := os.Remove(l.file(s.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("live turns: %w", err)
	}
	return nil
}

// endLiveWhere ends the buffered turns of the sessions match selects, in
// the order of their ids.
func (d *Daemon) endLiveWhere(ctx context.Context, match func(*liveSession) bool) error {
	l := d.turn
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.sessions))
	for id, s := range l.sessions {
		if match(s) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var errs []error
	for _, id := range ids {
		if err := d.endLive(ctx, l.sessions[id], nil); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// liveEnd is a hook's word that a session stopped answering (Stop) or
// ended (ended: SessionEnd).
type liveEnd struct {
	session string
	ended   bool
}

// liveStopped tells the live turns that a hook said the session stopped
// answering or ended; it never waits.
func (d *Daemon) liveStopped(session string, ended bool) {
	if session == "" || d.turn == nil {
		return
	}
	select {
	case d.turn.ends <- liveEnd{session: session, ended: ended}:
	default: // full: the idle timer ends the turn
	}
}

// liveCheck is how often the daemon looks for idle live turns.
func liveCheck(idle time.Duration) time.Duration {
	return min(max(idle/4, 10*time.Millisecond), time.Minute)
}

// runLive ends live turns: those a kill left on disk at once, then idle
// ones and those hooks say stopped, until ctx ends; then every turn still
// buffered (the daemon is shutting down).
func (d *Daemon) runLive(ctx context.Context) {
	idle := time.Duration(d.cfg.Capture.Transcripts.Idle)
	if idle <= 0 {
		idle = 10 * time.Minute
	}
	if err := d.endLiveWhere(ctx, func(*liveSession) bool { return true }); err != nil && ctx.Err() == nil {
		d.log.Warn("could not decide the captured turns an earlier run left; trying again", "err", err)
	}
	tick := time.NewTicker(liveCheck(idle))
	defer tick.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			d.endAllLive(ctx)
			return
		case e := <-d.turn.ends:
			// A Stop whose last response called a tool is no end: its
			// result is still coming.
			err = d.endLiveWhere(ctx, func(s *liveSession) bool {
				return s.id == e.session && len(s.exs) > 0 && (e.ended || len(s.exs[len(s.exs)-1].ToolCalls) == 0)
			})
		case <-tick.C:
			now := d.clock.Now()
			err = d.endLiveWhere(ctx, func(s *liveSession) bool { return now.Sub(s.last) >= idle })
		}
		if err != nil && ctx.Err() == nil {
			d.log.Warn("could not decide a captured turn; trying again", "err", err)
		}
	}
}

// endAllLive decides every buffered turn at shutdown, for at most a few
// seconds; what is left stays on disk for the next start.
func (d *Daemon) endAllLive(ctx context.Context) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := d.endLiveWhere(sctx, func(*liveSession) bool { return true }); err != nil {
		d.log.Warn("captured turns not decided at shutdown: decided at the next start", "err", err)
	}
}

// liveState reports how many sessions have a turn buffered.
func (d *Daemon) liveState() int {
	d.turn.mu.Lock()
	defer d.turn.mu.Unlock()
	return len(d.turn.sessions)
}
