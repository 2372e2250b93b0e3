package search

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// Recall events: what made the agent ask.
const (
	// EventPrompt is a new user prompt (Claude Code's UserPromptSubmit): one
	// recall per user turn.
	EventPrompt = "user-prompt"
	// EventSessionStart is a session starting or resuming: the project's
	// standing decisions and conventions, no query.
	EventSessionStart = "session-start"
	// EventSearch is an explicit search by the agent (MCP memory_search):
	// it may run several times a turn, and still never repeats a memory
	// the session already has.
	EventSearch = "search"
)

// ContextTag names the block recalled memories are wrapped in. Capture,
// transcripts and the write pipeline strip it (harnesstext.Injected), so
// what memtray gives the agent is never captured again.
const ContextTag = harnesstext.ContextTag

// MaxSessionIDLen bounds a session id.
const MaxSessionIDLen = 256

// RecallRequest asks for the memories an agent should see now.
type RecallRequest struct {
	// SessionID names the agent session; memories already given to it are
	// never given again (until Reset). Required.
	SessionID string `json:"session_id"`
	// Prompt is the user's prompt, or the query of an explicit search.
	Prompt string `json:"prompt"`
	// Project is the session's project: its memories get the project boost.
	Project string `json:"project,omitempty"`
	// Event is EventPrompt (the default), EventSessionStart or EventSearch.
	Event string `json:"event,omitempty"`
	// Turn identifies the user turn; a second prompt recall with the same
	// session and turn returns nothing. Empty: a hash of the prompt.
	Turn string `json:"turn,omitempty"`
	// ToolLoop marks a request of the agent's tool loop (the user typed
	// nothing): prompt recall never fires on one.
	ToolLoop bool `json:"tool_loop,omitempty"`
	// K and MaxChars override the configured bounds (never above them).
	K        int `json:"k,omitempty"`
	MaxChars int `json:"max_chars,omitempty"`
	// Kinds narrows an explicit search.
	Kinds []memory.Kind `json:"kinds,omitempty"`
	// FilterProject narrows an explicit search to one project.
	FilterProject string `json:"filter_project,omitempty"`
	// CWD is the agent's working directory (absolute); a prompt recall
	// also suggests the skills of its .claude/skills folder.
	CWD string `json:"cwd,omitempty"`
	// Agent names the agent that asks (the hooks say claude-code or
	// codex), for the recall log; empty: not said.
	Agent string `json:"agent,omitempty"`
	// AllWithheld lists every candidate withheld in Recalled.Withheld, not
	// only the best MaxWithheld: an evaluation (eval sessions --dump) sees
	// where each memory it looks for went. Not part of the API (hooks, MCP
	// and HTTP cannot set it); the recall log keeps the first MaxWithheld.
	AllWithheld bool `json:"-"`
	// Unrecorded leaves the given memories unrecorded as accessed: an
	// evaluation's probe (eval sessions) is measured against the store as
	// ingest left it, not as the probes before it left it (access counts
	// raise a memory's score). Not part of the API.
	Unrecorded bool `json:"-"`
}

// Recalled is what a recall gives the agent.
type Recalled struct {
	// Hits are the memories given, best first (recorded as accessed and as
	// given to the session).
	Hits []memory.Hit `json:"hits"`
	// Context is Hits formatted for the agent inside a <memtray-context>
	// block, at most MaxChars long; "" when there is nothing to give.
	Context string `json:"context,omitempty"`
	// Skipped says why nothing was given, when nothing was.
	Skipped string `json:"skipped,omitempty"`
	// AlreadyGiven lists memories that matched but the session already has.
	AlreadyGiven []string `json:"already_given,omitempty"`
	// Given is how many memories the session has received so far.
	Given int `json:"given"`
	// Skills are agent skills whose description matches the prompt
	// (prompt recalls only); Context lists them after the memories.
	Skills []SkillHit `json:"skills,omitempty"`
	// Warning reports a failure that did not stop the recall (the access
	// could not be recorded, the skills could not be read).
	Warning string `json:"warning,omitempty"`
	// Evidence is the search's query-level evidence test (see Evidence),
	// when it ran: which test held or why none did, for the recall log and
	// evaluation, never shown to the agent.
	Evidence *Evidence `json:"evidence,omitempty"`
	// Withheld are the candidates the search weighed but did not give, and
	// why (one of the Withheld constants), best scored first, at most
	// MaxWithheld (unless RecallRequest.AllWithheld): for the recall log,
	// never shown to the agent. Snoozed and superseded memories are not
	// candidates and are not listed.
	Withheld []Withheld `json:"withheld,omitempty"`
	// GivenEvidence is each of Hits' own evidence (CandidateEvidence, in
	// the order of Hits) and which per-memory test of the absolute floor
	// let it through (Through), when the request set AllWithheld: for
	// evaluation (eval sessions --dump), never serialised.
	GivenEvidence []GivenEvidence `json:"-"`
}

// GivenEvidence is a given memory's own evidence (Recalled.GivenEvidence).
type GivenEvidence struct {
	CandidateEvidence
	// Through names the per-memory tests the memory passed: "coverage"
	// (Coverage at least search.absolute_floor), "cosine" (Cosine at least
	// the vector floor), both joined by "+".
	Through string
}

// Why a candidate was withheld (Withheld.Reason).
const (
	// WithheldNoEvidence: the query-level evidence test failed, so the
	// search gave nothing (the store holds nothing the prompt is about).
	WithheldNoEvidence = "no_evidence"
	// WithheldAbsoluteFloor: the candidate had no evidence of its own
	// (Coverage under search.absolute_floor and cosine under vector_floor).
	WithheldAbsoluteFloor = "absolute_floor"
	// WithheldRelativeFloor: it scored under search.relative_floor x the
	// best candidate's composite.
	WithheldRelativeFloor = "relative_floor"
	// WithheldAlreadyGiven: the session was given it earlier.
	WithheldAlreadyGiven = "already_given"
	// WithheldOverK: it ranked below the k memories a recall gives.
	WithheldOverK = "over_k"
	// WithheldMaxChars: it did not fit in the context block's max_chars.
	WithheldMaxChars = "max_chars"
)

// MaxWithheld bounds Recalled.Withheld.
const MaxWithheld = 12

// Withheld is a candidate a recall did not give.
type Withheld struct {
	ID string `json:"id"`
	// Reason is one of the Withheld constants.
	Reason string `json:"reason"`
	// Score is the candidate's composite score (what it would have ranked
	// by, before diversity), 0..
	Score float64 `json:"score"`
	// Breakdown is every factor of Score (memory.ScoreBreakdown), for
	// evaluation: what ranked the given memories above this one. Not
	// serialised (the recall log keeps the score alone).
	Breakdown memory.ScoreBreakdown `json:"-"`
	// Coverage and Cosine are the candidate's own evidence
	// (CandidateEvidence), for a candidate the search scored: what the
	// absolute floor tests (Score is not). Not serialised.
	Coverage float64 `json:"-"`
	Cosine   float64 `json:"-"`
}

// Recaller is session-aware recall: the one entry point hooks, MCP and the
// API use to hand memories to an agent. It fires once per user turn, never
// on tool-loop iterations, never gives a session the same memory twice
// (until Reset, on compaction or /clear), records each memory it gives
// (access count, last accessed, hit time) and returns nothing rather than
// noise. Session state lives in memory, bounded by cfg.Sessions (least
// recently used sessions forgotten first); a restarted daemon starts afresh.
type Recaller struct {
	engine *Engine
	store  *store.Store
	cfg    config.Recall
	clock  memory.Clock

	skills    *SkillCatalog
	skillDirs []string

	mu       sync.Mutex
	sessions map[string]*list.Element
	lru      *list.List // of *session, most recent first

	requests, searches, toolLoops, repeats, empty, given atomic.Int64
}

// RecallStats counts what a Recaller did since it was made.
type RecallStats struct {
	// Requests is every Recall call; Searches those that searched the store.
	Requests int64 `json:"requests"`
	Searches int64 `json:"searches"`
	// SkippedToolLoop and SkippedRepeat are prompt recalls that did not
	// search: tool-loop iterations, and a second recall of one user turn.
	SkippedToolLoop int64 `json:"skipped_tool_loop"`
	SkippedRepeat   int64 `json:"skipped_repeat"`
	// Empty is searches that gave nothing; Given the memories given in all.
	Empty int64 `json:"empty"`
	Given int64 `json:"given"`
	// Sessions is how many sessions the exclusion state holds now.
	Sessions int `json:"sessions"`
}

// Stats returns the counters.
func (r *Recaller) Stats() RecallStats {
	return RecallStats{Requests: r.requests.Load(), Searches: r.searches.Load(), SkippedToolLoop: r.toolLoops.Load(),
		SkippedRepeat: r.repeats.Load(), Empty: r.empty.Load(), Given: r.given.Load(), Sessions: r.Sessions()}
}

type session struct {
	id    string
	given map[string]bool
	turns []string // recent turn keys, newest last
}

// maxTurnKeys bounds the turn keys a session remembers.
const maxTurnKeys = 64

// NewRecaller returns a Recaller over e and st.
func NewRecaller(e *Engine, st *store.Store, cfg config.Recall, clock memory.Clock) *Recaller {
	if clock == nil {
		clock = memory.SystemClock{}
	}
	return &Recaller{engine: e, store: st, cfg: cfg, clock: clock,
		sessions: map[string]*list.Element{}, lru: list.New()}
}

// WithSkills turns on skill suggestions for prompt recalls: the skills of
// userDirs (e.g. ~/.claude/skills) and of each request's
// <cwd>/.claude/skills.
func (r *Recaller) WithSkills(c *SkillCatalog, userDirs []string) *Recaller {
	r.skills, r.skillDirs = c, userDirs
	return r
}

// Validate checks a request's fields.
func (req *RecallRequest) Validate() error {
	switch {
	case strings.TrimSpace(req.SessionID) == "":
		return fmt.Errorf("%w: session_id is required", memory.ErrInvalid)
	case len(req.SessionID) > MaxSessionIDLen:
		return fmt.Errorf("%w: session_id longer than %d bytes", memory.ErrInvalid, MaxSessionIDLen)
	case !utf8.ValidString(req.SessionID) || !utf8.ValidString(req.Prompt) || !utf8.ValidString(req.Project) || !utf8.ValidString(req.Turn):
		return fmt.Errorf("%w: fields must be valid UTF-8", memory.ErrInvalid)
	case req.CWD != "" && (!filepath.IsAbs(req.CWD) || len(req.CWD) > 4096 || !utf8.ValidString(req.CWD)):
		return fmt.Errorf("%w: cwd must be an absolute path", memory.ErrInvalid)
	case len(req.Prompt) > MaxQueryBytes:
		return fmt.Errorf("%w: prompt longer than %d bytes", memory.ErrInvalid, MaxQueryBytes)
	case req.K < 0 || req.MaxChars < 0:
		return fmt.Errorf("%w: k and max_chars must not be negative", memory.ErrInvalid)
	}
	switch req.Event {
	case "", EventPrompt, EventSessionStart, EventSearch:
	default:
		return fmt.Errorf("%w: event must be %s, %s or %s, not %q", memory.ErrInvalid, EventPrompt, EventSessionStart, EventSearch, req.Event)
	}
	for _, k := range req.Kinds {
		if !k.Valid() {
			return fmt.Errorf("%w: unknown kind %q", memory.ErrInvalid, k)
		}
	}
	if req.Event != EventSessionStart && strings.TrimSpace(req.Prompt) == "" {
		return fmt.Errorf("%w: prompt is required", memory.ErrInvalid)
	}
	return nil
}

// Recall runs one recall; see Recaller. Its steps: validate the request,
// admit it (a prompt recalls once per user turn), find the hits (a search,
// or the session-start briefing) and answer with those that fit.
func (r *Recaller) Recall(ctx context.Context, req RecallRequest) (Recalled, error) {
	if err := req.Validate(); err != nil {
		return Recalled{}, err
	}
	r.requests.Add(1)
	if req.Event == "" {
		req.Event = EventPrompt
	}
	k, maxChars := recallLimits(req, r.cfg)
	if why := r.admit(&req); why != "" {
		return r.nothing(req.SessionID, why), nil
	}
	r.searches.Add(1)
	f, err := r.find(ctx, req, 2*k)
	if err != nil {
		if req.Event == EventPrompt {
			r.unclaimTurn(req.SessionID, req.Turn) // a retry of this turn may recall
		}
		return Recalled{}, fmt.Errorf("recall: %w", err)
	}
	return r.answer(ctx, req, f, k, maxChars), nil
}

// recallLimits returns how many memories and characters a request may get:
// the request's own within the configured ones, and for an explicit search
// as many as it asks, up to its own caps.
func recallLimits(req RecallRequest, cfg config.Recall) (k, maxChars int) {
	if req.Event == EventSearch {
		searchChars := max(cfg.MaxChars, MaxSearchChars)
		return boundOr(req.K, cfg.K, MaxSearchK), boundOr(req.MaxChars, searchChars, searchChars)
	}
	return bound(req.K, cfg.K), bound(req.MaxChars, cfg.MaxChars)
}

// Why a prompt recall did not search (Recalled.Skipped): the recall log
// leaves these out.
const (
	SkippedToolLoop = "tool-loop iteration: recall runs once per user turn"
	SkippedRepeat   = "already recalled for this user turn"
)

// admit lets a prompt recall once per user turn: it returns why a
// tool-loop iteration or a repeat of a turn gets nothing, and otherwise
// claims the turn (naming it after the prompt when the request does not).
// Other events are always admitted.
func (r *Recaller) admit(req *RecallRequest) string {
	if req.Event != EventPrompt {
		return ""
	}
	if req.ToolLoop {
		r.toolLoops.Add(1)
		return SkippedToolLoop
	}
	if req.Turn == "" {
		req.Turn = turnKey(req.Prompt)
	}
	if !r.claimTurn(req.SessionID, req.Turn) {
		r.repeats.Add(1)
		return SkippedRepeat
	}
	return ""
}

// found is what a recall's search found.
type found struct {
	hits []memory.Hit
	// noEvidence and unknownNames are the search's Result.NoEvidence and
	// Evidence.UnknownNames.
	noEvidence   bool
	unknownNames []string
	// generic is the search's Evidence.Generic, unheldNames its
	// Evidence.UnheldNames.
	generic     bool
	unheldNames []string
	// namesOutOfReach is the search's Evidence.NamesOutOfReach.
	namesOutOfReach []string
	// outOfReach says the search was scoped (Result.Scoped) and found no
	// candidate within the prompt's reach.
	outOfReach bool
	// evidence is the search's Result.Evidence when it ran (Tested).
	evidence *Evidence
	// scored is every candidate's evidence before the floors (the search's
	// Result.Scored); excluded is what the search left out as given.
	scored   []CandidateEvidence
	excluded func(string) bool
}

// find returns up to n hits for the request: the project briefing at
// session start, else the engine's search for the prompt without what the
// session was given.
func (r *Recaller) find(ctx context.Context, req RecallRequest, n int) (found, error) {
	if req.Event == EventSessionStart {
		hits, err := r.briefing(ctx, req.Project, n)
		return found{hits: hits}, err
	}
	q := Query{Text: req.Prompt, Project: req.Project, K: n, Exclude: r.givenFunc(req.SessionID), Prompt: req.Event == EventPrompt,
		ProjectScoped: req.Event == EventPrompt && r.cfg.ProjectScoped}
	q.Filter.Kinds, q.Filter.Project = req.Kinds, req.FilterProject
	res, err := r.engine.Run(ctx, q)
	if err != nil {
		return found{}, err
	}
	f := found{hits: res.Hits, noEvidence: res.NoEvidence, unknownNames: res.Evidence.UnknownNames,
		generic: res.Evidence.Generic, unheldNames: res.Evidence.UnheldNames, namesOutOfReach: res.Evidence.NamesOutOfReach, scored: res.Scored, excluded: q.Exclude, outOfReach: res.Scoped && res.Candidates == 0}
	if res.Tested {
		f.evidence = &res.Evidence
	}
	return f, nil
}

// answer gives the session the first k hits that fit in maxChars (with a
// prompt's skills), records them as accessed and says why when there are
// none. Skill and access-recording failures are warnings.
func (r *Recaller) answer(ctx context.Context, req RecallRequest, f found, k, maxChars int) Recalled {
	out := Recalled{Evidence: f.evidence}
	var warnings []string
	if req.Event == EventPrompt && r.skills != nil && r.cfg.SkillK > 0 {
		var err error
		if out.Skills, err = r.suggest(ctx, req); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	hits, given, over := r.claim(req.SessionID, f.hits, k)
	out.AlreadyGiven = given
	out.Hits, out.Context = FormatWithSkills(hits, out.Skills, maxChars)
	// Give back what did not fit in the context block.
	r.release(req.SessionID, hits[len(out.Hits):])
	limit := MaxWithheld
	if req.AllWithheld {
		limit = math.MaxInt
	}
	out.Withheld = r.withheld(f, out.Hits, given, over, hits[len(out.Hits):], limit)
	if req.AllWithheld {
		out.GivenEvidence = r.engine.givenEvidence(f.scored, out.Hits)
	}
	out.Given = r.givenCount(req.SessionID)
	r.given.Add(int64(len(out.Hits)))
	if len(out.Hits) == 0 {
		r.empty.Add(1)
		out.Skipped = skippedReason(f, len(out.AlreadyGiven) > 0 || r.engine.givenEarlier(f))
	} else if !req.Unrecorded {
		if err := r.record(ctx, out.Hits); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	out.Warning = strings.Join(warnings, "; ")
	return out
}

// skippedReason says why a recall gave nothing: every relevant memory was
// given earlier, nothing is within a scoped prompt's reach, the prompt is
// too generic (or says little but a name no memory within its reach
// writes: Evidence.UnheldNames), the store holds nothing the prompt is about (with the names
// it lacks, or the lexical evidence's memory far from the prompt: Evidence.
// LexicalFar), or nothing cleared the floors.
func skippedReason(f found, alreadyGiven bool) string {
	switch {
	case alreadyGiven:
		return "every relevant memory was given earlier in this session"
	case f.outOfReach:
		return "no memory of this project, of the user's own or of no project is about this prompt (another project's memories are recalled when the prompt names that project)"
	case f.noEvidence && f.generic && len(f.unheldNames) > 0:
		return "no memory this prompt reaches writes " + strings.Join(f.unheldNames, ", ") +
			", and the prompt says too little else to be about something memory holds"
	case f.noEvidence && f.generic:
		return "the prompt is too generic to be about something memory holds (it names nothing and says little)"
	case f.noEvidence && len(f.unknownNames) > 0:
		return "the store holds nothing this prompt is about (no evidence beyond chance; no memory mentions " +
			strings.Join(f.unknownNames, ", ") + ")"
	case f.noEvidence && len(f.namesOutOfReach) > 0:
		return "the store holds nothing this prompt is about (no evidence beyond chance; only other projects' memories mention " +
			strings.Join(f.namesOutOfReach, ", ") + ")"
	case f.noEvidence && f.evidence != nil && f.evidence.Lexical && f.evidence.LexicalFar:
		return "the store holds nothing this prompt is about (no evidence beyond chance; the memory sharing most of its words is no nearer its meaning than a typical memory)"
	case f.noEvidence:
		return "the store holds nothing this prompt is about (no evidence beyond chance)"
	}
	return "no memory cleared the relevance floors"
}

// suggest finds the skills matching a prompt.
func (r *Recaller) suggest(ctx context.Context, req RecallRequest) ([]SkillHit, error) {
	dirs := slices.Clone(r.skillDirs)
	if req.CWD != "" {
		dirs = append(dirs, filepath.Join(req.CWD, ".claude", "skills"))
	}
	idx, err := r.skills.Index(ctx, dirs)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	hits, err := idx.Suggest(ctx, req.Prompt, r.cfg.SkillK)
	if err != nil {
		return nil, fmt.Errorf("skills: %w", err)
	}
	return hits, nil
}

// Reset forgets what a session was given (compaction, /clear, a new
// session under the same id): the next recall may give it all again.
func (r *Recaller) Reset(sessionID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.sessions[sessionID]; ok {
		r.lru.Remove(e)
		delete(r.sessions, sessionID)
	}
}

// Given reports the ids a session has received, sorted.
func (r *Recaller) Given(sessionID string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.sessions[sessionID]
	if !ok {
		return nil
	}
	ids := make([]string, 0, len(e.Value.(*session).given))
	for id := range e.Value.(*session).given {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Sessions is how many sessions the recaller remembers.
func (r *Recaller) Sessions() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lru.Len()
}

// Caps of an explicit search (EventSearch): it may ask for more than a
// prompt recall gives.
const (
	MaxSearchK     = 50
	MaxSearchChars = 20000
)

// boundOr is asked within 1..limit, or def when not asked.
func boundOr(asked, def, limit int) int {
	if asked <= 0 {
		return min(def, limit)
	}
	return min(asked, limit)
}

func bound(asked, limit int) int {
	if asked <= 0 || asked > limit {
		return limit
	}
	return asked
}

func turnKey(prompt string) string {
	h := sha256.Sum256([]byte(memory.NormalizeSpace(prompt)))
	return hex.EncodeToString(h[:8])
}

// get returns the session, created and moved to the front; r.mu held.
func (r *Recaller) get(id string) *session {
	if e, ok := r.sessions[id]; ok {
		r.lru.MoveToFront(e)
		return e.Value.(*session)
	}
	s := &session{id: id, given: map[string]bool{}}
	r.sessions[id] = r.lru.PushFront(s)
	for r.lru.Len() > max(r.cfg.Sessions, 1) {
		old := r.lru.Back()
		r.lru.Remove(old)
		delete(r.sessions, old.Value.(*session).id)
	}
	return s
}

// claimTurn records a prompt recall for a turn; false if the turn had one.
func (r *Recaller) claimTurn(id, turn string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.get(id)
	for _, t := range s.turns {
		if t == turn {
			return false
		}
	}
	s.turns = append(s.turns, turn)
	if len(s.turns) > maxTurnKeys {
		s.turns = s.turns[len(s.turns)-maxTurnKeys:]
	}
	return true
}

func (r *Recaller) unclaimTurn(id, turn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.get(id)
	s.turns = slices.DeleteFunc(s.turns, func(t string) bool { return t == turn })
}

func (r *Recaller) givenFunc(id string) func(string) bool {
	r.mu.Lock()
	given := map[string]bool{}
	if e, ok := r.sessions[id]; ok {
		for k := range e.Value.(*session).given {
			given[k] = true
		}
	}
	r.mu.Unlock()
	return func(mid string) bool { return given[mid] }
}

// claim marks up to k hits as given to the session and returns them, plus
// the hits another recall of the same session gave first (concurrent
// recalls never hand out one memory twice).
// It also returns the hits left out for being over k.
func (r *Recaller) claim(id string, hits []memory.Hit, k int) (mine []memory.Hit, already []string, over []memory.Hit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.get(id)
	for _, h := range hits {
		if s.given[h.Memory.ID] {
			already = append(already, h.Memory.ID)
			continue
		}
		if len(mine) == k {
			over = append(over, h)
			continue
		}
		s.given[h.Memory.ID] = true
		mine = append(mine, h)
	}
	return mine, already, over
}

// withheld lists why the candidates a recall weighed were not given: the
// hits over k, those that did not fit in max_chars and those another
// recall of the session gave first, then the search's candidates that
// did not become hits (the evidence test, the floors, given earlier, or
// ranked below the hits asked for), best scored first within each, at
// most limit. It re-applies the floors' tests of Run's stages to the
// evidence in Result.Scored.
func (r *Recaller) withheld(f found, given []memory.Hit, already []string, over, unfit []memory.Hit, limit int) []Withheld {
	var out []Withheld
	seen := map[string]bool{}
	for _, h := range given {
		seen[h.Memory.ID] = true
	}
	add := func(w Withheld) {
		if !seen[w.ID] && len(out) < limit {
			seen[w.ID] = true
			out = append(out, w)
		}
	}
	hit := func(h memory.Hit, reason string) Withheld {
		return Withheld{ID: h.Memory.ID, Reason: reason, Score: h.Breakdown.Composite, Breakdown: h.Breakdown}
	}
	for _, h := range over {
		add(hit(h, WithheldOverK))
	}
	for _, h := range unfit {
		add(hit(h, WithheldMaxChars))
	}
	for _, h := range f.hits {
		if slices.Contains(already, h.Memory.ID) {
			add(hit(h, WithheldAlreadyGiven))
		}
	}
	scored := slices.Clone(f.scored)
	sort.SliceStable(scored, func(i, j int) bool { return scored[i].Composite > scored[j].Composite })
	reasons := r.engine.floorReasons(scored, f.noEvidence)
	for _, c := range scored {
		why := reasons[c.ID]
		if why == "" {
			why = WithheldOverK
			if f.excluded != nil && f.excluded(c.ID) {
				why = WithheldAlreadyGiven
			}
		}
		add(Withheld{ID: c.ID, Reason: why, Score: c.Composite, Breakdown: c.Breakdown, Coverage: c.Coverage, Cosine: c.Cosine})
	}
	return out
}

// givenEarlier reports whether the search left out, as given to the
// session, a candidate that cleared the evidence test and the floors.
func (e *Engine) givenEarlier(f found) bool {
	if f.excluded == nil || f.noEvidence {
		return false
	}
	reasons := e.floorReasons(f.scored, false)
	for _, c := range f.scored {
		if reasons[c.ID] == "" && f.excluded(c.ID) {
			return true
		}
	}
	return false
}

// floorReasons says which of a search's candidates (Result.Scored) the
// evidence test or a floor dropped, as Run's evidence, absolute_floor and
// relative_floor stages decide it.
func (e *Engine) floorReasons(scored []CandidateEvidence, noEvidence bool) map[string]string {
	out := map[string]string{}
	var top float64
	for _, c := range scored {
		switch {
		case noEvidence:
			out[c.ID] = WithheldNoEvidence
		case c.Coverage < e.cfg.AbsoluteFloor && c.Cosine < e.vectorFloor():
			out[c.ID] = WithheldAbsoluteFloor
		default:
			top = max(top, c.Composite)
		}
	}
	for _, c := range scored {
		if out[c.ID] == "" && (c.Composite < e.cfg.RelativeFloor*top || c.Composite <= 0) {
			out[c.ID] = WithheldRelativeFloor
		}
	}
	return out
}

// givenEvidence is each hit's own evidence as the search scored it
// (scored, Result.Scored) and which test of the absolute floor it passed.
func (e *Engine) givenEvidence(scored []CandidateEvidence, hits []memory.Hit) []GivenEvidence {
	byID := make(map[string]CandidateEvidence, len(scored))
	for _, c := range scored {
		byID[c.ID] = c
	}
	out := make([]GivenEvidence, len(hits))
	for i, h := range hits {
		c := byID[h.Memory.ID]
		var through []string
		if c.Coverage >= e.cfg.AbsoluteFloor {
			through = append(through, "coverage")
		}
		if c.Cosine >= e.vectorFloor() {
			through = append(through, "cosine")
		}
		out[i] = GivenEvidence{CandidateEvidence: c, Through: strings.Join(through, "+")}
	}
	return out
}

// release un-gives hits that were claimed but left out of the context.
func (r *Recaller) release(id string, hits []memory.Hit) {
	if len(hits) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.get(id)
	for _, h := range hits {
		delete(s.given, h.Memory.ID)
	}
}

func (r *Recaller) givenCount(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.sessions[id]; ok {
		return len(e.Value.(*session).given)
	}
	return 0
}

func (r *Recaller) nothing(id, why string) Recalled {
	return Recalled{Skipped: why, Given: r.givenCount(id)}
}

// record counts each given memory as accessed: access_count, last_accessed
// and the hit times the steward's stickiness check reads, all of them in
// one store write (one fsync, store.RecordAccess).
func (r *Recaller) record(ctx context.Context, hits []memory.Hit) error {
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Memory.ID
	}
	got, err := r.store.RecordAccess(ctx, r.clock.Now().UTC(), ids...)
	for i := range hits {
		if m, ok := got[hits[i].Memory.ID]; ok {
			hits[i].Memory.AccessCount, hits[i].Memory.LastAccessed = m.AccessCount, m.LastAccessed
		}
	}
	return err
}

// briefingKinds are what a session start recalls: standing rules, not facts
// that need a question to be relevant.
var briefingKinds = []memory.Kind{memory.KindDecision, memory.KindConvention, memory.KindInvariant, memory.KindPreference}

// briefing is a session start's recall: the project's standing decisions,
// conventions, invariants and preferences (and the user's preferences of
// any project), best composite first with relevance 1. Nothing without a
// project.
func (r *Recaller) briefing(ctx context.Context, project string, n int) ([]memory.Hit, error) {
	if project == "" {
		return nil, nil
	}
	now := r.clock.Now()
	cfg := r.engine.Config()
	var hits []memory.Hit
	err := r.store.Iterate(ctx, store.Filter{Kinds: briefingKinds}, func(m memory.Memory) error {
		if m.Project != project && !(m.Project == "" && m.Type == memory.TypeUser) {
			return nil
		}
		m.Embedding = nil
		b := Composite(&m, Signals{Relevance: 1, Project: project, Now: now}, cfg)
		hits = append(hits, memory.Hit{Memory: m, Score: b.Composite, Breakdown: b})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	return hits[:min(len(hits), n)], nil
}

// contextHeader opens the block the agent reads.
const contextHeader = "Memories from earlier sessions (memtray); they may be out of date. Rate or reinforce them by id with memtray's tools."

// Format renders hits as the <memtray-context> block, keeping whole
// memories in order while the block stays within maxChars; a memory too
// long for the room left is cut with "…" if at least 80 characters fit, else
// left out. It returns the hits that made it into the block.
func Format(hits []memory.Hit, maxChars int) ([]memory.Hit, string) {
	return FormatWithSkills(hits, nil, maxChars)
}

// skillsHeader introduces suggested skills.
const skillsHeader = "Skills that may fit this request:"

// FormatWithSkills is Format with suggested skills listed after the
// memories, as room allows (the memories come first).
func FormatWithSkills(hits []memory.Hit, skills []SkillHit, maxChars int) ([]memory.Hit, string) {
	if len(hits) == 0 && len(skills) == 0 {
		return nil, ""
	}
	open, close := "<"+ContextTag+">\n", "</"+ContextTag+">"
	if len(hits) > 0 {
		open += contextHeader + "\n"
	}
	var b strings.Builder
	b.WriteString(open)
	room := maxChars - utf8.RuneCountInString(open) - utf8.RuneCountInString(close)
	var kept []memory.Hit
	for _, h := range hits {
		m := h.Memory
		meta := string(m.Kind)
		if m.Project != "" {
			meta += ", " + m.Project
		}
		if !m.CreatedAt.IsZero() {
			meta += ", " + m.CreatedAt.UTC().Format(time.DateOnly)
		}
		head, tail := "- ["+meta+"] ", " (id "+m.ID+")\n"
		text := strings.Join(strings.Fields(strings.ReplaceAll(m.Text, "</"+ContextTag, "</ "+ContextTag)), " ")
		fixed := utf8.RuneCountInString(head) + utf8.RuneCountInString(tail)
		left := room - fixed
		if left < 80 && utf8.RuneCountInString(text) > left {
			break
		}
		if r := []rune(text); len(r) > left {
			text = string(r[:left-1]) + "…"
		}
		line := head + text + tail
		b.WriteString(line)
		room -= utf8.RuneCountInString(line)
		kept = append(kept, h)
	}
	wroteSkills := false
	for _, sk := range skills {
		line := "- " + sk.Name + ": " + strings.Join(strings.Fields(sk.Description), " ") + "\n"
		if r := []rune(line); len(r) > 240 {
			line = string(r[:238]) + "…\n"
		}
		if !wroteSkills {
			line = skillsHeader + "\n" + line
		}
		n := utf8.RuneCountInString(line)
		if n > room {
			break
		}
		b.WriteString(line)
		room -= n
		wroteSkills = true
	}
	if len(kept) == 0 && !wroteSkills {
		return nil, ""
	}
	b.WriteString(close)
	return kept, b.String()
}
