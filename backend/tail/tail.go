// Package tail captures agent sessions from the agents' own session files
// (Claude Code's ~/.claude/projects/<dir>/<session>.jsonl, Codex CLI's
// rollouts ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl): it reads what
// is new in a file since its cursor, and hands the exchanges of the turns
// that have ended to a sink (the daemon's ingest entry point, the one
// `memtray ingest` uses), in order, one turn at a time.
//
// A turn has ended when a later user prompt follows it in the file, when
// the agent's Stop hook fires for it (and its last response called no
// tool), when the session ends, or when the file has been idle for
// Options.Idle. Hooks hand files over through Submit (a bounded queue: a
// full one drops and counts, never waits); Scan finds files whose hooks
// did not fire (the daemon was down) by their size and modification time.
//
// Each file's Cursor is saved atomically after every step; a file that
// shrank, was replaced (another inode) or whose head changed is read again
// from the start. Each turn stored is remembered by its Fingerprint, per
// session, so a turn read twice (a file read again, or the same turn taken
// by the capture proxy first: ProxyExchange, then ProxyTook once the
// proxy's copy is durable) is stored once; the second comer is skipped
// and counted. Turns of a session that begin alike are numbered (the file
// counts them, the proxy's request history does: TurnKey), so the second
// is never taken for the first.
package tail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

// Events a Request may carry.
const (
	// EventStop: the agent finished answering (Claude Code's Stop hook).
	EventStop = "stop"
	// EventSessionEnd: the session ended; whatever is left is a turn.
	EventSessionEnd = "session-end"
	// EventPreCompact: the agent is about to compact its context.
	EventPreCompact = "pre-compact"
	// EventPoll: the watcher saw the file change.
	EventPoll = "poll"
	// EventIdle: the file has been quiet for Options.Idle.
	EventIdle = "idle"
)

// Defaults of Options.
const (
	DefaultQueueSize = 256
	DefaultMaxChunk  = 32 << 20
	DefaultIdle      = 10 * time.Minute
)

// Sink stores the exchanges of one ended turn, in order. An error wrapping
// memory.ErrInvalid drops the turn (it can never be stored; counted);
// any other error leaves the cursor where it was, to try again later.
type Sink func(ctx context.Context, exchanges []memory.Exchange) error

// ResumeSink takes the ended turns of a file before its saved cursor,
// each turn's exchanges in order (Options.Resume).
type ResumeSink func(ctx context.Context, turns [][]memory.Exchange) error

// Options configure New.
type Options struct {
	// Dir holds the tailer's state (cursors/, sessions/, enabled.json).
	Dir string
	// Roots are the session folders of each agent (AgentClaudeCode,
	// AgentCodex): the only places files are read from.
	Roots map[string][]string
	// Sink takes the ended turns. Required.
	Sink Sink
	// Resume, if set, takes the ended turns of a file before the cursor
	// this process found saved (an earlier process captured them: the
	// daemon was restarted in the middle of the session), all in one
	// call, in order, once, before the turns after the cursor go to Sink:
	// the pipeline reads again those the session's next turns can reach
	// for what they said and kept, so that they are decided as an
	// uninterrupted capture decides them (resume). They are not captured
	// again, nor counted; an error is logged and the file read on.
	Resume ResumeSink
	// Allow, if set, says whether a turn may be stored at all (capture
	// paused, project excluded); a turn it refuses is passed over and
	// counted.
	Allow func(ex memory.Exchange, cwd string) bool
	// QueueSize bounds the files waiting; MaxChunk the bytes read at once;
	// Idle is the quiet time after which a file's last turn has ended.
	QueueSize int
	MaxChunk  int
	Idle      time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// Request asks for a file to be read: what a hook sends.
type Request struct {
	Path      string `json:"path"`
	SessionID string `json:"session_id,omitempty"`
	CWD       string `json:"cwd,omitempty"`
	Event     string `json:"event"`
	Agent     string `json:"agent,omitempty"`
}

// Stats count what the tailer did since it started (Files: in all).
type Stats struct {
	// Files are the transcripts tracked; Pending those whose last turn
	// has not ended yet.
	Files   int `json:"files"`
	Pending int `json:"pending"`
	// Turns and Exchanges were handed to the sink.
	Turns     int `json:"turns"`
	Exchanges int `json:"exchanges"`
	// Duplicates are turns skipped as stored already (read again, or
	// taken by the proxy first); ProxyDuplicates are proxy exchanges
	// skipped because their turn came from a transcript first.
	Duplicates      int `json:"duplicates"`
	ProxyDuplicates int `json:"proxy_duplicates"`
	// NotAllowed are turns passed over (capture paused, project
	// excluded); Invalid turns the sink refused.
	NotAllowed int `json:"not_allowed"`
	Invalid    int `json:"invalid"`
	// Dropped are hook requests dropped because the queue was full;
	// Refused requests for a path outside the session folders.
	Dropped int `json:"dropped"`
	Refused int `json:"refused"`
	// Resets: files found truncated or replaced, read again.
	Resets int `json:"resets"`
	// Queued are files waiting or being read now; Processed the reads
	// done.
	Queued    int `json:"queued"`
	Processed int `json:"processed"`
	// Errors count failed reads; LastError is the newest.
	Errors    int       `json:"errors"`
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"`
}

// Tailer reads agents' session files as they grow. Create it with New,
// run Run (the worker) and, for the files hooks missed, Watch.
type Tailer struct {
	opts    Options
	log     *slog.Logger
	cursors cursorStore
	ledger  *ledger
	since   time.Time // capture from transcripts enabled: files older are history
	wake    chan struct{}
	// readBytes counts the bytes read from session files (for tests).
	readBytes atomic.Int64

	mu      sync.Mutex
	tracked map[string]*Cursor
	// loaded are the files whose cursor was read from disk and whose
	// turns before it are not resumed yet (Options.Resume).
	loaded  map[string]bool
	queue   []job
	queued  map[string]int // path -> index in queue
	reading int            // jobs taken by next and not done yet
	stats   Stats
}

// job is one file to read, and why.
type job struct {
	req   Request
	final bool // the file's last turn has ended (unless Stop and a tool call)
}

// New loads the cursors of Dir and records when capture from transcripts
// was first enabled (files not modified since are left to `memtray
// ingest`).
func New(opts Options) (*Tailer, error) {
	if opts.Sink == nil || opts.Dir == "" {
		return nil, errors.New("tail: Dir and Sink are required")
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.MaxChunk <= 0 {
		opts.MaxChunk = DefaultMaxChunk
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	t := &Tailer{opts: opts, log: opts.Logger, cursors: cursorStore{filepath.Join(opts.Dir, "cursors")},
		ledger: newLedger(filepath.Join(opts.Dir, "sessions")), wake: make(chan struct{}, 1),
		queued: map[string]int{}}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	for _, sub := range []string{"cursors", "sessions"} {
		dir := filepath.Join(opts.Dir, sub)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("tail: create %s: %w", dir, err)
		}
		// Temporaries of a write a kill cut short; the files they were
		// to replace are whole.
		config.RemoveTemps(dir)
	}
	since, err := enabledSince(opts.Dir, opts.Now())
	if err != nil {
		return nil, err
	}
	t.since = since
	cs, errs := t.cursors.loadAll()
	for _, err := range errs {
		t.log.Warn("transcript cursor unreadable; its file is read again from the start", "err", err)
	}
	t.tracked = cs
	t.loaded = map[string]bool{}
	for path, c := range cs {
		if c.Offset > 0 {
			t.loaded[path] = true
		}
	}
	t.stats.Since = since
	return t, nil
}

// enabledSince reads (or, the first time, writes) when transcript capture
// was enabled.
func enabledSince(dir string, now time.Time) (time.Time, error) {
	path := filepath.Join(dir, "enabled.json")
	var st struct {
		Since time.Time `json:"since"`
	}
	data, err := os.ReadFile(path)
	if err == nil && json.Unmarshal(data, &st) == nil && !st.Since.IsZero() {
		return st.Since, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return time.Time{}, fmt.Errorf("tail: read %s: %w", path, err)
	}
	st.Since = now.UTC().Truncate(time.Second)
	data, _ = json.Marshal(st)
	if err := config.WriteFileAtomic(path, data, 0o600); err != nil {
		return time.Time{}, fmt.Errorf("tail: %w", err)
	}
	return st.Since, nil
}

// Since is when capture from transcripts was first enabled.
func (t *Tailer) Since() time.Time { return t.since }

// Submit queues a hook's request and returns at once: false when the
// queue is full (dropped and counted). A path outside the agent's session
// folders, not a regular .jsonl file, or an unknown event or agent is an
// error wrapping memory.ErrInvalid (memory.ErrNotFound for a missing file).
func (t *Tailer) Submit(req Request) (bool, error) {
	switch req.Event {
	case EventStop, EventSessionEnd, EventPreCompact:
	default:
		return false, fmt.Errorf("%w: event must be stop, session-end or pre-compact, not %q", memory.ErrInvalid, req.Event)
	}
	if req.Agent == "" {
		req.Agent = AgentClaudeCode
	}
	if len(req.SessionID) > 256 || len(req.CWD) > 4096 || !memory.ValidUTF8(req.SessionID) || !memory.ValidUTF8(req.CWD) {
		return false, fmt.Errorf("%w: session_id (at most 256 bytes) and cwd (4096) must be UTF-8", memory.ErrInvalid)
	}
	path, err := t.check(req.Agent, req.Path)
	if err != nil {
		t.mu.Lock()
		t.stats.Refused++
		t.mu.Unlock()
		return false, err
	}
	req.Path = path
	ok := t.enqueue(job{req: req, final: req.Event != EventPreCompact})
	if !ok {
		t.mu.Lock()
		t.stats.Dropped++
		t.mu.Unlock()
	}
	return ok, nil
}

// enqueue adds j, or merges it into the job already queued for its file.
func (t *Tailer) enqueue(j job) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if i, ok := t.queued[j.req.Path]; ok {
		q := &t.queue[i]
		q.final = q.final || j.final
		if j.req.Event == EventSessionEnd || q.req.Event == EventPoll {
			q.req.Event = j.req.Event
		}
		return true
	}
	if len(t.queue) >= t.opts.QueueSize {
		return false
	}
	t.queued[j.req.Path] = len(t.queue)
	t.queue = append(t.queue, j)
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return true
}

// next takes the oldest job.
func (t *Tailer) next() (job, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.queue) == 0 {
		return job{}, false
	}
	j := t.queue[0]
	t.queue = t.queue[1:]
	t.reading++
	delete(t.queued, j.req.Path)
	for p, i := range t.queued {
		t.queued[p] = i - 1
	}
	return j, true
}

// Run reads the queued files one at a time, in order, until ctx ends.
func (t *Tailer) Run(ctx context.Context) {
	for {
		for {
			j, ok := t.next()
			if !ok {
				break
			}
			err := t.process(ctx, j)
			if err != nil && ctx.Err() != nil {
				t.done()
				return
			}
			if err != nil {
				t.fail(err)
			}
			t.done()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		}
	}
}

// Drain reads every queued file now, in the caller's goroutine (for
// commands and tests that must know the work is done), and returns the
// first error.
func (t *Tailer) Drain(ctx context.Context) error {
	var first error
	for {
		j, ok := t.next()
		if !ok {
			return first
		}
		if err := t.process(ctx, j); err != nil {
			t.fail(err)
			if first == nil {
				first = err
			}
		}
		t.done()
	}
}

// done ends a job next took.
func (t *Tailer) done() {
	t.mu.Lock()
	t.reading--
	t.stats.Processed++
	t.mu.Unlock()
}

func (t *Tailer) fail(err error) {
	t.mu.Lock()
	t.stats.Errors++
	t.stats.LastError = err.Error()
	t.mu.Unlock()
	t.log.Warn("transcript capture failed", "err", err)
}

// Stats reports the counters.
func (t *Tailer) Stats() Stats {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.stats
	s.Files, s.Queued = len(t.tracked), len(t.queue)+t.reading
	for _, c := range t.tracked {
		if c.pending() {
			s.Pending++
		}
	}
	return s
}

// Cursor returns a copy of path's cursor.
func (t *Tailer) Cursor(path string) (Cursor, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.tracked[path]
	if !ok {
		return Cursor{}, false
	}
	return *c, true
}

// ProxyExchange tells the capture proxy whether ex belongs to a turn
// already stored from a transcript (skip it; counted). It records
// nothing on disk: when ex begins a new turn (not skipped, not a tool-loop
// iteration), the proxy must call ProxyTook once its copy of ex is
// durable, or ProxyDropped if it will not be; until then the transcript's
// copy of the turn waits.
func (t *Tailer) ProxyExchange(ex memory.Exchange) (skip bool, err error) {
	skip, err = t.ledger.proxy(ex)
	if skip {
		t.mu.Lock()
		t.stats.ProxyDuplicates++
		t.mu.Unlock()
	}
	if err != nil {
		return false, fmt.Errorf("transcript capture: %w", err)
	}
	return skip, nil
}

// ProxyDropped says the proxy will not keep ex (its handler failed): the
// transcript's copy of its turn is stored.
func (t *Tailer) ProxyDropped(ex memory.Exchange) {
	t.ledger.release(ex)
}

// ProxyTook records the turn ex begins as taken by the capture proxy, so
// its transcript copy is skipped. The proxy calls it only once its copy of
// ex is durable (saved to its live turn, or decided): recorded earlier, a
// kill in between would lose the turn from both paths.
func (t *Tailer) ProxyTook(ex memory.Exchange) error {
	if err := t.ledger.proxyTook(ex); err != nil {
		return fmt.Errorf("transcript capture: %w", err)
	}
	return nil
}
