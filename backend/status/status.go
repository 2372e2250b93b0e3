// Package status describes a running memtray: the counts of GET
// /api/stats, the UI's overview and its warnings, the live feed's
// subscriptions and "stats" events, and MCP's memory_status. The daemon's
// own state (faults, the clock watch, the pipeline's, the transcripts' and
// the recaller's counters, the capture state) comes in as functions given
// at construction.
package status

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/events"
	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/mcp"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// Fault codes the daemon's FaultWarning is asked about.
const (
	// FaultEmbedder: the embedder failed since it last answered.
	FaultEmbedder = "embedder_failing"
	// FaultDiskFull: a write failed for lack of disk space.
	FaultDiskFull = "disk_full"
	// FaultPipeline: the write pipeline failed otherwise.
	FaultPipeline = "pipeline_error"
)

// Options are what the service reads. Every field is required unless
// its comment says otherwise.
type Options struct {
	// Version is the program's version.
	Version string
	// StartedAt is when the daemon started.
	StartedAt time.Time
	// Listen is the address the API listens on ("" before Serve).
	Listen func() string
	// Store is the memory store; StorePath its folder.
	Store     *store.Store
	StorePath string
	// Clock is the daemon's clock.
	Clock memory.Clock
	// Bus is the live feed's event bus.
	Bus *events.Bus
	// Decisions is the recent-decisions log, read up to LogSize entries.
	Decisions *feed.DecisionLog
	LogSize   int
	// Judge is the optional judge (nil when off).
	Judge memory.Judge
	// Capture is the capture state; Capturing whether the proxy keeps
	// what it sees.
	Capture   func(ctx context.Context) (httpapi.CaptureState, error)
	Capturing func() bool
	// EmbedderModel, EmbedderReason and EmbedderDegraded describe the
	// embedder now: its model, why it was chosen, whether it does not answer.
	EmbedderModel    func() string
	EmbedderReason   func() string
	EmbedderDegraded func() bool
	// Pipeline, Transcripts, Recall and Thresholds are the counters of
	// the write pipeline, the session files, the recaller, and the
	// similarity thresholds in use.
	Pipeline    func() httpapi.PipelineStats
	Transcripts func() *httpapi.TranscriptStats
	Recall      func() search.RecallStats
	Thresholds  func() []calib.Value
	// FaultWarning is the sentence for a fault code failing now ("" when not).
	FaultWarning func(code string) string
	// ClockWarning is the sentence for a recent clock jump ("" when none).
	ClockWarning func() string
	// IndexLagAt is when a text index write last lagged (zero when never).
	IndexLagAt func() time.Time
	// LastSweep is the scheduled steward sweep's last outcome: when, and
	// its error ("" when it worked or never ran).
	LastSweep func() (at time.Time, err string)
}

// Service describes the running daemon.
type Service struct {
	o Options
}

// New checks opts and makes the service.
func New(opts Options) (*Service, error) {
	if opts.Store == nil || opts.Clock == nil || opts.Bus == nil || opts.Decisions == nil || opts.Listen == nil ||
		opts.Capture == nil || opts.Capturing == nil || opts.EmbedderModel == nil || opts.EmbedderReason == nil ||
		opts.EmbedderDegraded == nil || opts.Pipeline == nil || opts.Transcripts == nil || opts.Recall == nil ||
		opts.Thresholds == nil || opts.FaultWarning == nil || opts.ClockWarning == nil || opts.IndexLagAt == nil ||
		opts.LastSweep == nil {
		return nil, errors.New("status: a required option is missing")
	}
	return &Service{o: opts}, nil
}

var _ httpapi.Status = (*Service)(nil)

// Events is the daemon's event bus (the live feed).
func (s *Service) Events() *events.Bus { return s.o.Bus }

// Subscribe opens a live feed for GET /api/events (see httpapi.UI).
func (s *Service) Subscribe(lastEventID string, buffer int) (*events.Subscription, bool, error) {
	id, ok, err := httpapi.ParseEventID(lastEventID)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return s.o.Bus.Subscribe(buffer), false, nil
	}
	sub, reset := s.o.Bus.Resume(id, buffer)
	return sub, reset, nil
}

// Stats describes the store and the embedder.
func (s *Service) Stats(ctx context.Context) (httpapi.Stats, error) {
	st := httpapi.Stats{Version: s.o.Version, PID: os.Getpid(), StartedAt: s.o.StartedAt, Listen: s.o.Listen(),
		Store: s.o.Store.Info(), Embedder: s.o.EmbedderModel(), EmbedderReason: s.o.EmbedderReason(),
		ByKind: map[string]int{}, ByProject: map[string]int{}}
	now := s.o.Clock.Now()
	err := s.o.Store.Iterate(ctx, store.Filter{IncludeSnoozed: true, IncludeSuperseded: true}, func(m memory.Memory) error {
		st.ByKind[string(m.Kind)]++
		st.ByProject[m.Project]++
		if m.Snoozed(now) {
			st.Snoozed++
		}
		if m.Superseded() {
			st.Superseded++
		}
		return nil
	})
	st.Pipeline = s.o.Pipeline()
	cs, _ := s.o.Capture(ctx)
	st.Capture = &cs
	st.Transcripts = s.o.Transcripts()
	st.Recall = s.o.Recall()
	st.Warnings = s.warnings(ctx)
	st.Thresholds = s.o.Thresholds()
	return st, err
}

// Status describes the store for the MCP memory_status tool.
func (s *Service) Status(ctx context.Context) (mcp.Status, error) {
	st, err := s.Stats(ctx)
	if err != nil {
		return mcp.Status{}, fmt.Errorf("status: %w", err)
	}
	out := mcp.Status{ByKind: st.ByKind, ByProject: st.ByProject, Snoozed: st.Snoozed, Superseded: st.Superseded,
		StoreDir: st.Store.Dir, StoreBytes: dirSize(st.Store.Dir), Embedder: st.Embedder, Version: st.Version,
		Capture: captureSummary(st.Capture)}
	for _, n := range st.ByKind {
		out.Total += n
	}
	if out.StoreDir == "" {
		out.StoreDir = s.o.StorePath
	}
	return out, nil
}

// StatsEvent is the compact overview of a "stats" event.
func (s *Service) StatsEvent(ctx context.Context) httpapi.StatsEvent {
	now := s.o.Clock.Now()
	y, m, day := now.Date()
	midnight := time.Date(y, m, day, 0, 0, 0, 0, now.Location())
	ev := httpapi.StatsEvent{Memories: s.o.Store.CountCurrent(), Capturing: s.o.Capturing(), Today: map[string]int{},
		Embedder: s.o.EmbedderModel(), Degraded: s.o.EmbedderDegraded(), Subscribers: s.o.Bus.Subscribers()}
	// The hourly counters count every decision, kept across restarts.
	for _, h := range s.o.Decisions.Hours(midnight) {
		if !h.Hour.Before(midnight) {
			for v, n := range h.Verdicts {
				ev.Today[v] += n
			}
		}
	}
	ev.Warnings = len(s.warnings(ctx))
	return ev
}

// captureSummary says in a few words whether the proxy keeps what it sees.
func captureSummary(c *httpapi.CaptureState) string {
	switch {
	case c == nil:
		return "unknown"
	case !c.Enabled:
		return "off (the proxy forwards but keeps nothing)"
	case len(c.ExcludeProjects) == 1:
		return "on (1 project excluded)"
	case len(c.ExcludeProjects) > 1:
		return fmt.Sprintf("on (%d projects excluded)", len(c.ExcludeProjects))
	}
	return "on"
}

// dirSize adds up the sizes of the regular files under dir (0 when unreadable).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil // skip what cannot be read
		}
		if e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
