package tail

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// Agents whose session files the tailer knows.
const (
	AgentClaudeCode = "claude-code"
	AgentCodex      = "codex"
)

// format is how the tailer reads one agent's session files.
type format struct {
	// parse reads complete lines into exchanges (Turn counting from 1,
	// UserTurns from 0 at the first line given).
	parse func(r io.Reader, opts transcript.Options) ([]memory.Exchange, transcript.Stats, error)
	// boundary reports whether a line may begin a turn: a user's prompt.
	// Everything before such a line belongs to turns that have ended. A
	// false positive only ends a turn early; a false negative only holds
	// it longer.
	boundary func(line []byte) bool
}

// formats by agent.
var formats = map[string]format{
	AgentClaudeCode: {parse: transcript.Parse, boundary: claudeBoundary},
	AgentCodex:      {parse: transcript.ParseCodex, boundary: codexBoundary},
}

// claudeBoundary: a Claude Code "user" line of the main conversation that
// is not a tool result, an expansion (isMeta) or a compaction summary.
func claudeBoundary(line []byte) bool {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return false // cheap: most lines are the assistant's or tool output
	}
	var e struct {
		Type             string `json:"type"`
		IsSidechain      bool   `json:"isSidechain"`
		IsMeta           bool   `json:"isMeta"`
		IsCompactSummary bool   `json:"isCompactSummary"`
		Message          *struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &e) != nil || e.Type != "user" || e.IsSidechain || e.IsMeta || e.IsCompactSummary || e.Message == nil {
		return false
	}
	return typedText(e.Message.Content)
}

// typedText reports whether message content is a string or blocks with
// text and no tool result.
func typedText(content json.RawMessage) bool {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s != ""
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return false
	}
	text := false
	for _, b := range blocks {
		switch b.Type {
		case "tool_result":
			return false
		case "text":
			text = true
		}
	}
	return text
}

// codexBoundary: a Codex CLI rollout line carrying a user message (a
// response_item message of role user). Codex writes the item first, then
// an event_msg user_message repeating it and the turn's turn_context, so
// the item is where the turn begins. Context Codex injects as user
// messages (AGENTS.md, <environment_context>) comes only before a prompt
// or at a session's start: a cut there only ends a turn early.
func codexBoundary(line []byte) bool {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return false // cheap: most lines are the model's or tool output
	}
	var e struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
			Role string `json:"role"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &e) != nil {
		return false
	}
	return e.Type == "response_item" && e.Payload.Type == "message" && e.Payload.Role == "user"
}
