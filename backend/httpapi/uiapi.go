package httpapi

import (
	"time"

	"github.com/memtray/memtray/backend/feedback"
	"github.com/memtray/memtray/backend/memories"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
	"github.com/memtray/memtray/backend/settings"
)

// Event types of GET /api/events, with their payload types.
const (
	// EventDecision: DecisionEntry, for each decision of the write
	// pipeline (capture, ingest, keep, MCP memory_store, documents).
	EventDecision = "decision"
	// EventMemory: MemoryEvent, when memories change.
	EventMemory = "memory"
	// EventCapture: CaptureState, when capture changes and every 2 s while
	// its counters move.
	EventCapture = "capture"
	// EventSteward: StewardEvent, when a plan is made, applied or undone.
	EventSteward = "steward"
	// EventStats: StatsEvent, every 5 s while anyone listens.
	EventStats = "stats"
	// EventPing: PingEvent, the stream's heartbeat (no id).
	EventPing = "ping"
	// EventReset: ResetEvent, events were lost: reload the state.
	EventReset = "reset"
)

// Memory operations of a MemoryEvent.
const (
	MemoryAdded      = memories.OpAdded
	MemoryUpdated    = memories.OpUpdated
	MemoryDeleted    = memories.OpDeleted
	MemoryPinned     = feedback.OpPinned
	MemorySnoozed    = feedback.OpSnoozed
	MemoryReinforced = feedback.OpReinforced
	MemoryRated      = feedback.OpRated
	MemoryTrashed    = "trashed"
	MemoryRestored   = "restored"
)

// MemoryEvent is the payload of a "memory" event.
type MemoryEvent struct {
	// Op is one of added, updated, deleted, pinned (also unpinned: see
	// Memory.pinned), snoozed (also woken), reinforced, rated, trashed,
	// restored.
	Op  string   `json:"op"`
	IDs []string `json:"ids"`
	// Memory is the memory after the change when one memory changed and
	// still exists (without its embedding).
	Memory *memory.Memory `json:"memory,omitempty"`
}

// StewardEvent is the payload of a "steward" event.
type StewardEvent struct {
	// Op is planned, applied, undone or failed (a scheduled sweep's error).
	Op     string `json:"op"`
	PlanID string `json:"plan_id,omitempty"`
	RunID  string `json:"run_id,omitempty"`
	Scope  string `json:"scope,omitempty"`
	// Scheduled is set for the steward's own sweep.
	Scheduled bool `json:"scheduled,omitempty"`
	// Counts: a plan's actions per operation, or a run's (see steward.Result).
	Counts  map[string]int `json:"counts"`
	Actions int            `json:"actions"`
	Trashed int            `json:"trashed,omitempty"`
	Skipped int            `json:"skipped,omitempty"`
	Error   string         `json:"error,omitempty"`
}

// StatsEvent is the payload of a "stats" event: a compact overview.
type StatsEvent struct {
	// Memories counts the current memories, what the Memories list shows
	// by default (superseded versions left out).
	Memories  int  `json:"memories"`
	Capturing bool `json:"capturing"`
	// Today counts today's decisions (local time) by verdict, from the
	// recent decision log.
	Today       map[string]int `json:"today"`
	Embedder    string         `json:"embedder"`
	Degraded    bool           `json:"embedder_degraded"`
	Warnings    int            `json:"warnings"`
	Subscribers int            `json:"subscribers"`
	// Team is the team sync's state, as GET /api/team has it (nil when
	// the daemon runs without team memory), so the Overview's team line
	// and settings follow a connection made later, a pull's news and a
	// setting another admin changed without a reload.
	Team *TeamStatus `json:"team,omitempty"`
}

// PingEvent is the payload of the "ping" heartbeat.
type PingEvent struct {
	At time.Time `json:"at"`
}

// ResetEvent is the payload of a "reset" event.
type ResetEvent struct {
	Reason string `json:"reason"`
}

// NameCount is a name with a count.
type NameCount struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// DayCount is a count for one day (YYYY-MM-DD, UTC).
type DayCount struct {
	Day   string `json:"day"`
	Count int    `json:"count"`
}

// FilterBucket counts one hour of decisions.
type FilterBucket struct {
	// Hour is the bucket's start (UTC).
	Hour  time.Time `json:"hour"`
	Total int       `json:"total"`
	// Verdicts counts decisions by verdict; Rejected counts rejections by
	// the stage that rejected them.
	Verdicts map[string]int `json:"verdicts"`
	Rejected map[string]int `json:"rejected"`
}

// Growth is how many memories the store held at the end of each day.
type Growth struct {
	// Days are the days (YYYY-MM-DD, UTC) from the oldest memory's (at most
	// the last 365, at least the last 14) to today, oldest first.
	Days []string `json:"days"`
	// Series are the cumulative counts of the memories created by the end
	// of each day (one per day of Days), per project: the largest (at most
	// 6, "" is no project), then the rest summed in one series marked Other.
	Series []GrowthSeries `json:"series"`
}

// GrowthSeries is one project's line of a Growth.
type GrowthSeries struct {
	Project string `json:"project"`
	Other   bool   `json:"other,omitempty"`
	Counts  []int  `json:"counts"`
}

// RecallOverview is recall's counters and the injections per session.
type RecallOverview struct {
	search.RecallStats
	// PerSession is given / sessions (0 without sessions).
	PerSession float64 `json:"per_session"`
}

// EmbedderStatus says which embedder runs and whether it answers.
type EmbedderStatus struct {
	Model  string `json:"model"`
	Reason string `json:"reason,omitempty"`
	// Degraded: the embedder does not answer; search runs on text alone.
	Degraded bool `json:"degraded"`
}

// JudgeStatus describes the optional judge.
type JudgeStatus struct {
	Enabled       bool   `json:"enabled"`
	Name          string `json:"name,omitempty"`
	CallsLastHour int    `json:"calls_last_hour"`
	CallsLastDay  int    `json:"calls_last_day"`
	MaxPerHour    int    `json:"max_per_hour"`
	MaxPerDay     int    `json:"max_per_day"`
	Tokens        int64  `json:"tokens"`
	// Exhausted: a budget cap is reached; exchanges pass unjudged.
	Exhausted bool `json:"exhausted"`
}

// Warning is something a user should know, in a sentence.
type Warning struct {
	// Code is stable, one warning per code: embedder_degraded,
	// disk_full, pipeline_error, upstream_unreachable, upstream_reset,
	// capture_error, capture_dropped, text_index, store_repaired,
	// clock_jump, steward_failed, judge_budget.
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Overview is what GET /api/overview answers.
type Overview struct {
	At time.Time `json:"at"`
	// Memories counts the current memories, what the Memories list shows
	// by default; Snoozed, Pinned, ByKind, ByProject, CreatedPerDay and
	// Growth count among them. Superseded counts the old versions a newer
	// one superseded apart (the list's "superseded too" adds them).
	Memories   int         `json:"memories"`
	Snoozed    int         `json:"snoozed"`
	Superseded int         `json:"superseded"`
	Pinned     int         `json:"pinned"`
	ByKind     []NameCount `json:"by_kind"`
	// ByProject is the 20 largest projects ("" is no project);
	// OtherProjects and OtherMemories count the rest.
	ByProject     []NameCount `json:"by_project"`
	OtherProjects int         `json:"other_projects"`
	OtherMemories int         `json:"other_memories"`
	StoreBytes    int64       `json:"store_bytes"`
	// CreatedPerDay covers the last 30 days, oldest first.
	CreatedPerDay []DayCount `json:"created_per_day"`
	// Growth is the store's size over time, per project.
	Growth Growth         `json:"growth"`
	Recall RecallOverview `json:"recall"`
	// Filter buckets the recent decision log per hour, the last 48 hours,
	// oldest first (hours without decisions included).
	Filter   []FilterBucket `json:"filter"`
	Embedder EmbedderStatus `json:"embedder"`
	Judge    JudgeStatus    `json:"judge"`
	Capture  CaptureState   `json:"capture"`
	Warnings []Warning      `json:"warnings"`
}

// The config's types are package settings'.
type (
	// ConfigView is what GET /api/config answers.
	ConfigView = settings.ConfigView
	// ConfigUpdate is what PUT /api/config answers.
	ConfigUpdate = settings.ConfigUpdate
)

// ErrorBody is the JSON of every error answer: a message, a stable code
// and, for invalid input, the problem of each field.
type ErrorBody = errorBody
