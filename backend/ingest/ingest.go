// Package ingest is memtray's write pipeline: one memory.Exchange in, one
// memory.Decision out. The stages are plain functions called in order
// (DESIGN.md "Write pipeline"); each may decide (reject, or at the end
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

// Limits on an Exchange; larger input is an error, not a truncation.
const (
	MaxTextBytes    = 1 << 20 // user or assistant text
	MaxToolBytes    = 4 << 20 // all tool calls and results together
	MaxToolEntries  = 1000
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
	ex      memory.Exchange
	reply   string // the assistant text as the stages see it (stripped, redacted)
	user    string
	sig     Signals
	vec     []float32 // the reply's embedding (content gate)
	kind    memory.Kind
	texts   []string // what to store: chunks of the reply or the judge's memory
	vecs    [][]float32
	dec     memory.Decision
	decided bool
}

func (r *run) reject(stage, reason string) {
	r.dec.Verdict, r.dec.Stage, r.dec.Reason, r.decided = memory.VerdictRejected, stage, reason, true
}

func (r *run) score(name string, v float64) { r.dec.Scores[name] = v }

// stage is one step of the pipeline.
type stage struct {
	name string
	fn   func(p *Pipeline, ctx context.Context, r *run) error
}

// stages are called in this order until one decides.
var stages = []stage{
	{StageStrip, (*Pipeline).strip},
	{StageRedact, (*Pipeline).redactStage},
	{StageSource, (*Pipeline).source},
	{StageHeadless, (*Pipeline).headless},
	{StagePrefilter, (*Pipeline).prefilter},
	{StageProcedural, (*Pipeline).procedural},
	{StageLength, (*Pipeline).length},
	{StageContent, (*Pipeline).content},
	{StageSpecific, (*Pipeline).specific},
	{StageJudge, (*Pipeline).judgeStage},
	{StageChunk, (*Pipeline).chunk},
	{StageEmbed, (*Pipeline).embed},
	{StageDedup, (*Pipeline).dedupAndStore},
}

// Process runs one exchange through the pipeline and returns its
// Decision. An error means the exchange could not be processed (invalid
// input, the store or the embedder failed); nothing already stored is lost.
func (p *Pipeline) Process(ctx context.Context, ex memory.Exchange) (memory.Decision, error) {
	if err := Validate(ex); err != nil {
		return memory.Decision{}, err
	}
	r := &run{ex: ex, reply: ex.Assistant, user: ex.User, dec: memory.Decision{
		SessionID: ex.SessionID, Turn: ex.Turn, At: p.clock.Now().UTC(), Scores: map[string]float64{},
	}}
	for _, st := range stages {
		start := time.Now()
		err := st.fn(p, ctx, r)
		r.dec.Timings = append(r.dec.Timings, memory.StageTiming{Stage: st.name, Duration: time.Since(start)})
		if err != nil {
			return r.dec, fmt.Errorf("ingest: %s: %w", st.name, err)
		}
		if r.decided {
			break
		}
	}
	if !r.decided {
		return r.dec, errors.New("ingest: no stage decided") // unreachable: dedup always decides
	}
	return r.dec, nil
}

// Validate checks an exchange from outside: sizes and encodings.
func Validate(ex memory.Exchange) error {
	var problems []string
	for name, v := range map[string]string{"user": ex.User, "assistant": ex.Assistant} {
		if len(v) > MaxTextBytes {
			problems = append(problems, name+" text is longer than 1 MiB")
		}
		if !memory.ValidUTF8(v) {
			problems = append(problems, name+" text is not valid UTF-8")
		}
	}
	for name, v := range map[string]string{"session_id": ex.SessionID, "project": ex.Project, "source": ex.Source, "model": ex.Model} {
		if len(v) > 256 || !memory.ValidUTF8(v) {
			problems = append(problems, name+" is longer than 256 bytes or not UTF-8")
		}
	}
	if ex.Turn < 0 || ex.UserTurns < 0 {
		problems = append(problems, "turn and user_turns must not be negative")
	}
	if len(ex.ToolCalls)+len(ex.ToolResults) > MaxToolEntries {
		problems = append(problems, "more than 1000 tool calls and results")
	}
	total := 0
	for _, c := range ex.ToolCalls {
		total += len(c.Name) + len(c.Input) + len(c.ID)
		if !memory.ValidUTF8(c.Name) || !memory.ValidUTF8(c.Input) {
			problems = append(problems, "a tool call is not valid UTF-8")
			break
		}
	}
	for _, t := range ex.ToolResults {
		total += len(t.Content) + len(t.Name) + len(t.ToolUseID)
		if !memory.ValidUTF8(t.Content) {
			problems = append(problems, "a tool result is not valid UTF-8")
			break
		}
	}
	if total > MaxToolBytes {
		problems = append(problems, "tool calls and results are larger than 4 MiB")
	}
	if len(problems) > 0 {
		return &memory.ValidationError{Problems: problems}
	}
	return nil
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
