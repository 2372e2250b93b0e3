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
	// response reports whether a line holds (part of) a response of the
	// main conversation; carries whether it holds something the reader
	// hands to the next response (a compaction summary, a command, a
	// queued prompt). Carried lines after a turn's last response are read
	// again with the next turn (heldFrom): read with the turn, they would
	// be lost to the next one.
	response, carries func(line []byte) bool
	// stop reports whether the agent may have stopped answering before a
	// line: one the user or the harness wrote while it was idle.
	stop func(line []byte) bool
}

// formats by agent.
var formats = map[string]format{
	AgentClaudeCode: {parse: transcript.Parse, boundary: claudeBoundary, response: claudeResponse, carries: claudeCarries, stop: claudeStop},
	AgentCodex:      {parse: transcript.ParseCodex, boundary: codexBoundary, response: codexResponse, carries: codexCarries, stop: codexBoundary},
}

// heldFrom returns the offset in data (complete lines) of the first line
// after the last response that carries something to the next response
// (len(data) when none does): the lines from there on belong with the
// next turn.
func heldFrom(data []byte, fm format) int {
	held := -1
	for pos, end := 0, 0; pos < len(data); pos = end {
		end = lineEnd(data, pos)
		line := bytes.TrimSpace(data[pos:end])
		switch {
		case fm.response(line):
			held = -1
		case held < 0 && fm.carries(line):
			held = pos
		}
	}
	if held < 0 {
		return len(data)
	}
	return held
}

// lineEnd returns the offset just past the line of data that starts at
// pos: after its newline, or len(data) for a last line without one.
func lineEnd(data []byte, pos int) int {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(data)
}

// claudeLine is what the Claude Code tests read of a line.
type claudeLine struct {
	Type             string `json:"type"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	Message          *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// claudeResponse: an assistant line of the main conversation.
func claudeResponse(line []byte) bool {
	if !bytes.Contains(line, []byte(`"assistant"`)) {
		return false
	}
	var e claudeLine
	return json.Unmarshal(line, &e) == nil && e.Type == "assistant" && !e.IsSidechain
}

// claudeCarries: a user line of the main conversation with text (a
// prompt, a compaction summary, a command, a notification), or a queued
// prompt's line.
func claudeCarries(line []byte) bool {
	var e claudeLine
	if json.Unmarshal(line, &e) != nil {
		return false
	}
	switch e.Type {
	case "queue-operation", "attachment":
		return true
	case "user":
		return !e.IsSidechain && e.Message != nil && typedText(e.Message.Content)
	}
	return false
}

// claudeStop: a user line of the main conversation with text that is
// not an expansion: a prompt, or what the harness writes when the user
// interrupts or a background task ends.
func claudeStop(line []byte) bool {
	var e claudeLine
	return json.Unmarshal(line, &e) == nil && e.Type == "user" && !e.IsSidechain && !e.IsMeta && !e.IsCompactSummary &&
		e.Message != nil && typedText(e.Message.Content)
}

// codexLine is what the Codex tests read of a line.
type codexLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type string `json:"type"`
		Role string `json:"role"`
	} `json:"payload"`
}

// codexResponse: a response item of the model (its text, reasoning or a
// tool call).
func codexResponse(line []byte) bool {
	var e codexLine
	if json.Unmarshal(line, &e) != nil || e.Type != "response_item" {
		return false
	}
	switch e.Payload.Type {
	case "message":
		return e.Payload.Role == "assistant"
	case "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call":
		return true
	}
	return false
}

// codexCarries: a compaction's summary, or a user message.
func codexCarries(line []byte) bool {
	var e codexLine
	return json.Unmarshal(line, &e) == nil && (e.Type == "compacted" || (e.Type == "response_item" && e.Payload.Type == "message" && e.Payload.Role == "user"))
}

// claudeBoundary: a Claude Code "user" line of the main conversation that
// is not a tool result, an expansion (isMeta) or a compaction summary,
// and that the transcript reader takes for a prompt the user typed: not
// the harness's lines ("[Request interrupted by user]", a background
// task's notification, local commands and their output). Cut at one of
// those, a turn the user interrupted and a notification resumed would be
// captured as two turns, where `memtray ingest` reads one.
func claudeBoundary(line []byte) bool {
	if !bytes.Contains(line, []byte(`"user"`)) {
		return false // cheap: most lines are the assistant's or tool output
	}
	var e claudeLine
	if json.Unmarshal(line, &e) != nil || e.Type != "user" || e.IsSidechain || e.IsMeta || e.IsCompactSummary || e.Message == nil {
		return false
	}
	if !typedText(e.Message.Content) {
		return false
	}
	_, st, err := transcript.Parse(bytes.NewReader(line), transcript.Options{})
	return err == nil && st.UserPrompts > 0
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
