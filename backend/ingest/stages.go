package ingest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/memtray/memtray/backend/chunk"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/noise"
)

// StripInjected removes the blocks memtray and the agent harness inject
// into a conversation (recalled memories, reminders, IDE state and the
// other harnesstext.Injected tags) from text, and trims it: what the strip
// stage does to each text of an exchange (importers use it to compare what
// would be stored).
func StripInjected(text string) string {
	return harnesstext.Strip(text, harnesstext.Injected)
}

// strip removes injected blocks from the user and assistant text.
func (p *Pipeline) strip(_ context.Context, r *run) error {
	before := len(r.user) + len(r.reply)
	r.user = StripInjected(r.user)
	r.reply = StripInjected(r.reply)
	if n := before - len(r.user) - len(r.reply); n > 0 {
		r.score("stripped_bytes", float64(n))
	}
	return nil
}

// redactStage masks secrets in everything later stages see.
func (p *Pipeline) redactStage(_ context.Context, r *run) error {
	var n int
	r.user, n = redactText(r.user)
	found := n
	r.reply, n = redactText(r.reply)
	found += n
	r.score("redactions", float64(found))
	r.dec.Preview = preview(r.reply)
	return nil
}

// webTools name tools whose raw output is never a memory.
var webTools = map[string]bool{"web_search": true, "websearch": true, "web_fetch": true, "webfetch": true}

// source rejects what never forms a durable memory.
func (p *Pipeline) source(_ context.Context, r *run) error {
	switch {
	case r.ex.Error:
		r.reject(StageSource, "error response")
	case r.ex.ToolLoop && len(r.ex.ToolCalls) > 0 && !p.cfg.ToolLoopFindings:
		// An iteration of the tool loop: the response goes on calling tools.
		// The response that ends the loop is the turn's answer, the
		// conclusion drawn from the tools, and goes through the gates.
		r.reject(StageSource, "tool-loop iteration: the response calls more tools")
	case strings.TrimSpace(r.reply) == "" && len(r.ex.ToolResults) > 0:
		r.reject(StageSource, "tool output only")
	case strings.TrimSpace(r.reply) == "":
		r.reject(StageSource, "no assistant text")
	default:
		for _, c := range r.ex.ToolCalls {
			if webTools[strings.ToLower(c.Name)] && len(r.reply) < 2*p.cfg.MinLength {
				r.reject(StageSource, "raw "+c.Name+" output")
				return nil
			}
		}
	}
	return nil
}

// headless decides for headless (print-mode, codex exec) sessions with
// fewer than HeadlessMinUserTurns user turns: while the session may still
// grow their turns are held (neither stored nor rejected, see
// ProcessSession); once it has ended they are rejected. A session that
// reached the count lets every turn through, its first ones included.
func (p *Pipeline) headless(_ context.Context, r *run) error {
	turns := max(r.ex.UserTurns, r.session.UserTurns)
	if !r.ex.Headless || turns >= p.cfg.HeadlessMinUserTurns {
		return nil
	}
	if !r.session.Ended && r.ex.SessionID != "" {
		r.hold(fmt.Sprintf("held: headless session with %d user turns so far (fewer than %d); decided when it reaches %d or ends",
			turns, p.cfg.HeadlessMinUserTurns, p.cfg.HeadlessMinUserTurns))
		return nil
	}
	r.reject(StageHeadless, fmt.Sprintf("headless session with %d user turns (fewer than %d)", turns, p.cfg.HeadlessMinUserTurns))
	return nil
}

// ackUser matches a user message that only acknowledges or approves.
var ackUser = regexp.MustCompile(`(?i)^\W*(?:ok(?:ay)?|k|sure|yes|yep|yeah|yup|y|no|nope|thanks|thank you|thx|ty|cool|great|nice|perfect|good|fine|lgtm|go|go ahead|go on|do it|yes,? do it|continue|proceed|keep going|sounds good|makes sense|got it|alright|right|agreed|approved|ship it|done|👍|✅|🙏)(?:\W+(?:please|pls|thanks|thank you|then|now|go ahead|do it))*\W*$`)

// prefilter is the pre-filter: it rejects an acknowledging user answered
// by a reply that opens with a procedural phrase.
func (p *Pipeline) prefilter(_ context.Context, r *run) error {
	r.sig = Analyze(r.reply)
	if !ackUser.MatchString(r.user) {
		return nil
	}
	switch c := r.sig.First; c {
	case classAck, classProcedural, classStatus:
		if r.sig.Content() == 0 || r.sig.Durable == 0 {
			r.reject(StagePrefilter, "acknowledgement answered with "+replyClassPhrase(c))
		}
	}
	return nil
}

// procedural rejects replies with no statement that could stay true, or
// where such statements are under a third of the sentences.
func (p *Pipeline) procedural(_ context.Context, r *run) error {
	s := r.sig
	r.score("sentences", float64(s.Sentences))
	r.score("content_sentences", float64(s.Content()))
	r.score("durable", float64(s.Durable))
	r.score("specificity", s.Specificity)
	r.score("fence_share", s.FenceShare)
	switch {
	case s.Content() == 0 && s.FenceShare > 0.3:
		r.reject(StageProcedural, "raw output with no statement around it")
	case s.Content() == 0:
		r.reject(StageProcedural, "no statement that could stay true ("+describeClasses(s)+")")
	case 3*s.Content() < s.Sentences:
		r.reject(StageProcedural, fmt.Sprintf("mostly narration: %d of %d sentences state something (%s)", s.Content(), s.Sentences, describeClasses(s)))
	case r.ex.ToolLoop && len(r.ex.ToolCalls) > 0 && (s.Durable == 0 || 2*s.Content() < s.Sentences):
		// The text between tool calls is mostly the agent thinking aloud:
		// it is kept only when it states a finding with its reason.
		r.reject(StageProcedural, fmt.Sprintf("tool-loop iteration without a finding: %d of %d sentences state something, %d reasons or rules", s.Content(), s.Sentences, s.Durable))
	}
	return nil
}

func describeClasses(s Signals) string {
	var parts []string
	for _, c := range []string{classAck, classProcedural, classStatus, classOutput, classQuestion, classContent} {
		if n := s.ByClass[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	return strings.Join(parts, ", ")
}

// length rejects short replies unless they state something specific.
func (p *Pipeline) length(_ context.Context, r *run) error {
	n := runeLen(r.reply)
	r.score("length", float64(n))
	if n >= p.cfg.MinLength {
		return nil
	}
	if r.sig.Specificity >= 1 && r.sig.Durable >= 1 {
		r.score("short_specific", 1)
		return nil
	}
	r.reject(StageLength, fmt.Sprintf("%d characters (under %d) and nothing specific stated", n, p.cfg.MinLength))
	return nil
}

// content is the adaptive content score gate.
func (p *Pipeline) content(ctx context.Context, r *run) error {
	if p.scorer == nil {
		return nil
	}
	emb := embed.Snapshot(p.emb)
	vecs, err := emb.Embed(ctx, []string{r.reply})
	if err != nil {
		return fmt.Errorf("embed reply: %w", err)
	}
	if len(vecs) != 1 {
		return errors.New("embedder returned no vector")
	}
	r.vec, r.model = vecs[0], emb.Model()
	sc := p.scorer.ScoreVector(r.vec)
	r.score("content_score", sc.Value)
	r.score("quality_sim", sc.Quality)
	r.score("noise_sim", sc.Noise)
	if !sc.Pass {
		r.reject(StageContent, fmt.Sprintf("content score %s (nearest noise: %s)", scoreUnder(sc.Value, p.scorer.Threshold()), sc.Nearest))
	}
	return nil
}

// minSpecificity is the least specificity a kept reply has: one path,
// setting, code identifier, or a statement of ownership ("we", "you
// prefer"). Textbook answers have none.
const minSpecificity = 1

// specific rejects generic knowledge: a reply nothing ties to a project.
func (p *Pipeline) specific(_ context.Context, r *run) error {
	if r.sig.Specificity < minSpecificity {
		r.reject(StageSpecific, "generic knowledge: no path, identifier, setting or project statement")
	}
	return nil
}

// judgeStage asks the optional judge. Its errors (budget, timeout, a
// malformed answer) leave the gates' verdict standing.
func (p *Pipeline) judgeStage(ctx context.Context, r *run) error {
	r.texts = []string{r.reply}
	if p.judge == nil {
		return nil
	}
	ex := r.ex
	ex.User, ex.Assistant = r.user, r.reply
	v, err := p.judge.Judge(ctx, ex)
	if err != nil {
		r.score("judge_error", 1)
		return nil
	}
	if v.Skip {
		r.score("judge_skip", 1)
		r.reject(StageJudge, "the judge ("+p.judge.Name()+") answered SKIP")
		if p.scorer != nil {
			// Only the judge's and the user's verdicts train the scorer.
			if err := p.scorer.Learn(ctx, r.reply, noise.SourceJudge); err != nil {
				r.score("learn_error", 1)
			}
		}
		return nil
	}
	if m, _ := redactText(strings.TrimSpace(v.Memory)); m != "" && len(m) <= memory.MaxTextBytes && memory.ValidUTF8(m) {
		r.texts = []string{m}
		r.score("judge_distilled", 1)
	}
	if v.Kind.Valid() {
		r.kind, r.kindOrigin = v.Kind, memory.KindJudged
	}
	return nil
}

// chunk cuts what is kept into chunks.
func (p *Pipeline) chunk(_ context.Context, r *run) error {
	if r.texts == nil {
		r.texts = []string{r.reply} // the judge stage was skipped
	}
	var out []string
	for _, t := range r.texts {
		out = append(out, chunk.Split(t, chunk.Options{Size: p.cfg.ChunkSize, Min: p.cfg.MinChunk})...)
	}
	r.texts = out
	r.dec.Chunks = len(out)
	if len(out) == 0 {
		r.reject(StageChunk, "nothing left after chunking")
	}
	return nil
}

// embed embeds every chunk in one batch (reusing the content gate's
// vector when the reply is one chunk).
func (p *Pipeline) embed(ctx context.Context, r *run) error {
	if len(r.texts) == 1 && r.vec != nil && r.texts[0] == r.reply {
		r.vecs = [][]float32{r.vec}
		return nil
	}
	emb := embed.Snapshot(p.emb)
	vecs, err := emb.Embed(ctx, r.texts)
	if err != nil {
		return fmt.Errorf("embed %d chunks: %w", len(r.texts), err)
	}
	if len(vecs) != len(r.texts) {
		return fmt.Errorf("embedder returned %d vectors for %d chunks", len(vecs), len(r.texts))
	}
	r.vecs, r.model = vecs, emb.Model()
	return nil
}
