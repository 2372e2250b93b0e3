// Package memory holds memtray's domain types, sentinel errors and the small
// interfaces (Embedder, Clock) that let the other backend packages depend on
// behaviour rather than on each other. It imports nothing of ours.
package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
)

// Kind says what a memory is about; recall boosts some kinds.
type Kind string

// The memory kinds.
const (
	KindDecision   Kind = "decision"
	KindConvention Kind = "convention"
	KindInvariant  Kind = "invariant"
	KindPattern    Kind = "pattern"
	KindDebugging  Kind = "debugging"
	KindConfig     Kind = "config"
	KindPreference Kind = "preference"
	KindReference  Kind = "reference"
	KindFact       Kind = "fact"
	KindSymbol     Kind = "symbol"
)

// Kinds lists every valid Kind.
var Kinds = []Kind{KindDecision, KindConvention, KindInvariant, KindPattern, KindDebugging,
	KindConfig, KindPreference, KindReference, KindFact, KindSymbol}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

// KindOrigin says how a memory's kind was decided; recall boosts a kind
// only when it is certain (Memory.KindCertain).
type KindOrigin string

// The kind origins.
const (
	// KindGiven: whoever stored the memory stated its kind (MCP
	// memory_store, memtray add --kind, an import).
	KindGiven KindOrigin = "given"
	// KindJudged: the LLM judge named it.
	KindJudged KindOrigin = "judge"
	// KindCued: a strong cue in the wording named it ("we decided to").
	KindCued KindOrigin = "cue"
	// KindGuessed: a weak guess from the wording, or the fact fallback.
	KindGuessed KindOrigin = "guess"
)

// KindOrigins lists every valid KindOrigin.
var KindOrigins = []KindOrigin{KindGiven, KindJudged, KindCued, KindGuessed}

// Valid reports whether o is one of KindOrigins.
func (o KindOrigin) Valid() bool {
	for _, v := range KindOrigins {
		if o == v {
			return true
		}
	}
	return false
}

// Type drives how fast a memory decays.
type Type string

// The memory types.
const (
	TypeUser      Type = "user"
	TypeFeedback  Type = "feedback"
	TypeProject   Type = "project"
	TypeReference Type = "reference"
)

// Types lists every valid Type.
var Types = []Type{TypeUser, TypeFeedback, TypeProject, TypeReference}

// Valid reports whether t is one of Types.
func (t Type) Valid() bool {
	for _, v := range Types {
		if t == v {
			return true
		}
	}
	return false
}

// Surface values with special meaning in scoring.
const (
	// SurfaceSymbol marks machine-generated per-symbol descriptions; recall demotes them.
	SurfaceSymbol = "symbol"
)

// Source values of a memory (besides "ingest:<doc>").
const (
	SourceCapture = "capture"
	SourceMCP     = "mcp"
	SourceImport  = "import"
	SourceCLI     = "cli"
	// SourceTranscript: read from an agent's session file (package
	// transcript: `memtray ingest`, the session files' capture).
	SourceTranscript = "transcript"
)

// MaxTextBytes bounds a memory's text; longer input is an error, not a truncation.
const MaxTextBytes = 64 << 10

// MaxHits bounds the hit timestamps kept on a record (newest kept).
const MaxHits = 32

// Memory is one stored memory record.
type Memory struct {
	ID               string      `json:"id"`
	Text             string      `json:"text"`
	Kind             Kind        `json:"kind"`
	KindOrigin       KindOrigin  `json:"kind_origin,omitempty"`
	Type             Type        `json:"type"`
	Project          string      `json:"project,omitempty"`
	Source           string      `json:"source,omitempty"`
	Surface          string      `json:"surface,omitempty"`
	Importance       float64     `json:"importance"`
	Pinned           bool        `json:"pinned,omitempty"`
	AccessCount      int         `json:"access_count"`
	ReinforcedCount  int         `json:"reinforced_count"`
	FeedbackSum      float64     `json:"feedback_sum"`
	FeedbackN        int         `json:"feedback_n"`
	Hits             []time.Time `json:"hits,omitempty"`
	CreatedAt        time.Time   `json:"created_at"`
	UpdatedAt        time.Time   `json:"updated_at"`
	LastAccessed     time.Time   `json:"last_accessed,omitzero"`
	LastReinforcedAt time.Time   `json:"last_reinforced_at,omitzero"`
	CooldownUntil    time.Time   `json:"cooldown_until,omitzero"`
	Supersedes       string      `json:"supersedes,omitempty"`
	SupersededBy     string      `json:"superseded_by,omitempty"`
	ExtendsSource    string      `json:"extends_source,omitempty"`
	ContentHash      string      `json:"content_hash"`
	Embedding        []float32   `json:"embedding,omitempty"`
	EmbeddingModel   string      `json:"embedding_model,omitempty"`
	// Scope says whether the memory is shared with the team (ScopeTeam)
	// or stays on this machine (ScopePersonal). Empty means the default:
	// team when its project is one the team shares and it is not a
	// preference (team.SharedByDefault), else personal. Always said in
	// JSON ("scope": "" is the default), so `memtray get --json` and the
	// API show a default-scope memory's scope too.
	Scope Scope `json:"scope"`
}

// Scope says who a memory is for (issue 23).
type Scope string

// The scopes.
const (
	// ScopeDefault (empty): decided by the team configuration.
	ScopeDefault Scope = ""
	// ScopePersonal: never leaves the machine.
	ScopePersonal Scope = "personal"
	// ScopeTeam: pushed to the team database and shared with every member.
	ScopeTeam Scope = "team"
)

// Valid reports whether s is ScopeDefault, ScopePersonal or ScopeTeam.
func (s Scope) Valid() bool { return s == ScopeDefault || s == ScopePersonal || s == ScopeTeam }

// ParseScope reads "personal" or "team" (what a user types); anything else
// is an error wrapping ErrInvalid.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case ScopePersonal, ScopeTeam:
		return Scope(s), nil
	}
	return "", &ValidationError{Problems: []string{"unknown scope " + quote(s) + " (personal or team)"}}
}

// Snoozed reports whether the memory is in cooldown at now.
func (m *Memory) Snoozed(now time.Time) bool { return m.CooldownUntil.After(now) }

// Superseded reports whether a newer memory replaced this one.
func (m *Memory) Superseded() bool { return m.SupersededBy != "" }

// KindCertain reports whether the memory's kind can be trusted: it was
// given, judged or cued, not guessed. A record without an origin (stored
// before kinds had one, or by a writer that does not say) is certain only
// when its source is one whose caller states the kind: MCP memory_store
// (SourceMCP), memtray add (SourceCLI) or an import (SourceImport).
// Captured and ingested memories without an origin are not: their kinds
// were guessed from the wording or named by the judge, and which is lost.
func (m *Memory) KindCertain() bool {
	switch m.KindOrigin {
	case KindGiven, KindJudged, KindCued:
		return true
	case "":
		return m.Source == SourceMCP || m.Source == SourceCLI || m.Source == SourceImport
	}
	return false
}

// FeedbackAvg is the mean rating in -1..1, 0 without ratings.
func (m *Memory) FeedbackAvg() float64 {
	if m.FeedbackN == 0 {
		return 0
	}
	return m.FeedbackSum / float64(m.FeedbackN)
}

// Reinforce records that the memory proved useful (the same text seen
// again, or the user's or agent's word): one more reinforcement, and the
// decay clock restarts at at.
func (m *Memory) Reinforce(at time.Time) {
	m.ReinforcedCount++
	m.LastReinforcedAt = at
}

// Stickiness is how much more often a memory is retrieved than confirmed
// useful: access / max(reinforced, 1), or 0 while access is below
// minAccess or not positive (too few retrievals to judge). The steward
// snoozes and decays sticky memories, recall damps them (search
// .AntiSticky) and the list sorts by it.
func Stickiness(access, reinforced, minAccess int) float64 {
	if access < minAccess || access <= 0 {
		return 0
	}
	return float64(access) / float64(max(reinforced, 1))
}

// Validate checks the fields a caller supplies; it does not look at counters.
func (m *Memory) Validate() error {
	var errs []string
	if strings.TrimSpace(m.Text) == "" {
		errs = append(errs, "text is empty")
	}
	if len(m.Text) > MaxTextBytes {
		errs = append(errs, "text is longer than 64 KiB")
	}
	if !ValidUTF8(m.Text) {
		errs = append(errs, "text is not valid UTF-8")
	}
	if m.Kind != "" && !m.Kind.Valid() {
		errs = append(errs, "unknown kind "+quote(string(m.Kind)))
	}
	if m.KindOrigin != "" && !m.KindOrigin.Valid() {
		errs = append(errs, "unknown kind origin "+quote(string(m.KindOrigin)))
	}
	if m.Type != "" && !m.Type.Valid() {
		errs = append(errs, "unknown type "+quote(string(m.Type)))
	}
	if !m.Scope.Valid() {
		errs = append(errs, "unknown scope "+quote(string(m.Scope)))
	}
	if m.Importance < 0 || m.Importance > 1 || m.Importance != m.Importance {
		errs = append(errs, "importance must be within 0..1")
	}
	if len(m.Project) > 256 || !ValidUTF8(m.Project) {
		errs = append(errs, "project name is too long or not UTF-8")
	}
	if len(errs) > 0 {
		return &ValidationError{Problems: errs}
	}
	return nil
}

// ApplyDefaults fills unset kind, type and importance.
func (m *Memory) ApplyDefaults() {
	if m.Kind == "" {
		m.Kind = KindFact
	}
	if m.Type == "" {
		m.Type = TypeProject
	}
	if m.Importance == 0 {
		m.Importance = 0.5
	}
}

// ContentHash is the hash memtray uses to recognise the same text: SHA-256 of
// the text with runs of white space folded and ends trimmed, hex encoded.
func ContentHash(text string) string {
	sum := sha256.Sum256([]byte(NormalizeSpace(text)))
	return hex.EncodeToString(sum[:])
}

// NormalizeSpace folds every run of white space into one space and trims the ends.
func NormalizeSpace(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func quote(s string) string { return "\"" + s + "\"" }

// ScoreBreakdown shows every factor of the composite recall score.
type ScoreBreakdown struct {
	Relevance    float64 `json:"relevance"`
	VectorRank   int     `json:"vector_rank,omitempty"`
	TextRank     int     `json:"text_rank,omitempty"`
	Importance   float64 `json:"importance"`
	Recency      float64 `json:"recency"`
	Access       float64 `json:"access"`
	AntiSticky   float64 `json:"anti_sticky"`
	KindBoost    float64 `json:"kind_boost"`
	Surface      float64 `json:"surface"`
	ProjectBoost float64 `json:"project_boost"`
	Feedback     float64 `json:"feedback"`
	Keyword      float64 `json:"keyword"`
	Composite    float64 `json:"composite"`
	// Diversity is what MMR took off Composite because the memory resembles
	// a hit ranked above it (SimilarTo); the hit's Score is Composite less
	// Diversity, so hits in rank order have non-increasing scores. 0 when
	// MMR did not demote it.
	Diversity float64 `json:"diversity,omitempty"`
	// SimilarTo is the id of the hit ranked above this one that it
	// resembles most, when Diversity is not 0.
	SimilarTo string `json:"similar_to,omitempty"`
}

// Hit is one search result: the memory (without its embedding), its final
// score (the one it ranks by: the composite less any diversity penalty) and
// how that score was made.
type Hit struct {
	Memory    Memory         `json:"memory"`
	Score     float64        `json:"score"`
	Breakdown ScoreBreakdown `json:"breakdown"`
}
