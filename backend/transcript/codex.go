package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/project"
)

// ParseCodex reads one Codex CLI rollout (FormatCodex),
// ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl, and returns its
// Exchanges. On an error it returns the Exchanges and Stats of the lines
// before the failing one.
//
// Each line is {"timestamp", "type", "payload"}: session_meta (id, cwd,
// originator, cli_version, source), response_item (an item of the OpenAI
// Responses API: message, reasoning, function_call, function_call_output,
// custom_tool_call, custom_tool_call_output, local_shell_call,
// web_search_call...), turn_context (cwd, model), event_msg (what the UI
// showed: token counts, agent messages, user messages...) and compacted (a
// compaction summary). Rollouts written before about September 2025 have no
// wrapper: the first line is the session meta itself ({"id", "timestamp",
// "instructions", "git"}, no cwd), every other line an item, plus
// {"record_type":"state"} lines; ParseCodex reads both.
//
// How ParseCodex reads a rollout:
//
//   - The items a model response produced (reasoning, assistant messages,
//     tool calls) are written one per line, in order; a response ends where
//     an input item (a tool output, a user message) or a turn_context line
//     comes. Each response is one Exchange: Assistant is its output_text
//     parts (reasoning is left out); ToolCalls its function_call (Input: the
//     arguments JSON), custom_tool_call (Input: {"input": ...}),
//     local_shell_call and web_search_call (Input: the action) items.
//   - ToolResults are the function_call_output and custom_tool_call_output
//     items sent since the previous response, Name resolved from the call of
//     the same call_id. An output is a string, content items or (older
//     versions) {"content", "success"}; a string that is a JSON object
//     {"output", "metadata": {"exit_code"}} gives its output; IsError is set
//     by success false or a non-zero exit code (also "Exit code: N" first
//     lines).
//   - A user message is a prompt unless it is context Codex injects: the
//     <environment_context> and <user_instructions> blocks, AGENTS.md
//     contents ("# AGENTS.md instructions for ..."), <user_shell_command>,
//     <turn_aborted>, the compaction prompt; developer messages never are.
//     A compaction summary (a compacted line's message, a user message
//     starting "Another language model started to solve this problem")
//     is no prompt either: it rides on the next response as its Summary,
//     the model's own account of the session so far (once, when both say
//     it). event_msg lines repeat what items say and are bookkeeping.
//   - SessionID is the session_meta id (else Options.SessionID), the cwd is
//     the session_meta's (else a turn_context's, else the first
//     <environment_context>'s <cwd>); with none, the project is the last
//     element of the session_meta's git repository_url; Model the turn_context's model, and
//     the session is headless when its originator is "codex_exec" or its
//     source "exec" (codex exec), or Options.Headless.
//   - StartedAt is the time of the last line sent before the response (the
//     request), EndedAt the time of its last line; legacy rollouts have no
//     times.
//
// Validation: a line longer than Options.MaxLineBytes is an error naming it
// (ErrLineTooLong); a line that is not a JSON object is skipped and counted,
// but an input in which no line is one is an error (ErrNotTranscript).
func ParseCodex(r io.Reader, opts Options) ([]memory.Exchange, Stats, error) {
	p := &codexParser{opts: opts, stats: newStats(FormatCodex), calls: map[string]string{}}
	p.b = newBuilder(&p.stats)
	err := lines(r, opts.maxLine(), p.line)
	exs := p.finish()
	if err != nil {
		return exs, p.stats, err
	}
	if p.stats.Lines > 0 && p.objects == 0 {
		return exs, p.stats, ErrNotTranscript
	}
	return exs, p.stats, nil
}

type codexParser struct {
	opts    Options
	stats   Stats
	b       *builder
	objects int
	calls   map[string]string // call_id -> tool name
	meta    bool              // a session meta was read
	sessID  string
	cwd     string
	envCWD  string // from <environment_context>
	repoURL string // the session meta's git repository_url
	// lastSummary is the last compacted line's summary.
	lastSummary string
	exec        bool
}

// codexLine is one rollout line: the wrapper, or a legacy line (the meta
// or an item itself).
type codexLine struct {
	Timestamp  string          `json:"timestamp"`
	Type       string          `json:"type"`
	Payload    json.RawMessage `json:"payload"`
	RecordType string          `json:"record_type"`
	ID         string          `json:"id"`
}

type codexMeta struct {
	ID         string          `json:"id"`
	CWD        string          `json:"cwd"`
	Originator string          `json:"originator"`
	Source     json.RawMessage `json:"source"`
	Git        struct {
		RepositoryURL string `json:"repository_url"`
	} `json:"git"`
}

type codexItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Input     json.RawMessage `json:"input"`
	CallID    string          `json:"call_id"`
	ID        string          `json:"id"`
	Output    json.RawMessage `json:"output"`
	Action    json.RawMessage `json:"action"`
}

type codexContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// codexWrappers are the line types of wrapped rollouts.
var codexWrappers = map[string]bool{
	"session_meta": true, "response_item": true, "event_msg": true, "turn_context": true, "compacted": true,
}

func (p *codexParser) skip(reason string) { p.stats.Skipped[reason]++ }

func (p *codexParser) line(n int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	p.stats.Lines++
	var l codexLine
	if raw[0] != '{' || json.Unmarshal(raw, &l) != nil {
		p.skip(SkipMalformed)
		return
	}
	p.objects++
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\u0000`)) {
		p.stats.InvalidUTF8++
	}
	at := parseTime(l.Timestamp)
	switch {
	case codexWrappers[l.Type]:
		p.stats.countType(l.Type)
		p.wrapped(&l, at)
	case l.RecordType != "":
		p.stats.countType("record_type:" + clean(l.RecordType))
		p.skip(SkipBookkeeping)
	case l.Type == "" && l.ID != "" && !p.meta:
		p.stats.countType("session_meta")
		p.sessionMeta(raw)
	case l.Type != "":
		p.stats.countType(l.Type)
		p.item(raw, at)
	default:
		p.stats.countType("")
		p.skip(SkipUnknownType)
	}
}

func (p *codexParser) wrapped(l *codexLine, at time.Time) {
	switch l.Type {
	case "session_meta":
		if p.meta {
			// A forked session repeats its parent's meta.
			p.skip(SkipBookkeeping)
			return
		}
		p.sessionMeta(l.Payload)
	case "response_item":
		p.item(l.Payload, at)
	case "turn_context":
		var tc struct {
			CWD   string `json:"cwd"`
			Model string `json:"model"`
		}
		if json.Unmarshal(l.Payload, &tc) == nil {
			if p.cwd == "" {
				p.cwd = tc.CWD
			}
			if tc.Model != "" {
				p.b.model = clean(tc.Model)
			}
		}
		p.b.close() // a new request starts
		p.skip(SkipBookkeeping)
	case "compacted":
		var ci struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(l.Payload, &ci)
		p.lastSummary = strings.TrimSpace(clean(ci.Message))
		if !p.b.summary(ci.Message) {
			p.b.close()
			p.skip(SkipInjected)
		}
	default: // event_msg
		p.skip(SkipBookkeeping)
	}
}

func (p *codexParser) sessionMeta(raw json.RawMessage) {
	var m codexMeta
	if json.Unmarshal(raw, &m) != nil {
		p.skip(SkipMalformed)
		return
	}
	p.meta = true
	p.sessID = m.ID
	p.cwd = m.CWD
	p.repoURL = strings.TrimSpace(clean(m.Git.RepositoryURL))
	p.stats.Entrypoint = clean(m.Originator)
	var source string
	_ = json.Unmarshal(m.Source, &source) // an object for subagents
	p.exec = m.Originator == "codex_exec" || source == "exec"
	p.skip(SkipBookkeeping)
}

func (p *codexParser) item(raw json.RawMessage, at time.Time) {
	var it codexItem
	if json.Unmarshal(raw, &it) != nil {
		p.skip(SkipMalformed)
		return
	}
	b := p.b
	switch it.Type {
	case "message":
		p.message(&it, at)
	case "reasoning":
		if !b.reading() {
			b.open(at)
		}
		b.touch(at)
	case "function_call":
		p.calls[it.CallID] = clean(it.Name)
		b.call(memory.ToolCall{ID: it.CallID, Name: it.Name, Input: codexArguments(it.Arguments)}, at)
	case "custom_tool_call":
		p.calls[it.CallID] = clean(it.Name)
		b.call(memory.ToolCall{ID: it.CallID, Name: it.Name, Input: jsonObject(map[string]string{"input": jsonString(it.Input)})}, at)
	case "local_shell_call":
		id := it.CallID
		if id == "" {
			id = it.ID
		}
		p.calls[id] = "local_shell"
		b.call(memory.ToolCall{ID: id, Name: "local_shell", Input: compactJSON(it.Action)}, at)
	case "web_search_call":
		b.call(memory.ToolCall{ID: it.ID, Name: "web_search", Input: compactJSON(it.Action)}, at)
	case "function_call_output", "custom_tool_call_output", "mcp_tool_call_output":
		content, isErr := codexOutput(it.Output)
		b.result(memory.ToolResult{ToolUseID: it.CallID, Name: p.calls[it.CallID], Content: content, IsError: isErr}, at)
	case "ghost_snapshot", "compaction", "compaction_summary":
		p.skip(SkipBookkeeping)
	default:
		p.skip(SkipUnknownType)
	}
}

func (p *codexParser) message(it *codexItem, at time.Time) {
	var parts []codexContent
	if json.Unmarshal(it.Content, &parts) != nil {
		// Some writers put a plain string.
		var s string
		if json.Unmarshal(it.Content, &s) != nil {
			p.skip(SkipMalformed)
			return
		}
		parts = []codexContent{{Type: "text", Text: s}}
	}
	switch it.Role {
	case "assistant":
		opened := false
		for _, c := range parts {
			if c.Type == "output_text" || c.Type == "text" {
				p.b.text(c.Text, at)
				opened = true
			}
		}
		if !opened {
			p.skip(SkipEmpty)
		}
	case "user":
		var texts []string
		injected, summaries := 0, 0
		for _, c := range parts {
			switch c.Type {
			case "input_text", "text":
				t := strings.TrimSpace(clean(c.Text))
				if p.envCWD == "" {
					p.envCWD = strings.TrimSpace(between(t, "<cwd>", "</cwd>"))
				}
				if strings.HasPrefix(t, codexSummaryPrefix) {
					// The summary the compacted history starts with,
					// after the prefix's own sentences.
					text := t
					if i := strings.Index(text, "analysis:"); i >= 0 && i < 1000 {
						text = text[i+len("analysis:"):]
					}
					switch {
					case p.lastSummary != "" && strings.Contains(text, p.lastSummary):
						p.skip(SkipDuplicate) // the compacted line said it
						summaries++
					case p.b.summary(text):
						summaries++
					default:
						injected++
					}
				} else if codexInjected(t) {
					injected++
				} else if t != "" {
					texts = append(texts, t)
				}
			case "input_image":
				texts = append(texts, "[image]")
			}
		}
		switch {
		case len(texts) > 0:
			p.b.prompt(strings.Join(texts, "\n\n"), at)
		case summaries > 0:
		case injected > 0:
			p.b.close()
			p.skip(SkipInjected)
		default:
			p.skip(SkipEmpty)
		}
	default: // developer, system: instructions
		p.skip(SkipInjected)
	}
}

// codexInjectedPrefixes start the user texts Codex writes, not the user.
var codexInjectedPrefixes = []string{
	"<environment_context>", "<user_instructions>", "# AGENTS.md instructions for", "<INSTRUCTIONS>",
	"<user_shell_command>", "<turn_aborted>", "<skill>", "<permissions instructions>",
	"You are performing a CONTEXT CHECKPOINT COMPACTION",
}

// codexSummaryPrefix starts the user message holding a compaction summary
// in the history Codex rebuilds after compacting.
const codexSummaryPrefix = "Another language model started to solve this problem"

func codexInjected(text string) bool {
	for _, p := range codexInjectedPrefixes {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// codexArguments returns a function call's arguments as compact JSON: they
// are a string holding JSON (kept as a JSON string when it is not JSON).
func codexArguments(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] != '"' {
		return compactJSON(raw)
	}
	s := jsonString(raw)
	if json.Valid([]byte(s)) {
		return compactJSON(json.RawMessage(s))
	}
	b, _ := json.Marshal(clean(s))
	return string(b)
}

// jsonString returns raw as a string: its value if it is a JSON string,
// else its text.
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// codexOutput reads a tool output: a string (possibly the JSON of
// {"output", "metadata"}), content items, or {"content", "success"}.
func codexOutput(raw json.RawMessage) (content string, isErr bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch raw[0] {
	case '"':
		s := jsonString(raw)
		var wrapped struct {
			Output   *string `json:"output"`
			Metadata struct {
				ExitCode *int `json:"exit_code"`
			} `json:"metadata"`
		}
		if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &wrapped) == nil && wrapped.Output != nil {
			code := wrapped.Metadata.ExitCode
			return *wrapped.Output, code != nil && *code != 0
		}
		if rest, ok := strings.CutPrefix(s, "Exit code: "); ok {
			line, _, _ := strings.Cut(rest, "\n")
			if code, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
				return s, code != 0
			}
		}
		return s, false
	case '[':
		var items []codexContent
		if json.Unmarshal(raw, &items) != nil {
			return "", false
		}
		var parts []string
		for _, it := range items {
			switch it.Type {
			case "input_text", "output_text", "text":
				parts = append(parts, it.Text)
			case "input_image":
				parts = append(parts, "[image]")
			}
		}
		return strings.Join(parts, "\n"), false
	case '{':
		var o struct {
			Content string `json:"content"`
			Success *bool  `json:"success"`
		}
		if json.Unmarshal(raw, &o) != nil {
			return "", false
		}
		return o.Content, o.Success != nil && !*o.Success
	}
	return string(raw), false
}

func (p *codexParser) finish() []memory.Exchange {
	s := &p.stats
	if p.cwd == "" {
		p.cwd = p.envCWD
	}
	s.label(p.sessID, p.cwd, p.opts)
	if s.Project == "" && p.repoURL != "" {
		// No working directory anywhere (a legacy rollout without an
		// environment context): the repository the session meta names.
		if name := project.RemoteName(p.repoURL); name != "" && len(name) <= memory.MaxExchangeNameBytes {
			s.Project = name
			s.ProjectNote = fmt.Sprintf("the rollout names no working directory; project %q from the repository its session meta names (%s)", name, p.repoURL)
		}
	}
	s.Headless = p.opts.Headless || p.exec
	exs := p.b.finish(s.SessionID, s.Project, s.Headless)
	s.tidy()
	return exs
}
