package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/ingest"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/tail"
)

// TranscriptsDir, in the data dir, holds the state of capture from the
// agents' session files: a cursor per file, the stored turns' fingerprints
// per session, and when it was first enabled.
const TranscriptsDir = "transcripts"

// openTranscripts sets up capture from session files
// (capture.transcripts), unless it is off.
func (d *Daemon) openTranscripts() error {
	tc := d.cfg.Capture.Transcripts
	if !tc.Enabled {
		return nil
	}
	roots := map[string][]string{}
	if home, err := os.UserHomeDir(); err == nil {
		roots = tail.DefaultRoots(home)
	}
	if len(tc.ClaudeCodeDirs) > 0 {
		roots[tail.AgentClaudeCode] = slices.Clone(tc.ClaudeCodeDirs)
	}
	if len(tc.CodexDirs) > 0 {
		roots[tail.AgentCodex] = slices.Clone(tc.CodexDirs)
	}
	t, err := tail.New(tail.Options{Dir: filepath.Join(d.cfg.DataDir, TranscriptsDir), Roots: roots,
		Sink: d.ingestTurn, Resume: d.resumeTurns, Allow: d.allowTurn, QueueSize: tc.QueueSize, MaxChunk: tc.MaxChunk,
		Idle: time.Duration(tc.Idle), Now: d.clock.Now, Logger: d.log})
	if err != nil {
		return fmt.Errorf("capture from transcripts: %w", err)
	}
	d.tail = t
	return nil
}

// runTranscripts reads the files hooks hand over and watches the session
// folders until ctx ends.
func (d *Daemon) runTranscripts(ctx context.Context) {
	if d.tail == nil {
		return
	}
	go d.tail.Watch(ctx, time.Duration(d.cfg.Capture.Transcripts.Poll))
	d.tail.Run(ctx)
}

// ingestTurn runs one ended turn of a session file through the path the
// proxy's turns take (processTurn): the session is live, not a complete
// transcript, so a headless session under the count is held, and a turn
// that corrects what an earlier turn of the session stored revises it.
// An exchange that fails validation is left out (logged, counted in the
// transcript stats' skipped_exchanges) and the rest of the turn is
// processed; a turn with nothing valid left is an error wrapping
// memory.ErrInvalid (the tail counts it invalid).
func (d *Daemon) ingestTurn(ctx context.Context, exs []memory.Exchange) error {
	runs, skipped := ingest.SkipInvalid(exs)
	if len(skipped) > 0 {
		d.invalidExchanges.Add(int64(len(skipped)))
		sess, turn := "", 0
		if len(exs) > 0 {
			sess, turn = exs[0].SessionID, exs[0].Turn
		}
		d.log.Warn("invalid exchanges of a session file's turn left out; the rest of the turn is stored",
			"session", sess, "turn", turn, "skipped", len(skipped), "detail", ingest.SkippedLine(skipped))
		if len(runs) == 0 {
			return fmt.Errorf("%w: the turn: %s", memory.ErrInvalid, ingest.SkippedLine(skipped))
		}
	}
	for _, run := range runs {
		for _, t := range ingest.GroupTurns(run) {
			if err := d.processTurn(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// resumeTurns reads again the turns of a session file that an earlier
// run of the daemon captured (they lie before the file's saved cursor):
// the pipeline remembers what those its session's next turns can reach
// said and kept (ingest.Pipeline.ResumeTurns), so the session's next
// turns are decided as an uninterrupted capture decides them. Nothing is
// stored or recorded.
func (d *Daemon) resumeTurns(ctx context.Context, turns [][]memory.Exchange) error {
	var all []ingest.Turn
	for _, exs := range turns {
		runs, _ := ingest.SkipInvalid(exs)
		for _, run := range runs {
			all = append(all, ingest.GroupTurns(run)...)
		}
	}
	_, err := d.pipeline.ResumeTurns(ctx, all)
	return err
}

// allowTurn keeps capture from session files under the same switch as the
// proxy: nothing is stored while capture is off or paused, or from an
// excluded project (by name, or a directory containing the session's).
func (d *Daemon) allowTurn(ex memory.Exchange, cwd string) bool {
	return d.settings.AllowTurn(ex.Project, cwd)
}

// CaptureTranscript queues a hook's session file (POST
// /api/capture/transcript); it never waits for the file to be read.
func (d *Daemon) CaptureTranscript(_ context.Context, req httpapi.TranscriptRequest) (httpapi.TranscriptAccepted, error) {
	if req.Event == tail.EventStop || req.Event == tail.EventSessionEnd {
		d.liveStopped(req.SessionID, req.Event == tail.EventSessionEnd) // the proxy's turn of the session has ended too
	}
	if d.tail == nil {
		return httpapi.TranscriptAccepted{}, fmt.Errorf("%w: capture from session files is off (capture.transcripts.enabled)", memory.ErrUnavailable)
	}
	ok, err := d.tail.Submit(tail.Request{Path: req.Path, SessionID: req.SessionID, CWD: req.CWD, Event: req.Event, Agent: req.Agent})
	if err != nil {
		return httpapi.TranscriptAccepted{}, err
	}
	return httpapi.TranscriptAccepted{Queued: ok}, nil
}

// skipProxyExchange says whether the proxy's exchange belongs to a turn
// stored from a session file already. It records nothing on disk: a new
// turn is then proxyTook's or proxyDropped's to settle.
func (d *Daemon) skipProxyExchange(ex memory.Exchange) bool {
	if d.tail == nil {
		return false
	}
	skip, err := d.tail.ProxyExchange(ex)
	if err != nil {
		d.log.Warn("could not check the proxy's exchange against the session files' turns", "err", err)
	}
	return skip
}

// proxyTook records the turn the proxy's exchange begins as the proxy's,
// once its copy is durable (takeProxyExchange), so the session file's copy
// is skipped.
func (d *Daemon) proxyTook(ex memory.Exchange) {
	if d.tail == nil {
		return
	}
	if err := d.tail.ProxyTook(ex); err != nil {
		d.log.Warn("could not record the proxy's turn: its session file copy may be stored too", "err", err)
	}
}

// proxyDropped says the proxy's exchange was not kept (its handler
// failed): the session file's copy of its turn is stored.
func (d *Daemon) proxyDropped(ex memory.Exchange) {
	if d.tail != nil {
		d.tail.ProxyDropped(ex)
	}
}

// transcriptStats summarises capture from session files for Stats.
func (d *Daemon) transcriptStats() *httpapi.TranscriptStats {
	if d.tail == nil {
		return &httpapi.TranscriptStats{}
	}
	s := d.tail.Stats()
	return &httpapi.TranscriptStats{Enabled: true, Since: s.Since, Files: s.Files, Pending: s.Pending, Turns: s.Turns,
		Exchanges: s.Exchanges, Duplicates: s.Duplicates, ProxyDuplicates: s.ProxyDuplicates, NotAllowed: s.NotAllowed,
		Dropped: s.Dropped, Refused: s.Refused, Resets: s.Resets, Errors: s.Errors + s.Invalid, LastError: s.LastError,
		SkippedExchanges: int(d.invalidExchanges.Load())}
}

// TailStats reports the counters of capture from session files (Queued:
// the files waiting or being read now); false when it is off.
func (d *Daemon) TailStats() (tail.Stats, bool) {
	if d.tail == nil {
		return tail.Stats{}, false
	}
	return d.tail.Stats(), true
}
