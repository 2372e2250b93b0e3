// Package harnesstext knows the text an agent harness (Claude Code, Codex) and
// memtray itself put into a conversation that is nobody's words: the tagged
// blocks of injected context, session setup and local commands, and the
// interruption marker. It holds the one list of those tags and the one way
// of removing them, which capture, transcript and ingest share.
//
// It imports nothing of ours.
package harnesstext

import "strings"

// Kind says what a tagged block holds. Kinds are bits: a tag may have more
// than one, and Strip takes a set of them.
type Kind uint8

// The kinds of blocks.
const (
	// Injected is context the harness or memtray adds to a message:
	// reminders, recalled memories, IDE state, background-task notices.
	// Every reader removes it from a user's prompt.
	Injected Kind = 1 << iota
	// Setup is the agent's session setup sent as a user message of its
	// own (Codex's environment and AGENTS.md instructions). Capture reads
	// it for the working directory; the write pipeline drops it.
	Setup
	// Command is a slash command, a local command or a bash-mode line and
	// its output: what the user ran, not what they said.
	Command

	// All is every kind.
	All = Injected | Setup | Command
)

// ContextTag names the block memtray wraps recalled memories in when it
// injects them into an agent's context (hooks, proxy). Readers strip it,
// so memtray never remembers its own recall.
const ContextTag = "memtray-context"

// Tag is one element name and the kinds of block it opens.
type Tag struct {
	Name string
	Kind Kind
}

// Tags is the one list of the tagged blocks harnesses and memtray add to
// messages.
var Tags = []Tag{
	{"system-reminder", Injected},
	{ContextTag, Injected},
	{"task-notification", Injected},
	{"user-prompt-submit-hook", Injected},
	{"ide_opened_file", Injected},
	{"ide_selection", Injected},
	{"ide_diagnostics", Injected},
	// Claude Code's note before the lines of a local command: injected,
	// and a command line's company.
	{"local-command-caveat", Injected | Command},
	{"command-name", Command},
	{"command-message", Command},
	{"command-args", Command},
	{"local-command-stdout", Command},
	{"local-command-stderr", Command},
	{"bash-input", Command},
	{"bash-stdout", Command},
	{"bash-stderr", Command},
	{"environment_context", Setup},
	{"user_instructions", Setup},
}

// interruptMarker starts the line Claude Code writes where the user
// interrupted a response ("[Request interrupted by user]", "... for tool
// use]").
const interruptMarker = "[Request interrupted"

// Interrupted reports whether text is Claude Code's interruption marker.
func Interrupted(text string) bool {
	return strings.HasPrefix(text, interruptMarker+" by user")
}

// rejectedPlanLead opens the message Claude Code writes in the user's
// place when the user sends a plan of ExitPlanMode back and stays in plan
// mode: "The agent proposed a plan that was rejected by the user. The user
// chose to stay in plan mode rather than proceed with implementation.",
// then "\n\nRejected plan:\n" and the plan. The plan is the agent's; the
// user's feedback, if any, is in the tool result (a refusal's words).
const rejectedPlanLead = "The agent proposed a plan that was rejected by the user."

// RejectedPlan reports whether text is Claude Code's message about a plan
// the user rejected: nobody's words, and the agent's plan.
func RejectedPlan(text string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), rejectedPlanLead)
}

// Strip returns text without the blocks of the given kinds it holds,
// trimmed. A block runs from its opening tag ("<name>", or "<name" and
// attributes) to the first closing tag of the same name; an opening tag
// without one is kept, as text that merely mentions the tag.
func Strip(text string, kinds Kind) string {
	if !strings.Contains(text, "<") {
		return strings.TrimSpace(text)
	}
	var b strings.Builder
	rest := text
	for {
		i := strings.IndexByte(rest, '<')
		if i < 0 {
			break
		}
		name, n := opening(rest[i:], kinds)
		if n > 0 {
			close := "</" + name + ">"
			if j := strings.Index(rest[i+n:], close); j >= 0 {
				b.WriteString(rest[:i])
				rest = rest[i+n+j+len(close):]
				continue
			}
		}
		b.WriteString(rest[:i+1])
		rest = rest[i+1:]
	}
	if b.Len() == 0 {
		return strings.TrimSpace(rest)
	}
	b.WriteString(rest)
	return strings.TrimSpace(b.String())
}

// StripAll returns what the user or the model said in text: every tagged
// block of Tags and every interruption marker removed, trimmed; nothing of
// Claude Code's message about a rejected plan (RejectedPlan), which is
// nobody's words whole.
func StripAll(text string) string {
	text = Strip(text, All)
	if RejectedPlan(text) {
		return ""
	}
	if !strings.Contains(text, interruptMarker) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, interruptMarker)
		if i < 0 {
			break
		}
		j := strings.IndexByte(text[i:], ']')
		if j < 0 {
			break
		}
		b.WriteString(text[:i])
		text = text[i+j+1:]
	}
	b.WriteString(text)
	return strings.TrimSpace(b.String())
}

// Opens returns the name of the tag of the given kinds text starts with,
// and whether there is one.
func Opens(text string, kinds Kind) (string, bool) {
	name, n := opening(text, kinds)
	return name, n > 0
}

// opening returns the name of the tag of the given kinds whose opening
// tag starts s, and that opening tag's length; 0 if s starts with none.
func opening(s string, kinds Kind) (string, int) {
	if len(s) < 3 || s[0] != '<' {
		return "", 0
	}
	for _, t := range Tags {
		if t.Kind&kinds == 0 || !strings.HasPrefix(s[1:], t.Name) {
			continue
		}
		after := s[1+len(t.Name):]
		switch {
		case after == "":
			return "", 0
		case after[0] == '>':
			return t.Name, len(t.Name) + 2
		case after[0] == ' ' || after[0] == '\t' || after[0] == '\n' || after[0] == '\r':
			if k := strings.IndexByte(after, '>'); k >= 0 {
				return t.Name, len(t.Name) + 2 + k
			}
			return "", 0
		}
	}
	return "", 0
}
