package transcript

import (
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// builder assembles the Exchanges of one session for the parsers of Codex,
// Aider and SpecStory, which all see a session as a sequence of events:
// user prompts, the parts of model responses (text, tool calls) and tool
// results.
//
// Prompts and tool results wait for the next response, which takes them
// (User, UserTurns, ToolResults); a response without prompts is a tool-loop
// iteration. Tool results no later response received (the turn ended, or
// was interrupted, after the tools ran) go to the Exchange of the response
// that called the tools, so they stay in the turn. A compaction summary
// goes with the next response as its Summary.
type builder struct {
	stats *Stats
	out   []memory.Exchange

	cur       *memory.Exchange // the response being read
	texts     []string         // its text parts
	prompts   []string         // prompts since the previous response
	summaries []string         // compaction summaries since the previous response
	results   []memory.ToolResult
	requestAt time.Time // when the last prompt or result was sent
	userTurns int
	model     string
}

func newBuilder(st *Stats) *builder { return &builder{stats: st} }

// prompt records a real user prompt.
func (b *builder) prompt(text string, at time.Time) {
	text = strings.TrimSpace(clean(text))
	if text == "" {
		return
	}
	b.close()
	b.flushResults()
	b.prompts = append(b.prompts, text)
	b.userTurns++
	b.stats.UserPrompts++
	b.sent(at)
}

// summary records a compaction summary the harness put in the session: it
// rides on the next response as its Summary (once: the same text again is
// a duplicate).
func (b *builder) summary(text string) bool {
	text = strings.TrimSpace(clean(text))
	if text == "" {
		return false
	}
	for _, s := range b.summaries {
		if s == text {
			return false
		}
	}
	b.close()
	b.summaries = append(b.summaries, text)
	b.stats.Summaries++
	return true
}

// result records a tool result sent back to the model.
func (b *builder) result(r memory.ToolResult, at time.Time) {
	b.close()
	r.ToolUseID, r.Name, r.Content = clean(r.ToolUseID), clean(r.Name), clean(r.Content)
	b.results = append(b.results, r)
	b.sent(at)
}

func (b *builder) sent(at time.Time) {
	if !at.IsZero() {
		b.requestAt = at
	}
}

// open starts a response (closing the current one) at time at.
func (b *builder) open(at time.Time) {
	b.close()
	ex := &memory.Exchange{Source: Source, Model: b.model}
	if len(b.prompts) > 0 {
		ex.User = strings.Join(b.prompts, "\n\n")
	} else {
		ex.ToolLoop = true
	}
	ex.UserTurns = b.userTurns
	ex.ToolResults = b.results
	ex.Summary = strings.Join(b.summaries, "\n\n")
	b.summaries = nil
	ex.StartedAt = b.requestAt
	if ex.StartedAt.IsZero() {
		ex.StartedAt = at
	}
	b.prompts, b.results, b.requestAt = nil, nil, time.Time{}
	b.cur = ex
	b.touch(at)
}

// touch extends the current response to time at.
func (b *builder) touch(at time.Time) {
	if b.cur == nil || at.IsZero() {
		return
	}
	if at.After(b.cur.EndedAt) {
		b.cur.EndedAt = at
	}
	if b.cur.StartedAt.IsZero() || at.Before(b.cur.StartedAt) {
		b.cur.StartedAt = at
	}
}

// reading reports whether a response is being read.
func (b *builder) reading() bool { return b.cur != nil }

// text adds a text part to the current response, opening one if needed.
func (b *builder) text(s string, at time.Time) {
	s = strings.TrimSpace(clean(s))
	if s == "" {
		return
	}
	if b.cur == nil {
		b.open(at)
	}
	b.texts = append(b.texts, s)
	b.touch(at)
}

// call adds a tool call to the current response, opening one if needed.
func (b *builder) call(c memory.ToolCall, at time.Time) {
	if b.cur == nil {
		b.open(at)
	}
	c.ID, c.Name, c.Input = clean(c.ID), clean(c.Name), clean(c.Input)
	b.cur.ToolCalls = append(b.cur.ToolCalls, c)
	b.touch(at)
}

// close finishes the current response, if any.
func (b *builder) close() {
	ex := b.cur
	if ex == nil {
		return
	}
	b.cur = nil
	ex.Assistant = strings.Join(b.texts, "\n\n")
	b.texts = nil
	b.out = append(b.out, *ex)
}

// flushResults gives results no response took to the last Exchange.
func (b *builder) flushResults() {
	if len(b.results) == 0 || len(b.out) == 0 {
		return
	}
	last := &b.out[len(b.out)-1]
	last.ToolResults = append(last.ToolResults, b.results...)
	b.results = nil
}

// finish closes the session and returns its Exchanges labelled with its
// fields, counting them in the Stats.
func (b *builder) finish(sessionID, project string, headless bool) []memory.Exchange {
	b.close()
	b.flushResults()
	out := b.out
	b.out = nil
	for i := range out {
		ex := &out[i]
		ex.SessionID, ex.Project, ex.Headless = sessionID, project, headless
		ex.Turn = i + 1
		if memory.BoundExchange(ex) {
			b.stats.Cut++
		}
		if ex.ToolLoop {
			b.stats.ToolLoops++
		}
		if ex.Error {
			b.stats.APIErrors++
		}
		b.stats.ToolCalls += len(ex.ToolCalls)
		b.stats.ToolResults += len(ex.ToolResults)
	}
	b.stats.Exchanges += len(out)
	return out
}
