package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/anthropic"
	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// parseAnthropicRequest reads a POST /v1/messages body (see the package
// doc for how session, turn, tool loop, user text and project are found).
func parseAnthropicRequest(body []byte) (request, error) {
	var in struct {
		Model    string              `json:"model"`
		Stream   bool                `json:"stream"`
		System   json.RawMessage     `json:"system"`
		Metadata json.RawMessage     `json:"metadata"`
		Messages []anthropic.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return request{}, fmt.Errorf("anthropic request: %w", err)
	}
	r := request{model: in.Model, stream: in.Stream}
	system := jsonText(in.System)
	r.headless = isHeadless(system)
	r.dir = workingDir(system)

	var meta struct {
		UserID json.RawMessage `json:"user_id"`
	}
	if len(in.Metadata) > 0 && json.Unmarshal(in.Metadata, &meta) == nil {
		var uid string
		if json.Unmarshal(meta.UserID, &uid) == nil {
			r.sessionID = sessionFromUserID(uid)
		}
	}

	names := map[string]string{} // tool_use id -> tool name
	asks := map[string]string{}  // AskUserQuestion's tool_use id -> its input
	first := ""
	assistants := 0
	last, lastAssistant := -1, -1
	var prompts []prompt // the user prompts of the history, for occurrence
	for i, m := range in.Messages {
		if m.Role == "system" {
			// Claude Code 2.1.x sends its environment block (" - Primary
			// working directory: /path") as a system message: read for
			// the directory only, it is not user text.
			if r.dir == "" {
				r.dir = workingDir(jsonText(m.Content))
			}
			continue
		}
		if m.Role != "user" && m.Role != "assistant" {
			continue
		}
		blocks := anthropic.Blocks(m.Content)
		if m.Role == "assistant" {
			assistants++
			lastAssistant = i
			for _, b := range blocks {
				if b.ID != "" && strings.HasSuffix(b.Type, "tool_use") && len(names) < 10000 {
					names[b.ID] = b.Name
					if b.Type == "tool_use" && b.Name == transcript.AskTool {
						asks[b.ID] = string(b.Input)
					}
				}
			}
			continue
		}
		last = i
		text := ""
		for _, b := range blocks {
			if b.Type != "text" {
				continue
			}
			if r.dir == "" {
				r.dir = workingDir(b.Text)
			}
			if t := harnesstext.Strip(b.Text, harnesstext.Injected); !notPrompt(t) {
				text = joinText(text, t)
			}
		}
		if text != "" {
			r.userTurns++
			if first == "" {
				first = text
			}
			prompts = append(prompts, prompt{msg: i, text: clean(text)})
		}
	}
	r.turn = assistants + 1
	if r.sessionID == "" && first != "" {
		r.sessionID = hashID(first)
	}

	if last >= 0 {
		m := in.Messages[last]
		text, results := "", []memory.ToolResult(nil)
		for _, b := range anthropic.Blocks(m.Content) {
			switch b.Type {
			case "text":
				if t := harnesstext.Strip(b.Text, harnesstext.Injected); !notPrompt(t) {
					text = joinText(text, t)
				}
			case "tool_result":
				tr := memory.ToolResult{
					ToolUseID: clean(b.ToolUseID),
					Name:      clean(names[b.ToolUseID]),
					Content:   memory.CutMiddle(clean(jsonText(b.Content)), memory.MaxToolResultBytes),
					IsError:   b.IsError,
				}
				results = append(results, tr)
				if input, ok := asks[b.ToolUseID]; ok {
					// The user's answers, as the transcript reader gives
					// them (the request has the result's text only).
					r.answers = append(r.answers, transcript.Answers(input, tr.Content, tr.IsError, nil)...)
				}
				if words := transcript.Refusal(tr.Content, tr.IsError, nil); words != "" {
					// What the user typed when refusing the call.
					r.answers = append(r.answers, memory.Answer{Answer: words, Refused: true})
				}
			}
		}
		r.toolResults = results
		// The request answers tool calls: an iteration of the tool loop,
		// unless the user also typed something in the same message. (A
		// system message may come after it.)
		r.toolLoop = len(results) > 0 && text == "" && lastAssistant < last
		if !r.toolLoop {
			r.user = clean(text)
			r.alike = anthAlike(in.Messages, prompts, last, r.user)
		}
	}
	return r, nil
}

// anthAlike returns the first responses of the prompts before message
// last whose text is user's (alikeTurns): a response is the first
// assistant message after the prompt, before the next user message (a
// prompt no assistant message answered is left out).
func anthAlike(msgs []anthropic.Message, prompts []prompt, last int, user string) []turnStart {
	if user == "" {
		return nil
	}
	for len(prompts) > 0 && prompts[len(prompts)-1].msg >= last {
		prompts = prompts[:len(prompts)-1]
	}
	return alikeTurns(msgs[:last], prompts, user, func(m anthropic.Message, ts *turnStart, text *strings.Builder) alikePart {
		part := messageAlike(m.Role)
		if part == alikeLast {
			for _, b := range anthropic.Blocks(m.Content) {
				switch {
				case b.Type == "text":
					text.WriteString(b.Text)
				case strings.HasSuffix(b.Type, "tool_use"):
					ts.tools = append(ts.tools, clean(b.Name))
				}
			}
		}
		return part
	})
}

// joinText joins two texts with a blank line.
func joinText(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "\n\n" + b
}

// anthParser assembles an Anthropic Messages response.
type anthParser struct {
	a      *answer
	blocks map[int]int // content block index -> tool call index, or -1 for text
}

func newAnthParser(max int) *anthParser {
	return &anthParser{a: &answer{max: max, emptyInput: "{}"}, blocks: map[int]int{}}
}

// anthEvent is one streaming event (every type's fields in one struct).
type anthEvent struct {
	Type    string `json:"type"`
	Index   int    `json:"index"`
	Message *struct {
		Model string           `json:"model"`
		Usage *anthropic.Usage `json:"usage"`
	} `json:"message"`
	ContentBlock *anthropic.Block `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *anthropic.Usage `json:"usage"`
}

// event handles one SSE event of a streaming response.
func (p *anthParser) event(name string, data []byte) {
	a := p.a
	if a.tooLarge {
		return
	}
	if name == "content_block_delta" && skippable(data) {
		return
	}
	var ev anthEvent
	if json.Unmarshal(data, &ev) != nil {
		if name == "error" {
			a.isErr, a.done = true, true
		}
		return
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "message_start":
		if ev.Message != nil {
			a.model = clean(memory.CutRunes(ev.Message.Model, 256))
			a.addUsage(ev.Message.Usage.Memory())
		}
	case "content_block_start":
		cb := ev.ContentBlock
		if cb == nil || len(p.blocks) > 100000 {
			return
		}
		switch {
		case cb.Type == "text":
			p.blocks[ev.Index] = -1
			a.addText(cb.Text)
		case strings.HasSuffix(cb.Type, "tool_use"):
			in := string(cb.Input)
			if in == "{}" {
				in = ""
			}
			p.blocks[ev.Index] = a.addCall(cb.ID, cb.Name, in)
		}
	case "content_block_delta":
		if ev.Delta == nil {
			return
		}
		i, ok := p.blocks[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			if !ok || i == -1 {
				a.addText(ev.Delta.Text)
			}
		case "input_json_delta":
			if ok && i >= 0 {
				a.addInput(i, ev.Delta.PartialJSON)
			}
		}
	case "message_delta":
		if ev.Delta != nil && (ev.Delta.StopReason == "refusal" || ev.Delta.StopReason == "error") {
			a.isErr = true
		}
		a.addUsage(ev.Usage.Memory())
	case "message_stop":
		a.done = true
	case "error":
		a.isErr, a.done = true, true
	}
}

// skippable reports, without decoding it, whether a content_block_delta
// carries something never kept (thinking, signatures): their type comes
// before the long payload in every stream Anthropic sends.
func skippable(data []byte) bool {
	head := data[:min(len(data), 160)]
	return bytes.Contains(head, []byte(`"type":"thinking_delta"`)) || bytes.Contains(head, []byte(`"type":"signature_delta"`))
}

// whole handles a non-streaming response body.
func (p *anthParser) whole(body []byte) {
	a := p.a
	var msg anthropic.Response
	if json.Unmarshal(body, &msg) != nil {
		return
	}
	a.done = true
	if msg.Type == "error" || msg.StopReason == "refusal" {
		a.isErr = true
	}
	a.model = clean(memory.CutRunes(msg.Model, 256))
	a.addUsage(msg.Usage.Memory())
	for _, b := range msg.Content {
		switch {
		case b.Type == "text":
			a.addText(b.Text)
		case strings.HasSuffix(b.Type, "tool_use"):
			a.addCall(b.ID, b.Name, string(b.Input))
		}
	}
}

// result returns the answer.
func (p *anthParser) result() *answer { return p.a }
