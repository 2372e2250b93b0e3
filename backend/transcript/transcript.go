// Package transcript reads the session records coding agents keep into the
// Exchanges of the write pipeline, the way the capture proxy would have seen
// the session: one Exchange per model response, in file order.
//
// Four formats (Format) are read, each by its own parser:
//
//   - FormatClaudeCode: Claude Code's JSONL sessions (Parse, claude.go).
//   - FormatCodex: Codex CLI's rollouts (ParseCodex, codex.go).
//   - FormatAider: Aider's .aider.chat.history.md (ParseAider, aider.go).
//   - FormatSpecStory: SpecStory's markdown exports of Cursor (and other
//     agents') chats, .specstory/history/*.md (ParseSpecStory, specstory.go).
//
// ParseFile and ParseAs pick the parser; Detect tells the format from the
// content (detect.go). Whatever the format, an Exchange holds one model
// response: every assistant text of it (also the text between tool calls,
// where agents state what they found), its tool calls (name and input as
// JSON), the tool results sent with the request (content, is_error), and
// User: the user's prompt(s) on the first response after them, which counts
// them in UserTurns; every other response is a tool-loop iteration (User ""
// and ToolLoop true). Text the harness injects (environment and
// instruction blocks, compaction summaries, notifications) is never a user
// prompt. Every Exchange has Source "transcript", the session's SessionID and
// Project, and Turn counting the session's Exchanges from 1.
//
// Validation: a line longer than Options.MaxLineBytes is an error naming
// the line (ErrLineTooLong); invalid UTF-8 is replaced by U+FFFD and NUL
// bytes are removed from every text; what is over the write pipeline's
// bounds (each tool result over memory.MaxToolResultBytes, a text over 1
// MiB, tool calls over 4 MiB) is cut, with a marker saying so
// (memory.BoundExchange, counted in Stats.Cut). Stats says what was read and skipped,
// and Stats.Empty why a file gave no Exchange.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/project"
)

// Source is the Source of every Exchange the parsers return.
const Source = memory.SourceTranscript

// DefaultMaxLineBytes bounds the length of one line.
const DefaultMaxLineBytes = 16 << 20

// Errors of the parsers; all satisfy errors.Is(err, memory.ErrInvalid).
var (
	// ErrLineTooLong: a line is longer than Options.MaxLineBytes.
	ErrLineTooLong = fmt.Errorf("transcript line too long: %w", memory.ErrInvalid)
	// ErrNotTranscript: the input has lines but none is a JSON object
	// (Claude Code, Codex).
	ErrNotTranscript = fmt.Errorf("not a JSONL session transcript (no line is a JSON object): %w", memory.ErrInvalid)
	// ErrUnknownFormat: Detect recognised none of the formats.
	ErrUnknownFormat = fmt.Errorf("not a recognised agent session (Claude Code, Codex, Aider or SpecStory): %w", memory.ErrInvalid)
)

// Format names an agent's session format.
type Format string

// The formats ParseAs reads.
const (
	FormatClaudeCode Format = "claude-code" // ~/.claude/projects/<dir>/<session>.jsonl
	FormatCodex      Format = "codex"       // ~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl
	FormatAider      Format = "aider"       // .aider.chat.history.md
	FormatSpecStory  Format = "specstory"   // .specstory/history/*.md (Cursor...)
)

// Formats lists every Format, in the order Detect tries them.
var Formats = []Format{FormatClaudeCode, FormatCodex, FormatAider, FormatSpecStory}

// ParseFormat returns the Format a name means: a Format's own name or an
// alias ("claude", "cursor").
func ParseFormat(name string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "claude-code", "claude", "claude_code", "claudecode":
		return FormatClaudeCode, nil
	case "codex", "codex-cli":
		return FormatCodex, nil
	case "aider":
		return FormatAider, nil
	case "specstory", "cursor":
		return FormatSpecStory, nil
	}
	return "", fmt.Errorf("unknown session format %q (want claude-code, codex, aider or specstory): %w", name, memory.ErrInvalid)
}

// Options tune the parsers. The zero value reads the main conversation of
// an interactive session.
type Options struct {
	// SessionID names the session when the file does not (for example the
	// file name without its extension; see SessionIDFromPath).
	SessionID string
	// Project overrides the project name taken from the working directory
	// (or, for Aider and SpecStory, from the file's location: ParseFile).
	Project string
	// Headless marks the session as non-interactive (claude -p, codex exec,
	// the Agent SDK) when the caller knows it; Claude Code and Codex
	// sessions also say so themselves.
	Headless bool
	// Sidechains includes Claude Code subagent conversations (isSidechain
	// lines, agent_progress entries, and with ParseFile the subagent files
	// of the session). A file that holds nothing but one subagent's
	// conversation is read without it.
	Sidechains bool
	// MaxLineBytes bounds one line; 0 or less means DefaultMaxLineBytes.
	MaxLineBytes int
	// Location is the time zone of Aider's and SpecStory's zone-less times
	// (written in the local time of the machine that ran the agent); nil
	// means time.Local.
	Location *time.Location
}

func (o Options) maxLine() int {
	if o.MaxLineBytes <= 0 {
		return DefaultMaxLineBytes
	}
	return o.MaxLineBytes
}

func (o Options) location() *time.Location {
	if o.Location == nil {
		return time.Local
	}
	return o.Location
}

// Reasons a line is skipped, the keys of Stats.Skipped.
const (
	SkipMalformed   = "malformed-json"  // not a JSON object (or a field of the wrong type)
	SkipUnknownType = "unknown-type"    // an entry type the parser does not know
	SkipBookkeeping = "bookkeeping"     // progress, system, token counts, turn context...
	SkipNoMessage   = "no-message"      // a user or assistant entry without a message
	SkipSidechain   = "sidechain"       // a subagent's line, Options.Sidechains unset
	SkipSynthetic   = "synthetic"       // a "<synthetic>" assistant entry that is not an API error
	SkipMeta        = "meta"            // an isMeta user line: skill or command expansion, caveat
	SkipCommand     = "command"         // a local command, its output, bash-mode input/output
	SkipInjected    = "injected"        // environment/instructions, a notification, a compaction summary
	SkipInterrupted = "interrupted"     // "[Request interrupted by user...]"
	SkipDuplicate   = "duplicate"       // a uuid already read, a queued prompt delivered again
	SkipEmpty       = "empty-user-line" // a user line with no text and no tool result
)

// Stats describes what a parser read.
type Stats struct {
	// Format is the format the input was read as.
	Format Format `json:"format,omitempty"`
	// Lines counts the non-blank lines read.
	Lines int `json:"lines"`
	// Sessions counts the sessions read (an Aider history holds several).
	Sessions int `json:"sessions,omitempty"`
	// Exchanges counts the Exchanges returned.
	Exchanges int `json:"exchanges"`
	// Summaries counts compaction summaries read (Claude Code, Codex):
	// passed on as the Summary of the response after them, for the
	// pipeline to read as the model's findings.
	Summaries int `json:"summaries,omitempty"`
	// Answers counts the user's answers to questions the model asked in
	// the middle of a turn (Claude Code's AskUserQuestion), passed on as
	// the Answers of the response after them.
	Answers int `json:"answers,omitempty"`
	// Refusals counts the words the user typed when refusing a tool call
	// (Claude Code), passed on as Answers with Refused set.
	Refusals int `json:"refusals,omitempty"`
	// UserPrompts counts the real user prompts of the main conversation
	// (prompts no response followed included).
	UserPrompts int `json:"user_prompts"`
	// ToolLoops counts the main conversation's tool-loop Exchanges.
	ToolLoops int `json:"tool_loops"`
	// Sidechain counts the Exchanges of subagents (Options.Sidechains), and
	// Agents lists the Claude Code subagents (agentId) read.
	Sidechain int      `json:"sidechain,omitempty"`
	Agents    []string `json:"agents,omitempty"`
	// APIErrors counts the Exchanges that are API errors.
	APIErrors int `json:"api_errors,omitempty"`
	// ToolCalls and ToolResults count the tool calls and results of the
	// Exchanges.
	ToolCalls   int `json:"tool_calls"`
	ToolResults int `json:"tool_results"`
	// Cut counts the Exchanges whose oversize content (a tool result over
	// memory.MaxToolResultBytes, a text or tool calls over the write
	// pipeline's bounds) was cut, with a marker, by memory.BoundExchange.
	Cut int `json:"cut,omitempty"`
	// InvalidUTF8 counts the lines that held invalid UTF-8 or an escaped
	// NUL (replaced by U+FFFD, removed, in the text kept).
	InvalidUTF8 int `json:"invalid_utf8,omitempty"`
	// Types counts the lines by entry type ("" for a JSON object without
	// one; after 64 distinct types, further ones count as "(other)").
	Types map[string]int `json:"types"`
	// Skipped counts the lines that added nothing to any Exchange, by
	// reason (the Skip constants).
	Skipped map[string]int `json:"skipped"`
	// SessionID, CWD and Project are the session's, as put on the Exchanges
	// (the first session's, when a file holds several).
	SessionID string `json:"session_id,omitempty"`
	CWD       string `json:"cwd,omitempty"`
	Project   string `json:"project,omitempty"`
	// ProjectNote says where Project came from when no record named it
	// (a Claude Code session's folder, a Codex rollout's repository), or
	// why there is none.
	ProjectNote string `json:"project_note,omitempty"`
	// Entrypoint is how the agent was started, as the file records it
	// (Claude Code's "cli", "sdk-cli"...; Codex's originator), and
	// Headless whether the Exchanges were marked headless.
	Entrypoint string `json:"entrypoint,omitempty"`
	Headless   bool   `json:"headless,omitempty"`
}

func newStats(f Format) Stats {
	return Stats{Format: f, Types: map[string]int{}, Skipped: map[string]int{}}
}

// Stats.Types counts at most maxTypes entry types; the lines of any further
// type count under otherType.
const (
	maxTypes  = 64
	otherType = "(other)"
)

func (s *Stats) countType(t string) {
	if _, ok := s.Types[t]; ok || len(s.Types) < maxTypes {
		s.Types[t]++
	} else {
		s.Types[otherType]++
	}
}

// label fills in what every reader says of the session it read: its id
// (the file's, else Options.SessionID), its working directory, its
// project (Options.Project, else the working directory's) and, once a line
// was read, one session.
func (s *Stats) label(sessID, cwd string, opts Options) {
	s.SessionID = clean(sessID)
	if s.SessionID == "" {
		s.SessionID = clean(opts.SessionID)
	}
	s.CWD = clean(cwd)
	s.Project = clean(opts.Project)
	if s.Project == "" && s.CWD != "" {
		s.Project = ProjectName(s.CWD)
	}
	if s.Lines > 0 {
		s.Sessions = 1
	}
}

func (s *Stats) tidy() {
	for k, v := range s.Skipped {
		if v == 0 {
			delete(s.Skipped, k)
		}
	}
}

// Empty says why an input gave no Exchange ("" when it gave some): empty,
// only injected context, only subagent lines, no user turn, or prompts no
// model response followed.
func (s Stats) Empty() string {
	if s.Exchanges > 0 {
		return ""
	}
	if s.Lines == 0 {
		return "the file is empty"
	}
	if s.Skipped[SkipSidechain] > 0 && s.UserPrompts == 0 {
		return "it holds only subagent (sidechain) lines: read it with sidechains on"
	}
	if s.UserPrompts > 0 {
		return fmt.Sprintf("%d user prompt(s) but no model response", s.UserPrompts)
	}
	if n := s.Skipped[SkipInjected] + s.Skipped[SkipMeta]; n > 0 {
		return fmt.Sprintf("no user turn and no model response: only injected context (%d line(s): environment, instructions, summaries)", n)
	}
	return "no user turn and no model response"
}

// ProjectName returns the project name the parsers derive from a working
// directory: its git repository, else its name (project.Name).
func ProjectName(cwd string) string { return project.Name(cwd) }

// ClaudeProjectDir returns the name Claude Code gives the directory of a
// working directory's transcripts under ~/.claude/projects: the path with
// every character other than an ASCII letter, digit or "-" replaced by "-"
// ("/home/me/src/memtray" -> "-home-me-src-memtray"), one "-" per UTF-16
// code unit (a character beyond the Basic Multilingual Plane, an emoji,
// is two). Claude Code cuts a name longer than 200 characters and appends
// a hash of the path, which this does not (ResolveClaudeProjectDir reads
// such names by their start).
func ClaudeProjectDir(cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-'):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("--") // a surrogate pair
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// SessionIDFromPath returns the session id a file name encodes: the base
// name without ".jsonl" or ".md" (Claude Code names a transcript after its
// session); for a Codex rollout, "rollout-<time>-<id>.jsonl", the id.
func SessionIDFromPath(path string) string {
	name := project.DirName(path)
	for _, ext := range []string{".jsonl", ".md"} {
		name = strings.TrimSuffix(name, ext)
	}
	if rest, ok := strings.CutPrefix(name, "rollout-"); ok && len(rest) > len("2006-01-02T15-04-05-") {
		return rest[len("2006-01-02T15-04-05-"):]
	}
	return name
}

// ParseAs reads r as the given format.
func ParseAs(r io.Reader, format Format, opts Options) ([]memory.Exchange, Stats, error) {
	switch format {
	case FormatClaudeCode:
		return Parse(r, opts)
	case FormatCodex:
		return ParseCodex(r, opts)
	case FormatAider:
		return ParseAider(r, opts)
	case FormatSpecStory:
		return ParseSpecStory(r, opts)
	}
	return nil, newStats(format), fmt.Errorf("unknown session format %q: %w", format, memory.ErrInvalid)
}

// ParseFile reads one session file, detecting its format from its content
// (Detect). Options.SessionID defaults to SessionIDFromPath(path); for Aider
// and SpecStory, which record no working directory, Options.Project
// defaults to the directory the history belongs to (the one holding
// .specstory, else the one holding the file: projectOfHistory); a Claude
// Code session whose records name no working directory takes the project
// of the directory its folder name encodes, checked against this machine
// (projectOfClaudeFolder, Stats.ProjectNote). With
// Options.Sidechains, a Claude Code session's subagent files
// (<session>/subagents/agent-*.jsonl beside it) are read too.
func ParseFile(path string, opts Options) ([]memory.Exchange, Stats, error) {
	data, err := readFile(path, opts)
	if err != nil {
		return nil, Stats{}, err
	}
	format, err := Detect(data)
	if err != nil {
		return nil, Stats{}, fmt.Errorf("%s: %w", path, err)
	}
	return ParseBytes(path, data, format, opts)
}

// ParseFileAs reads one session file as the given format (see ParseFile).
func ParseFileAs(path string, format Format, opts Options) ([]memory.Exchange, Stats, error) {
	data, err := readFile(path, opts)
	if err != nil {
		return nil, Stats{}, err
	}
	return ParseBytes(path, data, format, opts)
}

// MaxFileBytes bounds the file ParseFile reads.
const MaxFileBytes = 256 << 20

func readFile(path string, opts Options) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s: larger than %d MiB: %w", path, MaxFileBytes>>20, memory.ErrInvalid)
	}
	return data, nil
}

// ParseBytes reads the content of a session file named name (a path, used
// as ParseFile does for the defaults, and in errors) as the given format.
func ParseBytes(name string, data []byte, format Format, opts Options) ([]memory.Exchange, Stats, error) {
	path := name
	if opts.SessionID == "" {
		opts.SessionID = SessionIDFromPath(path)
	}
	placed := ""
	if opts.Project == "" {
		placed = projectOfHistory(path, format)
		opts.Project = placed
	}
	exs, st, err := ParseAs(bytes.NewReader(data), format, opts)
	if err != nil {
		return exs, st, fmt.Errorf("%s: %w", path, err)
	}
	if placed != "" && !historyInPlace(path, format) {
		st.ProjectNote = fmt.Sprintf("the %s history names no working directory; project %q from the folder it sits in", format, placed)
	}
	if format == FormatClaudeCode && !opts.Sidechains && st.Exchanges == 0 && st.UserPrompts == 0 && st.Skipped[SkipSidechain] > 0 {
		// Nothing but a subagent's conversation: a subagent file, named
		// on purpose.
		opts.Sidechains = true
		return ParseBytes(name, data, format, opts)
	}
	if format == FormatClaudeCode && opts.Sidechains {
		if exs, st, err = withSubagentFiles(path, exs, st, opts); err != nil {
			return exs, st, err
		}
	}
	if format == FormatClaudeCode {
		exs, st = labelFromClaudeFolder(path, exs, st, opts)
	}
	return exs, st, nil
}

// projectOfHistory names the project of an Aider or SpecStory history, which
// records no working directory, from where the file lives: a SpecStory
// export under <dir>/.specstory/history/ belongs to <dir>, any other
// history (Aider's .aider.chat.history.md at a repository's root, or a
// history copied or renamed elsewhere) to the directory holding it; either
// directory is named by ProjectName (its repository when it is in one on
// this machine, else its own name). A file that has a place is never of
// no project: its memories would be in reach of every prompt in every
// project. "" for stdin ("-") and for the other formats (a Claude Code or
// Codex session names its working directory itself).
func projectOfHistory(path string, format Format) string {
	if path == "" || path == "-" || (format != FormatAider && format != FormatSpecStory) {
		return ""
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(abs)
	if format == FormatSpecStory && filepath.Base(dir) == "history" && filepath.Base(filepath.Dir(dir)) == ".specstory" {
		dir = filepath.Dir(filepath.Dir(dir))
	}
	return ProjectName(dir)
}

// historyInPlace reports whether an Aider or SpecStory history is where
// its agent writes it (.aider.chat.history.md, which Aider keeps at the
// repository's root; .specstory/history/*.md), so the folder is the
// project's as surely as a file can tell; a history renamed or copied
// elsewhere is not (histories collected in one folder).
func historyInPlace(path string, format Format) bool {
	dir := filepath.Dir(path)
	switch format {
	case FormatAider:
		return filepath.Base(path) == ".aider.chat.history.md"
	case FormatSpecStory:
		return filepath.Base(dir) == "history" && filepath.Base(filepath.Dir(dir)) == ".specstory"
	}
	return false
}

// lines calls fn for each line of r with its number from 1, bounding each
// to max bytes: a longer line is an error naming it (ErrLineTooLong).
func lines(r io.Reader, max int, fn func(n int, line []byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), max+1) // +1: room for the newline
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) > max {
			return fmt.Errorf("line %d is longer than %d bytes: %w", n, max, ErrLineTooLong)
		}
		fn(n, line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d is longer than %d bytes: %w", n+1, max, ErrLineTooLong)
		}
		return fmt.Errorf("reading line %d: %w", n+1, err)
	}
	return nil
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// clean makes s valid UTF-8 without NUL bytes.
func clean(s string) string {
	if memory.ValidUTF8(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

func compactJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return clean(string(raw))
	}
	return clean(b.String())
}

// jsonObject returns fields as a compact JSON object (for tool inputs that
// are not JSON themselves).
func jsonObject(fields map[string]string) string {
	b, err := json.Marshal(fields)
	if err != nil {
		return ""
	}
	return string(b)
}
