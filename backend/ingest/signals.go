package ingest

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// The gates before the content score read a reply sentence by sentence and
// sort each sentence into one of these classes. They look at the form of a
// sentence (who acts, in which tense, about what), not at any project's
// words, so they carry over to projects they have never seen.
const (
	classAck        = "ack"        // acknowledgement, pleasantry, apology, greeting
	classProcedural = "procedural" // the agent announcing or narrating its own actions
	classStatus     = "status"     // transient state: running, passed, in progress, 3 of 5
	classOutput     = "output"     // raw tool output: log lines, prompts, tracebacks, tables
	classQuestion   = "question"   // a question back to the user
	classContent    = "content"    // a statement that could stay true
)

// Signals is what the gates measured on a reply.
type Signals struct {
	Sentences int `json:"sentences"`
	// ByClass counts sentences per class; First is the first sentence's class.
	ByClass map[string]int `json:"by_class"`
	First   string         `json:"first,omitempty"`
	// Durable counts durable markers: rationale, rules, preferences,
	// causes (because, never, must, we decided, root cause, you prefer...).
	Durable int `json:"durable"`
	// Specificity weighs what ties the text to one project: paths and file
	// names (2), ownership ("we", "our", "this repo", "you prefer": 2),
	// settings (1.5), code identifiers, environment variables, URLs, IPs
	// and ticket ids (1), names with inner capitals, hyphenated names and
	// bare word/word pairs (0.5). Plain numbers and versions do not count:
	// textbook answers have them too.
	Specificity float64 `json:"specificity"`
	// Words counts the words of the prose (outside code fences).
	Words int `json:"words"`
	// FenceShare is the share of the reply's characters inside code fences.
	FenceShare float64 `json:"fence_share"`
}

// Content is the number of content sentences.
func (s Signals) Content() int { return s.ByClass[classContent] }

var (
	// The patterns below are matched against ASCII-lowercased text (see
	// lower): Go's case-insensitive matching is several times slower.

	// Leading acknowledgements ("Understood.", "Noted:", "Sure!", "Yes,")
	// are cut off a sentence before it is classified; what remains decides.
	// Concessions ("You're right", "Good catch", "I apologize", "My
	// mistake") are leads too: ackEnd (concede.go) reads the clause an
	// apology or a thanks takes and the "that" after "you're right".
	// The lead word is the first group.
	ackLead = regexp.MustCompile(`^((?:you'?re|you are) (?:absolutely |totally |completely |quite |exactly |entirely |so )?(?:right|correct)|good (?:question|catch|point|call|eye|spot)|fair (?:point|enough)|my (?:mistake|bad|apologies|fault)|(?:i )?apologi[sz]e|apologies|(?:i'm |i am )?(?:so |really |very )?sorry|i stand corrected|ok(?:ay)?|sure(?: thing)?|got it|understood|noted|alright|all right|right|great|perfect|good|cool|yes|yep|yeah|no|nope|not yet|thanks|thank you|done|found it|sounds good|makes sense|will do|of course|absolutely|hmm+|ah|oh|i see|i understand)\b[\s,.:;!—–-]*`)
	ackOnly = regexp.MustCompile(`^(?:` +
		`(?:you'?re|you are) (?:welcome|right)|no (?:problem|worries)|anytime|glad|happy to help|sorry|apologies|my (?:bad|apologies)|i apologi[sz]e|` +
		`hi|hello|hey|good (?:morning|afternoon|evening)|welcome back|see you|bye|have a (?:good|great|nice)|thanks|thank you|cheers|` +
		`sounds good|great|perfect|awesome|nice|excellent|understood|got it|okay|ok|sure|alright|noted|will do|on it|let me know|feel free|` +
		`this (?:was|has been) a|what would you like|how can i help|whenever you(?:'re| are) ready)\b`)
	// Apologies and offers anywhere in a sentence make it an acknowledgement.
	ackAnywhere = regexp.MustCompile(`\b(?:i(?:'m| am) (?:really |so |very |truly )?sorry|i apologi[sz]e|my apologies|let me know if|feel free to|happy to help|hope (?:this|that) helps)\b`)
	// The agent announcing what it will do, anywhere in a sentence.
	futureSelf = regexp.MustCompile(`\b(?:i(?:'ll| will| am going to|'m going to| plan to)|let me|i(?:'m| am) about to|(?:once|when|if) you (?:confirm|approve|agree|say so|are ready|'re ready))\b`)
	// A list item that is a quoted title, possibly after a short label: a search result.
	citation = regexp.MustCompile(`^(?:[\w/.-]+(?: [\w/.-]+){0,2}:\s*)?["“]`)
	listMark = regexp.MustCompile(`^(?:[-*+•]\s+|\d{1,3}[.)]\s+)`)
	// The agent narrating or announcing its own work.
	procLead = regexp.MustCompile(`^(?:` +
		`i(?:'ll| will| am going to|'m going to| would| need to| want to| can|'d| should| plan to) |` +
		`let me |let's |allow me |give me |one moment|bear with me|just to (?:make sure|confirm|clarify|check)|to make sure i|` +
		`i(?:'m| am) (?:now |still |currently |going |looking|checking|running|reading|working|trying|waiting|starting|pulling|fetching|searching|opening|applying|writing|fixing|updating|adding|digging|investigating|on it|done|not sure)|` +
		`i(?:'ve| have) (?:now |just |also )?(?:made|run|ran|updated|edited|changed|added|removed|applied|finished|completed|reverted|pushed|committed|started|checked|searched|looked|read|opened|created|written|fixed|renamed|moved|installed|deployed)\b|` +
		`i (?:searched|looked|checked|ran|read|opened|tried|started|pushed|committed|updated|edited|made the following|went through)\b|` +
		`(?:now|next|first|then|after that|afterwards|also|finally)(?: up)?,? (?:i(?:'ll| will)?|let me|let's|we(?:'ll| will)|is|up|on|\w+ing\b|` + "`" + `)|` +
		`(?:now|then|also|finally),? (?:also )?(?:add|update|fix|write|create|run|check|implement|replace|remove|rebuild|apply|make|move|test|verify|commit|push|close|mark|register|wire|handle|do|read|look|open|edit|change|rename|delete|install|build|compile|start|finish|address|refactor|clean|use)\b|` +
		`(?:here(?:'s| is| are) (?:the|a|an|what|how|my|your)|here you go|see below|below is|as requested)\b|` +
		`(?:working|looking|checking|running|re-?running|reading|searching|fetching|pulling|applying|installing|deploying|creating|writing|fixing|updating|continuing|picking up|switching|trying|moving on|starting|waiting|opening|stopping|pausing|investigating|digging|building|compiling|testing|retrying|reverting|committing|pushing|merging|tagging|cleaning up|wrapping up|proceeding)\b|` +
		`(?:done|undone|pushed|merged|tagged|committed|reverted|deployed|installed|applied|updated|edited|ran|created|added|removed|renamed|formatted|finished|completed|paused|stopped|reformatted|restarted|rebased|cherry-picked|modified|regenerated|bumped|upgraded|downgraded|replaced|refactored|moved|deleted|rewrote|changed|saved|opened|closed|ran)\b` +
		`)`)
	// Transient state of a run, a build, a deploy, a count.
	statusWord = regexp.MustCompile(`\b(?:still|yet|today|tonight|yesterday|this (?:session|morning|afternoon|evening)|in progress|so far|pending|right now|currently|at the moment|for now|finished|succeeded|successfully|passed|pass|green|red|is up|are up|went through|again|another minute|exit code|\d+ of \d+|\d+/\d+ (?:jobs|steps|tests|checks))\b`)
	// Lines that look like tool output rather than prose.
	outputLine = regexp.MustCompile(`^(?:\$ |> |# |PS> |\[(?:debug|info|warn|warning|error|INFO|DEBUG|WARN|ERROR)\]|(?:[A-Za-z]+(?:Error|Exception)|error|warning|fatal|panic|Traceback|FAILED|PASSED|ERROR|WARN|INFO|DEBUG|HTTP/\d(?:\.\d)?)\b[:\s]|\s*at [\w.$]+\(|\s*File ".*", line \d+|\s*-->|[=\-+*]{5,}|\s*\d+ (?:passed|failed)|[\w.-]+: (?:Found|found|error|warning|\d+ (?:errors?|warnings?|violations?))|\s*at (?:[\w.$<>]+ \()?[\w./@~-]+:\d+|[\w./~-]+\.\w+:\d+(?::\d+)?:|[\w./~-]+: line \d+:|(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+[:~]|[✓✔✗✘×]\s|\d+ +\|\s)`)
	// Markers of something that stays true: rationale, rules, preferences, causes.
	durableWord = regexp.MustCompile(`\b(?:because|since (?:the|it|we|our|they)|so that|therefore|that's why|which is why|the reason|root cause|caused by|comes? from|came from|by design|on purpose|instead of|rather than|instead|otherwise|unless|until|never|always|must(?:n't)?|should(?:n't)?|don't|do not|doesn't|does not|won't|can't|cannot|isn't|aren't|only|not \w+|we (?:decided|chose|use|picked|standardi[sz]ed|moved|switched|keep|store|run|set|need|prefer|agreed|looked)|our |you (?:want|prefer|like|asked me to)|(?:your|the team's) preference|convention|invariant|rule|requires?|needs?|depends? on|relies on|overrides?|defaults? to|expects?|fix(?:es|ed)? (?:it|this|the)|keep|avoid|make sure|note that|heads-up|gotcha|careful|important|remember)\b`)
	// Load-bearing tokens: what makes a statement specific.
	// filePathTok: a path with a file extension, a leading / ./ ~/, or two slashes.
	filePathTok = regexp.MustCompile(`(?:^|[\s(\x60"'=])(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+*-]+)*|\b[\w.-]+(?:/[\w.@*-]+){2,}|\b[\w-]+(?:/[\w@*-]+)*(?:/[\w@*-]+)?\.(?:go|py|rs|ts|tsx|js|jsx|mjs|cjs|java|kt|kts|swift|rb|php|c|h|cc|cpp|hpp|cs|sh|bash|zsh|yml|yaml|toml|json|ini|cfg|conf|env|lock|md|sql|proto|tf|tfvars|gradle|xml|plist|html|css|scss|vue|svelte|mod|sum|txt|csv|entitlements)\b`)
	// codePathTok: a code span holding a path ("`cmd/reindex`").
	codePathTok  = regexp.MustCompile("`[^`\\s]*/[^`\\s]*`")
	wordPairTok  = regexp.MustCompile(`\b[\w-]+/[\w-]+\b`)
	codeIdentTok = regexp.MustCompile(`\b(?:[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[0-9]*[A-Z][A-Za-z0-9]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b`)
	capsIdentTok = regexp.MustCompile(`\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b`)
	ticketTok    = regexp.MustCompile(`\b[A-Z]{2,}-\d+\b`)
	ipTok        = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}\b`)
	hyphenTok    = regexp.MustCompile(`\b[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b`)
	pathTok      = memory.PathToken
	identTok     = memory.IdentToken
	// The load-bearing tokens (memory.LoadBearing), shared with the steward.
	settingTok = memory.SettingToken
	numberTok  = memory.NumberToken
	ownerWord  = regexp.MustCompile(`\b(?:we|our|ours|this repo(?:sitory)?|this project|this codebase|in this (?:repo|project|codebase)|you (?:want|prefer|like|asked)|your (?:preference|team))\b`)
	backtick   = memory.CodeSpanToken
	urlTok     = memory.URLToken
	fence      = regexp.MustCompile("(?m)^\\s*(?:```|~~~)")
)

// Analyze measures a reply for the gates.
func Analyze(text string) Signals {
	prose, fenced := splitFences(text)
	s := Signals{ByClass: map[string]int{}}
	if n := len(text); n > 0 {
		s.FenceShare = min(1, float64(fenced)/float64(n))
	}
	// List items inherit the class of a procedural, status or output line
	// that introduces them ("I've made the following changes:").
	inherit := ""
	for _, sent := range sentences(prose) {
		s.Sentences++
		c := classify(sent.text)
		switch {
		case sent.item && inherit != "":
			c = inherit
		case !sent.item:
			inherit = ""
			if sent.intro && c != classContent {
				inherit = c
			}
		}
		s.ByClass[c]++
		if s.First == "" {
			s.First = c
		}
	}
	s.Words = len(strings.Fields(prose))
	lp := lower(prose)
	s.Durable = len(durableWord.FindAllStringIndex(lp, -1))
	s.Specificity = specificity(prose)
	return s
}

// specificity weighs the distinct project-specific tokens of prose (see Signals).
func specificity(prose string) float64 {
	seen := map[string]bool{}
	total := 0.0
	add := func(re *regexp.Regexp, w float64, needs string) {
		if needs != "" && !strings.ContainsAny(prose, needs) {
			return // the token cannot occur: skip the scan
		}
		for _, m := range re.FindAllString(prose, -1) {
			k := strings.ToLower(strings.Trim(m, "`.,;:()"))
			if seen[k] {
				continue
			}
			seen[k] = true
			total += w
		}
	}
	add(urlTok, 1, ":")
	add(filePathTok, 2, "/.")
	add(codePathTok, 2, "`")
	add(wordPairTok, 0.5, "/")
	add(settingTok, 1.5, "=-")
	add(codeIdentTok, 1, "")
	add(capsIdentTok, 0.5, "")
	add(ticketTok, 1, "-")
	add(ipTok, 1, ".")
	before := total
	add(hyphenTok, 0.5, "-")
	total = min(total, before+0.5) // compound words are common English: one counts
	if ownerWord.MatchString(lower(prose)) {
		total += 2
	}
	return total
}

// splitFences returns the prose outside code fences and the number of
// characters inside them. An unterminated fence runs to the end. Inside a
// block, a fence line with an info string ("```bash" in a "```markdown"
// example, "```markdown" in a command's output) opens a block nested in
// it, and a bare fence line closes the innermost open block it can close
// (same character, a run at least as long, indented like the block's
// opening line: two spaces less to three more) with the blocks nested in
// it: so the fences inside a block end
// neither it nor let its code out as prose. "```x``` ..." is inline code.
func splitFences(text string) (string, int) {
	locs := fence.FindAllStringIndex(text, -1)
	if len(locs) == 0 {
		return text, 0
	}
	type level struct{ ch, n, indent int }
	var open []level
	var b strings.Builder
	fenced, pos, start := 0, 0, 0
	for _, loc := range locs {
		end := lineEnd(text, loc[1])
		line := text[loc[0]:end]
		if k := strings.LastIndexByte(text[loc[0]:loc[1]], '\n'); k >= 0 {
			line = line[k+1:]
		}
		body := strings.TrimLeft(line, " \t\f\r")
		if body == "" || (body[0] != '`' && body[0] != '~') {
			continue
		}
		ch, n := body[0], 0
		for n < len(body) && body[n] == ch {
			n++
		}
		info, indent := body[n:], len(line)-len(body)
		if ch == '`' && strings.Contains(info, "`") {
			continue // inline code, not a fence
		}
		l := level{int(ch), n, indent}
		switch {
		case len(open) == 0:
			b.WriteString(text[pos:loc[0]])
			b.WriteString("\n")
			start = loc[0]
			open = append(open, l)
			continue
		case strings.TrimSpace(info) != "":
			open = append(open, l)
			continue
		}
		for i := len(open) - 1; i >= 0; i-- {
			o := open[i]
			if o.ch == l.ch && l.n >= o.n && l.indent >= o.indent-2 && l.indent <= o.indent+3 {
				open = open[:i]
				break
			}
		}
		if len(open) == 0 {
			fenced += end - start
			pos = end
		}
	}
	if len(open) > 0 {
		fenced += len(text) - start
		pos = len(text)
	}
	b.WriteString(text[pos:])
	return b.String(), fenced
}

func lineEnd(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// sentence is one sentence of prose and whether it is a list item.
type sentence struct {
	text   string
	item   bool // starts a list item
	intro  bool // ends with ':' (introduces what follows)
	listed bool // stands in a list item's line (its first sentence or a later one)
}

// sentences splits prose into sentences and lines (list items and output
// lines are sentences of their own; an ellipsis does not end a sentence).
func sentences(prose string) []sentence {
	var out []sentence
	for _, line := range strings.Split(prose, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if outputLine.MatchString(line) {
			out = append(out, sentence{text: line})
			continue
		}
		item := false
		if loc := listMark.FindStringIndex(line); loc != nil {
			line, item = strings.TrimSpace(line[loc[1]:]), true
		}
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			if i+1 < len(line) && line[i+1] != ' ' {
				continue // v1.2, main.go, e.g., "..."
			}
			if c == '.' && (abbrev(line[start:i]) || (i > 0 && line[i-1] == '.')) {
				continue
			}
			if s := strings.TrimSpace(line[start : i+1]); s != "" {
				out = append(out, sentence{text: s, item: item && start == 0, listed: item})
			}
			start = i + 1
		}
		if s := strings.TrimSpace(line[start:]); s != "" {
			out = append(out, sentence{text: s, item: item && start == 0, intro: strings.HasSuffix(s, ":"), listed: item})
		}
	}
	return out
}

// abbrev reports whether the text before a period ends in a common abbreviation.
func abbrev(before string) bool {
	i := strings.LastIndexByte(before, ' ')
	w := strings.TrimLeft(strings.ToLower(before[i+1:]), "([{\"'")
	switch w {
	case "e.g", "i.e", "etc", "vs", "approx", "incl", "no", "mr", "dr", "cf", "a.k.a", "aka":
		return true
	}
	return false
}

// classify sorts one sentence.
func classify(sent string) string {
	sent = quoteFold.Replace(sent) // lower folds quotes: keep offsets equal
	if outputLine.MatchString(sent) {
		return classOutput
	}
	rest, lrest := sent, lower(sent)      // same byte offsets
	if n := ackEnd(lrest, false); n > 0 { // "Okay, sure: ..." has more than one
		rest, lrest = rest[n:], lrest[n:]
	}
	trim := len(rest) - len(strings.TrimLeftFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
	rest, lrest = rest[trim:], lrest[trim:]
	if wordCount(rest) == 0 || ackOnly.MatchString(lrest) || ackAnywhere.MatchString(lrest) {
		return classAck
	}
	if n := lookMain(lrest); n > 0 {
		return classify(rest[n:]) // lookfront.go: where the agent looked, then what it found
	}
	if weAct.MatchString(lrest) && !causeWord.MatchString(lrest) {
		return classProcedural
	}
	if weState.MatchString(lrest) && !causeWord.MatchString(lrest) {
		return classStatus
	}
	if loc := mannerLead.FindStringIndex(lrest); loc != nil && procLead.MatchString(lrest[loc[1]:]) {
		return classProcedural
	}
	if procLead.MatchString(lrest) || (futureSelf.MatchString(lrest) && !durableWord.MatchString(lrest) && !ownerWord.MatchString(lrest)) || frontedSelfPlan(lrest) {
		return classProcedural
	}
	if strings.HasSuffix(rest, "?") {
		return classQuestion
	}
	if citation.MatchString(rest) {
		return classOutput
	}
	if statusWord.MatchString(lrest) && !durableWord.MatchString(lrest) && wordCount(rest) <= 14 {
		return classStatus
	}
	if wordCount(rest) < 3 {
		return classStatus // a bare fragment: a path, a link, a count
	}
	return classContent
}

// quoteFold turns typographic quotes into ASCII ones: models write
// "I’ll" and "doesn’t" as often as "I'll", and the patterns are written
// with ASCII apostrophes.
var quoteFold = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`)

// lower lowercases ASCII letters and folds typographic quotes
// (quoteFold); byte offsets are those of quoteFold.Replace(s).
func lower(s string) string {
	s = quoteFold.Replace(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if c := b[j]; c >= 'A' && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func wordCount(s string) int {
	n := 0
	in := false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}

// runeLen is the length of s in characters.
func runeLen(s string) int { return utf8.RuneCountInString(s) }
