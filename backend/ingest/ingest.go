// Package ingest is memtray's write pipeline: one memory.Exchange in, one
// memory.Decision out. The stages are plain functions called in order
// (docs/architecture.md, "A turn written"); each may decide (reject, or at the end
// store) and says why, and every score it computes lands in the Decision:
//
//	validate  bounded sizes, valid UTF-8 (an error, not a decision)
//	strip     remove memtray's own injected blocks and system reminders
//	redact    mask secrets before anything is analysed, embedded, judged,
//	          stored or shown (the design's list puts it after the judge;
//	          it runs first so the content gate never embeds a secret)
//	source    no memories from error responses, tool-loop iterations,
//	          tool output alone, raw web_search/web_fetch results
//	headless  print-mode sessions with too few user turns form none
//	prefilter an acknowledging user and a reply that opens procedurally
//	procedural a reply with no statement that could stay true: only
//	          acknowledgements, narration of its own actions, status,
//	          questions or raw output
//	length    shorter than min_length, unless the reply states something
//	          specific (a path, identifier, setting...) with a rule or reason
//	content   the adaptive content score (package noise)
//	specific  generic knowledge: nothing in the reply ties it to a project
//	judge     optional language model: SKIP or a distilled memory
//	chunk     paragraph-aware chunks
//	embed     one batch for every chunk
//	dedup     exact and near duplicates reinforce, near duplicates with new
//	          load-bearing tokens supersede, similar-to-a-source links
//	store     the memories, one transaction each
package ingest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
	"github.com/memtray/memtray/backend/store"
)

// Stage names, as Decisions report them.
const (
	StageStrip      = "strip"
	StageRedact     = "redact"
	StageSource     = "source"
	StageHeadless   = "headless"
	StagePrefilter  = "prefilter"
	StageProcedural = "procedural"
	StageLength     = "length"
	StageContent    = "content"
	StageSpecific   = "specific"
	StageJudge      = "judge"
	StageChunk      = "chunk"
	StageEmbed      = "embed"
	StageDedup      = "dedup"
	StageStore      = "store"
)

// PreJudgeStages lists, in order, the stages that can reject an exchange
// before the judge would see it.
var PreJudgeStages = []string{StageSource, StageHeadless, StagePrefilter, StageProcedural, StageLength, StageContent, StageSpecific}

// Limits on an Exchange; larger input is an error, not a truncation
// (the readers of outside records cut to them first: memory.BoundExchange).
const (
	MaxTextBytes    = memory.MaxExchangeTextBytes   // user or assistant text
	MaxToolBytes    = memory.MaxExchangeToolBytes   // all tool calls and results together
	MaxToolEntries  = memory.MaxExchangeToolEntries // tool calls and results
	maxPreviewRunes = 160
)

// Options configures a Pipeline.
type Options struct {
	Config   config.Ingest
	Embedder memory.Embedder
	Store    *store.Store
	// Scorer is the content score gate; nil skips the gate (and says so in
	// the Decision).
	Scorer *noise.Scorer
	// Judge is optional; nil lets the gates decide alone.
	Judge memory.Judge
	Clock memory.Clock
}

// Pipeline runs exchanges through the stages. Safe for concurrent use; the
// dedup-and-store step is serialised so two copies of one text arriving
// together form one memory.
type Pipeline struct {
	cfg    config.Ingest
	emb    memory.Embedder
	store  *store.Store
	scorer *noise.Scorer
	judge  memory.Judge
	clock  memory.Clock
	wmu    chan struct{} // a one-slot semaphore that honours ctx
	recent recentTurns   // what recent turns of each session stored (session.go)
	sim    thresholds    // similarity thresholds set after New (similarity.go)
}

// New checks the options and returns a Pipeline.
func New(opts Options) (*Pipeline, error) {
	if opts.Embedder == nil || opts.Store == nil {
		return nil, errors.New("ingest: an embedder and a store are required")
	}
	if opts.Clock == nil {
		opts.Clock = memory.SystemClock{}
	}
	return &Pipeline{cfg: opts.Config, emb: opts.Embedder, store: opts.Store, scorer: opts.Scorer,
		judge: opts.Judge, clock: opts.Clock, wmu: make(chan struct{}, 1)}, nil
}

// Scorer returns the pipeline's content scorer (nil without one).
func (p *Pipeline) Scorer() *noise.Scorer { return p.scorer }

// run is the state one exchange carries through the stages.
type run struct {
	ex    memory.Exchange
	reply string // the assistant text as the stages see it (stripped, redacted)
	user  string
	sig   Signals
	vec   []float32 // the reply's embedding (content gate)
	kind  memory.Kind
	// kindOrigin says how kind was decided (given, judge, cue); empty
	// when the kind is guessed at store time.
	kindOrigin memory.KindOrigin
	texts      []string // what to store: chunks of the reply or the judge's memory
	vecs       [][]float32
	dec        memory.Decision
	decided    bool
	// force skips the gates and the judge: a user said keep it, or a
	// document was ingested on purpose.
	force bool
	// source overrides the memories' source ("ingest:<doc>").
	source string
	// given, for Remember, carries the kind, type and importance the caller chose.
	given *memory.Memory
	// model names the embedding model of vec and vecs: the model that
	// made them, also when the embedder switches models during the run.
	model string
	// session is what the caller knows of the exchange's session; held
	// says the headless stage held the exchange (see ProcessSession).
	session SessionState
	held    bool
	// whole (Write) makes given the record to store: newMemory fills only
	// the text, embedding and what given leaves empty.
	whole bool
	// exact (Write) turns near-duplicate dedup off, and lets an older,
	// superseded version of a memory holding the text not count as one.
	exact bool
	// replaces (Write) is the live memory the text supersedes.
	replaces string
	// turnKey names the turn ProcessTurn runs (its marks, turnmark.go);
	// marks are what earlier runs of it did, by statement hash.
	turnKey string
	marks   map[string]store.TurnMark
	// tw carries the turn marks the run's next write records with it
	// (storeCandidates, turnmark.go); nil outside a turn's placements.
	tw *turnWrite
	// repack, when an earlier turn distilled again is stored (settle),
	// says which memory each statement takes the place of; into is the
	// one this text is stored into (placeStatement reads it from repack).
	repack *repacking
	into   string
}

// repacking is how the statements of an earlier turn distilled again are
// placed (settle): into names, by statement text, the memory a re-packed
// statement is stored into (the same memory, not a new one), and aside
// the re-packed memories dedup does not compare with meanwhile: what they
// hold is no longer kept in that form (as batch ingest never stored it).
// A memory leaves aside once stored into.
type repacking struct {
	into  map[string]string
	aside map[string]bool
}

// setAside reports whether dedup skips the memory id (repacking.aside).
func (r *run) setAside(id string) bool { return r.repack != nil && r.repack.aside[id] }

func (r *run) reject(stage, reason string) {
	r.dec.Verdict, r.dec.Stage, r.dec.Reason, r.decided = memory.VerdictRejected, stage, reason, true
}

func (r *run) score(name string, v float64) { r.dec.Scores[name] = v }

// stage is one step of the pipeline; gates (and the judge) are skipped for
// what a user keeps or ingests on purpose.
type stage struct {
	name string
	fn   func(p *Pipeline, ctx context.Context, r *run) error
	gate bool
}

// stages are called in this order until one decides.
var stages = []stage{
	{StageStrip, (*Pipeline).strip, false},
	{StageRedact, (*Pipeline).redactStage, false},
	{StageSource, (*Pipeline).source, true},
	{StageHeadless, (*Pipeline).headless, true},
	{StagePrefilter, (*Pipeline).prefilter, true},
	{StageProcedural, (*Pipeline).procedural, true},
	{StageLength, (*Pipeline).length, true},
	{StageContent, (*Pipeline).content, true},
	{StageSpecific, (*Pipeline).specific, true},
	{StageJudge, (*Pipeline).judgeStage, true},
	{StageChunk, (*Pipeline).chunk, false},
	{StageEmbed, (*Pipeline).embed, false},
	{StageDedup, (*Pipeline).dedupAndStore, false},
}

// newDecisionID is a random 64-bit hex id.
func newDecisionID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Process runs one exchange through the pipeline and returns its
// Decision. An error means the exchange could not be processed (invalid
// input, the store or the embedder failed); nothing already stored is lost.
func (p *Pipeline) Process(ctx context.Context, ex memory.Exchange) (memory.Decision, error) {
	r, err := p.process(ctx, ex, false, "")
	return r.dec, err
}

// Keep stores an exchange the gates or the judge rejected, because a user
// said it was worth keeping: the gates are skipped (redaction, chunking
// and dedup are not), and the reply leaves the noise scorer's rejection
// buffer so it stops counting as noise.
func (p *Pipeline) Keep(ctx context.Context, ex memory.Exchange) (memory.Decision, error) {
	r, err := p.process(ctx, ex, true, "")
	if err != nil || p.scorer == nil {
		return r.dec, err
	}
	if _, err := p.scorer.Forget(ctx, r.reply); err != nil {
		return r.dec, fmt.Errorf("ingest: keep: %w", err)
	}
	return r.dec, nil
}

// Document stores a document a user ingested on purpose (a README, notes,
// a design doc) as source memories "ingest:<name>": stripped, redacted,
// chunked, embedded and deduplicated, not gated. Later exchanges similar to
// one of its chunks link to it (extends_source).
func (p *Pipeline) Document(ctx context.Context, name, project, text string) (memory.Decision, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 || !memory.ValidUTF8(name) {
		return memory.Decision{}, &memory.ValidationError{Problems: []string{"document name must be 1..200 bytes of UTF-8"}}
	}
	ex := memory.Exchange{Assistant: text, Project: project, Source: "ingest:" + name}
	r, err := p.process(ctx, ex, true, "ingest:"+name)
	return r.dec, err
}

// Remember stores a memory an agent or a user stated on purpose (MCP
// memory_store): stripped, redacted, chunked, embedded and deduplicated like
// a captured reply, but not gated, and with the kind, type, importance and
// source the caller chose (a missing kind is guessed, a missing type follows
// the kind). The Decision says stored, updated, merged or
// skipped-duplicate, with the memory ids.
func (p *Pipeline) Remember(ctx context.Context, m memory.Memory) (memory.Decision, error) {
	if m.Kind != "" && !m.Kind.Valid() {
		return memory.Decision{}, &memory.ValidationError{Problems: []string{fmt.Sprintf("unknown kind %q", m.Kind)}}
	}
	if m.Type != "" && !m.Type.Valid() {
		return memory.Decision{}, &memory.ValidationError{Problems: []string{fmt.Sprintf("unknown type %q", m.Type)}}
	}
	if !(m.Importance >= 0 && m.Importance <= 1) {
		return memory.Decision{}, &memory.ValidationError{Problems: []string{"importance must be within 0..1"}}
	}
	if strings.TrimSpace(m.Text) == "" {
		return memory.Decision{}, &memory.ValidationError{Problems: []string{"text is empty"}}
	}
	ex := memory.Exchange{Assistant: m.Text, Project: m.Project, Source: m.Source}
	if err := Validate(ex); err != nil {
		return memory.Decision{}, err
	}
	r := p.newRun(ex, true, "")
	r.given, r.kind = &m, m.Kind
	if m.Kind != "" {
		r.kindOrigin = memory.KindGiven
	}
	err := p.runStages(ctx, r)
	return r.dec, err
}

// process runs the stages and returns the run (its Decision, and the reply
// as the stages saw it: stripped and redacted).
func (p *Pipeline) process(ctx context.Context, ex memory.Exchange, force bool, source string) (*run, error) {
	if err := Validate(ex); err != nil {
		return &run{}, err
	}
	r := p.newRun(ex, force, source)
	r.session.Ended = true // on its own, an exchange is all there is of its session
	return r, p.runStages(ctx, r)
}

func (p *Pipeline) newRun(ex memory.Exchange, force bool, source string) *run {
	return &run{ex: ex, reply: ex.Assistant, user: ex.User, force: force, source: source, dec: memory.Decision{
		ID: newDecisionID(), SessionID: ex.SessionID, Turn: ex.Turn, UserTurn: ex.UserTurns, At: p.clock.Now().UTC(), Scores: map[string]float64{},
	}}
}

// runStages calls the stages in order until one decides. A model switch
// of the store while the run embeds or places its texts is met text by
// text (placeMemory): the run is not run again, which would place again
// the texts already stored.
func (p *Pipeline) runStages(ctx context.Context, r *run) error {
	for _, st := range stages {
		if r.force && st.gate {
			continue
		}
		start := time.Now()
		err := st.fn(p, ctx, r)
		r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: st.name, Duration: time.Since(start)})
		if err != nil {
			return fmt.Errorf("ingest: %s: %w", st.name, err)
		}
		if r.decided {
			break
		}
	}
	if !r.decided {
		return errors.New("ingest: no stage decided") // unreachable: dedup always decides
	}
	return nil
}

// Validate checks an exchange from outside: sizes and encodings.
func Validate(ex memory.Exchange) error {
	var problems []string
	for name, v := range map[string]string{"user": ex.User, "assistant": ex.Assistant, "summary": ex.Summary} {
		if len(v) > MaxTextBytes {
			problems = append(problems, name+" text is longer than 1 MiB")
		}
		if !memory.ValidUTF8(v) {
			problems = append(problems, name+" text is not valid UTF-8")
		}
	}
	for name, v := range map[string]string{"session_id": ex.SessionID, "project": ex.Project, "source": ex.Source, "model": ex.Model} {
		if len(v) > memory.MaxExchangeNameBytes || !memory.ValidUTF8(v) {
			problems = append(problems, name+" is longer than 256 bytes or not UTF-8")
		}
	}
	if ex.Turn < 0 || ex.UserTurns < 0 {
		problems = append(problems, "turn and user_turns must not be negative")
	}
	problems = append(problems, answerProblems(ex.Answers)...)
	if len(ex.ToolCalls)+len(ex.ToolResults) > MaxToolEntries {
		problems = append(problems, "more than 1000 tool calls and results")
	}
	for _, c := range ex.ToolCalls {
		if !memory.ValidUTF8(c.Name) || !memory.ValidUTF8(c.Input) {
			problems = append(problems, "a tool call is not valid UTF-8")
			break
		}
	}
	for _, t := range ex.ToolResults {
		if !memory.ValidUTF8(t.Content) {
			problems = append(problems, "a tool result is not valid UTF-8")
			break
		}
	}
	if memory.ToolBytes(&ex) > MaxToolBytes {
		problems = append(problems, "tool calls and results are larger than 4 MiB")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
}

// answerProblems checks the user's answers of an exchange: at most
// MaxToolEntries of at most MaxTextBytes in all, each valid UTF-8 with an
// answer, and either a question's answer or a refusal's words (which
// have no question). It names the first answer with each problem.
func answerProblems(answers []memory.Answer) []string {
	var problems []string
	if len(answers) > MaxToolEntries {
		problems = append(problems, "more than 1000 answers")
	}
	total := 0
	var encoding, empty, form string
	for i, a := range answers {
		total += len(a.Question) + len(a.Answer)
		switch {
		case encoding == "" && (!memory.ValidUTF8(a.Question) || !memory.ValidUTF8(a.Answer)):
			encoding = fmt.Sprintf("answers[%d] is not valid UTF-8", i)
		case empty == "" && strings.TrimSpace(a.Answer) == "":
			empty = fmt.Sprintf("answers[%d] has no answer", i)
		case form == "" && a.Refused && a.Question != "":
			form = fmt.Sprintf("answers[%d] is refused and has a question: a refusal holds the user's words only", i)
		case form == "" && !a.Refused && strings.TrimSpace(a.Question) == "":
			form = fmt.Sprintf("answers[%d] has no question (the words of a refused tool call set refused)", i)
		}
	}
	for _, p := range []string{encoding, empty, form} {
		if p != "" {
			problems = append(problems, p)
		}
	}
	if total > MaxTextBytes {
		problems = append(problems, "answers are longer than 1 MiB")
	}
	return problems
}

// preview is the start of s on one line, for the feed.
func preview(s string) string {
	s = memory.NormalizeSpace(s)
	if runeLen(s) <= maxPreviewRunes {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:maxPreviewRunes-1])) + "…"
}
