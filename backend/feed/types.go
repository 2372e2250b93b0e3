package feed

import (
	"encoding/json"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// Document is a text to ingest as source memories ("ingest:<name>").
type Document struct {
	Name    string `json:"name"`
	Text    string `json:"text"`
	Project string `json:"project,omitempty"`
}

// IngestRequest is what POST /api/ingest takes: exchanges for the write
// pipeline, documents to store as sources, or both.
type IngestRequest struct {
	Exchanges []memory.Exchange `json:"exchanges,omitempty"`
	Documents []Document        `json:"documents,omitempty"`
}

// MaxIngestItems bounds the exchanges and documents of one IngestRequest.
const MaxIngestItems = 10000

// IngestResponse has one Decision per exchange, then one per document, in order.
type IngestResponse struct {
	Decisions []memory.Decision `json:"decisions"`
}

// DecisionEntry is one decision of the recent-decisions log, with what the
// UI needs to show it and to keep a rejected exchange.
type DecisionEntry struct {
	memory.Decision
	// User and Assistant are the exchange's texts, redacted.
	User      string `json:"user,omitempty"`
	Assistant string `json:"assistant,omitempty"`
	Project   string `json:"project,omitempty"`
	Source    string `json:"source,omitempty"`
}

// NoiseState is what GET /api/noise returns.
type NoiseState struct {
	// Scorer is the content scorer's state (package noise's State); nil
	// when the scorer is off (no embedder at start).
	Scorer json.RawMessage `json:"scorer"`
	// Judge names the judge, "" when off; JudgeStats is its budget and counters.
	Judge      string          `json:"judge,omitempty"`
	JudgeStats json.RawMessage `json:"judge_stats,omitempty"`
}

// ThresholdPreviewRequest is what POST /api/config/preview-threshold takes.
type ThresholdPreviewRequest struct {
	ContentThreshold float64 `json:"content_threshold"`
}

// ThresholdFlip is one decision whose content-gate outcome would change.
type ThresholdFlip struct {
	DecisionID string  `json:"decision_id"`
	Score      float64 `json:"score"`
	Verdict    string  `json:"verdict"`
	Preview    string  `json:"preview,omitempty"`
}

// ThresholdPreview compares the content gate under the current and a
// proposed threshold over the recent decisions that have a content score.
type ThresholdPreview struct {
	Current  float64 `json:"current"`
	Proposed float64 `json:"proposed"`
	// Scored is how many recent decisions had a content score.
	Scored int `json:"scored"`
	// NowRejected: passed the gate, would be rejected; NowPassed:
	// rejected by the gate, would pass on (to the later stages).
	NowRejected int `json:"now_rejected"`
	NowPassed   int `json:"now_passed"`
	// Examples of each (at most 5).
	RejectedExamples []ThresholdFlip `json:"rejected_examples"`
	PassedExamples   []ThresholdFlip `json:"passed_examples"`
}

// Kinds of a ProjectionPoint.
const (
	PointQuality  = "quality"  // a quality prototype
	PointNoise    = "noise"    // a static noise prototype
	PointLearned  = "learned"  // a learned noise prototype (the rejection buffer)
	PointStored   = "stored"   // a recent exchange the pipeline kept
	PointRejected = "rejected" // a recent exchange the pipeline rejected
)

// MaxProjectionExchanges bounds the recent exchanges a projection embeds.
const MaxProjectionExchanges = 300

// ProjectionPoint is one vector of a NoiseProjection.
type ProjectionPoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
	// Kind is quality, noise, learned, stored or rejected.
	Kind string `json:"kind"`
	// Label is a short redacted text: the prototype or the exchange's preview.
	Label string `json:"label"`
	// Score is an exchange's content score, when it had one.
	Score *float64 `json:"score,omitempty"`
}

// NoiseProjection is what GET /api/noise/projection answers: the content
// scorer's prototypes and the recent decision log's exchanges (at most
// MaxProjectionExchanges) projected onto their first two principal
// components, and each recent rejected exchange's nearest prototypes.
type NoiseProjection struct {
	Points []ProjectionPoint `json:"points"`
	// Explained is each component's share of the total variance (0..1).
	Explained [2]float64 `json:"explained"`
	// Rejected are the recent rejected exchanges among them (at most
	// MaxNearestTurns, the newest first) with their nearest prototypes.
	Rejected []RejectedNeighbours `json:"rejected"`
}

// Bounds of NoiseProjection.Rejected.
const (
	// MaxNearestTurns bounds the rejected exchanges listed.
	MaxNearestTurns = 50
	// NearestNoise is how many noise prototypes are listed per exchange.
	NearestNoise = 3
)

// PrototypeMatch is a prototype and its cosine similarity to an exchange.
type PrototypeMatch struct {
	// Kind is quality, noise or learned.
	Kind string `json:"kind"`
	// Label is the prototype's text (redacted, shortened).
	Label      string  `json:"label"`
	Similarity float64 `json:"similarity"`
}

// RejectedNeighbours is one rejected exchange and the prototypes nearest it.
type RejectedNeighbours struct {
	DecisionID string `json:"decision_id"`
	// Preview is the exchange's redacted preview, shortened.
	Preview string    `json:"preview"`
	At      time.Time `json:"at"`
	// Stage and Reason say what rejected it.
	Stage  string `json:"stage"`
	Reason string `json:"reason,omitempty"`
	// Score is its content score, when it had one.
	Score *float64 `json:"score,omitempty"`
	// Noise are the nearest noise prototypes (static or learned), the
	// nearest first; Quality is the nearest quality prototype, if any.
	Noise   []PrototypeMatch `json:"noise"`
	Quality *PrototypeMatch  `json:"quality,omitempty"`
}
