package memory

import "context"

// TurnInput is what a turn judge sees of one user turn of an agent
// session, every text already stripped of injected blocks and redacted:
// the user's words, the model's steps in order, and the candidate
// statements the pipeline's distillation found in them.
type TurnInput struct {
	SessionID string `json:"session_id,omitempty"`
	Project   string `json:"project,omitempty"`
	// User holds the user's words of the turn, in order.
	User []string `json:"user,omitempty"`
	// Steps are the model's responses in order.
	Steps []TurnStep `json:"steps,omitempty"`
	// Candidates are the statements distillation found, kept or dropped,
	// numbered by their ID.
	Candidates []TurnCandidate `json:"candidates,omitempty"`
}

// TurnStep is one model response of a turn.
type TurnStep struct {
	// Origin says what the text is: "tool-loop" (between tool calls),
	// "final-answer" (the turn's last text) or "summary" (a compaction
	// summary the agent's harness wrote into the session).
	Origin  string       `json:"origin"`
	Text    string       `json:"text,omitempty"`
	Calls   []ToolCall   `json:"calls,omitempty"`
	Results []ToolResult `json:"results,omitempty"`
	// Error marks an error response.
	Error bool `json:"error,omitempty"`
}

// TurnCandidate is one statement distillation found in a turn.
type TurnCandidate struct {
	// ID numbers the candidate within the turn (from 1); a judge's memory
	// names the candidates it comes from by these ids.
	ID     int    `json:"id"`
	Text   string `json:"text"`
	Origin string `json:"origin"`
	Class  string `json:"class"`
	Kept   bool   `json:"kept"`
	// Reason says why a candidate was dropped ("narration", "revised
	// later: ...").
	Reason string `json:"reason,omitempty"`
	// Cuts are the pieces (sentences, clauses) distillation cut out of the
	// candidate's text while keeping the rest, in order, each with why: a
	// judge shown them knows not to write them back.
	Cuts []TurnCut `json:"cuts,omitempty"`
}

// TurnCut is a piece distillation cut out of a candidate it kept.
type TurnCut struct {
	Text string `json:"text"`
	// Reason says why ("revised later: ...", "offered or left to do: ...").
	Reason string `json:"reason"`
}

// MaxStatementRunes bounds one memory formed from a turn, by distillation
// (package ingest) or by a turn judge (package judge), and a candidate's
// text shown to a turn judge: one bound, so that what the judge reads of a
// candidate and what it may write back are the same length.
// Hand-written statements run ~250 characters at the median and ~350 at
// p90.
const MaxStatementRunes = 600

// TurnMemory is one memory a turn judge keeps.
type TurnMemory struct {
	Text string `json:"text"`
	Kind Kind   `json:"kind"`
	Type Type   `json:"type"`
	// From lists the ids of the candidates the memory restates or joins
	// (empty when the judge wrote it from the turn's texts alone).
	From []int `json:"from,omitempty"`
}

// TurnVerdict is a turn judge's answer: the memories to keep, none when
// the turn holds nothing worth remembering.
type TurnVerdict struct {
	Memories []TurnMemory `json:"memories"`
	// InputTokens and OutputTokens are what the call cost, when the judge knows.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
}

// TurnJudge reads a whole user turn, usually with a language model, and
// chooses the memories it holds, in place of the distiller's choice.
// Implementations are safe for concurrent use.
type TurnJudge interface {
	// Name names the judge and its model, e.g. "ollama:llama3.2".
	Name() string
	// JudgeTurn answers for one (already redacted) turn with one call.
	JudgeTurn(ctx context.Context, in TurnInput) (TurnVerdict, error)
}
