package transcript

import (
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/memory"
)

// ParseSpecStory reads one SpecStory markdown export (FormatSpecStory),
// .specstory/history/*.md: the chats of Cursor (and of Claude Code, Codex...
// when SpecStory records them), and returns its Exchanges. On an error it
// returns the Exchanges and Stats of the lines before the failing one.
//
// The file is a title ("# Title (2025-04-26 18:29:15)", older exports "##
// SpecStory" then "## Title (10/16/2024, 10:22:51 PM)"; newer ones add
// "<!-- ... Session <id> ... -->"), then sections, each started by a role
// line: "_**User**_" or "_**Assistant**_" (newer: "_**User (2026-07-13
// 13:40:49Z)**_", "_**Agent (model claude-4-sonnet, mode Agent)**_",
// "_**Agent - sidechain (...)**_"), separated by "---" lines. An assistant
// section holds text, thinking (<think>...</think>, or a <details> whose
// summary is "Thought Process") and tool uses: newer exports wrap each in
// <tool-use data-tool-type="..." data-tool-name="NAME"> around a
// <details><summary>SUMMARY</summary>BODY</details>; older ones have the
// bare <details> ("Listed directory src • **3** results", "Searched
// codebase ..."), and some none: between two "---" lines, a line "Read
// file: x", an error line ("Cancelled", "Could not find file 'x' in the
// workspace.", "Model provided invalid arguments to terminal tool."), a
// fetched rule ("### Rule: NAME" and its text), or nothing but fenced
// blocks: a terminal command ("```bash") with its output, an edit
// ("```diff").
//
// How ParseSpecStory reads it: a user section is one prompt. In an
// assistant section, text and tool uses in order form the responses: text
// after a tool use starts a new response (a tool-loop iteration), so the
// text between tool calls stays with the response it explains. A tool use
// is a ToolCall (Name: data-tool-name, or the summary's leading words;
// Input: {"summary": SUMMARY}) and a ToolResult (Content: BODY) of the next
// response (or of the same one when the section ends there); a bare one
// is too (specBareTool), its error line a ToolResult with IsError. Thinking
// is left out; other fenced code is text. Fences are followed as their
// writer meant (mdFence): fences inside a block (a rule's "```bash", a
// markdown file's blocks in a command's output) end neither it nor the
// text after it, and a "---" after a block's "```" and a blank line ends
// any block left open. Sidechain sections (a subagent's) are skipped
// unless Options.Sidechains, then they are tool-loop iterations.
//
// SessionID is the session id the file names, else Options.SessionID;
// Project is Options.Project (ParseFile takes it from where .specstory
// lives). Times come from the role lines when they carry them (UTC), else
// from the title (local time, Options.Location).
func ParseSpecStory(r io.Reader, opts Options) ([]memory.Exchange, Stats, error) {
	p := &specParser{opts: opts, stats: newStats(FormatSpecStory)}
	p.b = newBuilder(&p.stats)
	err := lines(r, opts.maxLine(), p.line)
	p.flush()
	s := &p.stats
	s.label(p.sessID, "", opts) // a SpecStory export names no working directory
	exs := p.b.finish(s.SessionID, s.Project, opts.Headless)
	s.tidy()
	return exs, *s, err
}

type specParser struct {
	opts   Options
	stats  Stats
	b      *builder
	sessID string
	start  time.Time // the title's time
	at     time.Time // the current section's time

	role    string // "", "user", "assistant", "sidechain"
	fence   mdFence
	block   []string
	inBlock string // "", "think", "tool", "details"
	text    []string
	// bareFence: the last non-blank line was a bare fence line ("```");
	// afterFence: and a blank line followed it.
	bareFence, afterFence bool
	// afterSep: the text being read began after a "---" line.
	afterSep bool
	prompt   []string
	toolRun  bool // the current response has had a tool use
	// pendingResults are the results of the tool uses read, sent with the
	// next request.
	pendingResults []memory.ToolResult
}

var (
	specRole      = regexp.MustCompile(`^_\*\*(User|Assistant|Agent)\b(.*?)\*\*_\s*$`)
	specSession   = regexp.MustCompile(`<!--.*\bSession ([A-Za-z0-9_.:-]+)`)
	specISOTime   = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?Z?`)
	specUSTime    = regexp.MustCompile(`\d{1,2}/\d{1,2}/\d{4}, \d{1,2}:\d{2}:\d{2} [AP]M`)
	specToolName  = regexp.MustCompile(`data-tool-name="([^"]*)"`)
	specSummary   = regexp.MustCompile(`(?s)<summary>(.*?)</summary>`)
	specToolBold  = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	specNameStops = "•:\"`(*"
)

// specTime reads the time a title or role line carries: ISO with a "Z" is
// UTC, the rest is local (Options.Location).
func (p *specParser) specTime(s string) time.Time {
	if m := specISOTime.FindString(s); m != "" {
		loc := p.opts.location()
		if strings.HasSuffix(m, "Z") {
			loc = time.UTC
			m = strings.TrimSuffix(m, "Z")
		}
		m = strings.Replace(m, "T", " ", 1)
		for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04"} {
			if t, err := time.ParseInLocation(layout, m, loc); err == nil {
				return t
			}
		}
	}
	if m := specUSTime.FindString(s); m != "" {
		if t, err := time.ParseInLocation("1/2/2006, 3:04:05 PM", m, p.opts.location()); err == nil {
			return t
		}
	}
	return time.Time{}
}

func (p *specParser) line(n int, raw []byte) {
	s := strings.TrimRight(clean(string(raw)), "\r")
	trimmed := strings.TrimSpace(s)
	if trimmed != "" {
		p.stats.Lines++
	}
	if p.inBlock != "" {
		p.blockLine(s)
		return
	}
	if m := specRole.FindStringSubmatch(trimmed); m != nil {
		p.flush()
		p.stats.countType(strings.ToLower(m[1]))
		role := "assistant"
		switch {
		case m[1] == "User":
			role = "user"
		case strings.Contains(m[2], "sidechain"):
			role = "sidechain"
		}
		if role != p.role && (role == "sidechain" || p.role == "sidechain") {
			p.b.close() // a subagent's responses are its own
		}
		p.role = role
		if t := p.specTime(m[2]); !t.IsZero() {
			p.at = t
		} else {
			p.at = p.start
		}
		if p.role == "assistant" {
			if model := specModel(m[2]); model != "" {
				p.b.model = model
			}
		}
		return
	}
	if p.role == "" {
		// The header: title, SpecStory's comments.
		if trimmed != "" {
			p.stats.countType("header")
			p.stats.Skipped[SkipBookkeeping]++
		}
		if m := specSession.FindStringSubmatch(trimmed); m != nil && p.sessID == "" {
			p.sessID = m[1]
		}
		if strings.HasPrefix(trimmed, "#") && p.start.IsZero() {
			p.start = p.specTime(trimmed)
			p.at = p.start
		}
		return
	}
	if trimmed == "---" && (!p.fence.in() || p.afterFence) {
		// SpecStory ends a tool's block with "```", a blank line and
		// "---": a block the output left open (cut inside a block of its
		// own) ends there.
		p.fence = mdFence{}
		p.afterFence, p.bareFence = false, false
		p.flushText(true)
		return
	}
	if trimmed == "" {
		p.afterFence = p.bareFence
	} else {
		p.afterFence = false
		p.bareFence = p.fence.line(s) && strings.Trim(trimmed, "`~") == ""
	}
	if p.role == "user" {
		p.prompt = append(p.prompt, s)
		return
	}
	if !p.fence.in() {
		switch {
		case strings.HasPrefix(trimmed, "<think>"):
			p.startBlock("think", s)
			return
		case strings.HasPrefix(trimmed, "<tool-use"):
			p.startBlock("tool", s)
			return
		case strings.HasPrefix(trimmed, "<details"):
			p.startBlock("details", s)
			return
		}
	}
	p.text = append(p.text, s)
}

func (p *specParser) startBlock(kind, s string) {
	p.flushText(false)
	p.inBlock = kind
	p.block = nil
	p.blockLine(s)
}

// blockLine adds a line to a <think>, <tool-use> or <details> block and
// finishes the block at its closing tag.
func (p *specParser) blockLine(s string) {
	p.block = append(p.block, s)
	closing := map[string]string{"think": "</think>", "tool": "</tool-use>", "details": "</details>"}[p.inBlock]
	// A block ends at the first line holding its closing tag (a bare
	// <details> nests none). Only the new line is looked at: the block is
	// joined once, at its end, not again at each line (which made a block
	// of many lines, a long tool output, quadratic).
	if !strings.Contains(s, closing) {
		return
	}
	body := strings.Join(p.block, "\n")
	kind := p.inBlock
	p.inBlock, p.block = "", nil
	p.stats.countType(kind)
	summary := ""
	if m := specSummary.FindStringSubmatch(body); m != nil {
		summary = strings.TrimSpace(m[1])
	}
	if kind == "think" || (kind == "details" && strings.HasPrefix(summary, "Thought")) {
		p.stats.Skipped[SkipBookkeeping]++
		return
	}
	if p.role == "sidechain" && !p.opts.Sidechains {
		p.stats.Skipped[SkipSidechain]++
		return
	}
	name := ""
	if m := specToolName.FindStringSubmatch(body); m != nil {
		name = m[1]
	}
	if name == "" {
		name = specNameFromSummary(summary)
	}
	p.tool(name, summary, &memory.ToolResult{Name: name, Content: specBody(body)})
}

// specBody returns a tool block's body: what follows its summary, without
// the closing tags.
func specBody(body string) string {
	if i := strings.Index(body, "</summary>"); i >= 0 {
		body = body[i+len("</summary>"):]
	} else if i := strings.Index(body, ">"); i >= 0 {
		body = body[i+1:]
	}
	for _, tag := range []string{"</tool-use>", "</details>"} {
		body = strings.ReplaceAll(body, tag, "")
	}
	return strings.TrimSpace(body)
}

// specNameFromSummary names a tool from an older export's summary: its
// leading words ("Listed directory src • **3** results" -> "Listed
// directory"), or the bold name of "Tool use: **grep**".
func specNameFromSummary(summary string) string {
	if m := specToolBold.FindStringSubmatch(summary); m != nil && strings.HasPrefix(summary, "Tool use") {
		return strings.TrimSpace(m[1])
	}
	if i := strings.IndexAny(summary, specNameStops); i >= 0 {
		summary = summary[:i]
	}
	words := strings.Fields(summary)
	if len(words) > 2 {
		words = words[:2]
	}
	if len(words) == 0 {
		return "tool"
	}
	return strings.Join(words, " ")
}

// specModel reads the model of a role line: "(model X, mode Y)" or "(X
// 2026-...)".
func specModel(s string) string {
	s = strings.Trim(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "- sidechain")), "()")
	if rest, ok := strings.CutPrefix(s, "model "); ok {
		name, _, _ := strings.Cut(rest, ",")
		return strings.TrimSpace(name)
	}
	first, _, _ := strings.Cut(s, " ")
	if first == "" || (first[0] >= '0' && first[0] <= '9') {
		return ""
	}
	return first
}

// tool records a tool use: a call of the current response, its result (if
// any) for the next.
func (p *specParser) tool(name, summary string, res *memory.ToolResult) {
	p.b.call(memory.ToolCall{Name: name, Input: jsonObject(map[string]string{"summary": summary})}, p.at)
	if res != nil {
		res.Name, res.Content = clean(res.Name), clean(res.Content)
		p.pendingResults = append(p.pendingResults, *res)
	}
	p.toolRun = true
}

// flushText hands the text read so far to the current response; text after
// a tool use starts a new one. sep says a "---" line ends the text. Text
// that is an older export's bare tool use (specBareTool) is one.
func (p *specParser) flushText(sep bool) {
	lines := p.text
	p.text = nil
	afterSep := p.afterSep
	p.afterSep = sep
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	if text == "" {
		return
	}
	if p.role == "sidechain" && !p.opts.Sidechains {
		p.stats.Skipped[SkipSidechain]++
		return
	}
	if p.role != "user" {
		if name, summary, res, ok := specBareTool(lines, text, sep || afterSep); ok {
			p.stats.countType("tool-line")
			p.tool(name, summary, res)
			return
		}
	}
	if p.toolRun || !p.b.reading() {
		p.sendResults()
		p.b.open(p.at)
		if p.role == "sidechain" {
			p.b.cur.ToolLoop = true
		}
		p.toolRun = false
	}
	p.b.text(text, p.at)
}

// sendResults sends the pending tool results with the next request.
func (p *specParser) sendResults() {
	for _, r := range p.pendingResults {
		p.b.result(r, p.at)
	}
	p.pendingResults = nil
}

// flush ends the current section.
func (p *specParser) flush() {
	if p.inBlock != "" {
		// An unterminated block: keep its lines as text.
		p.text = append(p.text, p.block...)
		p.inBlock, p.block = "", nil
	}
	p.flushText(false)
	p.fence = mdFence{}
	p.afterFence, p.bareFence = false, false
	if p.role == "user" {
		text := strings.TrimSpace(strings.Join(p.prompt, "\n"))
		p.prompt = nil
		if text == "" {
			p.stats.Skipped[SkipEmpty]++
		} else {
			p.sendResults()
			p.b.prompt(text, p.at)
		}
	}
	if p.role != "user" && p.role != "" {
		p.sendResults()
	}
}

// specToolLines are the one-line tool uses of older exports, written
// between "---" lines without a <details> block: a file read, and the
// errors Cursor showed for a tool use (the line is then its result).
var specToolLines = []struct {
	re   *regexp.Regexp
	name string // "" for the regexp's first group
	err  bool
}{
	{regexp.MustCompile(`^Read file: \S.*$`), "Read file", false},
	{regexp.MustCompile(`^Could not find file .* in the workspace\.?$`), "Read file", true},
	{regexp.MustCompile(`^Could not resolve URI: .*$`), "Listed directory", true},
	{regexp.MustCompile(`^Model provided invalid arguments to ([\w -]{1,40}?) tool\.?$`), "", true},
	{regexp.MustCompile(`^Cancelled\.?$`), "Cancelled", true},
}

// specShells are the infos of a fenced block that is a terminal command.
var specShells = map[string]bool{"bash": true, "sh": true, "shell": true, "zsh": true, "console": true,
	"powershell": true, "pwsh": true, "cmd": true, "fish": true, "terminal": true}

// specBareTool reads a piece of an assistant section (the text between two
// "---" lines, a role line or a block) as an older export's tool use
// without a <details> block, when it is one:
//
//   - one line of specToolLines ("Read file: src/a.ts", "Cancelled",
//     "Could not find file 'x' in the workspace."...);
//   - with a "---" line before or after it (sep), a fetched rule: "###
//     Rule: NAME" then the rule's text (Name "Fetch rules", the text its
//     result);
//   - with sep, nothing but fenced blocks: a terminal command when the
//     first block is a shell's (Name "Terminal", the command its summary,
//     the other blocks' code its result), else an edit ("Edit", the
//     block's info its summary, the blocks its result).
func specBareTool(lines []string, text string, sep bool) (name, summary string, res *memory.ToolResult, ok bool) {
	if !strings.Contains(text, "\n") {
		for _, tl := range specToolLines {
			m := tl.re.FindStringSubmatch(text)
			if m == nil {
				continue
			}
			name = tl.name
			if name == "" {
				name = strings.TrimSpace(m[1])
			}
			if tl.err {
				res = &memory.ToolResult{Name: name, Content: text, IsError: true}
			}
			return name, text, res, true
		}
	}
	if !sep {
		return "", "", nil, false
	}
	if rest, found := strings.CutPrefix(text, "### Rule: "); found {
		title, body, _ := strings.Cut(rest, "\n")
		return "Fetch rules", "Rule: " + strings.TrimSpace(title), &memory.ToolResult{Name: "Fetch rules", Content: strings.TrimSpace(body)}, true
	}
	blocks, ok := specFencedOnly(lines)
	if !ok {
		return "", "", nil, false
	}
	info := strings.ToLower(strings.TrimSpace(blocks[0].info))
	if lang, _, _ := strings.Cut(info, " "); specShells[lang] {
		var out []string
		for _, b := range blocks[1:] {
			out = append(out, b.code)
		}
		if o := strings.TrimSpace(strings.Join(out, "\n")); o != "" {
			res = &memory.ToolResult{Name: "Terminal", Content: o}
		}
		return "Terminal", strings.TrimSpace(blocks[0].code), res, true
	}
	if info == "" {
		info = "code"
	}
	return "Edit", info, &memory.ToolResult{Name: "Edit", Content: text}, true
}

// specBlock is one fenced block: its info string and its code.
type specBlock struct{ info, code string }

// specFencedOnly returns the fenced blocks of lines when lines hold
// nothing else (blank lines apart) and at least one.
func specFencedOnly(lines []string) ([]specBlock, bool) {
	var f mdFence
	var blocks []specBlock
	var code []string
	for _, l := range lines {
		was := f.in()
		f.line(l)
		switch {
		case !was && f.in():
			_, _, _, info, _ := fenceRun(l)
			blocks = append(blocks, specBlock{info: info})
			code = nil
		case was && !f.in():
			blocks[len(blocks)-1].code = strings.Join(code, "\n")
		case was:
			code = append(code, l)
		case strings.TrimSpace(l) != "":
			return nil, false
		}
	}
	if f.in() {
		// An unterminated block runs to the end.
		blocks[len(blocks)-1].code = strings.Join(code, "\n")
	}
	return blocks, len(blocks) > 0
}
