// Package httpapi is memtray's local JSON API: the handler the UI, the CLI and
// tools talk to, with token authentication and DNS-rebinding defences, and a
// Client that speaks it. It knows nothing of how the daemon is wired: the
// daemon fills Services.
package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/memtray/memtray/backend/calib"
	"github.com/memtray/memtray/backend/events"
	"github.com/memtray/memtray/backend/feed"
	"github.com/memtray/memtray/backend/importer"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/settings"
	"github.com/memtray/memtray/backend/store"
)

// Stats describes a running memtray.
type Stats struct {
	Version        string         `json:"version"`
	PID            int            `json:"pid"`
	StartedAt      time.Time      `json:"started_at"`
	Listen         string         `json:"listen,omitempty"`
	Store          store.Info     `json:"store"`
	Embedder       string         `json:"embedder"`
	EmbedderReason string         `json:"embedder_reason,omitempty"`
	ByKind         map[string]int `json:"by_kind"`
	ByProject      map[string]int `json:"by_project"`
	Snoozed        int            `json:"snoozed"`
	Superseded     int            `json:"superseded"`
	Pipeline       PipelineStats  `json:"pipeline"`
	// Capture is the proxy's state; Recall counts recalls and sessions.
	Capture *CaptureState `json:"capture,omitempty"`
	// Transcripts is capture from the agents' session files.
	Transcripts *TranscriptStats   `json:"transcripts,omitempty"`
	Recall      search.RecallStats `json:"recall"`
	// Warnings are the overview's: what a user should know now.
	Warnings []Warning `json:"warnings"`
	// Thresholds are the similarity thresholds in effect and where each
	// came from: the embedding model's calibration, the config file, or
	// the built-in default (see docs/embedders.md).
	Thresholds []calib.Value `json:"thresholds"`
	// Team is the team sync's state (issue 23); absent when the daemon
	// serves no team area.
	Team *TeamStatus `json:"team,omitempty"`
}

// PipelineStats describes the write pipeline: its gates, the judge's
// budget, and the recent decisions by verdict.
type PipelineStats struct {
	// ContentGate says whether the content score gate runs; NoiseBuffer
	// is the length of its rejection buffer.
	ContentGate bool `json:"content_gate"`
	NoiseBuffer int  `json:"noise_buffer"`
	// Judge names the judge ("" when off) and its calls against the caps.
	Judge         string `json:"judge,omitempty"`
	JudgeCallsHr  int    `json:"judge_calls_last_hour"`
	JudgeCallsDay int    `json:"judge_calls_last_day"`
	JudgeMaxHr    int    `json:"judge_max_per_hour"`
	JudgeMaxDay   int    `json:"judge_max_per_day"`
	JudgeTokens   int64  `json:"judge_tokens"`
	// Decisions counts the decisions in the recent log by verdict.
	Decisions map[string]int `json:"decisions"`
}

// Health is the unauthenticated answer of /api/health: enough for a CLI to
// know a memtray daemon owns the address, nothing about the data.
type Health struct {
	Service string `json:"service"` // always "memtray"
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// Proof answers a ?challenge= with Proof(token, challenge).
	Proof string `json:"proof,omitempty"`
	// Build describes the binary (the UI's About section shows it).
	Build *Build `json:"build,omitempty"`
	// Window: the daemon runs in the desktop app, whose window POST
	// /api/window/show brings forward.
	Window bool `json:"window,omitempty"`
	// OnDemand: the daemon was started by `memtray mcp` for an agent, and
	// exits by itself after idle_exit with no agent.
	OnDemand bool `json:"on_demand,omitempty"`
}

// Build describes a memtray binary: what `memtray version --json` prints.
// The Makefile stamps Version, Commit and BuildDate (-ldflags -X); a plain
// `go build` takes Commit and BuildDate from the VCS stamp, if any.
type Build struct {
	Version string `json:"version"`
	// Commit is the git commit, with "-dirty" when the tree was modified,
	// or "unknown".
	Commit string `json:"commit"`
	// BuildDate is RFC 3339 (UTC), or "unknown".
	BuildDate string `json:"build_date"`
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// Services are the areas the API serves, each a small interface declared
// beside its routes. The daemon fills it in-process with its services;
// Client.Services fills it over HTTP, so the CLI works the same either
// way. Adding an operation touches its area's interface, its route and
// Client, and the service that does it.
type Services struct {
	Memories    Memories
	Feedback    Feedback
	Feed        Feed
	Status      Status
	Recaller    Recaller
	RecallLog   RecallLog
	Settings    Settings
	Transfer    Transfer
	Importer    Importer
	Steward     Steward
	Setup       Setup
	Autostarter Autostarter
	Welcome     Welcome
	Tokens      Tokens
	Embedders   Embedders
	Jobs        Jobs
	Team        Team
	Doctor      Doctor
}

// Memories is the part of Services that adds, finds, reads, edits and
// deletes memories, and exports and imports the store as a stream.
type Memories interface {
	Add(ctx context.Context, req AddRequest) (memory.Memory, error)
	Search(ctx context.Context, req SearchRequest) ([]memory.Hit, error)
	Get(ctx context.Context, id string) (memory.Memory, error)
	// Delete moves a memory to the trash, restorable with
	// Steward.Restore until the steward purges the trash.
	Delete(ctx context.Context, id string) error
	// Purge deletes a live memory for good, without the trash.
	Purge(ctx context.Context, id string) error
	List(ctx context.Context, req ListRequest) (ListResponse, error)
	// Edit changes a memory's text, kind, type, project or importance.
	Edit(ctx context.Context, id string, p MemoryPatch) (EditResult, error)
	// History walks a memory's supersession chain and what was merged into it.
	History(ctx context.Context, id string) (MemoryHistory, error)
	Export(ctx context.Context, w io.Writer) error
	Import(ctx context.Context, r io.Reader) (store.ImportReport, error)
}

// Feedback is the part of Services that records what a memory was worth.
type Feedback interface {
	// Reinforce records that a memory proved useful.
	Reinforce(ctx context.Context, id string) (memory.Memory, error)
	// Rate adds +1 or -1 feedback to memories an agent was given.
	Rate(ctx context.Context, ids []string, score int, reason string) ([]memory.Memory, error)
	// Snooze keeps a memory out of recall for days (0 wakes it).
	Snooze(ctx context.Context, id string, days float64) (memory.Memory, error)
	// Pin marks a memory the steward must never prune, decay or merge
	// (false unpins it).
	Pin(ctx context.Context, id string, pinned bool) (memory.Memory, error)
}

// Feed is the part of Services around the write pipeline's decisions:
// ingesting, the decision log, and the content gate's noise model.
type Feed interface {
	// Ingest runs exchanges through the write pipeline and stores documents.
	Ingest(ctx context.Context, req IngestRequest) (IngestResponse, error)
	// Decisions lists the newest decisions first (at most limit).
	Decisions(ctx context.Context, limit int) ([]DecisionEntry, error)
	// Keep stores a rejected exchange of the decision log (a user said it
	// was worth keeping) and takes it out of the noise model.
	Keep(ctx context.Context, decisionID string) (memory.Decision, error)
	// MarkNoise moves a stored memory to the trash (restorable) and teaches
	// the noise model its text.
	MarkNoise(ctx context.Context, id string) error
	// Noise describes the content scorer and the judge, for the UI.
	Noise(ctx context.Context) (NoiseState, error)
	// PreviewThreshold says how the recent content-gate decisions would
	// change under another content threshold.
	PreviewThreshold(ctx context.Context, req ThresholdPreviewRequest) (ThresholdPreview, error)
	// NoiseProjection projects the scorer's prototypes and the recent
	// exchanges onto their first two principal components.
	NoiseProjection(ctx context.Context) (NoiseProjection, error)
}

// Status is the part of Services that describes a running memtray: the
// counts, the overview and the live feed.
type Status interface {
	Stats(ctx context.Context) (Stats, error)
	// Overview summarises the store, the pipeline, recall and health.
	Overview(ctx context.Context) (Overview, error)
	// Subscribe opens a live feed. lastEventID is the SSE Last-Event-ID
	// of a reconnecting client ("" for a new one): the missed events still
	// kept are queued first, else reset is true (the client must reload).
	Subscribe(lastEventID string, buffer int) (sub *events.Subscription, reset bool, err error)
}

// Recaller is the part of Services that gives agents memories.
type Recaller interface {
	// Recall hands an agent session the memories that matter for this
	// turn, never one it already has.
	Recall(ctx context.Context, req search.RecallRequest) (search.Recalled, error)
	// ResetSession forgets what a session was given (compaction, /clear).
	ResetSession(ctx context.Context, sessionID string) error
}

// Settings is the part of Services that reads and changes the settings:
// the config and the capture switch.
type Settings interface {
	// Config returns the effective config without secrets.
	Config(ctx context.Context) (ConfigView, error)
	// SetConfig merges a partial config of runtime-changeable fields.
	SetConfig(ctx context.Context, patch json.RawMessage) (ConfigUpdate, error)
	// Capture reports the capture proxy's switch, exclusions and counters.
	Capture(ctx context.Context) (CaptureState, error)
	// SetCapture pauses or resumes capture and changes the excluded
	// projects (kept across restarts).
	SetCapture(ctx context.Context, u CaptureUpdate) (CaptureState, error)
}

// The capture switch's types are package settings'.
type (
	// CaptureState is what GET /api/capture returns.
	CaptureState = settings.CaptureState
	// CaptureUpdate is what POST /api/capture takes; absent fields stay.
	CaptureUpdate = settings.CaptureUpdate
)

// MaxPause bounds CaptureUpdate.PauseFor.
const MaxPause = settings.MaxPause

// RateRequest is what POST /api/rate takes.
type RateRequest struct {
	IDs    []string `json:"ids"`
	Score  int      `json:"score"`
	Reason string   `json:"reason,omitempty"`
}

// PinRequest is what POST /api/memories/{id}/pin takes.
type PinRequest struct {
	Pinned bool `json:"pinned"`
}

// SnoozeRequest is what POST /api/memories/{id}/snooze takes.
type SnoozeRequest struct {
	Days float64 `json:"days"`
}

// The types of POST /api/import/claude are package importer's.
type (
	// ImportClaudeRequest is what POST /api/import/claude takes: which of
	// Claude Code's memories to import.
	ImportClaudeRequest = importer.Request
	// ImportClaudeCounts counts imported items by action.
	ImportClaudeCounts = importer.Counts
	// ImportClaudeItem is what happened (in a dry run: would happen) to
	// one memory.
	ImportClaudeItem = importer.ItemReport
	// ImportClaudeFile is one file's share of an ImportClaudeReport.
	ImportClaudeFile = importer.FileReport
	// ImportClaudeMissing is an imported memory whose file or section is
	// gone from disk: kept, for the user to delete or not.
	ImportClaudeMissing = importer.Missing
	// ImportClaudeReport is what POST /api/import/claude answers.
	ImportClaudeReport = importer.Report
)

// The memories area's types are the memories service's.
type (
	// AddRequest is a memory to store; the backend embeds it.
	AddRequest = memories.AddRequest
	// SearchRequest is a search over the store.
	SearchRequest = memories.SearchRequest
	// ListRequest pages through stored memories (GET /api/memories).
	ListRequest = memories.ListRequest
	// ListResponse is one page of memories and the total that matched.
	ListResponse = memories.ListResponse
	// ListFacets counts the store by the list filters' values.
	ListFacets = memories.ListFacets
	// ListedMemory is a memory as the UI lists it, with computed columns.
	ListedMemory = memories.ListedMemory
	// MemoryPatch is what PATCH /api/memories/{id} takes; absent fields stay.
	MemoryPatch = memories.MemoryPatch
	// EditResult is what PATCH /api/memories/{id} answers.
	EditResult = memories.EditResult
	// MemoryHistory is what GET /api/memories/{id}/history answers.
	MemoryHistory = memories.MemoryHistory
)

// MaxHistory bounds the versions a history walks in each direction.
const MaxHistory = memories.MaxHistory

// List sort keys and bounds (the memories service's).
var (
	// ListSorts are the sort keys of GET /api/memories.
	ListSorts = memories.ListSorts
	// MaxListQuery bounds the q substring filter.
	MaxListQuery = memories.MaxListQuery
)

// The feed area's types are the feed service's.
type (
	// Document is a text to ingest as source memories ("ingest:<name>").
	Document = feed.Document
	// IngestRequest is what POST /api/ingest takes.
	IngestRequest = feed.IngestRequest
	// IngestResponse has one Decision per exchange, then one per document.
	IngestResponse = feed.IngestResponse
	// DecisionEntry is one decision of the recent-decisions log.
	DecisionEntry = feed.DecisionEntry
	// NoiseState is what GET /api/noise returns.
	NoiseState = feed.NoiseState
	// ThresholdPreviewRequest is what POST /api/config/preview-threshold takes.
	ThresholdPreviewRequest = feed.ThresholdPreviewRequest
	// ThresholdFlip is one decision whose content-gate outcome would change.
	ThresholdFlip = feed.ThresholdFlip
	// ThresholdPreview compares the content gate under two thresholds.
	ThresholdPreview = feed.ThresholdPreview
	// ProjectionPoint is one vector of a NoiseProjection.
	ProjectionPoint = feed.ProjectionPoint
	// NoiseProjection is what GET /api/noise/projection answers.
	NoiseProjection = feed.NoiseProjection
)

// MaxIngestItems bounds the exchanges and documents of one IngestRequest.
const MaxIngestItems = feed.MaxIngestItems

// MaxProjectionExchanges bounds the recent exchanges a projection embeds.
const MaxProjectionExchanges = feed.MaxProjectionExchanges

// Kinds of a ProjectionPoint.
const (
	PointQuality  = feed.PointQuality
	PointNoise    = feed.PointNoise
	PointLearned  = feed.PointLearned
	PointStored   = feed.PointStored
	PointRejected = feed.PointRejected
)
