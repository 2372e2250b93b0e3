// Package anthropic holds the wire types of Anthropic's Messages API that
// memtray reads: the content blocks of a message, a message with its
// content undecoded (a request's, or a line of a Claude Code transcript),
// a response and its usage. The capture proxy, the transcript parser and
// the judge share them.
//
// It imports only memory.
package anthropic

import (
	"encoding/json"

	"github.com/memtray/memtray/backend/memory"
)

// Block is one content block of a message: text, tool_use and
// server_tool_use (ID, Name, Input), tool_result (ToolUseID, Content,
// IsError), a web search result (Title, URL), or a type memtray does not
// read.
type Block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Title     string          `json:"title"`
	URL       string          `json:"url"`
}

// Blocks decodes a message's content: a string is one text block, an
// array its blocks; anything else (or malformed JSON) is nil.
func Blocks(raw json.RawMessage) []Block {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return []Block{{Type: "text", Text: s}}
	}
	var blocks []Block
	if json.Unmarshal(raw, &blocks) != nil {
		return nil
	}
	return blocks
}

// Message is one message with its content undecoded: a string or an array
// of blocks (see Blocks). Requests carry Role and Content; a transcript's
// assistant lines also ID and Model.
type Message struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
}

// Usage is the token usage of a response.
type Usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// Memory returns u as memtray's memory.Usage; a nil u is no usage.
func (u *Usage) Memory() memory.Usage {
	if u == nil {
		return memory.Usage{}
	}
	return memory.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens, CacheReadInputTokens: u.CacheReadInputTokens}
}

// Response is the part of a non-streaming response body every reader
// takes: a message (Type "message") or an error (Type "error"; the judge
// reads the error object too). A streaming response's message_start event
// carries the same message object.
type Response struct {
	Type       string  `json:"type"`
	Model      string  `json:"model"`
	Content    []Block `json:"content"`
	StopReason string  `json:"stop_reason"`
	Usage      *Usage  `json:"usage"`
}
