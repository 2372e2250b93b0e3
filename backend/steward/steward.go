package steward

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// DefaultMinInterval is how often, at most, a rate-limited operation
// (decay_stale, boost_active, decay_unreinforced) touches the same memory:
// a week, the cadence of the dream runs the design comes from.
const DefaultMinInterval = 7 * day

// Options configures New.
type Options struct {
	// Dir holds the undo journals of the last JournalDepth applied runs
	// (runs/) and the ledger (created 0700 if missing). Plan works without it; Apply and Undo
	// need it.
	Dir string
	// Clock tells the time; nil is the wall clock.
	Clock memory.Clock
	// Logger receives one line per applied or undone run; nil discards.
	Logger *slog.Logger
	// MinInterval: a rate-limited operation touches a memory at most once
	// per MinInterval (0: DefaultMinInterval).
	MinInterval time.Duration
	// Embedder makes the store's model (the daemon's swappable embedder).
	// Restore and Undo embed with it the texts of records whose vector is
	// of a model the store left since (a re-embedding after they were
	// trashed or journaled); nil makes those an embedding model mismatch.
	Embedder memory.Embedder
}

// Steward plans and applies consolidation over one store. Its methods are
// safe for concurrent use; Apply and Undo run one at a time.
type Steward struct {
	st    *store.Store
	cfg   config.Steward
	opts  Options
	clock memory.Clock
	log   *slog.Logger
	mu    sync.Mutex // serialises Apply, Undo and the ledger
	// checked is done once the journal a kill may have left has been
	// looked at (checkJournals, under mu).
	checked bool
	// mergeAt, when not 0, is the float64 bits of the merge similarity
	// SetMergeSimilarity set, which replaces cfg's.
	mergeAt atomic.Uint64
	// beforeWrite, when set (by tests), runs between reading the records
	// of a run and writing it.
	beforeWrite func()
}

// New returns a Steward for st with the thresholds of cfg. It removes
// the temporary files a killed process left in opts.Dir (the store's lock,
// which st holds, keeps any other process out of it); the first Plan,
// Apply, Undo or Runs also removes the undo journal a kill may have left
// (see dropPhantomJournal), off the start-up path.
func New(st *store.Store, cfg config.Steward, opts Options) *Steward {
	s := &Steward{st: st, cfg: cfg, opts: opts, clock: opts.Clock, log: opts.Logger}
	if s.clock == nil {
		s.clock = memory.SystemClock{}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.opts.MinInterval <= 0 {
		s.opts.MinInterval = DefaultMinInterval
	}
	if s.opts.Dir != "" {
		removeTemps(s.opts.Dir)
		removeTemps(filepath.Join(s.opts.Dir, runsDir))
	}
	return s
}

// PlanOptions says what a plan covers.
type PlanOptions struct {
	// Project limits the plan to one project's memories; "" covers the
	// whole store.
	Project string `json:"project,omitempty"`
	// All merges across projects too (the store-wide `dream --all`);
	// without it, only memories of the same project merge. It excludes
	// Project.
	All bool `json:"all,omitempty"`
	// Ops lists the operations to plan (config.StewardOps names); empty
	// plans all six.
	Ops []string `json:"ops,omitempty"`
	// Apply lists the operations the caller means to apply from the plan
	// (config.StewardOps names; the scheduled sweep's auto_apply); empty:
	// all of Ops. Every operation of Ops is still planned, but only these
	// change the memory the operations after them in sweep order are
	// judged on: a merge not in Apply leaves the survivor's later
	// operations judged on its own record and its loser judged at all, a
	// boost or prune not in Apply leaves the decays judged without it. So
	// applying exactly Apply finds every action of those operations still
	// due (Apply re-runs them in sweep order on the current record).
	Apply []string `json:"apply,omitempty"`
	// FullMerge searches merge candidates for every memory even when an
	// incremental merge scan would do (see Plan).
	FullMerge bool `json:"full_merge,omitempty"`
}

// Snapshot is the state of a memory's fields the operations change.
type Snapshot struct {
	Importance       float64   `json:"importance"`
	CooldownUntil    time.Time `json:"cooldown_until,omitzero"`
	AccessCount      int       `json:"access_count"`
	ReinforcedCount  int       `json:"reinforced_count"`
	FeedbackSum      float64   `json:"feedback_sum"`
	FeedbackN        int       `json:"feedback_n"`
	Hits             int       `json:"hits"`
	LastAccessed     time.Time `json:"last_accessed,omitzero"`
	LastReinforcedAt time.Time `json:"last_reinforced_at,omitzero"`
	// Text is set for merges only.
	Text string `json:"text,omitempty"`
	// UpdatedAt identifies the version of the record the plan saw; Apply
	// skips the action when the record's UpdatedAt differs.
	UpdatedAt time.Time `json:"updated_at"`
	// Trashed: the action moves the memory to the trash.
	Trashed bool `json:"trashed,omitempty"`
}

func snapshot(m *memory.Memory, text bool) Snapshot {
	s := Snapshot{Importance: m.Importance, CooldownUntil: m.CooldownUntil, AccessCount: m.AccessCount,
		ReinforcedCount: m.ReinforcedCount, FeedbackSum: m.FeedbackSum, FeedbackN: m.FeedbackN, Hits: len(m.Hits),
		LastAccessed: m.LastAccessed, LastReinforcedAt: m.LastReinforcedAt, UpdatedAt: m.UpdatedAt}
	if text {
		s.Text = m.Text
	}
	return s
}

// Action is one planned change to one memory.
type Action struct {
	Op      string      `json:"op"`
	ID      string      `json:"id"`
	Project string      `json:"project,omitempty"`
	Kind    memory.Kind `json:"kind"`
	Type    memory.Type `json:"type"`
	// Preview is the start of the memory's text.
	Preview string `json:"preview"`
	// Before and After are the memory's state before and after this action
	// (actions on one memory chain: the second's Before is the first's
	// After).
	Before Snapshot `json:"before"`
	After  Snapshot `json:"after"`
	// Merges: ID is the survivor; MergedIDs the memories merged into it
	// (they go to the trash) and MergedBefore their state; KeptText the
	// survivor's text after the merge; Similarity their cosine.
	Survivor     string     `json:"survivor,omitempty"`
	MergedIDs    []string   `json:"merged_ids,omitempty"`
	MergedBefore []Snapshot `json:"merged_before,omitempty"`
	KeptText     string     `json:"kept_text,omitempty"`
	Similarity   float64    `json:"similarity,omitempty"`
	// Quality is the memory's quality score (see Quality), when the store
	// has enough retrieval events to score (Plan.Scored).
	Quality float64 `json:"quality,omitempty"`
	Reason  string  `json:"reason"`
}

// Plan is a dry run: what a sweep would change, and why.
type Plan struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	// Scope is "store", "all" (merging across projects) or "project:<name>".
	Scope   string   `json:"scope"`
	Project string   `json:"project,omitempty"`
	All     bool     `json:"all,omitempty"`
	Ops     []string `json:"ops"`
	// Counts is the number of actions per operation.
	Counts map[string]int `json:"counts"`
	// Scanned is the number of memories looked at.
	Scanned  int           `json:"scanned"`
	Duration time.Duration `json:"duration_ns"`
	// Events is the store's retrieval events (sum of access counts) and
	// MaxHits the largest access count; Scored says whether quality scores
	// are given (Events >= quality_min_events).
	Events  int  `json:"events"`
	MaxHits int  `json:"max_hits"`
	Scored  bool `json:"scored"`
	// MergeSince is set when the merge scan was incremental: the start of
	// the previous scan; only memories written since (any write: created,
	// updated, imported, restored from the trash, pulled from the team)
	// were searched for neighbours (plus the pairs the previous scan
	// proposed or refused). MergeQueried counts the memories searched.
	MergeSince   time.Time `json:"merge_since,omitzero"`
	MergeQueried int       `json:"merge_queried"`
	// Actions, in operation order, memory by memory.
	Actions []Action `json:"actions"`
	// Refused lists near-duplicates (above the merge similarity) that are
	// not merged, each with both texts (Before.Text, the would-be
	// survivor's; MergedBefore[0].Text, the other's) and why: the merge
	// would lose a load-bearing token, one of them is pinned or snoozed,
	// or their types differ (at most maxRefused).
	Refused []Action `json:"refused,omitempty"`
}

// Skip is an action Apply or Undo did not carry out, and why.
type Skip struct {
	Op     string `json:"op,omitempty"`
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Result reports an Apply or an Undo.
type Result struct {
	// RunID names the applied run (the journal's); Undo reports the run it undid.
	RunID  string    `json:"run_id"`
	PlanID string    `json:"plan_id,omitempty"`
	At     time.Time `json:"at"`
	// Applied lists the actions carried out (Apply: with the state they
	// actually produced); Undo leaves it empty.
	Applied []Action `json:"applied,omitempty"`
	// Counts: Apply: actions per operation; Undo: "reverted" (records put
	// back exactly), "rebased" (reverted while keeping later changes),
	// "restored" (out of the trash).
	Counts  map[string]int `json:"counts"`
	Trashed int            `json:"trashed,omitempty"`
	Skipped []Skip         `json:"skipped,omitempty"`
}

// ErrNothingToUndo is returned by Undo when no applied run is recorded.
var ErrNothingToUndo = errors.New("nothing to undo: no applied steward run is recorded")

// Trash lists the memories in the store's trash (see store.Trash).
func (s *Steward) Trash(ctx context.Context) ([]store.TrashedMemory, error) {
	out, err := s.st.Trash(ctx)
	if err != nil {
		return nil, fmt.Errorf("steward: %w", err)
	}
	return out, nil
}

// Restore brings memories back from the trash (see store.Restore) and
// says where they went: a conflict copy's edit goes onto the memory it is
// a copy of (store.Restored).
func (s *Steward) Restore(ctx context.Context, ids ...string) (store.Restored, error) {
	r, err := s.st.RestoreWith(ctx, s.opts.Embedder, ids...)
	if err != nil {
		return r, fmt.Errorf("steward: %w", err)
	}
	return r, nil
}

// PurgeTrashed deletes for good from the trash the records ids, or every
// record in it when all is set, and returns how many it deleted (see
// store.PurgeTrashed: an id not in the trash is memory.ErrNotFound, and
// nothing is deleted).
func (s *Steward) PurgeTrashed(ctx context.Context, ids []string, all bool) (int, error) {
	var n int
	var err error
	if all {
		n, err = s.st.PurgeAllTrash(ctx)
	} else {
		n, err = s.st.PurgeTrashed(ctx, ids...)
	}
	if err != nil {
		return n, fmt.Errorf("steward: %w", err)
	}
	return n, nil
}

// PurgeTrash deletes for good what has been in the trash longer than
// cfg.TrashDays, and returns how many it deleted.
func (s *Steward) PurgeTrash(ctx context.Context) (int, error) {
	days := s.cfg.TrashDays
	if days <= 0 {
		days = 30
	}
	n, err := s.st.PurgeTrash(ctx, s.clock.Now().Add(-time.Duration(days)*day))
	if err != nil {
		return n, fmt.Errorf("steward: %w", err)
	}
	if n > 0 {
		s.log.Info("steward purged the trash", "deleted", n, "older_than_days", days)
	}
	return n, nil
}

// checkOps validates operation names; empty means all, in sweep order.
func checkOps(ops []string) ([]string, error) {
	if len(ops) == 0 {
		return slices.Clone(config.StewardOps), nil
	}
	var out []string
	for _, op := range config.StewardOps {
		if slices.Contains(ops, op) {
			out = append(out, op)
		}
	}
	for _, op := range ops {
		if !slices.Contains(config.StewardOps, op) {
			return nil, &memory.ValidationError{Problems: []string{fmt.Sprintf("unknown operation %q (want one of %v)", op, config.StewardOps)}}
		}
	}
	return out, nil
}

func newRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// preview is the first 120 characters of text, white space folded.
func preview(text string) string {
	t := []rune(memory.NormalizeSpace(text))
	if len(t) > 120 {
		return string(t[:119]) + "…"
	}
	return string(t)
}
