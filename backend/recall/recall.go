// Package recall is the recall service: what the hooks, MCP and the API
// ask for to give an agent the memories that matter for a turn. It runs
// search.Recaller (once per user turn, never a memory a session already
// has) under the limits the settings set at runtime, retries a recall the
// embedding model's switch cut short, and resets what a session was given
// (compaction, /clear). It keeps the recall log: each recall that searched
// (the prompt redacted, what was given and withheld and why) and the
// feedback the memories given got later, for the window's Recall view.
package recall

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/redact"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/store"
)

// Options configures New.
type Options struct {
	// Recaller gives the memories; required.
	Recaller *search.Recaller
	// Built is the recall configuration Recaller was built with.
	Built config.Recall
	// Live is the recall configuration now (the settings change it at
	// runtime); nil means Built.
	Live func() config.Recall
	// Generation is the embedding model's generation (embed.Swappable's):
	// a recall that fails while it changes is run again. Nil: never.
	Generation func() uint64
	// Log keeps the recall log; nil: recalls are not logged (and the
	// log reads empty).
	Log Log
	// Limits bound the log; zero fields are store's defaults.
	Limits store.RecallLimits
	// Clock dates the log's entries; nil: the wall clock.
	Clock memory.Clock
	// Location is the time zone of the statistics' days; nil: time.Local.
	Location *time.Location
	// LogQueue, LogBatch and LogEvery tune the log's writer: how many
	// recalls wait at most (the oldest dropped beyond), and how many
	// waiting or how long the first waits make it write them, in one
	// transaction. Zero: DefaultLogQueue, DefaultLogBatch,
	// DefaultLogEvery.
	LogQueue int
	LogBatch int
	LogEvery time.Duration
	// Logger takes the log writer's failures; nil: slog.Default().
	Logger *slog.Logger
}

// Log is what the service needs of the store to keep the recall log.
type Log interface {
	AddRecalls(ctx context.Context, es []store.RecallEntry, lim store.RecallLimits) ([]store.RecallEntry, error)
	ClearRecallLog(ctx context.Context) (int, error)
	RecallLog(ctx context.Context, q store.RecallLogQuery) ([]store.RecallEntry, error)
	EachRecall(ctx context.Context, since time.Time, fn func(store.RecallEntry) error) error
	AddRecallFeedback(ctx context.Context, ids []string, fb store.RecallFeedback) (int, error)
	AddRecallFeedbackOnce(ctx context.Context, seq uint64, ids []string, fb store.RecallFeedback) ([]string, error)
	GetMany(ctx context.Context, ids []string) (map[string]memory.Memory, error)
}

var _ Log = (*store.Store)(nil)

// Service is the recall service; New makes one, Close flushes its log.
type Service struct {
	o Options
	w *logWriter // nil without a log
}

// New returns the service over o.Recaller.
func New(o Options) (*Service, error) {
	if o.Recaller == nil {
		return nil, errors.New("recall: a recaller is required")
	}
	if o.Live == nil {
		built := o.Built
		o.Live = func() config.Recall { return built }
	}
	if o.Generation == nil {
		o.Generation = func() uint64 { return 0 }
	}
	if o.Clock == nil {
		o.Clock = memory.SystemClock{}
	}
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.LogQueue <= 0 {
		o.LogQueue = DefaultLogQueue
	}
	if o.LogBatch <= 0 {
		o.LogBatch = DefaultLogBatch
	}
	if o.LogEvery <= 0 {
		o.LogEvery = DefaultLogEvery
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Service{o: o}
	if o.Log != nil {
		s.w = newLogWriter(o)
	}
	return s, nil
}

// Close writes the recalls still waiting for the log and stops its
// writer; recalls after it are not logged. It returns the last write's
// error.
func (s *Service) Close() error {
	if s.w == nil {
		return nil
	}
	return s.w.close()
}

// Recall hands an agent the memories that matter for this turn (see
// search.Recaller). recall.k and recall.max_chars changed at runtime bound
// every request but a search (the Recaller takes the lower of a request's
// and its own); a recall that fails while the embedding model switches is
// run again on the new model. A recall that searched is queued for the
// log, never waiting for it (see Options.LogQueue).
func (s *Service) Recall(ctx context.Context, req search.RecallRequest) (search.Recalled, error) {
	if !validAgent(req.Agent) {
		return search.Recalled{}, fmt.Errorf("%w: agent must be at most %d lowercase letters, digits and dashes", memory.ErrInvalid, maxAgent)
	}
	if req.Event != search.EventSearch {
		live := s.o.Live()
		if live.K != s.o.Built.K && req.K >= 0 {
			req.K = lowerBound(req.K, live.K)
		}
		if live.MaxChars != s.o.Built.MaxChars && req.MaxChars >= 0 {
			req.MaxChars = lowerBound(req.MaxChars, live.MaxChars)
		}
	}
	// Secrets in the prompt are masked before anything reads it: the
	// embedder, the analyser, a skip reason naming the prompt's words, the
	// log.
	req.Prompt, _ = redact.Redact(req.Prompt)
	gen := s.o.Generation()
	out, err := s.o.Recaller.Recall(ctx, req)
	if err != nil && s.o.Generation() != gen {
		out, err = s.o.Recaller.Recall(ctx, req) // the embedding model switched during the recall
	}
	if err == nil {
		s.log(req, out)
	}
	return out, err
}

// ResetSession forgets what a session was given (compaction, /clear).
func (s *Service) ResetSession(_ context.Context, sessionID string) error {
	if strings.TrimSpace(sessionID) == "" || len(sessionID) > search.MaxSessionIDLen {
		return fmt.Errorf("%w: a session id of 1..%d bytes is required", memory.ErrInvalid, search.MaxSessionIDLen)
	}
	s.o.Recaller.Reset(sessionID)
	return nil
}

// lowerBound is req bounded by limit, where 0 means unset.
func lowerBound(req, limit int) int {
	if req <= 0 || (limit > 0 && limit < req) {
		return limit
	}
	return req
}

// maxAgent bounds RecallRequest.Agent, in bytes.
const maxAgent = 64

// validAgent says whether agent names an agent as the log keeps it:
// empty, or at most maxAgent of a-z, 0-9 and '-'.
func validAgent(agent string) bool {
	if len(agent) > maxAgent {
		return false
	}
	for _, r := range agent {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}
