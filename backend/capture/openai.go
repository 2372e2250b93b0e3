package capture

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
)

// openaiMeta is the metadata object both OpenAI APIs accept; values other
// than strings are ignored.
func openaiSession(metadata json.RawMessage) string {
	var meta map[string]json.RawMessage
	if len(metadata) == 0 || json.Unmarshal(metadata, &meta) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(meta["session_id"], &s) == nil && s != "" {
		return clean(memory.CutRunes(s, 128))
	}
	if json.Unmarshal(meta["user_id"], &s) == nil && s != "" {
		return sessionFromUserID(s)
	}
	return ""
}

// chatMessage is a message of a Chat Completions request's history.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// parseChatRequest reads a POST /openai/v1/chat/completions body.
func parseChatRequest(body []byte) (request, error) {
	var in struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		User     json.RawMessage `json:"user"`
		Metadata json.RawMessage `json:"metadata"`
		Messages []chatMessage   `json:"messages"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return request{}, fmt.Errorf("chat completions request: %w", err)
	}
	r := request{model: in.Model, stream: in.Stream, sessionID: openaiSession(in.Metadata)}
	names := map[string]string{}
	first, system := "", ""
	assistants, lastUser := 0, ""
	var prompts []prompt // the user prompts of the history, for occurrence
	for i, m := range in.Messages {
		text := jsonText(m.Content)
		switch m.Role {
		case "system", "developer":
			system = joinText(system, text)
		case "assistant":
			assistants++
			for _, c := range m.ToolCalls {
				if c.ID != "" && len(names) < 10000 {
					names[c.ID] = c.Function.Name
				}
			}
		case "user":
			if r.dir == "" {
				r.dir = workingDir(text)
			}
			if t := harnesstext.Strip(text, harnesstext.Injected); !notPrompt(t) {
				r.userTurns++
				lastUser = t
				if first == "" {
					first = t
				}
				prompts = append(prompts, prompt{msg: i, text: clean(t)})
			}
		}
	}
	if d := workingDir(system); d != "" {
		r.dir = d
	}
	r.headless = isHeadless(system)
	r.turn = assistants + 1
	if r.sessionID == "" && first != "" {
		r.sessionID = hashID(first)
	}
	if r.sessionID == "" {
		var u string
		if json.Unmarshal(in.User, &u) == nil && u != "" {
			r.sessionID = hashID(u)
		}
	}
	n := len(in.Messages)
	if n > 0 && in.Messages[n-1].Role == "tool" {
		r.toolLoop = true
		i := n - 1
		for i > 0 && in.Messages[i-1].Role == "tool" {
			i--
		}
		for _, m := range in.Messages[i:] {
			r.toolResults = append(r.toolResults, memory.ToolResult{
				ToolUseID: clean(m.ToolCallID),
				Name:      clean(names[m.ToolCallID]),
				Content:   memory.CutMiddle(clean(jsonText(m.Content)), memory.MaxToolResultBytes),
			})
		}
	} else {
		r.user = clean(lastUser)
		r.alike = chatAlike(in.Messages, prompts, r.user)
	}
	return r, nil
}

// chatAlike returns the first responses of the prompts before the last
// whose text is user's (alikeTurns): a response is the first assistant
// message after the prompt, before the next user message.
func chatAlike(msgs []chatMessage, prompts []prompt, user string) []turnStart {
	return alikeTurns(msgs, prompts[:max(len(prompts)-1, 0)], user, func(m chatMessage, ts *turnStart, text *strings.Builder) alikePart {
		part := messageAlike(m.Role)
		if part == alikeLast {
			text.WriteString(partsText(m.Content))
			for _, c := range m.ToolCalls {
				ts.tools = append(ts.tools, clean(c.Function.Name))
			}
		}
		return part
	})
}

// openaiUsage covers both APIs' usage objects.
type openaiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
}

func (u *openaiUsage) usage() memory.Usage {
	if u == nil {
		return memory.Usage{}
	}
	out := memory.Usage{InputTokens: u.PromptTokens + u.InputTokens, OutputTokens: u.CompletionTokens + u.OutputTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadInputTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.InputTokensDetails != nil {
		out.CacheReadInputTokens = u.InputTokensDetails.CachedTokens
	}
	return out
}

// chatParser assembles a chat completions response.
type chatParser struct {
	a     *answer
	calls map[int]int // delta tool_calls index -> answer call index
}

func newChatParser(max int) *chatParser {
	return &chatParser{a: &answer{max: max}, calls: map[int]int{}}
}

type chatToolCall struct {
	Index    int    `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Content   string         `json:"content"`
			Refusal   string         `json:"refusal"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"delta"`
		Message *struct {
			Content   string         `json:"content"`
			Refusal   string         `json:"refusal"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *openaiUsage    `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// event handles one chunk of a chat completions stream.
func (p *chatParser) event(_ string, data []byte) {
	a := p.a
	if a.tooLarge {
		return
	}
	if string(data) == "[DONE]" {
		a.done = true
		return
	}
	var c chatChunk
	if json.Unmarshal(data, &c) != nil {
		return
	}
	p.chunk(&c)
}

func (p *chatParser) chunk(c *chatChunk) {
	a := p.a
	if len(c.Error) > 0 && string(c.Error) != "null" {
		a.isErr = true
	}
	if c.Model != "" {
		a.model = clean(memory.CutRunes(c.Model, 256))
	}
	a.addUsage(c.Usage.usage())
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason == "content_filter" {
			a.isErr = true
		}
		if d := ch.Delta; d != nil {
			a.addText(d.Content)
			if d.Refusal != "" {
				a.isErr = true
			}
			for _, tc := range d.ToolCalls {
				i, ok := p.calls[tc.Index]
				if !ok {
					if len(p.calls) > 10000 {
						continue
					}
					i = a.addCall(tc.ID, tc.Function.Name, "")
					p.calls[tc.Index] = i
				} else if tc.Function.Name != "" && a.calls[i].Name == "" {
					a.calls[i].Name = tc.Function.Name
				}
				a.addInput(i, tc.Function.Arguments)
			}
		}
		if m := ch.Message; m != nil {
			a.addText(m.Content)
			if m.Refusal != "" {
				a.isErr = true
			}
			for _, tc := range m.ToolCalls {
				a.addCall(tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
		}
	}
}

// whole handles a non-streaming chat completion.
func (p *chatParser) whole(body []byte) {
	var c chatChunk
	if json.Unmarshal(body, &c) != nil {
		return
	}
	p.a.done = true
	p.chunk(&c)
}

func (p *chatParser) result() *answer { return p.a }

// responsesItem is one input or output item of the Responses API.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// parseResponsesRequest reads a POST /openai/v1/responses body.
func parseResponsesRequest(body []byte) (request, error) {
	var in struct {
		Model          string          `json:"model"`
		Stream         bool            `json:"stream"`
		Instructions   json.RawMessage `json:"instructions"`
		Input          json.RawMessage `json:"input"`
		Metadata       json.RawMessage `json:"metadata"`
		PromptCacheKey json.RawMessage `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return request{}, fmt.Errorf("responses request: %w", err)
	}
	r := request{model: in.Model, stream: in.Stream, sessionID: openaiSession(in.Metadata)}
	if r.sessionID == "" {
		var k string
		if json.Unmarshal(in.PromptCacheKey, &k) == nil && k != "" {
			r.sessionID = clean(memory.CutRunes(k, 128))
		}
	}
	system := jsonText(in.Instructions)
	var items []responsesItem
	if len(in.Input) > 0 && in.Input[0] == '"' {
		var s string
		if json.Unmarshal(in.Input, &s) == nil {
			items = []responsesItem{{Type: "message", Role: "user", Content: in.Input}}
		}
	} else if len(in.Input) > 0 {
		if err := json.Unmarshal(in.Input, &items); err != nil {
			return request{}, fmt.Errorf("responses request input: %w", err)
		}
	}
	names := map[string]string{}
	first, lastUser := "", ""
	assistants := 0
	var prompts []prompt // the user prompts of the history, for occurrence
	for i, it := range items {
		switch it.Type {
		case "", "message":
			text := jsonText(it.Content)
			switch it.Role {
			case "system", "developer":
				system = joinText(system, text)
			case "assistant":
				assistants++
			case "user":
				if r.dir == "" {
					r.dir = workingDir(text)
				}
				if t := harnesstext.Strip(text, harnesstext.Injected); !notPrompt(t) && !envOnly(t) {
					r.userTurns++
					lastUser = t
					if first == "" {
						first = t
					}
					prompts = append(prompts, prompt{msg: i, text: clean(t)})
				}
			}
		case "function_call", "custom_tool_call":
			if it.CallID != "" && len(names) < 10000 {
				names[it.CallID] = it.Name
			}
		}
	}
	if d := workingDir(system); d != "" {
		r.dir = d
	}
	r.headless = isHeadless(system) || isCodexExec(body) // headless.go
	r.turn = assistants + 1
	if r.sessionID == "" && first != "" {
		r.sessionID = hashID(first)
	}
	n := len(items)
	if n > 0 && isCallOutput(items[n-1].Type) {
		r.toolLoop = true
		i := n - 1
		for i > 0 && isCallOutput(items[i-1].Type) {
			i--
		}
		for _, it := range items[i:] {
			r.toolResults = append(r.toolResults, memory.ToolResult{
				ToolUseID: clean(it.CallID),
				Name:      clean(names[it.CallID]),
				Content:   memory.CutMiddle(clean(jsonText(it.Output)), memory.MaxToolResultBytes),
			})
		}
	} else {
		r.user = clean(lastUser)
		r.alike = responsesAlike(items, prompts, r.user)
	}
	return r, nil
}

// responsesAlike returns the first responses of the prompts before the
// last whose text is user's (alikeTurns). A response is the items after
// the prompt up to a tool's output or the next user message: the
// assistant's text and the tools it called.
func responsesAlike(items []responsesItem, prompts []prompt, user string) []turnStart {
	return alikeTurns(items, prompts[:max(len(prompts)-1, 0)], user, func(it responsesItem, ts *turnStart, text *strings.Builder) alikePart {
		message := it.Type == "" || it.Type == "message"
		switch {
		case isCallOutput(it.Type), message && it.Role == "user":
			return alikeEnd
		case message && it.Role == "assistant":
			text.WriteString(partsText(it.Content))
			return alikeMore
		case it.Type == "function_call" || it.Type == "custom_tool_call":
			ts.tools = append(ts.tools, clean(it.Name))
			return alikeMore
		}
		return alikeSkip
	})
}

// isCallOutput reports whether a Responses item type returns a tool's output.
func isCallOutput(t string) bool {
	return t == "function_call_output" || t == "custom_tool_call_output"
}

// envOnly reports whether a user message is only Codex's environment
// block, which the harness sends as a user message.
func envOnly(t string) bool {
	const open, close = "<environment_context>", "</environment_context>"
	return len(t) >= len(open)+len(close) && t[:len(open)] == open && t[len(t)-len(close):] == close
}

// responsesParser assembles a Responses API response.
type responsesParser struct {
	a        *answer
	sawText  bool
	sawCalls bool
}

func newResponsesParser(max int) *responsesParser {
	return &responsesParser{a: &answer{max: max}}
}

// responsesObject is the response object (final event or whole body).
type responsesObject struct {
	Model  string          `json:"model"`
	Status string          `json:"status"`
	Error  json.RawMessage `json:"error"`
	Output []responsesItem `json:"output"`
	Usage  *openaiUsage    `json:"usage"`
}

// event handles one event of a Responses stream.
func (p *responsesParser) event(name string, data []byte) {
	a := p.a
	if a.tooLarge {
		return
	}
	var ev struct {
		Type     string           `json:"type"`
		Delta    string           `json:"delta"`
		Item     *responsesItem   `json:"item"`
		Response *responsesObject `json:"response"`
	}
	if json.Unmarshal(data, &ev) != nil {
		if name == "error" {
			a.isErr = true
		}
		return
	}
	if ev.Type == "" {
		ev.Type = name
	}
	switch ev.Type {
	case "response.created", "response.in_progress":
		if ev.Response != nil && ev.Response.Model != "" {
			a.model = clean(memory.CutRunes(ev.Response.Model, 256))
		}
	case "response.output_text.delta":
		p.sawText = true
		a.addText(ev.Delta)
	case "response.output_item.done":
		if it := ev.Item; it != nil && (it.Type == "function_call" || it.Type == "custom_tool_call") {
			p.sawCalls = true
			a.addCall(it.CallID, it.Name, it.Arguments)
		}
	case "response.completed", "response.incomplete":
		a.done = true
		if ev.Response != nil {
			p.object(ev.Response)
		}
	case "response.failed", "error":
		a.isErr, a.done = true, true
	}
}

// object takes model, usage and (when the stream did not deliver them as
// deltas) the text and calls of a final response object.
func (p *responsesParser) object(o *responsesObject) {
	a := p.a
	if o.Model != "" {
		a.model = clean(memory.CutRunes(o.Model, 256))
	}
	if o.Status == "failed" || (len(o.Error) > 0 && string(o.Error) != "null") {
		a.isErr = true
	}
	a.addUsage(o.Usage.usage())
	for _, it := range o.Output {
		switch it.Type {
		case "message":
			if p.sawText {
				continue
			}
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if json.Unmarshal(it.Content, &parts) == nil {
				for _, pt := range parts {
					if pt.Type == "output_text" {
						a.addText(pt.Text)
					} else if pt.Type == "refusal" {
						a.isErr = true
					}
				}
			}
		case "function_call", "custom_tool_call":
			if !p.sawCalls {
				a.addCall(it.CallID, it.Name, it.Arguments)
			}
		}
	}
}

// whole handles a non-streaming Responses body.
func (p *responsesParser) whole(body []byte) {
	var o responsesObject
	if json.Unmarshal(body, &o) != nil {
		return
	}
	p.a.done = true
	p.object(&o)
}

func (p *responsesParser) result() *answer { return p.a }
