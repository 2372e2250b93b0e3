package transcript

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// ParseAider reads Aider's chat history (FormatAider),
// .aider.chat.history.md at the root of the repository Aider ran in, and
// returns its Exchanges. On an error it returns the Exchanges and Stats of
// the lines before the failing one.
//
// Aider appends every chat to the one file, as markdown:
//
//   - "# aider chat started at 2025-07-15 11:38:37" starts a chat (a
//     session); the time is local and has no zone (Options.Location).
//   - "#### text" lines are what the user typed (consecutive ones are one
//     multi-line prompt); Aider ends them, like its own output, with two
//     spaces (a markdown line break).
//   - "> text" lines ending in two spaces are Aider's own output: the
//     start-up banner, token and cost reports, questions it asked ("Add
//     file to the chat?") and their answers, edits applied, commits, the
//     output of commands.
//   - Everything else is the model's answer, as written (markdown, code,
//     SEARCH/REPLACE blocks).
//
// A multi-line message of Aider's has "> " on its first line only and the
// two spaces on its last (an edit that failed to apply, sent back to the
// model); a "> " line without them right after Aider's output starts one.
// The shell commands Aider offers to run are such a message whose first
// line it pads with spaces: a line ending in two spaces right after its
// output (no blank line between) is its output too. The user's answer to
// one of its questions, when typed rather than chosen, is written as
// "#### Add file to the chat? (Y)es/(N)o... [Yes]: skip": Aider's output,
// not a prompt. A model's reasoning is in the answer between
// "<thinking-content-...>" tags.
//
// How ParseAider reads it: each run of answer lines is one model response,
// one Exchange (Aider writes an answer once it is complete). The prompt
// before it is User; an answer that follows Aider's own output without a new
// prompt (Aider sent the model the files it added, or a lint or test error
// to fix) is a tool-loop iteration. Aider's output after an answer becomes
// one ToolResult (Name "aider", without the token and cost lines) of the
// next response, or of the answer itself when the turn ends there;
// reasoning is left out of the answer; output
// before a chat's first answer (the banner) is bookkeeping. In-chat
// commands ("/add", "/run", "/undo"...) are not prompts, except those that
// ask the model ("/ask", "/code", "/architect", "/context" with text).
//
// Each chat is a session: SessionID is Options.SessionID (else
// "aider:<project>") with "@" and the chat's start time (and "#n", the
// chat's number in the file, when that is not unique; Stats.SessionID
// names the first chat with Exchanges); every Exchange of a
// chat has that time as StartedAt and EndedAt (Aider records no other).
// Project is Options.Project (ParseFile takes it from where the history
// lives). Turn and UserTurns count within each chat.
func ParseAider(r io.Reader, opts Options) ([]memory.Exchange, Stats, error) {
	p := &aiderParser{opts: opts, stats: newStats(FormatAider)}
	p.begin(time.Time{}, false)
	err := lines(r, opts.maxLine(), p.line)
	p.end()
	st := p.stats
	st.Project = clean(opts.Project)
	st.tidy()
	return p.out, st, err
}

type aiderParser struct {
	opts  Options
	stats Stats
	out   []memory.Exchange

	b        *builder
	start    time.Time
	header   bool // the current chat has a header line
	read     bool // the current chat has lines
	prompt   []string
	answer   []string
	output   []string
	answered bool            // the chat has had an answer
	ids      map[string]bool // the session ids given
	// idHasExchanges: the session Stats.SessionID names has Exchanges.
	idHasExchanges bool
	inOutput       bool // the last non-blank line was Aider's output
	multi          bool // inside a multi-line output message
	blank          bool // the last line was blank
}

// aiderPromptCommands are the in-chat commands that send the model a prompt.
var aiderPromptCommands = map[string]bool{"/ask": true, "/code": true, "/architect": true, "/context": true}

var aiderCommand = regexp.MustCompile(`^/[a-z][a-z-]*(\s|$)`)

// aiderConfirm is a "####" line that is the user's answer to a question of
// Aider's ("Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask
// again [Yes]: skip"), which Aider writes like a prompt.
var aiderConfirm = regexp.MustCompile(`^####\s*\S.*\? \(Y\)es/\(N\)o.*\[(?:Yes|No)\]: `)

// aiderThinking is the model's reasoning as Aider writes it in an answer.
var aiderThinking = regexp.MustCompile(`(?s)<thinking-content-[0-9a-f]+>.*?</thinking-content-[0-9a-f]+>`)

const aiderHeader = "# aider chat started at "

func (p *aiderParser) begin(start time.Time, header bool) {
	p.b = newBuilder(&p.stats)
	p.start, p.header, p.read, p.answered = start, header, false, false
}

// end finishes the current chat.
func (p *aiderParser) end() {
	p.flush()
	if !p.read && !p.header {
		return
	}
	p.stats.Sessions++
	base := clean(p.opts.SessionID)
	if base == "" || base == ".aider.chat.history" {
		base = "aider:" + clean(p.opts.Project)
	}
	id := base
	if !p.start.IsZero() {
		id += "@" + p.start.Format("2006-01-02T15:04:05")
	}
	if p.ids[id] {
		// No time, or two chats started in the same second.
		id += "#" + strconv.Itoa(p.stats.Sessions)
	}
	if p.ids == nil {
		p.ids = map[string]bool{}
	}
	p.ids[id] = true
	exs := p.b.finish(id, clean(p.opts.Project), p.opts.Headless)
	if p.stats.SessionID == "" || (len(exs) > 0 && !p.idHasExchanges) {
		// The first session with Exchanges names the file's.
		p.stats.SessionID = id
		p.idHasExchanges = len(exs) > 0
	}
	p.out = append(p.out, exs...)
}

// flush hands the pending prompt, answer or output to the builder.
func (p *aiderParser) flush() {
	at := p.start
	if len(p.prompt) > 0 {
		text := strings.TrimSpace(strings.Join(p.prompt, "\n"))
		p.prompt = nil
		first, _, _ := strings.Cut(text, "\n")
		if m := aiderCommand.FindString(first); m != "" {
			cmd := strings.TrimSpace(m)
			if !aiderPromptCommands[cmd] || strings.TrimSpace(strings.TrimPrefix(text, cmd)) == "" {
				p.stats.Skipped[SkipCommand]++
				return
			}
		}
		text = aiderWatchPrompt(text)
		if text == "" {
			p.stats.Skipped[SkipEmpty]++
			return
		}
		p.b.prompt(text, at)
	}
	if len(p.answer) > 0 {
		text := strings.TrimSpace(aiderThinking.ReplaceAllString(strings.Join(p.answer, "\n"), ""))
		p.answer = nil
		if text != "" {
			p.b.open(at)
			p.b.text(text, at)
			p.answered = true
		}
	}
	if len(p.output) > 0 {
		var kept []string
		for _, l := range p.output {
			if !strings.HasPrefix(l, "Tokens: ") {
				kept = append(kept, l)
			}
		}
		p.output = nil
		text := strings.TrimSpace(strings.Join(kept, "\n"))
		if text != "" {
			p.b.result(memory.ToolResult{Name: "aider", Content: text}, at)
		}
	}
}

// aiderWatchMark is how Aider's watch mode shows the comments the user
// wrote for the model in the code ("AI!", "AI?" comments): each line of
// the file excerpt it sends is marked with it.
const aiderWatchMark = "(marked with █)"

// aiderWatchPrompt returns a prompt Aider's watch mode wrote (one that
// names aiderWatchMark) without Aider's own instructions around the
// excerpts: its opening paragraph, up to the first blank line, and any
// other line that speaks of the "AI" comments. What is left is the file
// excerpts with the user's comments in them. The instructions are
// Aider's words, the same in every such prompt, not the user's
// ("They contain my questions that I need you to answer ..."). Any other
// prompt is returned as it is.
func aiderWatchPrompt(text string) string {
	if !strings.Contains(text, aiderWatchMark) {
		return text
	}
	lines := strings.Split(text, "\n")
	i := 0
	for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
		i++
	}
	var kept []string
	for _, l := range lines[i:] {
		if !strings.Contains(l, `"AI" comment`) {
			kept = append(kept, l)
		}
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

func (p *aiderParser) line(n int, raw []byte) {
	s := strings.TrimRight(clean(string(raw)), "\r")
	afterBlank := p.blank
	p.blank = strings.TrimSpace(s) == ""
	if p.blank {
		switch {
		case p.multi:
			p.output = append(p.output, "")
		case len(p.answer) > 0:
			p.answer = append(p.answer, "")
		}
		return
	}
	p.stats.Lines++
	if !strings.HasPrefix(s, aiderHeader) {
		p.read = true
	}
	if p.multi && !strings.HasPrefix(s, aiderHeader) && !aiderPromptLine(s) {
		// Aider prefixes only the first line of a multi-line message and
		// ends the message with two spaces.
		p.stats.countType("aider")
		p.multi = !strings.HasSuffix(s, "  ")
		if p.answered {
			p.output = append(p.output, strings.TrimRight(s, " "))
		}
		return
	}
	p.multi = false
	wasOutput := p.inOutput
	p.inOutput = false
	switch {
	case strings.HasPrefix(s, aiderHeader):
		p.stats.countType("chat-start")
		p.end()
		t, err := time.ParseInLocation("2006-01-02 15:04:05", strings.TrimSpace(strings.TrimPrefix(s, aiderHeader)), p.opts.location())
		if err != nil {
			t = time.Time{}
		}
		p.begin(t, true)
	case aiderPromptLine(s) && !aiderConfirm.MatchString(s):
		p.stats.countType("user")
		if len(p.answer) > 0 || len(p.output) > 0 {
			p.flush()
		}
		text := strings.TrimPrefix(strings.TrimRight(s, " "), "####")
		p.prompt = append(p.prompt, strings.TrimPrefix(text, " "))
	case aiderOutputLine(s) || (wasOutput && strings.HasPrefix(s, ">") && !strings.HasPrefix(s, ">>")) ||
		aiderPromptLine(s) || (wasOutput && !afterBlank && strings.HasSuffix(s, "  ")):
		// Aider's output; also the user's answer to its question, and the
		// next line of a message whose first line Aider padded with
		// spaces (the shell commands it offers to run).
		p.stats.countType("aider")
		p.inOutput = true
		p.multi = !aiderOutputLine(s) && !aiderPromptLine(s) && strings.HasPrefix(s, ">")
		if len(p.prompt) > 0 || len(p.answer) > 0 {
			p.flush()
		}
		if !p.answered {
			p.stats.Skipped[SkipBookkeeping]++
			return
		}
		p.output = append(p.output, strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(s, "####"), ">")))
	default:
		p.stats.countType("assistant")
		if len(p.prompt) > 0 || len(p.output) > 0 {
			p.flush()
		}
		p.answer = append(p.answer, s)
	}
}

// aiderPromptLine reports whether s is a line the user typed: "####",
// ending with Aider's two spaces (a model's "#### heading" has none).
func aiderPromptLine(s string) bool {
	return strings.HasPrefix(s, "####") && (strings.HasSuffix(s, "  ") || strings.TrimSpace(s) == "####")
}

// aiderOutputLine reports whether s is Aider's own output: "> text  " (a
// model's markdown quote has no trailing spaces; ">>>>>>> REPLACE" is the
// model's).
func aiderOutputLine(s string) bool {
	if !strings.HasPrefix(s, ">") || strings.HasPrefix(s, ">>") {
		return false
	}
	return strings.HasSuffix(s, "  ") || strings.TrimSpace(s) == ">"
}
