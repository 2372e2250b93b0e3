package memory

import (
	"context"
	"strconv"
	"time"
)

// Exchange is one turn of an agent's conversation as the write pipeline sees
// it: what the user (or the agent's harness) sent and what the model
// answered. The capture proxy, transcripts, `memtray ingest` and
// POST /api/ingest all produce Exchanges.
type Exchange struct {
	// SessionID names the agent session; Turn counts its exchanges from 1.
	SessionID string `json:"session_id,omitempty"`
	Turn      int    `json:"turn,omitempty"`
	// UserTurns counts the real user prompts of the session so far (tool
	// results are not user turns); with Headless it decides whether the
	// session may form memories.
	UserTurns int `json:"user_turns,omitempty"`
	// Headless marks a non-interactive session (claude -p, print mode).
	Headless bool   `json:"headless,omitempty"`
	Project  string `json:"project,omitempty"`
	// Source says where the exchange came from ("capture", "transcript",
	// "api", "cli"); memories formed from it carry it.
	Source string `json:"source,omitempty"`
	// User is the text the user typed in this turn ("" when the turn only
	// returned tool results to the model).
	User string `json:"user"`
	// Summary is a compaction summary the agent's harness wrote into the
	// session before this response (Claude Code's "This session is being
	// continued..."): the model's own account of what the session found,
	// never the user's words.
	Summary string `json:"summary,omitempty"`
	// Answers are the user's answers to questions the model asked with a
	// tool since its previous response (Claude Code's AskUserQuestion),
	// and the words the user typed when refusing a tool call (Refused):
	// the user's own words and choices said in the middle of the turn,
	// unlike the rest of a tool result.
	Answers []Answer `json:"answers,omitempty"`
	// Assistant is the model's text answer (tool calls excluded).
	Assistant   string       `json:"assistant"`
	ToolCalls   []ToolCall   `json:"tool_calls,omitempty"`
	ToolResults []ToolResult `json:"tool_results,omitempty"`
	// ToolLoop marks an iteration of the agent's tool loop: the request
	// answered tool results rather than a user prompt.
	ToolLoop bool `json:"tool_loop,omitempty"`
	// Occurrence numbers, from 1, the turns of the session that begin
	// as this one does (the same user text and first response: the
	// user's "yes" twice, answered the same way at first); 0 when not
	// counted, as 1. The capture proxy counts them in the request's
	// history, so two such turns are kept apart from each other and a
	// session file's copy of either is still recognised.
	Occurrence int `json:"occurrence,omitempty"`
	// Error marks an error response (HTTP error, stop_reason "error",
	// an overloaded or refused answer).
	Error bool   `json:"error,omitempty"`
	Model string `json:"model,omitempty"`
	// Usage is the token count the provider reported for the answer; nil
	// when unknown (transcripts, the API, responses without usage).
	Usage *Usage `json:"usage,omitempty"`
	// StartedAt and EndedAt bound the model's answer; zero if unknown.
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// Size is the number of bytes of text the exchange carries: its user,
// summary and assistant text, tool call inputs and tool results.
func (ex Exchange) Size() int {
	n := len(ex.User) + len(ex.Assistant) + len(ex.Summary)
	for _, a := range ex.Answers {
		n += len(a.Question) + len(a.Answer)
	}
	for _, c := range ex.ToolCalls {
		n += len(c.Input)
	}
	for _, r := range ex.ToolResults {
		n += len(r.Content)
	}
	return n
}

// Usage counts the tokens of one model call as the provider reported them.
// Cache fields are Anthropic's prompt-cache counts (OpenAI's cached prompt
// tokens are reported as CacheReadInputTokens); zero when not reported.
type Usage struct {
	InputTokens              int `json:"input_tokens,omitempty"`
	OutputTokens             int `json:"output_tokens,omitempty"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
}

// ToolCall is one tool the model asked to run.
type ToolCall struct {
	ID    string `json:"id,omitempty"`
	Name  string `json:"name"`
	Input string `json:"input,omitempty"` // the call's JSON arguments
}

// ToolResult is what a tool returned to the model.
type ToolResult struct {
	ToolUseID string `json:"tool_use_id,omitempty"`
	Name      string `json:"name,omitempty"` // the tool's name, when known
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Answer is the user's answer to one question the model asked in the
// middle of a turn, or what the user said when refusing a tool call.
type Answer struct {
	// Question is the question as the model asked it; "" for a refusal.
	Question string `json:"question"`
	// Answer is what the user chose: each chosen option (its label, with
	// its description), or the text the user typed instead of an option
	// or beside it. For a refusal it is the text the user typed.
	Answer string `json:"answer"`
	// Refused marks the words the user typed when refusing a tool call of
	// the model (Claude Code: "The user doesn't want to proceed with this
	// tool use ... the user said:", also for a plan sent back from
	// ExitPlanMode): said in place of the tool's result, they are the
	// user's words, read as the user's prompt is.
	Refused bool `json:"refused,omitempty"`
}

// Text is the answer as one self-contained statement of the user:
// "Q: <question> A: <answer>", or a refusal's words as the user typed them.
func (a Answer) Text() string {
	if a.Refused {
		return a.Answer
	}
	return "Q: " + a.Question + " A: " + a.Answer
}

// Verdict is what the write pipeline did with an exchange.
type Verdict string

// The verdicts of a Decision.
const (
	VerdictStored    Verdict = "stored"            // new memories written
	VerdictUpdated   Verdict = "updated"           // an existing memory superseded by a newer version
	VerdictMerged    Verdict = "merged"            // a near duplicate: the existing memory reinforced
	VerdictDuplicate Verdict = "skipped-duplicate" // the same text is already stored
	VerdictRejected  Verdict = "rejected"          // a gate decided it is not worth remembering
)

// StageTiming is how long one pipeline stage took.
type StageTiming struct {
	Stage    string        `json:"stage"`
	Duration time.Duration `json:"duration_ns"`
}

// Decision is the write pipeline's account of one exchange: what it did,
// which stage decided and why, every score it computed, how long each stage
// took and which memories it wrote or touched.
type Decision struct {
	// ID names the decision (random), so a user can refer to it ("keep").
	ID        string `json:"id"`
	SessionID string `json:"session_id,omitempty"`
	// UserTurn numbers the turn the way its user counts it: the session's
	// prompts up to it, from 1 ("turn 3" is the answer to the user's third
	// prompt; memory.Exchange.UserTurns); 0 when the exchanges did not
	// count them. Turn is the exchange number of the turn's first exchange
	// (memory.Exchange.Turn: agent responses, tool-loop iterations
	// included), for finding it in the session.
	UserTurn int                `json:"user_turn,omitempty"`
	Turn     int                `json:"turn,omitempty"`
	Verdict  Verdict            `json:"verdict"`
	Stage    string             `json:"stage"`
	Reason   string             `json:"reason"`
	Scores   map[string]float64 `json:"scores,omitempty"`
	Timings  []StageTiming      `json:"timings,omitempty"`
	// MemoryIDs lists the memories written, updated or reinforced.
	MemoryIDs []string `json:"memory_ids,omitempty"`
	// Chunks counts the chunks the exchange was cut into (0 if rejected earlier).
	Chunks int       `json:"chunks,omitempty"`
	At     time.Time `json:"at"`
	// Preview is the start of the redacted exchange text, for the feed.
	Preview string `json:"preview,omitempty"`
	// Candidates lists, for a turn, each statement distillation found and
	// what became of it.
	Candidates []CandidateVerdict `json:"candidates,omitempty"`
	// CandidatesOmitted counts the verdicts of dropped statements and cut
	// pieces Bound left out of Candidates.
	CandidatesOmitted int `json:"candidates_omitted,omitempty"`
	// Refiled counts the memories of no project the decision filed under
	// its turn's project: a session ingested when its project could not be
	// told, read again once it can (package ingest, relabel.go).
	Refiled int `json:"refiled,omitempty"`
	// RefiledUnder is the project they were filed under.
	RefiledUnder string `json:"refiled_under,omitempty"`
}

// MaxDecisionCandidates bounds the verdicts a decision in the feed's log
// lists (Bound): a turn lists a verdict per statement, and a statement per
// run of sentences dropped, so a long turn lists many. On the dev sessions
// the most a turn lists is under 200.
const MaxDecisionCandidates = 500

// Bound returns d listing at most n verdicts in Candidates: every kept one
// and every one naming a memory (the feed links a memory to its
// statement), however many, then the others in order while they fit; the
// rest are counted in CandidatesOmitted. Candidates is copied when cut,
// never changed in place.
func (d Decision) Bound(n int) Decision {
	if len(d.Candidates) <= n {
		return d
	}
	room := n
	for _, c := range d.Candidates {
		if c.Kept || c.MemoryID != "" {
			room--
		}
	}
	out := make([]CandidateVerdict, 0, n)
	for _, c := range d.Candidates {
		switch {
		case c.Kept || c.MemoryID != "":
		case room > 0:
			room--
		default:
			d.CandidatesOmitted++
			continue
		}
		out = append(out, c)
	}
	d.Candidates = out
	return d
}

// CandidateVerdict is one statement of a turn and what distillation
// decided about it.
type CandidateVerdict struct {
	// Text is the statement (redacted; shortened for the feed).
	Text string `json:"text"`
	// Origin says who said it where: user, tool-loop, final-answer or summary.
	Origin string `json:"origin"`
	// Class is what kind of statement it is: finding, change, preference,
	// fact, answer, narration, status, plan, question, output, chat or
	// vague.
	Class string `json:"class"`
	Kept  bool   `json:"kept"`
	// Reason says why a statement was dropped.
	Reason string `json:"reason,omitempty"`
	Kind   Kind   `json:"kind,omitempty"`
	// MemoryID is the memory a kept statement was stored as, merged into
	// or updated.
	MemoryID string `json:"memory_id,omitempty"`
	// Cut marks a piece (a sentence, a clause) distillation cut out of a
	// statement it kept the rest of, never kept; Reason says why. The
	// pieces follow the turn's statements and are not statements of
	// their own; when a later turn distils an earlier one again, the
	// pieces cut out of what it stores now follow those statements
	// (origin earlier-turn) in the later turn's decision.
	Cut bool `json:"cut,omitempty"`
}

// TurnLabel names the decision's turn the way its user counts it, "turn
// 3" (UserTurn), or by its first exchange, "exchange 7" (Turn), when the
// user's prompts were not counted; "" for a decision of no session turn
// (a document).
func (d Decision) TurnLabel() string {
	switch {
	case d.UserTurn > 0:
		return "turn " + strconv.Itoa(d.UserTurn)
	case d.Turn > 0:
		return "exchange " + strconv.Itoa(d.Turn)
	}
	return ""
}

// Kept reports whether the exchange left a mark in the store (a memory
// stored, updated or reinforced), as opposed to being rejected.
func (d Decision) Kept() bool { return d.Verdict != VerdictRejected }

// JudgeVerdict is a judge's answer about one exchange.
type JudgeVerdict struct {
	// Skip says the exchange holds nothing worth remembering.
	Skip bool `json:"skip"`
	// Memory is the distilled memory when Skip is false.
	Memory string `json:"memory,omitempty"`
	Kind   Kind   `json:"kind,omitempty"`
	// InputTokens and OutputTokens are what the call cost, when the judge knows.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
}

// Judge decides, usually with a language model, whether an exchange is
// worth remembering and distils it. Implementations are safe for concurrent use.
type Judge interface {
	// Name names the judge and its model, e.g. "ollama:llama3.2".
	Name() string
	// Judge answers for one (already redacted) exchange.
	Judge(ctx context.Context, ex Exchange) (JudgeVerdict, error)
}
