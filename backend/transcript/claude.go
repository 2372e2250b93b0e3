package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/anthropic"
	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
)

// entry is one transcript line, the fields Parse reads.
type entry struct {
	Type             string `json:"type"`
	UUID             string `json:"uuid"`
	SessionID        string `json:"sessionId"`
	CWD              string `json:"cwd"`
	Timestamp        string `json:"timestamp"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	IsAPIError       bool   `json:"isApiErrorMessage"`
	AgentID          string `json:"agentId"`
	Data             *struct {
		Type    string          `json:"type"`
		AgentID string          `json:"agentId"`
		Message json.RawMessage `json:"message"`
	} `json:"data"` // progress: agent_progress carries a subagent's message
	Entrypoint string             `json:"entrypoint"`
	RequestID  string             `json:"requestId"`
	Operation  string             `json:"operation"` // queue-operation
	Content    json.RawMessage    `json:"content"`   // queue-operation text
	Message    *anthropic.Message `json:"message"`
	// ToolUseResult is what a tool returned, structured, on the line of
	// its tool_result (AskUserQuestion's answers).
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	Origin        *struct {
		Kind string `json:"kind"`
	} `json:"origin"`
	Attachment *struct {
		Type        string `json:"type"`
		Prompt      string `json:"prompt"`
		CommandMode string `json:"commandMode"`
	} `json:"attachment"`
}

// bookkeeping lists the entry types that never hold a message.
var bookkeeping = map[string]bool{
	"progress": true, "system": true, "file-history-snapshot": true, "summary": true,
	"queue-operation": true, "custom-title": true, "attachment": true, "agent-setting": true,
}

const synthetic = "<synthetic>"

// maxOpenAsks bounds the AskTool calls a thread remembers while their
// answers are awaited.
const maxOpenAsks = 64

// Parse reads one Claude Code transcript (FormatClaudeCode) and returns its
// Exchanges. On an error it returns the Exchanges and Stats of the lines
// before the failing one.
//
// Claude Code keeps each session as a JSON Lines file,
// ~/.claude/projects/<project-dir>/<session-id>.jsonl. Every line is one
// entry with a "type". Entries of type "user" and "assistant" carry an API
// "message" ({role, content}); the content is a string or an array of blocks
// (text, thinking, tool_use, tool_result, image...). One assistant response
// is written as several lines, one per content block, sharing message.id;
// the tool_result lines answering its tool calls can sit between them (the
// tools run while the response streams). Other entry types (progress,
// system, file-history-snapshot, summary, queue-operation...) are
// bookkeeping.
//
// How Parse reads a transcript:
//
//   - Each assistant response (its lines merged by message.id) is one
//     Exchange. Assistant is its text blocks, trimmed and joined by a blank
//     line (thinking blocks are left out); ToolCalls are its tool_use blocks
//     with Input as compact JSON.
//   - ToolResults are the tool_result blocks sent since the previous
//     response, with Name resolved from the tool_use of the same id.
//   - A real user prompt is a user line with text typed by the user. Not
//     prompts: tool results, isMeta lines (skill and command expansions,
//     caveats), the compaction summary (isCompactSummary), local command
//     lines (<command-name> of a command that printed <local-command-stdout>,
//     <bash-input>...), background-task notifications (<task-notification>),
//     lines that are nothing but <system-reminder>-style injected blocks,
//     "[Request interrupted by user...]" markers, and lines whose origin kind
//     is not "human". Injected blocks inside a prompt are removed from it.
//   - The first response after one or more real prompts gets them as User
//     (joined by a blank line) and counts them in UserTurns. Every other
//     response is a tool-loop iteration: User is "" and ToolLoop is true.
//     This includes responses that follow a background-task notification or
//     an automatic compaction, which no user typed.
//   - A slash command that reaches the model (a <command-name> line with no
//     <local-command-stdout> after it, followed by a response) is a prompt
//     whose User is what the user typed, "/name args"; its expansion is not.
//   - A prompt typed while the agent works is queued: Claude Code logs a
//     queue-operation "enqueue" with its text and a "remove" when it hands
//     it to the model with the next request, and writes no user line. Parse
//     takes "remove" (or "dequeue") as that delivery, the oldest queued
//     prompt first; newer versions' "attachment" entries of type
//     queued_command count the same way (a text delivered twice counts once).
//   - The user's answers to the questions the model asks with AskTool
//     (AskUserQuestion) are the user's words said in the middle of the
//     turn, not tool output: each answered question becomes an Answer
//     (see Answers) of the response after its tool_result, which still
//     is a tool-loop iteration and counts no user turn. So are the words
//     the user types when refusing a tool call (see Refusal; a plan of
//     ExitPlanMode sent back with feedback too): an Answer with Refused
//     set.
//   - An assistant entry with isApiErrorMessage is an Exchange with Error
//     set (its text is the error). Other entries of the "<synthetic>" model
//     (such as "No response requested.") were never an API call: skipped.
//   - Sidechain lines (isSidechain: a subagent's conversation) are skipped
//     unless Options.Sidechains is set; then each subagent (by agentId) is
//     read as a conversation of its own whose Exchanges are all ToolLoop
//     (a subagent is a tool of the main conversation; the first response
//     still shows the agent's prompt as User) and whose prompts never count
//     as user turns. A subagent's own file (subagents/agent-*.jsonl) holds
//     only sidechain lines: read it with Sidechains set.
//
// Every Exchange has Source "transcript", SessionID from the first sessionId
// of the file (else Options.SessionID), Project from Options.Project or else
// ProjectName of the first cwd of the main conversation (the directory
// Claude Code was started in: a later "cd" of the agent does not change it;
// Stats.CWD keeps the full path, and ClaudeProjectDir(Stats.CWD) names the
// ~/.claude/projects directory the file lives in), and Turn counting
// Exchanges from 1 in file order.
// StartedAt is the time of the last line sent before the response (the
// request; never after the response's first line), EndedAt the time of its
// last line.
//
// Headless (print mode, "claude -p", the Agent SDK) is hard to see in a
// transcript: Parse sets it when Options.Headless is set or when an entry
// carries an "entrypoint" starting with "sdk" ("sdk-cli", "sdk-ts",
// "sdk-py"), which newer Claude Code versions record; interactive sessions
// record "cli" or none.
//
// Validation: a line longer than Options.MaxLineBytes is an error naming the
// line (ErrLineTooLong). A line that is not a JSON object is skipped and
// counted (a crash can leave a truncated last line), but a file in which no
// line is a JSON object is an error (ErrNotTranscript). Invalid UTF-8 is
// replaced by U+FFFD and NUL bytes are removed from every text; such lines
// are counted in Stats.InvalidUTF8. Unknown entry types are skipped and
// counted.
func Parse(r io.Reader, opts Options) ([]memory.Exchange, Stats, error) {
	p := newParser(opts)
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), max+1) // +1: room for the newline
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) > max {
			return p.finish(), p.stats, fmt.Errorf("transcript: line %d is longer than %d bytes: %w", n, max, ErrLineTooLong)
		}
		p.line(n, line)
	}
	if err := sc.Err(); err != nil {
		exs := p.finish()
		if errors.Is(err, bufio.ErrTooLong) {
			return exs, p.stats, fmt.Errorf("transcript: line %d is longer than %d bytes: %w", n+1, max, ErrLineTooLong)
		}
		return exs, p.stats, fmt.Errorf("transcript: reading line %d: %w", n+1, err)
	}
	exs := p.finish()
	if p.stats.Lines > 0 && p.objects == 0 {
		return exs, p.stats, ErrNotTranscript
	}
	return exs, p.stats, nil
}

// parser holds the state of one Parse.
type parser struct {
	opts    Options
	stats   Stats
	objects int // lines that were JSON objects

	main   *thread
	agents map[string]*thread // sidechain conversations by agentId
	order  []*thread          // agents in order of appearance
	uuids  map[string]bool
	queued []string // prompts enqueued and not yet delivered
	out    []pending
	sdk    bool // an "sdk" entrypoint was seen
	sessID string
	anyCWD string
}

// pending is a finished response with the line it started on, for ordering.
type pending struct {
	line int
	ex   memory.Exchange
}

// thread is one conversation: the main one or a subagent's.
type thread struct {
	sidechain bool
	agentID   string
	cur       *response
	prompts   []string // real prompts since the last response
	summaries []string // compaction summaries since the last response
	queuedIn  []string // which of them came from the queue
	command   string   // "/name args" of a command not yet known to be local
	results   []memory.ToolResult
	requestAt time.Time
	userTurns int
	toolNames map[string]string
	asks      map[string]string // AskTool call id -> its input
	answers   []memory.Answer   // the user's answers since the last response
}

// response is an assistant response being merged.
type response struct {
	key       string
	line      int
	ex        memory.Exchange
	texts     []string
	serverUse map[string]string // server_tool_use id -> name
}

func newParser(opts Options) *parser {
	return &parser{
		opts:   opts,
		stats:  newStats(FormatClaudeCode),
		main:   &thread{toolNames: map[string]string{}, asks: map[string]string{}},
		agents: map[string]*thread{},
		uuids:  map[string]bool{},
	}
}

func (p *parser) skip(reason string) { p.stats.Skipped[reason]++ }

// line handles one line of the file; n is its number from 1.
func (p *parser) line(n int, raw []byte) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return
	}
	p.stats.Lines++
	if raw[0] != '{' {
		p.skip(SkipMalformed)
		return
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		p.skip(SkipMalformed)
		return
	}
	p.objects++
	if !utf8.Valid(raw) || bytes.Contains(raw, []byte(`\u0000`)) {
		p.stats.InvalidUTF8++
	}
	p.stats.countType(e.Type)
	if e.Type == "progress" && e.Data != nil && e.Data.Type == "agent_progress" && len(e.Data.Message) > 0 {
		// Claude Code 2.1 logs a subagent's messages in the main file too.
		var inner entry
		if json.Unmarshal(e.Data.Message, &inner) != nil || (inner.Type != "user" && inner.Type != "assistant") {
			p.skip(SkipBookkeeping)
			return
		}
		if !p.opts.Sidechains {
			p.skip(SkipSidechain)
			return
		}
		inner.IsSidechain, inner.AgentID = true, e.Data.AgentID
		if inner.Timestamp == "" {
			inner.Timestamp = e.Timestamp
		}
		e = inner
	}
	p.entry(n, &e)
}

// entry handles one decoded entry of line n.
func (p *parser) entry(n int, e *entry) {
	if e.UUID != "" {
		if p.uuids[e.UUID] {
			p.skip(SkipDuplicate)
			return
		}
		p.uuids[e.UUID] = true
	}
	if e.SessionID != "" && p.sessID == "" {
		p.sessID = e.SessionID
	}
	if e.Entrypoint != "" {
		if p.stats.Entrypoint == "" {
			p.stats.Entrypoint = clean(e.Entrypoint)
		}
		if strings.HasPrefix(e.Entrypoint, "sdk") {
			p.sdk = true
		}
	}
	if e.CWD != "" {
		if p.stats.CWD == "" && !e.IsSidechain {
			p.stats.CWD = e.CWD
		}
		if p.anyCWD == "" {
			p.anyCWD = e.CWD // a subagent's own file has only sidechain lines
		}
	}
	at := parseTime(e.Timestamp)

	switch e.Type {
	case "user", "assistant":
	case "queue-operation":
		p.queueOp(e)
		return
	case "attachment":
		if a := e.Attachment; a != nil && a.Type == "queued_command" && (a.CommandMode == "" || a.CommandMode == "prompt") {
			if p.deliver(p.main, clean(a.Prompt), at) {
				return
			}
		}
		p.skip(SkipBookkeeping)
		return
	default:
		if bookkeeping[e.Type] {
			p.skip(SkipBookkeeping)
		} else {
			p.skip(SkipUnknownType)
		}
		return
	}

	if e.Message == nil {
		p.skip(SkipNoMessage)
		return
	}
	t := p.main
	if e.IsSidechain {
		if !p.opts.Sidechains {
			p.skip(SkipSidechain)
			return
		}
		t = p.agents[e.AgentID]
		if t == nil {
			t = &thread{sidechain: true, agentID: clean(e.AgentID), toolNames: map[string]string{}, asks: map[string]string{}}
			p.agents[e.AgentID] = t
			p.order = append(p.order, t)
		}
	}
	if e.Type == "assistant" {
		p.assistant(t, n, e, at)
	} else {
		p.user(t, e, at)
	}
}

// queueOp handles a queue-operation line: prompts typed while the agent
// works, delivered with its next request.
func (p *parser) queueOp(e *entry) {
	switch e.Operation {
	case "enqueue":
		var text string
		if json.Unmarshal(e.Content, &text) == nil {
			text = strings.TrimSpace(clean(text))
			if !harness(text) {
				p.queued = append(p.queued, text)
				return
			}
		}
	case "remove", "dequeue":
		if len(p.queued) > 0 {
			text := p.queued[0]
			p.queued = p.queued[1:]
			p.deliver(p.main, text, parseTime(e.Timestamp))
			return
		}
	case "popAll":
		if len(p.queued) > 0 {
			for _, text := range p.queued {
				p.deliver(p.main, text, parseTime(e.Timestamp))
			}
			p.queued = nil
			return
		}
	}
	p.skip(SkipBookkeeping)
}

// deliver records a queued prompt handed to the model, once.
func (p *parser) deliver(t *thread, text string, at time.Time) bool {
	text = strings.TrimSpace(text)
	if text == "" {
		return false
	}
	for _, q := range t.queuedIn {
		if q == text {
			p.skip(SkipDuplicate) // delivered already (queue-operation and attachment)
			return true
		}
	}
	t.queuedIn = append(t.queuedIn, text)
	p.prompt(t, text, at)
	return true
}

// prompt records a real user prompt.
func (p *parser) prompt(t *thread, text string, at time.Time) {
	t.prompts = append(t.prompts, text)
	t.command = ""
	if !t.sidechain {
		t.userTurns++
		p.stats.UserPrompts++
	}
	if !at.IsZero() {
		t.requestAt = at
	}
}

// user handles a user line: tool results, a prompt, or injected content.
func (p *parser) user(t *thread, e *entry, at time.Time) {
	var texts []string
	results := 0
	content := e.Message.Content
	switch {
	case len(content) > 0 && content[0] == '"':
		var s string
		if json.Unmarshal(content, &s) == nil {
			texts = append(texts, s)
		}
	case len(content) > 0 && content[0] == '[':
		var blocks []anthropic.Block
		if json.Unmarshal(content, &blocks) != nil {
			p.skip(SkipMalformed)
			return
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				r := memory.ToolResult{
					ToolUseID: clean(b.ToolUseID),
					Name:      t.toolNames[b.ToolUseID],
					Content:   clean(resultText(b.Content)),
					IsError:   b.IsError,
				}
				t.results = append(t.results, r)
				results++
				if input, ok := t.asks[b.ToolUseID]; ok {
					delete(t.asks, b.ToolUseID)
					as := Answers(input, r.Content, r.IsError, e.ToolUseResult)
					t.answers = append(t.answers, as...)
					p.stats.Answers += len(as)
				}
				if words := Refusal(r.Content, r.IsError, e.ToolUseResult); words != "" {
					t.answers = append(t.answers, memory.Answer{Answer: words, Refused: true})
					p.stats.Refusals++
				}
			case "text":
				texts = append(texts, b.Text)
			case "image":
				texts = append(texts, "[image]")
			}
		}
	}
	if results > 0 && !at.IsZero() {
		t.requestAt = at
	}
	text := strings.TrimSpace(clean(strings.Join(texts, "\n\n")))
	if text == "" || (text == "[image]" && results > 0) {
		if results == 0 {
			p.skip(SkipEmpty)
		}
		return
	}
	reason := p.classify(t, e, text)
	if reason == SkipInjected && !t.sidechain && (e.IsCompactSummary || continuation(text)) {
		// The compaction summary is no prompt, but it is the model's own
		// account of what the session found so far: the next response
		// carries it as its Summary (the write pipeline reads it as a step
		// of the turn, never as the user's words).
		t.summaries = append(t.summaries, text)
		p.stats.Summaries++
		return
	}
	if reason != "" {
		if results == 0 {
			p.skip(reason)
		}
		return
	}
	if t.sidechain {
		// A subagent's prompt is written by the main model, not a user.
		p.prompt(t, text, at)
		return
	}
	text = harnesstext.Strip(text, harnesstext.Injected)
	for i, q := range t.queuedIn {
		if q == text {
			// Delivered from the queue already; the line repeats it.
			t.queuedIn = append(t.queuedIn[:i], t.queuedIn[i+1:]...)
			p.skip(SkipDuplicate)
			return
		}
	}
	for i, q := range p.queued {
		if q == text {
			p.queued = append(p.queued[:i], p.queued[i+1:]...)
			break
		}
	}
	p.prompt(t, text, at)
}

// classify returns why a user text is not a real prompt, or "".
func (p *parser) classify(t *thread, e *entry, text string) string {
	switch {
	case e.IsCompactSummary || continuation(text):
		return SkipInjected
	case e.IsMeta:
		return SkipMeta
	case harnesstext.Interrupted(text):
		return SkipInterrupted
	case strings.HasPrefix(text, "<command-name>") || strings.HasPrefix(text, "<command-message>"):
		t.command = commandText(text)
		return SkipCommand
	}
	if tag, ok := harnesstext.Opens(text, harnesstext.Command); ok {
		// A local command or bash-mode line, its output or its caveat.
		if strings.HasPrefix(tag, "local-command-std") {
			t.command = "" // the command ran locally
		}
		return SkipCommand
	}
	if e.Origin != nil && e.Origin.Kind != "" && e.Origin.Kind != "human" {
		return SkipInjected
	}
	if harness(text) {
		return SkipInjected
	}
	return ""
}

// continuation reports whether a user text is the summary Claude Code
// starts a compacted (or resumed) conversation with; older versions write
// it without isCompactSummary.
func continuation(text string) bool {
	return strings.HasPrefix(text, "This session is being continued from a previous conversation")
}

// harness reports whether a user text is the harness's, not the user's: a
// background-task notification (with the instruction Claude Code appends to
// it), the message about a plan the user rejected (the agent's plan), or
// nothing but injected blocks.
func harness(text string) bool {
	return strings.HasPrefix(text, "<task-notification>") || harnesstext.RejectedPlan(text) ||
		harnesstext.Strip(text, harnesstext.Injected) == ""
}

// commandText turns a slash command line into what the user typed:
// "/name args".
func commandText(text string) string {
	name := between(text, "<command-name>", "</command-name>")
	if name == "" {
		name = between(text, "<command-message>", "</command-message>")
	}
	name = strings.TrimSpace(name)
	if name != "" && !strings.HasPrefix(name, "/") {
		name = "/" + name
	}
	if args := strings.TrimSpace(between(text, "<command-args>", "</command-args>")); args != "" {
		return name + " " + args
	}
	return name
}

func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	if j := strings.Index(s, close); j >= 0 {
		return s[:j]
	}
	return s
}

// resultText flattens a tool_result's content: a string, or blocks whose
// text is joined by newlines (an image becomes "[image]").
func resultText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	var blocks []anthropic.Block
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Type == "text":
			parts = append(parts, b.Text)
		case b.Type == "image":
			parts = append(parts, "[image]")
		case b.Title != "" || b.URL != "":
			parts = append(parts, strings.TrimSpace(b.Title+" "+b.URL))
		}
	}
	return strings.Join(parts, "\n")
}

// assistant handles one line of an assistant response.
func (p *parser) assistant(t *thread, n int, e *entry, at time.Time) {
	m := e.Message
	if m.Model == synthetic && !e.IsAPIError {
		p.skip(SkipSynthetic)
		return
	}
	key := m.ID
	if key == "" {
		key = e.RequestID
	}
	if key == "" {
		key = e.UUID
	}
	if t.cur == nil || t.cur.key != key || key == "" {
		p.close(t)
		t.cur = p.open(t, key, n, at)
	}
	r := t.cur
	if m.Model != "" && m.Model != synthetic {
		r.ex.Model = clean(m.Model)
	}
	if e.IsAPIError {
		r.ex.Error = true
	}
	if !at.IsZero() {
		// Clocks can step back: keep StartedAt <= EndedAt.
		if at.After(r.ex.EndedAt) {
			r.ex.EndedAt = at
		}
		if r.ex.StartedAt.IsZero() || at.Before(r.ex.StartedAt) {
			r.ex.StartedAt = at
		}
	}
	content := m.Content
	if len(content) > 0 && content[0] == '"' {
		var s string
		if json.Unmarshal(content, &s) == nil && strings.TrimSpace(s) != "" {
			r.texts = append(r.texts, strings.TrimSpace(clean(s)))
		}
		return
	}
	var blocks []anthropic.Block
	if len(content) > 0 && json.Unmarshal(content, &blocks) != nil {
		p.skip(SkipMalformed)
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if s := strings.TrimSpace(clean(b.Text)); s != "" {
				r.texts = append(r.texts, s)
			}
		case "tool_use", "server_tool_use":
			r.ex.ToolCalls = append(r.ex.ToolCalls, memory.ToolCall{
				ID:    clean(b.ID),
				Name:  clean(b.Name),
				Input: compactJSON(b.Input),
			})
			if b.Type == "tool_use" {
				t.toolNames[b.ID] = clean(b.Name)
				if b.Name == AskTool && len(t.asks) < maxOpenAsks {
					t.asks[b.ID] = string(b.Input)
				}
			} else {
				if r.serverUse == nil {
					r.serverUse = map[string]string{}
				}
				r.serverUse[b.ID] = clean(b.Name)
			}
		case "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result":
			// Results of server tools come back inside the response.
			r.ex.ToolResults = append(r.ex.ToolResults, memory.ToolResult{
				ToolUseID: clean(b.ToolUseID),
				Name:      r.serverUse[b.ToolUseID],
				Content:   clean(resultText(b.Content)),
			})
		}
	}
}

// open starts a response, taking the prompts and tool results sent since
// the previous one.
func (p *parser) open(t *thread, key string, n int, at time.Time) *response {
	r := &response{key: key, line: n}
	ex := &r.ex
	switch {
	case len(t.prompts) > 0:
		ex.User = strings.Join(t.prompts, "\n\n")
	case t.command != "":
		// The command reached the model: its line was a prompt after all.
		cmd := t.command
		if p.stats.Skipped[SkipCommand] > 0 {
			p.stats.Skipped[SkipCommand]--
		}
		p.prompt(t, cmd, time.Time{})
		ex.User = cmd
	default:
		ex.ToolLoop = true
	}
	if t.sidechain {
		ex.ToolLoop = true
	}
	ex.UserTurns = p.main.userTurns
	ex.ToolResults = t.results
	ex.Answers, t.answers = t.answers, nil
	ex.Summary = strings.Join(t.summaries, "\n\n")
	t.summaries = nil
	ex.StartedAt = t.requestAt
	if ex.StartedAt.IsZero() {
		ex.StartedAt = at
	}
	t.prompts, t.queuedIn, t.command, t.results = nil, nil, "", nil
	t.requestAt = time.Time{}
	return r
}

// close finishes the thread's open response, if any.
func (p *parser) close(t *thread) {
	r := t.cur
	if r == nil {
		return
	}
	t.cur = nil
	r.ex.Assistant = strings.Join(r.texts, "\n\n")
	r.ex.Source = Source
	switch {
	case t.sidechain:
		p.stats.Sidechain++
	case r.ex.ToolLoop:
		p.stats.ToolLoops++
	}
	if r.ex.Error {
		p.stats.APIErrors++
	}
	p.stats.ToolCalls += len(r.ex.ToolCalls)
	p.stats.ToolResults += len(r.ex.ToolResults)
	p.out = append(p.out, pending{line: r.line, ex: r.ex})
}

// finish closes every open response and returns the Exchanges in file
// order, numbered and labelled with the session's fields.
func (p *parser) finish() []memory.Exchange {
	p.close(p.main)
	for _, t := range p.order {
		p.close(t)
	}
	sort.SliceStable(p.out, func(i, j int) bool { return p.out[i].line < p.out[j].line })

	s := &p.stats
	cwd := s.CWD
	if cwd == "" {
		cwd = p.anyCWD
	}
	s.label(p.sessID, cwd, p.opts)
	s.Headless = p.opts.Headless || p.sdk
	s.tidy()
	s.Agents = nil
	for _, t := range p.order {
		s.Agents = append(s.Agents, t.agentID)
	}
	s.Exchanges = len(p.out)
	if len(p.out) == 0 {
		return nil
	}
	exs := make([]memory.Exchange, len(p.out))
	for i, pe := range p.out {
		ex := pe.ex
		ex.SessionID = s.SessionID
		ex.Project = s.Project
		ex.Headless = s.Headless
		ex.Turn = i + 1
		if memory.BoundExchange(&ex) {
			s.Cut++
		}
		exs[i] = ex
	}
	p.out = p.out[:0]
	return exs
}

// withSubagentFiles adds to a Claude Code session's Exchanges those of its
// subagent files, <session>/subagents/agent-<id>.jsonl beside it (Claude
// Code 2.1 and later), except the agents the session file itself held
// (agent_progress entries): each subagent's Exchanges go after the main
// conversation's Exchange that started before them, and Turn is counted
// again.
func withSubagentFiles(path string, exs []memory.Exchange, st Stats, opts Options) ([]memory.Exchange, Stats, error) {
	dir := filepath.Join(strings.TrimSuffix(path, filepath.Ext(path)), "subagents")
	files, err := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	if err != nil || len(files) == 0 {
		return exs, st, nil
	}
	sort.Strings(files)
	seen := map[string]bool{}
	for _, id := range st.Agents {
		seen[id] = true
	}
	order := exchangePointers(exs)
	for _, f := range files {
		id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "agent-"), ".jsonl")
		if seen[id] {
			continue
		}
		data, err := readFile(f, opts)
		if err != nil {
			return flatten(order), st, err
		}
		sub := opts
		sub.SessionID, sub.Project = st.SessionID, st.Project
		side, sst, err := Parse(bytes.NewReader(data), sub)
		if err != nil {
			return flatten(order), st, fmt.Errorf("%s: %w", f, err)
		}
		seen[id] = true
		st.Agents = append(st.Agents, sst.Agents...)
		st.Lines += sst.Lines
		st.Sidechain += sst.Sidechain
		st.ToolCalls += sst.ToolCalls
		st.ToolResults += sst.ToolResults
		st.APIErrors += sst.APIErrors
		st.Cut += sst.Cut
		for reason, n := range sst.Skipped {
			if st.Skipped == nil {
				st.Skipped = map[string]int{}
			}
			st.Skipped[reason] += n
		}
		order = mergeByStart(order, side)
	}
	out := flatten(order)
	for i := range out {
		out[i].Turn = i + 1
		out[i].SessionID, out[i].Project, out[i].Headless = st.SessionID, st.Project, st.Headless
	}
	st.Exchanges = len(out)
	return out, st, nil
}

// exchangePointers returns pointers to the elements of exs.
func exchangePointers(exs []memory.Exchange) []*memory.Exchange {
	out := make([]*memory.Exchange, len(exs))
	for i := range exs {
		out[i] = &exs[i]
	}
	return out
}

// flatten copies the Exchanges order points to.
func flatten(order []*memory.Exchange) []memory.Exchange {
	out := make([]memory.Exchange, len(order))
	for i, ex := range order {
		out[i] = *ex
	}
	return out
}

// mergeByStart inserts side's Exchanges (in their order) into main after
// the last main Exchange that started no later than each; they take its
// UserTurns. It moves pointers, not Exchanges: a session with many
// subagent files merges each into the growing list, and copying the
// Exchanges at every merge made that quadratic in bytes.
func mergeByStart(main []*memory.Exchange, side []memory.Exchange) []*memory.Exchange {
	out := make([]*memory.Exchange, 0, len(main)+len(side))
	i := 0
	for j := range side {
		s := &side[j]
		for i < len(main) && !main[i].StartedAt.After(s.StartedAt) {
			out = append(out, main[i])
			i++
		}
		s.UserTurns = 0
		if len(out) > 0 {
			s.UserTurns = out[len(out)-1].UserTurns
		}
		out = append(out, s)
	}
	return append(out, main[i:]...)
}
