// Package config holds memtray's configuration: defaults, loading from a JSON
// file, validation with one error per bad field, atomic saves, and the XDG
// paths where memtray keeps its data.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// Duration is a time.Duration that reads and writes as a string like "30s".
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "30s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("duration must be a string like \"30s\" or a number of seconds")
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// Config is everything a user can set. The zero value is not useful: start
// from Default().
type Config struct {
	// DataDir holds the store; default $XDG_DATA_HOME/memtray.
	DataDir string `json:"data_dir"`
	// Listen is the daemon's address (host:port); loopback only, unless
	// InsecureNonLoopback is set (serve --insecure-non-loopback).
	Listen string `json:"listen"`
	// Embedder selects and configures the embedding model.
	Embedder Embedder `json:"embedder"`
	// Search holds the read pipeline's constants.
	Search Search `json:"search"`
	// Ingest holds the write pipeline's constants.
	Ingest Ingest `json:"ingest"`
	// Judge configures the optional language-model judge of the write pipeline.
	Judge Judge `json:"judge"`
	// Capture configures the local LLM proxy.
	Capture Capture `json:"capture"`
	// Recall configures what the agent receives at each user turn.
	Recall Recall `json:"recall"`
	// Steward configures consolidation: its schedule, which operations apply
	// by themselves, and every threshold.
	Steward Steward `json:"steward"`
	// Team configures team memory: which memories are shared with the
	// team through its PostgreSQL database.
	Team Team `json:"team"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `json:"log_level"`
	// IdleExit is how long a daemon that `memtray mcp` started on demand
	// keeps running with no request at all (MCP, hook, API, UI, proxy) and
	// none in flight before it exits by itself; 0 never. The user's own
	// daemon (`memtray serve`, the app, the systemd unit) never idle-exits.
	IdleExit Duration `json:"idle_exit"`
	// File is the config file this config was loaded from (or would be,
	// when it does not exist yet): where settings changed at runtime are
	// saved. Not part of the file itself.
	File string `json:"-"`
	// InsecureNonLoopback lets Listen be a non-loopback address. Only the
	// command line sets it (serve --insecure-non-loopback), never a config
	// file: anyone who reaches such an address can use the capture proxy,
	// which needs no token. The API still needs the token, and the Host
	// check still accepts loopback names only (a port forwarded into a
	// container or VM).
	InsecureNonLoopback bool `json:"-"`
}

// Embedder configures embeddings.
type Embedder struct {
	// Provider is "auto" (Ollama when it answers and has the model, else
	// the OpenAI-compatible server when openai_model is set and it
	// answers, else built-in), "builtin", "ollama" or "openai".
	Provider string `json:"provider"`
	// OllamaHost is Ollama's URL; empty means $OLLAMA_HOST or http://127.0.0.1:11434.
	OllamaHost string `json:"ollama_host"`
	// OllamaModel is the embedding model to ask Ollama for.
	OllamaModel string `json:"ollama_model"`
	// OpenAIURL is the base URL of a server speaking the OpenAI embeddings
	// protocol (POST {url}/embeddings): llama.cpp's llama-server, LM
	// Studio, vLLM, LocalAI or a hosted API. Empty means
	// http://127.0.0.1:8080/v1 (llama-server's own address).
	OpenAIURL string `json:"openai_url"`
	// OpenAIModel is the model to ask that server for; provider "openai"
	// needs it, and "auto" tries the server only when it is set.
	OpenAIModel string `json:"openai_model"`
	// OpenAIKeyEnv names the environment variable holding the server's API
	// key (e.g. OPENAI_API_KEY), sent as a bearer token; empty sends none.
	// The key itself never goes in the config file.
	OpenAIKeyEnv string `json:"openai_key_env"`
	// Dimensions asks the OpenAI-compatible server for vectors of that
	// length (models that support shortening, e.g. text-embedding-3-*);
	// 0 takes the model's own.
	Dimensions int `json:"dimensions"`
	// Timeout bounds one embedding request.
	Timeout Duration `json:"timeout"`
	// BatchSize is how many texts go in one request.
	BatchSize int `json:"batch_size"`
	// CacheSize is how many embeddings the content-hash cache keeps.
	CacheSize int `json:"cache_size"`
}

// Search holds the read pipeline's constants: how a query's candidates are
// found, fused, scored, floored and ordered.
type Search struct {
	// K is how many results a search returns when the request does not say.
	K int `json:"k"`
	// Overfetch: each leg (vector and BM25) fetches K x Overfetch
	// candidates, at least Candidates, before floors and MMR cut them to K.
	Overfetch float64 `json:"overfetch"`
	// Candidates is the least number of candidates each leg returns, whatever
	// K x Overfetch: a deeper pool lets RRF find memories both legs agree on
	// and keeps the first results the same for every K up to Candidates/2.
	Candidates int `json:"candidates"`
	// RRFK is the k of reciprocal rank fusion: a candidate at rank r of a
	// leg earns weight / (RRFK + r).
	RRFK float64 `json:"rrf_k"`
	// MMRLambda trades relevance (1) against diversity (0) when maximal
	// marginal relevance orders the results. The built-in embedder's cosine
	// is high between any two memories of one topic, so at 0.7 diversity
	// pushed the memory a prompt asked for below others of its project:
	// R@5 on ../shared/eval/sessions-dev.json rose from .554 at 0.7 to .572
	// at 0.9 (.574 at 1, no diversity), recall-dev R@5 stayed .812.
	MMRLambda float64 `json:"mmr_lambda"`
	// RelativeFloor drops a candidate whose composite score is below this
	// share of the best one's.
	RelativeFloor float64 `json:"relative_floor"`
	// AbsoluteFloor drops a candidate covering less than this share of the
	// query's IDF weight, unless its cosine reaches VectorFloor.
	AbsoluteFloor float64 `json:"absolute_floor"`
	// VectorFloor is the cosine similarity to the query that lets a memory
	// pass the absolute floor without lexical evidence. 0 (the default)
	// means not set: the embedding model's calibrated value (0.3 for the
	// built-in model; see docs/embedders.md); any other value overrides it.
	VectorFloor float64 `json:"vector_floor"`
	// EvidenceGate makes a search answer nothing unless the store holds
	// what the query is about: the best candidate covers more of the
	// query's IDF weight than the terms no memory contains carry, or its
	// cosine beats the best that a store of that size gives an unrelated
	// query (mean + expected maximum z x spread of the query's cosine over a
	// sample of the store; see search.CheckEvidence). It has no constant to
	// tune; false leaves only the per-memory floors.
	EvidenceGate bool `json:"evidence_gate"`
	// VectorWeight is the vector list's weight in RRF, BM25's being 1; 0
	// (the default) lets search pick by embedder. The built-in lexical
	// embedder gets 0.25: its vector leg mostly repeats BM25's evidence with
	// more noise, and at equal weight hybrid search fell below BM25 alone on
	// LoCoMo (R@10 .604 vs .635); at 0.25 it is within .01 of BM25 at every
	// depth and lifts paraphrase queries. A semantic embedder (Ollama)
	// brings evidence BM25 lacks and gets 1.
	VectorWeight float64 `json:"vector_weight"`
	// DecayPerDay is each memory type's recency decay: the score is
	// multiplied by exp(-rate x days since created or last reinforced).
	// Pinned memories and types not listed do not decay.
	DecayPerDay map[string]float64 `json:"decay_per_day"`
	// KindBoost multiplies the score of a memory of that kind (when its
	// kind is certain, not guessed from the wording); kinds not listed get 1.
	KindBoost map[string]float64 `json:"kind_boost"`
	// SymbolFactor multiplies the score of symbol memories (code
	// identifiers) so they do not crowd out prose.
	SymbolFactor float64 `json:"symbol_factor"`
	// ProjectBoost multiplies the score of a memory of the current project.
	ProjectBoost float64 `json:"project_boost"`
	// FeedbackWeight: the score is multiplied by 1 + FeedbackWeight x the
	// memory's average rating (-1..1).
	FeedbackWeight float64 `json:"feedback_weight"`
	// MaxKeywords is how many of a long prompt's most discriminating words
	// (by IDF) its BM25 leg searches for instead of the whole text.
	MaxKeywords int `json:"max_keywords"`
	// KeywordHitBoost: the score is multiplied by 1 + KeywordHitBoost per
	// keyword the memory contains beyond the first.
	KeywordHitBoost float64 `json:"keyword_hit_boost"`
	// SynonymWeight and HypernymWeight weigh, in a hybrid search's BM25 leg,
	// the WordNet synonyms and hypernyms of the query's words (the query's
	// own terms weigh 1); 0 turns that expansion off.
	SynonymWeight  float64 `json:"synonym_weight"`
	HypernymWeight float64 `json:"hypernym_weight"`
	// AntiSticky turns on the anti-stickiness factor (on by default; off
	// only for experiments such as `memtray eval stickiness`).
	AntiSticky bool `json:"anti_sticky"`
}

// Ingest holds the write pipeline's constants: which exchanges become
// memories and how they are chunked and deduplicated.
type Ingest struct {
	// HeadlessMinUserTurns: a headless (print mode) session forms memories
	// only once it has this many user turns.
	HeadlessMinUserTurns int `json:"headless_min_user_turns"`
	// HeadlessIdle is how long a headless session under
	// HeadlessMinUserTurns may stay quiet before it counts as ended: its
	// held turns are then rejected. Until then they are held (neither
	// stored nor rejected), so no turn is lost because its session grew
	// later (claude -p --continue, codex exec resume).
	HeadlessIdle Duration `json:"headless_idle"`
	// HeadlessHoldTurns bounds the turns held for one session and
	// HeadlessHoldTotal those held for all sessions together; past either,
	// the oldest held turn is rejected (and counted) to make room.
	HeadlessHoldTurns int `json:"headless_hold_turns"`
	HeadlessHoldTotal int `json:"headless_hold_total"`
	// MinLength is the length gate: shorter replies are rejected unless they
	// carry specific facts (paths, identifiers, versions, numbers).
	MinLength int `json:"min_length"`
	// ContentThreshold is the content score gate: quality / (quality + noise)
	// below it is rejected.
	ContentThreshold float64 `json:"content_threshold"`
	// NoiseBufferSize is how many rejected texts the noise ring buffer keeps;
	// NoiseRecent of the newest become learned noise prototypes, rebuilt
	// every NoiseRebuildEvery new entries.
	NoiseBufferSize   int `json:"noise_buffer_size"`
	NoiseRecent       int `json:"noise_recent"`
	NoiseRebuildEvery int `json:"noise_rebuild_every"`
	// ChunkSize is the target chunk length in characters; chunks shorter
	// than MinChunk are dropped.
	ChunkSize int `json:"chunk_size"`
	MinChunk  int `json:"min_chunk"`
	// DuplicateSimilarity is the cosine at or above which a new chunk is a
	// near duplicate of a stored memory; SourceSimilarity links it to an
	// ingested source document. 0 (the default) means not set: the
	// embedding model's calibrated value (0.92 and 0.75 for the built-in
	// model; see docs/embedders.md); any other value overrides it.
	DuplicateSimilarity float64 `json:"duplicate_similarity"`
	SourceSimilarity    float64 `json:"source_similarity"`
	// DecisionLog is how many recent decisions the daemon keeps for the feed.
	DecisionLog int `json:"decision_log"`
	// ToolLoopFindings lets the text between tool calls (tool-loop
	// iterations) through the gates, kept when it states a finding with a
	// reason or rule. Off, only the response that ends a turn (no further
	// tool calls) can form memories.
	ToolLoopFindings bool `json:"tool_loop_findings"`
}

// Judge configures the optional language-model judge of the write pipeline.
type Judge struct {
	// Provider is "off" (the default: the gates decide alone), "ollama" or "anthropic".
	Provider string `json:"provider"`
	// OllamaHost is Ollama's URL; empty means the embedder's, $OLLAMA_HOST or
	// http://127.0.0.1:11434. OllamaModel is the chat model.
	OllamaHost  string `json:"ollama_host"`
	OllamaModel string `json:"ollama_model"`
	// AnthropicURL is the Messages API base URL; AnthropicKey the API key
	// (empty means $ANTHROPIC_API_KEY); AnthropicModel the model.
	AnthropicURL   string `json:"anthropic_url"`
	AnthropicKey   string `json:"anthropic_key,omitempty"`
	AnthropicModel string `json:"anthropic_model"`
	// Timeout bounds one judge call; on timeout the gates' verdict stands.
	Timeout Duration `json:"timeout"`
	// MaxPerHour and MaxPerDay cap judge calls; past a cap the gates decide alone.
	MaxPerHour int `json:"max_per_hour"`
	MaxPerDay  int `json:"max_per_day"`
}

// Capture configures the capture proxy and capture from the agents'
// session files.
type Capture struct {
	// Enabled starts the daemon with capture on; the tray toggles it at runtime.
	// Off, the proxy still forwards every request but captures nothing.
	Enabled bool `json:"enabled"`
	// AnthropicUpstream is where /v1/* goes; OpenAIUpstream where
	// /openai/v1/* goes (as /v1/*).
	AnthropicUpstream string `json:"anthropic_upstream"`
	OpenAIUpstream    string `json:"openai_upstream"`
	// QueueSize bounds the exchanges waiting for the write pipeline; when it
	// is full new ones are dropped and counted, never waited for.
	QueueSize int `json:"queue_size"`
	// MaxCaptureBytes bounds what the tee keeps of one request or response
	// body; past it the exchange is not captured (the traffic still passes).
	MaxCaptureBytes int `json:"max_capture_bytes"`
	// MaxQueueBytes bounds the memory the queued exchanges hold (an agent's
	// request carries its whole conversation); past it new exchanges are
	// dropped and counted.
	MaxQueueBytes int `json:"max_queue_bytes"`
	// ExcludeProjects are project names (or absolute directory paths) whose
	// traffic is forwarded but never captured.
	ExcludeProjects []string `json:"exclude_projects,omitempty"`
	// Transcripts configures capture from the agents' session files.
	Transcripts Transcripts `json:"transcripts"`
}

// Recall configures session-aware recall: what the agent receives at each
// user turn.
type Recall struct {
	// K is the most memories one recall returns; MaxChars bounds the text
	// of the block handed to the agent (the default holds k memories of
	// the longest the write pipeline forms, 600 characters, with their
	// line).
	K        int `json:"k"`
	MaxChars int `json:"max_chars"`
	// Sessions is how many agent sessions the exclusion state remembers
	// (least recently used dropped first).
	Sessions int `json:"sessions"`
	// Skills turns on skill suggestions in the user-prompt hook; SkillDirs
	// are extra folders holding <name>/SKILL.md (~/.claude/skills and the
	// project's .claude/skills are always read).
	Skills    bool     `json:"skills"`
	SkillDirs []string `json:"skill_dirs,omitempty"`
	// SkillFloor is the least score (cosine of prompt and description plus
	// the keyword boost) a suggested skill needs. 0 (the default) means not
	// set: the embedding model's calibrated value (0.35 for the built-in
	// model, where prompts a skill was written for scored 0.39..0.99 on the
	// test fixtures and unrelated prompts at most 0.25; see
	// docs/embedders.md); any other value overrides it. SkillK is the most
	// skills one prompt gets.
	SkillFloor float64 `json:"skill_floor"`
	SkillK     int     `json:"skill_k"`
	// HookTimeout is the hooks' hard deadline: past it a hook prints
	// nothing and exits 0.
	HookTimeout Duration `json:"hook_timeout"`
	// ProjectScoped keeps the prompt hook's recall to the current
	// project's memories, the user's own (type user: preferences and
	// instructions) and those of no project; a memory of another project
	// is recalled only when the prompt names that project ("how did
	// spotter set up OpenTelemetry?"): a memory of a project is knowledge
	// of that project, and a prompt sharing a technology word with it is
	// not asking about it. On sessions-dev the unrelated prompts answered
	// with nothing rose from 32/43 to 38/43 (no current project) and from
	// 257/344 to 292/344 (inside each session's project).
	// Explicit searches (the MCP search tool, `memtray search`, the UI)
	// and the session-start briefing are not affected; false recalls from
	// every project, as before.
	ProjectScoped bool `json:"project_scoped"`
}

// Steward configures consolidation. Each operation
// plans first; the scheduled sweep applies only the operations in
// AutoApply, the others wait for `memtray dream --apply` or the window.
// The operations applied are judged on the memories as they leave them:
// a merge or prune that waits for you does not change what the applied
// operations see.
type Steward struct {
	// Every is the sweep's period; 0 turns the schedule off.
	Every Duration `json:"every"`
	// AutoApply lists the operations the scheduled sweep applies by itself:
	// merge, decay_stale, boost_active, prune, decay_unreinforced,
	// snooze_sticky. Default: decay_stale, decay_unreinforced, snooze_sticky.
	AutoApply []string `json:"auto_apply"`
	// TrashDays is how long deleted, pruned and merged-away memories stay
	// restorable in the trash (`memtray trash restore ID`).
	TrashDays int `json:"trash_days"`
	// MergeSimilarity is the cosine at or above which the sweep merges two
	// memories. 0 (the default) means not set: the embedding model's
	// calibrated value (0.7 for the built-in model; see docs/embedders.md),
	// or, until a model is calibrated, 0.88 for semantic models and 0.7 for
	// the built-in one; any other value
	// overrides it.
	MergeSimilarity float64 `json:"merge_similarity"`
	// QualityHalfLifeDays and QualityMinEvents: a memory's quality is
	// log2(hits+1)/log2(maxHits+1) x 0.5^(daysSinceActive/QualityHalfLifeDays),
	// not scored before the store has QualityMinEvents retrieval events.
	QualityHalfLifeDays float64 `json:"quality_half_life_days"`
	QualityMinEvents    int     `json:"quality_min_events"`
	// Per memory type (user, feedback, project, reference) thresholds; a
	// type not listed uses "default".
	Types map[string]StewardType `json:"types"`
	// BoostMinAccess and BoostFactor: memories accessed at least this often
	// (and not sticky) gain importance.
	BoostMinAccess int     `json:"boost_min_access"`
	BoostFactor    float64 `json:"boost_factor"`
	// Stickiness is access_count / max(reinforced_count, 1), for memories
	// accessed at least StickyMinAccess times. Above UnreinforcedStickiness
	// importance decays by UnreinforcedFactor; above SnoozeStickiness (with
	// at least SnoozeMinAccess accesses) the memory is snoozed SnoozeDays.
	StickyMinAccess        int     `json:"sticky_min_access"`
	UnreinforcedStickiness float64 `json:"unreinforced_stickiness"`
	UnreinforcedFactor     float64 `json:"unreinforced_factor"`
	SnoozeStickiness       float64 `json:"snooze_stickiness"`
	SnoozeMinAccess        int     `json:"snooze_min_access"`
	SnoozeDays             int     `json:"snooze_days"`
}

// StewardType holds the per-type thresholds of decay and prune.
type StewardType struct {
	// StaleDays without access or reinforcement make a memory stale; its
	// importance is multiplied by DecayFactor, never below DecayFloor.
	StaleDays   int     `json:"stale_days"`
	DecayFactor float64 `json:"decay_factor"`
	DecayFloor  float64 `json:"decay_floor"`
	// A memory below PruneImportance and older than PruneAgeDays is pruned
	// (to the trash).
	PruneImportance float64 `json:"prune_importance"`
	PruneAgeDays    int     `json:"prune_age_days"`
}

// StewardOps are the steward's operations, in the order a sweep runs them.
var StewardOps = []string{"merge", "decay_stale", "boost_active", "prune", "decay_unreinforced", "snooze_sticky"}

// Default returns the defaults: a valid config with every field set.
func Default() Config {
	return Config{
		DataDir: DefaultDataDir(),
		Listen:  "127.0.0.1:7432",
		Embedder: Embedder{
			Provider:    "auto",
			OllamaModel: "nomic-embed-text",
			OpenAIURL:   DefaultOpenAIURL,
			Timeout:     Duration(30 * time.Second),
			BatchSize:   32,
			CacheSize:   4096,
		},
		Search: Search{
			K:             5,
			Overfetch:     2,
			Candidates:    50,
			RRFK:          60,
			MMRLambda:     0.9,
			RelativeFloor: 0.3,
			AbsoluteFloor: 0.1,
			EvidenceGate:  true,
			DecayPerDay: map[string]float64{
				"user": 0.0005, "reference": 0.001, "feedback": 0.002, "project": 0.01,
			},
			KindBoost: map[string]float64{
				"decision": 1.5, "convention": 1.3, "invariant": 1.3,
			},
			SymbolFactor:    0.2,
			ProjectBoost:    2.5,
			FeedbackWeight:  0.3,
			MaxKeywords:     5,
			KeywordHitBoost: 0.2,
			SynonymWeight:   0.3,
			HypernymWeight:  0.15,
			AntiSticky:      true,
		},
		Ingest: Ingest{
			HeadlessMinUserTurns: 3,
			HeadlessIdle:         Duration(30 * time.Minute),
			HeadlessHoldTurns:    32,
			HeadlessHoldTotal:    1000,
			MinLength:            80,
			ContentThreshold:     0.35,
			NoiseBufferSize:      500,
			NoiseRecent:          150,
			NoiseRebuildEvery:    25,
			ChunkSize:            2048,
			MinChunk:             20,
			DecisionLog:          1000,
		},
		Judge: Judge{
			Provider:       "off",
			OllamaModel:    "llama3.2",
			AnthropicURL:   "https://api.anthropic.com",
			AnthropicModel: "claude-haiku-4-5",
			Timeout:        Duration(20 * time.Second),
			MaxPerHour:     120,
			MaxPerDay:      1000,
		},
		Capture: Capture{
			Enabled:           true,
			AnthropicUpstream: "https://api.anthropic.com",
			OpenAIUpstream:    "https://api.openai.com",
			QueueSize:         256,
			MaxCaptureBytes:   32 << 20,
			MaxQueueBytes:     256 << 20,
			Transcripts:       DefaultTranscripts(),
		},
		Recall: Recall{
			K:             5,
			MaxChars:      3500,
			Sessions:      1000,
			Skills:        true,
			SkillK:        2,
			HookTimeout:   Duration(1500 * time.Millisecond),
			ProjectScoped: true,
		},
		Steward: Steward{
			Every:               Duration(time.Hour),
			AutoApply:           []string{"decay_stale", "decay_unreinforced", "snooze_sticky"},
			TrashDays:           30,
			QualityHalfLifeDays: 90,
			QualityMinEvents:    50,
			Types: map[string]StewardType{
				"default": {StaleDays: 90, DecayFactor: 0.8, DecayFloor: 0.01, PruneImportance: 0.05, PruneAgeDays: 30},
				"user":    {StaleDays: 180, DecayFactor: 0.95, DecayFloor: 0.15, PruneImportance: 0.02, PruneAgeDays: 365},
			},
			BoostMinAccess:         5,
			BoostFactor:            1.1,
			StickyMinAccess:        5,
			UnreinforcedStickiness: 5,
			UnreinforcedFactor:     0.9,
			SnoozeStickiness:       8,
			SnoozeMinAccess:        10,
			SnoozeDays:             30,
		},
		Team:     Team{PullInterval: Duration(30 * time.Second)},
		LogLevel: "info",
		IdleExit: Duration(10 * time.Minute),
	}
}

// DefaultDataDir is $XDG_DATA_HOME/memtray, or ~/.local/share/memtray.
func DefaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "memtray")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "memtray")
	}
	return filepath.Join(home, ".local", "share", "memtray")
}

// DefaultPath is $XDG_CONFIG_HOME/memtray/config.json, or ~/.config/memtray/config.json.
func DefaultPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = filepath.Join(os.TempDir(), "memtray-config")
	}
	return filepath.Join(dir, "memtray", "config.json")
}

// MaxFileBytes bounds a config file.
const MaxFileBytes = 1 << 20

// Load reads path over Default(). A missing file gives the defaults; a
// malformed one gives an error naming the file and the problem; unknown fields
// are errors so typos do not pass silently.
func Load(path string) (Config, error) {
	c := Default()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("open config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return c, fmt.Errorf("read config %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return c, fmt.Errorf("config %s: larger than %d bytes", path, MaxFileBytes)
	}
	err = Decode(data, &c)
	var errs Errors
	if err != nil && !errors.As(err, &errs) {
		return Default(), fmt.Errorf("config %s: %w", path, err)
	}
	// Every problem at once: the fields that did not decode, then what
	// Validate finds in the rest.
	var verrs Errors
	if err := c.Validate(); err != nil && !errors.As(err, &verrs) {
		return Default(), fmt.Errorf("config %s: %w", path, err)
	}
	for _, fe := range verrs {
		if !reported(errs, fe.Field) {
			errs = append(errs, fe)
		}
	}
	if len(errs) > 0 {
		return Default(), fmt.Errorf("config %s: %w", path, errs)
	}
	return c, nil
}

// reported says whether errs names field, or a section or list holding it.
func reported(errs Errors, field string) bool {
	for _, fe := range errs {
		if fe.Field == field || strings.HasPrefix(field, fe.Field+".") || strings.HasPrefix(field, fe.Field+"[") {
			return true
		}
	}
	return false
}

// Decode reads JSON config data over c, rejecting invalid UTF-8 (which
// the JSON decoder would quietly turn into U+FFFD), unknown fields and
// trailing data. Unknown fields and values of the wrong type are Errors
// naming every one of them by its path (not only the first), and c gets
// every other field of data.
func Decode(data []byte, c *Config) error {
	if !utf8.Valid(data) {
		return errors.New("parse: not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) || !json.Valid(data) || !bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
			return fmt.Errorf("parse: %w", err)
		}
		rest, errs := fieldProblems("", data, reflect.TypeOf(*c))
		if len(errs) == 0 {
			return fmt.Errorf("parse: %w", err)
		}
		if err := json.Unmarshal(rest, c); err != nil {
			return fmt.Errorf("parse: %w", err)
		}
		return errs
	}
	if dec.More() {
		return errors.New("parse: trailing data after the JSON object")
	}
	return nil
}

// FieldError is one invalid field.
type FieldError struct {
	Field   string
	Problem string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Problem }

// Errors is every invalid field of a config.
type Errors []FieldError

func (e Errors) Error() string {
	s := make([]string, len(e))
	for i, fe := range e {
		s[i] = fe.Error()
	}
	return "invalid config: " + strings.Join(s, "; ")
}

// Validate returns Errors listing every bad field, or nil. It runs one step
// per section (validateSteps), in the order the file lists them, and
// gathers every step's problems.
func (c *Config) Validate() error {
	var errs Errors
	for _, step := range c.validateSteps() {
		errs = append(errs, step()...)
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// validateSteps are Validate's steps: each checks one section of c and
// returns its problems.
func (c *Config) validateSteps() []func() Errors {
	return []func() Errors{
		c.validateDaemon,
		c.Embedder.validate,
		c.Search.validate,
		c.Ingest.validate,
		c.Judge.validate,
		c.Capture.validate,
		c.Recall.validate,
		c.Steward.validate,
		c.Team.validate,
		c.validateLogging,
	}
}

// problems gathers one section's invalid fields.
type problems Errors

// bad adds field's problem, formatted as by fmt.Sprintf.
func (p *problems) bad(field, format string, args ...any) {
	*p = append(*p, FieldError{field, fmt.Sprintf(format, args...)})
}

// validateDaemon checks where the daemon keeps its data and listens.
func (c *Config) validateDaemon() Errors {
	var p problems
	if c.DataDir == "" {
		p.bad("data_dir", "must not be empty")
	}
	if err := CheckListen(c.Listen, c.InsecureNonLoopback); err != nil {
		p.bad("listen", "%v", err)
	}
	return Errors(p)
}

// validate checks the embedder section (embedder.*).
func (e *Embedder) validate() Errors {
	var p problems
	switch e.Provider {
	case "auto", "builtin", "ollama", "openai":
	default:
		p.bad("embedder.provider", "must be auto, builtin, ollama or openai, not %q", e.Provider)
	}
	if (e.Provider == "auto" || e.Provider == "ollama") && e.OllamaModel == "" {
		p.bad("embedder.ollama_model", "must not be empty")
	}
	if e.Provider == "openai" && strings.TrimSpace(e.OpenAIModel) == "" {
		p.bad("embedder.openai_model", "must not be empty with provider openai")
	}
	p = append(p, CheckOpenAIEmbedder(*e)...)
	if e.Timeout <= 0 {
		p.bad("embedder.timeout", "must be positive")
	}
	if e.BatchSize < 1 || e.BatchSize > 1024 {
		p.bad("embedder.batch_size", "must be within 1..1024")
	}
	if e.CacheSize < 0 {
		p.bad("embedder.cache_size", "must not be negative")
	}
	return Errors(p)
}

// validate checks the read pipeline's constants (search.*).
func (s *Search) validate() Errors {
	var p problems
	if s.K < 1 || s.K > 100 {
		p.bad("search.k", "must be within 1..100")
	}
	if s.Overfetch < 1 || s.Overfetch > 20 || math.IsNaN(s.Overfetch) {
		p.bad("search.overfetch", "must be within 1..20")
	}
	if s.Candidates < 0 || s.Candidates > 1000 {
		p.bad("search.candidates", "must be within 0..1000")
	}
	if s.RRFK <= 0 || math.IsNaN(s.RRFK) {
		p.bad("search.rrf_k", "must be positive")
	}
	if !(s.VectorWeight >= 0 && s.VectorWeight <= 10) {
		p.bad("search.vector_weight", "must be within 0..10 (0 picks by embedder)")
	}
	unit := map[string]float64{"search.mmr_lambda": s.MMRLambda, "search.relative_floor": s.RelativeFloor,
		"search.absolute_floor": s.AbsoluteFloor, "search.symbol_factor": s.SymbolFactor,
		"search.vector_floor":    s.VectorFloor,
		"search.feedback_weight": s.FeedbackWeight}
	for name, v := range unit {
		if !(v >= 0 && v <= 1) {
			p.bad(name, "must be within 0..1")
		}
	}
	if !(s.ProjectBoost >= 1 && s.ProjectBoost <= 10) {
		p.bad("search.project_boost", "must be within 1..10")
	}
	for t, v := range s.DecayPerDay {
		if !(v >= 0 && v < 1) {
			p.bad("search.decay_per_day."+t, "must be within 0..1")
		}
	}
	for k, v := range s.KindBoost {
		if !(v > 0 && v <= 10) {
			p.bad("search.kind_boost."+k, "must be within 0..10")
		}
	}
	if s.MaxKeywords < 0 || s.MaxKeywords > 50 {
		p.bad("search.max_keywords", "must be within 0..50")
	}
	if !(s.SynonymWeight >= 0 && s.SynonymWeight <= 1) {
		p.bad("search.synonym_weight", "must be within 0..1")
	}
	if !(s.HypernymWeight >= 0 && s.HypernymWeight <= 1) {
		p.bad("search.hypernym_weight", "must be within 0..1")
	}
	if !(s.KeywordHitBoost >= 0 && s.KeywordHitBoost <= 2) {
		p.bad("search.keyword_hit_boost", "must be within 0..2")
	}
	return Errors(p)
}

// validate checks the write pipeline's constants (ingest.*).
func (in *Ingest) validate() Errors {
	var p problems
	if in.HeadlessMinUserTurns < 0 || in.HeadlessMinUserTurns > 1000 {
		p.bad("ingest.headless_min_user_turns", "must be within 0..1000")
	}
	if in.HeadlessIdle < Duration(time.Second) || in.HeadlessIdle > Duration(7*24*time.Hour) {
		p.bad("ingest.headless_idle", "must be within 1s..168h")
	}
	if in.HeadlessHoldTurns < 1 || in.HeadlessHoldTurns > 10000 {
		p.bad("ingest.headless_hold_turns", "must be within 1..10000")
	}
	if in.HeadlessHoldTotal < 1 || in.HeadlessHoldTotal > 100000 {
		p.bad("ingest.headless_hold_total", "must be within 1..100000")
	}
	if in.MinLength < 0 || in.MinLength > 10000 {
		p.bad("ingest.min_length", "must be within 0..10000")
	}
	if in.NoiseBufferSize < 1 || in.NoiseBufferSize > 100000 {
		p.bad("ingest.noise_buffer_size", "must be within 1..100000")
	}
	if in.NoiseRecent < 0 || in.NoiseRecent > in.NoiseBufferSize {
		p.bad("ingest.noise_recent", "must be within 0..noise_buffer_size")
	}
	if in.NoiseRebuildEvery < 1 {
		p.bad("ingest.noise_rebuild_every", "must be at least 1")
	}
	if in.ChunkSize < 100 || in.ChunkSize > 32768 {
		p.bad("ingest.chunk_size", "must be within 100..32768")
	}
	if in.MinChunk < 0 || in.MinChunk >= in.ChunkSize {
		p.bad("ingest.min_chunk", "must be within 0..chunk_size")
	}
	if in.DecisionLog < 1 || in.DecisionLog > 1000000 {
		p.bad("ingest.decision_log", "must be within 1..1000000")
	}
	for name, v := range map[string]float64{"ingest.content_threshold": in.ContentThreshold,
		"ingest.duplicate_similarity": in.DuplicateSimilarity, "ingest.source_similarity": in.SourceSimilarity} {
		if !(v >= 0 && v <= 1) {
			p.bad(name, "must be within 0..1")
		}
	}
	return Errors(p)
}

// validate checks the judge section (judge.*).
func (j *Judge) validate() Errors {
	var p problems
	switch j.Provider {
	case "off", "ollama", "anthropic":
	default:
		p.bad("judge.provider", "must be off, ollama or anthropic, not %q", j.Provider)
	}
	if j.Provider == "ollama" && j.OllamaModel == "" {
		p.bad("judge.ollama_model", "must not be empty")
	}
	if j.Provider == "anthropic" && (j.AnthropicModel == "" || j.AnthropicURL == "") {
		p.bad("judge.anthropic_model", "model and anthropic_url must not be empty")
	}
	if j.Timeout <= 0 {
		p.bad("judge.timeout", "must be positive")
	}
	if j.MaxPerHour < 0 || j.MaxPerDay < 0 {
		p.bad("judge.max_per_hour", "caps must not be negative")
	}
	return Errors(p)
}

// validate checks the capture section (capture.*, with
// capture.transcripts.*).
func (cp *Capture) validate() Errors {
	var p problems
	for name, u := range map[string]string{"capture.anthropic_upstream": cp.AnthropicUpstream, "capture.openai_upstream": cp.OpenAIUpstream} {
		if err := checkUpstream(u); err != nil {
			p.bad(name, "%v", err)
		}
	}
	if cp.QueueSize < 1 || cp.QueueSize > 100000 {
		p.bad("capture.queue_size", "must be within 1..100000")
	}
	if cp.MaxCaptureBytes < 1<<10 || cp.MaxCaptureBytes > 1<<30 {
		p.bad("capture.max_capture_bytes", "must be within 1 KiB..1 GiB")
	}
	if cp.MaxQueueBytes < cp.MaxCaptureBytes || cp.MaxQueueBytes > 1<<34 {
		p.bad("capture.max_queue_bytes", "must be within max_capture_bytes..16 GiB")
	}
	cp.Transcripts.validate(p.bad)
	for i, dir := range cp.ExcludeProjects {
		if strings.TrimSpace(dir) == "" {
			p.bad(fmt.Sprintf("capture.exclude_projects[%d]", i), "must not be empty")
		}
	}
	return Errors(p)
}

// validate checks the recall section (recall.*).
func (rc *Recall) validate() Errors {
	var p problems
	if rc.K < 1 || rc.K > 50 {
		p.bad("recall.k", "must be within 1..50")
	}
	if rc.MaxChars < 200 || rc.MaxChars > 100000 {
		p.bad("recall.max_chars", "must be within 200..100000")
	}
	if rc.Sessions < 1 || rc.Sessions > 1000000 {
		p.bad("recall.sessions", "must be within 1..1000000")
	}
	if !(rc.SkillFloor >= 0 && rc.SkillFloor <= 2) {
		p.bad("recall.skill_floor", "must be within 0..2")
	}
	if rc.SkillK < 0 || rc.SkillK > 10 {
		p.bad("recall.skill_k", "must be within 0..10")
	}
	for i, d := range rc.SkillDirs {
		if !filepath.IsAbs(d) {
			p.bad(fmt.Sprintf("recall.skill_dirs[%d]", i), "must be an absolute path")
		}
	}
	if rc.HookTimeout <= 0 || time.Duration(rc.HookTimeout) > time.Minute {
		p.bad("recall.hook_timeout", "must be within 0..1m")
	}
	return Errors(p)
}

// validate checks the steward section (steward.*).
func (sw *Steward) validate() Errors {
	var p problems
	if sw.Every < 0 {
		p.bad("steward.every", "must not be negative (0 turns the schedule off)")
	}
	for _, op := range sw.AutoApply {
		if !slices.Contains(StewardOps, op) {
			p.bad("steward.auto_apply", "unknown operation %q (want %s)", op, strings.Join(StewardOps, ", "))
		}
	}
	if sw.TrashDays < 1 || sw.TrashDays > 3650 {
		p.bad("steward.trash_days", "must be within 1..3650")
	}
	if !(sw.MergeSimilarity == 0 || sw.MergeSimilarity >= 0.5 && sw.MergeSimilarity <= 1) {
		p.bad("steward.merge_similarity", "must be 0 (by embedder) or within 0.5..1")
	}
	if !(sw.QualityHalfLifeDays > 0) || sw.QualityMinEvents < 0 {
		p.bad("steward.quality_half_life_days", "half life must be positive and min events not negative")
	}
	if _, ok := sw.Types["default"]; !ok {
		p.bad("steward.types", "must hold a \"default\" entry")
	}
	for name, ty := range sw.Types {
		if name != "default" && !memory.Type(name).Valid() {
			p.bad("steward.types."+name, "unknown memory type")
		}
		if ty.StaleDays < 1 || !(ty.DecayFactor > 0 && ty.DecayFactor <= 1) || !(ty.DecayFloor >= 0 && ty.DecayFloor <= 1) ||
			!(ty.PruneImportance >= 0 && ty.PruneImportance <= 1) || ty.PruneAgeDays < 0 {
			p.bad("steward.types."+name, "stale_days >= 1, decay_factor in (0,1], decay_floor and prune_importance in 0..1, prune_age_days >= 0")
		}
	}
	if sw.BoostMinAccess < 1 || !(sw.BoostFactor >= 1 && sw.BoostFactor <= 2) {
		p.bad("steward.boost_factor", "boost_min_access >= 1 and boost_factor within 1..2")
	}
	if sw.StickyMinAccess < 1 || !(sw.UnreinforcedStickiness > 0) || !(sw.UnreinforcedFactor > 0 && sw.UnreinforcedFactor <= 1) ||
		!(sw.SnoozeStickiness > 0) || sw.SnoozeMinAccess < 1 || sw.SnoozeDays < 1 || sw.SnoozeDays > 3650 {
		p.bad("steward.snooze_stickiness", "stickiness thresholds positive, unreinforced_factor in (0,1], snooze_min_access >= 1, snooze_days within 1..3650")
	}
	return Errors(p)
}

// validateLogging checks the log level and the on-demand daemon's idle exit.
func (c *Config) validateLogging() Errors {
	var p problems
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p.bad("log_level", "must be debug, info, warn or error")
	}
	if c.IdleExit != 0 && (c.IdleExit < Duration(time.Second) || c.IdleExit > Duration(7*24*time.Hour)) {
		p.bad("idle_exit", "must be 0 (never) or within 1s..168h")
	}
	return Errors(p)
}

// checkUpstream accepts an absolute http(s) URL without query or fragment.
func checkUpstream(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http or https URL, not %q", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("must not carry a query or fragment: %q", raw)
	}
	return nil
}

// CheckListen checks a listen address: host:port on a loopback address,
// or on any address when insecure (the explicit force).
func CheckListen(addr string, insecure bool) error {
	if !insecure {
		return CheckLoopback(addr)
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%q is not host:port", addr)
	}
	return nil
}

// CheckLoopback returns an error unless addr is host:port on a loopback address.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if port == "" {
		return fmt.Errorf("%q has no port", addr)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address; memtray listens on loopback only (serve --insecure-non-loopback forces it)", host)
	}
	return nil
}

// WriteFileAtomic writes data to path through a synced temp file and a rename,
// creating the parent directory with mode 0700.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Executable is the program that runs this memtray again, for what must
// outlive this process or start it later (agent configs, a detached daemon,
// the login entry): the AppImage file itself when memtray runs from one
// ($APPIMAGE, set by its runtime: the path memtray runs from inside is a
// mount or cache that is not there later), else this executable with its
// symlinks resolved.
func Executable() (string, error) {
	if p := os.Getenv("APPIMAGE"); p != "" && filepath.IsAbs(p) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find this program's path: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}
