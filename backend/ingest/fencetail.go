package ingest

import (
	"regexp"
	"strings"
)

// A fenced block of one token that a sentence ending in ":" introduces
// is the end of that sentence, written on a line of its own: "Store
// session repos under:\n```\n$XDG_STATE_HOME/minsky/git/<repoName>/sessions/<session>\n```".
// Read as prose (splitFences), the sentence loses what it says: the path,
// the URL, the name, the value. fenceTails writes such a block into its
// sentence as a code span, so the sentence is classified, kept or
// dropped, with it. A block of more lines or more words (a command, code,
// an error), or one after a line that introduces nothing, stays code.

// maxFenceTailRunes is the longest token a one-line block may hold to be
// read as the end of the sentence before it: a path or a value, not a
// line of generated data.
const maxFenceTailRunes = 160

// Names of the rules of this file and lookfront.go, as ablate lists them
// (junk.go).
const (
	ruleFenceTail    = "fencetail"
	ruleFrontedOffer = "frontedoffer"
	ruleLookFront    = "lookfront"
)

// fenceTails returns text with each fenced block of one line that ends a
// sentence (fenceTail) written into that sentence as a code span.
func fenceTails(text string) string {
	if !ruleOn(ruleFenceTail) || (!strings.Contains(text, "```") && !strings.Contains(text, "~~~")) {
		return text
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	depth := 0 // the fenced blocks open around the line: a block inside one is its code
	for i := 0; i < len(lines); i++ {
		if depth == 0 {
			if code, end, ok := fenceTail(lines, i); ok {
				if j := introLine(out); j >= 0 {
					out = out[:j+1]
					out[j] = strings.TrimRight(out[j], " \t") + " `" + code + "`"
					i = end
					continue
				}
			}
		}
		depth = fenceDepth(lines[i], depth)
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}

// fenceTail reports whether lines[i] opens a fenced block of exactly one
// non-blank line that is one token (no space, no backtick) of at most
// maxFenceTailRunes runes, no call: a path, a URL, a name, a value. A command, a
// line of code or an error message has spaces: what introduces it ("Please
// run:", "In the tests:") is a lead-in whatever it shows, and stays one.
// The block must be closed two lines later, and may end the sentence
// before it: its info
// string names no file and no diff (an edit's block is code, even of one
// line). It returns the line, trimmed, and the index of the closing fence.
func fenceTail(lines []string, i int) (code string, end int, ok bool) {
	if i+2 >= len(lines) {
		return "", 0, false
	}
	open := strings.TrimSpace(lines[i])
	ch := ""
	switch {
	case strings.HasPrefix(open, "```"):
		ch = "```"
	case strings.HasPrefix(open, "~~~"):
		ch = "~~~"
	default:
		return "", 0, false
	}
	info := strings.TrimLeft(open, ch[:1])
	if strings.ContainsAny(info, "`:/.") || strings.Contains(strings.ToLower(info), "diff") {
		return "", 0, false
	}
	body := strings.TrimSpace(lines[i+1])
	closing := strings.TrimSpace(lines[i+2])
	if body == "" || strings.ContainsAny(body, "` \t();") || runeLen(body) > maxFenceTailRunes {
		return "", 0, false
	}
	if !strings.HasPrefix(closing, ch) || strings.Trim(closing, ch[:1]) != "" {
		return "", 0, false
	}
	return body, i + 2, true
}

// introLine returns the index in out of the line that introduces a block
// written after out: its last line, or the one before a blank last line,
// when it introduces (introduces); else -1.
func introLine(out []string) int {
	j := len(out) - 1
	if j >= 0 && strings.TrimSpace(out[j]) == "" {
		j--
	}
	if j >= 0 && introduces(out[j]) {
		return j
	}
	return -1
}

// fenceDepth returns how many fenced blocks are open after line, depth
// being open before it: a fence line with an info string opens a block
// (inside a block too: a "```bash" in a "```markdown" example), a bare one
// closes the innermost block, or opens one when none is open.
func fenceDepth(line string, depth int) int {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return depth
	}
	info := strings.TrimSpace(strings.TrimLeft(t, t[:1]))
	switch {
	case strings.Contains(info, "`"):
		return depth // inline code
	case info != "" || depth == 0:
		return depth + 1
	}
	return depth - 1
}

// introduces reports whether a line of prose ends with a colon: a
// sentence that announces what follows it (not a heading, a fence or a
// table row).
func introduces(line string) bool {
	t := strings.TrimSpace(line)
	if !strings.HasSuffix(t, ":") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "```") {
		return false
	}
	return proseWords(t) >= 2
}

// frontedOffer reports whether a lowercased sentence offers or suggests
// (offer) in its main clause, behind a fronted clause: "To make the
// scripts executable, you can use the following command: `chmod +x
// a.sh`", "After creating these files, you can run ...". What the reader
// may do in the turn is no fact for later, whatever clause leads to it;
// a sentence whose block, read into it (fenceTails), now ends in the
// command must read as the offer it was.
// "Looking at the code, I can see that ..." tells what the agent finds
// (seeAhead), no offer.
func frontedOffer(ls string) bool {
	if !ruleOn(ruleFrontedOffer) {
		return false
	}
	m := mainClause(ls)
	return len(m) < len(ls) && offer.MatchString(m) && !seeAhead.MatchString(m)
}

// seeAhead opens a main clause in which the agent says what it can see or
// tell: a finding follows, not an offer.
var seeAhead = regexp.MustCompile(`^(?:i|we) can (?:now |clearly |already )?(?:see|tell|confirm|verify|notice|find)\b`)
