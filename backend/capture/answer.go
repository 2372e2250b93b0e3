package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/harnesstext"
	"github.com/memtray/memtray/backend/memory"
)

// answer is what a response parser keeps of the model's answer: its text,
// its tool calls, model, usage and whether it was an error. Everything it
// keeps counts against one budget (MaxCaptureBytes); past it tooLarge is
// set and nothing more is kept.
type answer struct {
	text   strings.Builder
	calls  []memory.ToolCall
	inputs []strings.Builder // tool call inputs being assembled, by calls index
	model  string
	usage  *memory.Usage
	isErr  bool
	// emptyInput stands for a tool call's input when none arrived.
	emptyInput string
	done       bool // the stream's end event arrived (message_stop, [DONE], response.completed)
	kept       int
	max        int
	tooLarge   bool
}

// keep reports whether n more bytes fit the budget, counting them if so.
func (a *answer) keep(n int) bool {
	if a.tooLarge {
		return false
	}
	if a.kept+n > a.max {
		a.tooLarge = true
		return false
	}
	a.kept += n
	return true
}

// addText appends assistant text.
func (a *answer) addText(s string) {
	if s != "" && a.keep(len(s)) {
		a.text.WriteString(s)
	}
}

// addCall starts a tool call and returns its index.
func (a *answer) addCall(id, name, input string) int {
	a.keep(len(id) + len(name))
	a.calls = append(a.calls, memory.ToolCall{ID: id, Name: name})
	a.inputs = append(a.inputs, strings.Builder{})
	i := len(a.calls) - 1
	a.addInput(i, input)
	return i
}

// addInput appends to the JSON input of call i.
func (a *answer) addInput(i int, s string) {
	if i >= 0 && i < len(a.inputs) && s != "" && a.keep(len(s)) {
		a.inputs[i].WriteString(s)
	}
}

// toolCalls returns the assembled tool calls.
func (a *answer) toolCalls() []memory.ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	out := make([]memory.ToolCall, len(a.calls))
	for i, c := range a.calls {
		c.Input = clean(a.inputs[i].String())
		if c.Input == "" {
			c.Input = a.emptyInput
		}
		c.ID, c.Name = clean(c.ID), clean(c.Name)
		out[i] = c
	}
	return out
}

// addUsage merges reported token counts: a non-zero value replaces the one
// known so far (message_delta repeats message_start's counts, updated).
func (a *answer) addUsage(u memory.Usage) {
	if u == (memory.Usage{}) {
		return
	}
	if a.usage == nil {
		a.usage = &memory.Usage{}
	}
	if u.InputTokens != 0 {
		a.usage.InputTokens = u.InputTokens
	}
	if u.OutputTokens != 0 {
		a.usage.OutputTokens = u.OutputTokens
	}
	if u.CacheCreationInputTokens != 0 {
		a.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != 0 {
		a.usage.CacheReadInputTokens = u.CacheReadInputTokens
	}
}

// responseParser turns a response body into an answer: event for each SSE
// event of a stream, whole for a non-streaming JSON body.
type responseParser interface {
	event(name string, data []byte)
	whole(body []byte)
	result() *answer
}

// request is what a request parser learned from a request body.
type request struct {
	model       string
	stream      bool
	sessionID   string
	user        string
	userTurns   int
	turn        int
	toolLoop    bool
	toolResults []memory.ToolResult
	answers     []memory.Answer // the user's answers to AskUserQuestion (transcript.Answers) and refusals' words (transcript.Refusal)
	dir         string          // the working directory the agent reported, if any
	headless    bool
	// alike are the first responses of the earlier turns of the history
	// whose user text is this request's (occurrence).
	alike []turnStart
}

// prompt is a user prompt of a request's history: the index of its
// message (or item) and its text as the proxy keeps it.
type prompt struct {
	msg  int
	text string
}

// partsText is the text of message content (a string, or parts with
// text) joined as an answer joins its text: with nothing between parts.
func partsText(raw json.RawMessage) string {
	if len(raw) > 0 && raw[0] == '[' {
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &parts) == nil {
			var b strings.Builder
			for _, pt := range parts {
				b.WriteString(pt.Text)
			}
			return b.String()
		}
		return ""
	}
	return jsonText(raw)
}

// turnStart is the first response of a turn: its text and the names of
// the tools it called.
type turnStart struct {
	assistant string
	tools     []string
}

// alikePart is what an item of a request's history is to the response to
// an earlier prompt (alikeTurns).
type alikePart int

const (
	alikeSkip alikePart = iota // not part of it (a system message): the walk goes on
	alikeEnd                   // after it (the next user message, a tool's output): the walk stops
	alikeMore                  // part of it, which may go on
	alikeLast                  // its last part: the walk stops
)

// alikeTurns builds request.alike for every API: the first responses of
// the earlier prompts whose text is user's (white space aside), the turns
// that may begin as this one does (request.occurrence). prompts are the
// earlier prompts, in order, indexing items; the response to a prompt is
// read from the items after it, each passed to part, which classifies it
// and adds what it holds to ts (tool names) and text (the assistant's
// text, joined as the answer joins it). A prompt with no part of a
// response before the walk stops was not answered and is left out.
func alikeTurns[T any](items []T, prompts []prompt, user string, part func(it T, ts *turnStart, text *strings.Builder) alikePart) []turnStart {
	var out []turnStart
	for _, p := range prompts {
		if !sameText(p.text, user) {
			continue
		}
		var ts turnStart
		var text strings.Builder
		answered := false
	walk:
		for _, it := range items[p.msg+1:] {
			switch part(it, &ts, &text) {
			case alikeEnd:
				break walk
			case alikeMore:
				answered = true
			case alikeLast:
				answered = true
				break walk
			}
		}
		if answered {
			ts.assistant = clean(text.String())
			out = append(out, ts)
		}
	}
	return out
}

// messageAlike is what a message of a history of messages (Anthropic's,
// Chat Completions') is to the response to an earlier prompt, by its role:
// the first assistant message is all of the response; a user message
// comes after it; any other (a system or tool message) is skipped.
func messageAlike(role string) alikePart {
	switch role {
	case "user":
		return alikeEnd
	case "assistant":
		return alikeLast
	}
	return alikeSkip
}

// occurrence numbers, from 1, the turn this request begins among the
// turns of its history that begin as it does: the same user text (alike)
// and the same first response (the answer's text and tool names, white
// space aside), as tail.Fingerprint compares them. The history is the
// agent's own record of the session, so the count is the same for a
// retried request and after a daemon restart; a per-session counter in
// the proxy would take a retry for the next turn and restart at 1.
func (r request) occurrence(assistant string, calls []memory.ToolCall) int {
	n := 1
	for _, ts := range r.alike {
		if len(ts.tools) != len(calls) || !sameText(ts.assistant, assistant) {
			continue
		}
		same := true
		for i, c := range calls {
			if !sameText(ts.tools[i], c.Name) {
				same = false
				break
			}
		}
		if same {
			n++
		}
	}
	return n
}

// sameText reports whether two texts are the same, white space collapsed.
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// notPrompt reports whether a user text, injected blocks removed, is
// harness bookkeeping rather than something the user typed.
func notPrompt(text string) bool {
	return text == "" || harnesstext.Interrupted(text) || harnesstext.RejectedPlan(text)
}

// hashID returns a stable short session id for s: "h-" and 16 hex digits
// of its SHA-256.
func hashID(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h-" + hex.EncodeToString(sum[:8])
}

// dirLabels are the labels, lower case, of the line that states the
// working directory in Claude Code's environment block: "Working
// directory: /abs/path" in older versions (<env> blocks, the system
// prompt), " - Primary working directory: /abs/path" since 2.1.x (a
// messages[] entry with role "system").
var dirLabels = []string{"working directory:", "primary working directory:", "current working directory:"}

// dirLineLead is what may come before a working directory label:
// indentation and list markers.
const dirLineLead = " \t-*+•"

// maxDirBytes bounds a working directory taken from a prompt.
const maxDirBytes = 4096

// workingDir finds the working directory an agent states in its prompt:
// Claude Code's "Working directory: /abs/path" line of its environment
// block (the label at the start of a line, in any case, after optional
// list markers, optionally "Primary " or "Current "), or Codex's
// "<cwd>/abs/path</cwd>". It returns "" if there is none.
func workingDir(text string) string {
	if d := labelledDir(text); d != "" {
		return d
	}
	if i := strings.Index(text, "<cwd>"); i >= 0 {
		rest := text[i+len("<cwd>"):]
		if j := strings.Index(rest, "</cwd>"); j >= 0 {
			if d := strings.TrimSpace(rest[:j]); d != "" && len(d) <= maxDirBytes && !strings.ContainsAny(d, "\r\n") {
				return d
			}
		}
	}
	return ""
}

// labelledDir returns the value of the first line of text that is a
// working directory label (dirLabels) and a non-empty value.
func labelledDir(text string) string {
	if !containsFold(text, "working directory:") {
		return ""
	}
	for line := range strings.Lines(text) {
		line = strings.TrimLeft(line, dirLineLead)
		if strings.HasPrefix(line, "<") { // "<env>Working directory: ..."
			if j := strings.IndexByte(line, '>'); j > 0 {
				line = strings.TrimLeft(line[j+1:], dirLineLead)
			}
		}
		for _, l := range dirLabels {
			if len(line) < len(l) || !strings.EqualFold(line[:len(l)], l) {
				continue
			}
			if d := strings.TrimSpace(line[len(l):]); d != "" && len(d) <= maxDirBytes {
				return d
			}
		}
	}
	return ""
}

// containsFold reports whether s contains the lower-case ASCII sub,
// ignoring ASCII case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// headlessMarkers are the identity lines of Claude Code's system prompt when
// it runs without a terminal UI: print mode (claude -p) and the Agent SDK
// use the SDK variants; the interactive CLI says only "You are Claude Code,
// Anthropic's official CLI for Claude."
var headlessMarkers = []string{
	"running within the Claude Agent SDK",
	"built on Anthropic's Claude Agent SDK",
}

// isHeadless reports whether a system prompt is a non-interactive one.
func isHeadless(system string) bool {
	for _, m := range headlessMarkers {
		if strings.Contains(system, m) {
			return true
		}
	}
	return false
}

// excluded reports whether a project (name and directory) matches one of
// the exclusion entries: a name equal to the project's or to dir's own
// name, or an absolute directory equal to or containing dir.
func excluded(entries []string, project, dir string) bool {
	if project == "" && dir == "" {
		return false
	}
	cdir := ""
	if dir != "" {
		cdir = filepath.Clean(dir)
	}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if filepath.IsAbs(e) || strings.HasPrefix(e, "/") {
			if cdir == "" {
				continue
			}
			ce := filepath.Clean(e)
			if cdir == ce || strings.HasPrefix(cdir, strings.TrimRight(ce, `/\`)+string(filepath.Separator)) || strings.HasPrefix(cdir, strings.TrimRight(ce, `/\`)+"/") {
				return true
			}
			continue
		}
		if e == project || cdir != "" && e == filepath.Base(cdir) { // the directory's own name: what named projects before they were repositories
			return true
		}
	}
	return false
}

// clean makes s valid UTF-8 without NUL bytes.
func clean(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "")
	}
	return s
}

// sessionFromUserID returns the session a metadata.user_id names. Claude
// Code sends "user_<hash>_account_<uuid>_session_<uuid>" (the session uuid
// is taken) or, in newer versions, a JSON object with "session_id"; any
// other value is hashed whole.
func sessionFromUserID(uid string) string {
	if uid == "" {
		return ""
	}
	if strings.HasPrefix(uid, "{") {
		var v struct {
			SessionID string `json:"session_id"`
		}
		if json.Unmarshal([]byte(uid), &v) == nil && v.SessionID != "" {
			return clean(memory.CutRunes(v.SessionID, 128))
		}
	}
	if i := strings.LastIndex(uid, "_session_"); i >= 0 {
		if s := uid[i+len("_session_"):]; s != "" && len(s) <= 128 && !strings.ContainsAny(s, " \t\r\n") {
			return clean(s)
		}
	}
	return hashID(uid)
}

// jsonText returns the text of a JSON value that is a string, or the
// concatenated "text" of an array of content blocks (the shape both APIs
// use for message content and tool results); other values give "".
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case '[':
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &blocks) == nil {
			var b strings.Builder
			for _, bl := range blocks {
				if bl.Text == "" {
					continue
				}
				if b.Len() > 0 {
					b.WriteString("\n")
				}
				b.WriteString(bl.Text)
			}
			return b.String()
		}
	}
	return ""
}
