// Package chunk cuts text into paragraph-aware pieces of about a given size
// for embedding and storing: the write pipeline's "chunk" stage.
//
// Split is a pure function. It reads the text as Markdown-ish blocks:
// paragraphs (separated by blank lines), fenced code blocks (``` or ~~~,
// an unterminated fence runs to the end of the text) and lists (lines
// starting with "-", "*", "+", "1." or "1)" and their indented or lazy
// continuation lines). Blocks are packed greedily into chunks of at most
// Options.Size runes:
//
//   - A paragraph longer than Size is cut at sentence boundaries (".", "!"
//     or "?", optionally followed by a closing quote or bracket, then
//     whitespace and a word that does not start with a lower-case letter;
//     "e.g.", "i.e.", "etc.", "vs.", "Dr." and other common abbreviations
//     and single initials never end a sentence; "v1.2" and "main.go" are not
//     boundaries because no whitespace follows the dot). A sentence longer
//     than Size is cut at word boundaries, and a single word longer than
//     Size (a hash, a base64 blob) at rune boundaries.
//   - A code block or a list is kept whole even when it is longer than Size.
//     As a last resort, one longer than MaxBlockFactor x Size is cut at line
//     boundaries into pieces of at most Size runes (a line longer than Size
//     is cut like a long sentence); the pieces after the first carry no
//     opening fence line.
//   - A short Markdown heading (a lone "#" line; a run of them at most
//     Size/8 runes long) stays with the block it introduces.
//   - A piece shorter than Options.Min runes is not kept on its own: it joins
//     the following chunk (or, at the end of the text, the preceding one).
//     Only a text whose whole content is shorter than Min yields no chunk.
//
// So a prose chunk holds at most Size runes, plus a glued heading or a
// joined piece shorter than Min (and the whitespace before it); code blocks
// and lists can make a chunk up to MaxBlockFactor x Size runes long.
//
// Every chunk is a trimmed, contiguous substring of the input (after invalid
// UTF-8 is replaced by U+FFFD), so the chunks joined back hold every
// non-whitespace character of the input in order. Split runs in time linear
// in the length of the text.
package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of Options.
const (
	// DefaultSize is the target chunk size in runes.
	DefaultSize = 2048
	// DefaultMin is the size below which a piece is not a chunk of its own.
	DefaultMin = 20
	// MaxBlockFactor bounds a code block or a list kept whole: one longer
	// than MaxBlockFactor x Size runes is cut at line boundaries.
	MaxBlockFactor = 4
)

// Options tune Split. The zero value means the defaults.
type Options struct {
	// Size is the target chunk size in runes (characters); 0 or less means
	// DefaultSize.
	Size int
	// Min is the size in runes (after trimming) below which a piece is not a
	// chunk of its own; 0 or less means DefaultMin.
	Min int
}

func (o Options) normalized() Options {
	if o.Size <= 0 {
		o.Size = DefaultSize
	}
	if o.Min <= 0 {
		o.Min = DefaultMin
	}
	return o
}

// Split cuts text into trimmed chunks of about opts.Size runes, keeping
// paragraphs, code blocks and lists whole where it can (see the package
// documentation for the rules). It returns nil when the text holds fewer
// than opts.Min non-blank runes.
func Split(text string, opts Options) []string {
	opts = opts.normalized()
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	s := splitter{text: text, size: opts.Size, min: opts.Min, heading: -1}
	s.blocks()
	s.flushHeading()
	return s.finish()
}

// span is a trimmed piece of the text: text[start:end], runes long.
type span struct {
	start, end int
	runes      int
}

type splitter struct {
	text      string
	size, min int

	// heading is the start of a pending short heading that will be glued to
	// the next unit, or -1.
	heading int
	// headingEnd is where that heading (or run of headings) ends, and
	// headingRunes its length from heading.
	headingEnd, headingRunes int

	cur    span // the chunk being packed; cur.end == 0 when empty
	curSet bool
	out    []span
}

// blocks walks the text line by line and hands each block to the packer.
func (s *splitter) blocks() {
	t := s.text
	i := 0
	for i < len(t) {
		line, next := lineAt(t, i)
		if isBlank(line) {
			i = next
			continue
		}
		switch {
		case fenceOpen(line) > 0:
			end := s.fenceEnd(i)
			s.block(i, end)
			i = end
		case isListItem(line):
			end := s.listEnd(i)
			s.block(i, end)
			i = end
		default:
			end := s.paragraphEnd(i)
			s.paragraph(i, end)
			i = end
		}
	}
}

// lineAt returns the line starting at i (without its newline) and the index
// after the newline.
func lineAt(t string, i int) (string, int) {
	j := strings.IndexByte(t[i:], '\n')
	if j < 0 {
		return t[i:], len(t)
	}
	return t[i : i+j], i + j + 1
}

func isBlank(line string) bool {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' {
			continue
		}
		if c < utf8.RuneSelf {
			return false
		}
		return strings.TrimSpace(line[i:]) == ""
	}
	return true
}

func leftTrim(line string) string { return strings.TrimLeft(line, " \t") }

func indented(line string) bool {
	return len(line) > 0 && (line[0] == ' ' || line[0] == '\t')
}

// fenceOpen returns the length of the fence that line opens (3 or more
// backticks or tildes after optional indentation), or 0.
func fenceOpen(line string) int {
	l := leftTrim(line)
	if len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return 0
	}
	c := l[0]
	n := 0
	for n < len(l) && l[n] == c {
		n++
	}
	if n < 3 {
		return 0
	}
	// A backtick fence's info string cannot hold a backtick: "```x```" is
	// inline code, not a fence.
	if c == '`' && strings.IndexByte(l[n:], '`') >= 0 {
		return 0
	}
	return n
}

// fenceCloses reports whether line closes a fence of n chars c.
func fenceCloses(line string, c byte, n int) bool {
	l := leftTrim(line)
	k := 0
	for k < len(l) && l[k] == c {
		k++
	}
	return k >= n && isBlank(l[k:])
}

// fenceEnd returns the end (after the closing line, or the end of the text)
// of the fenced block opening at i.
func (s *splitter) fenceEnd(i int) int {
	t := s.text
	line, next := lineAt(t, i)
	n := fenceOpen(line)
	c := leftTrim(line)[0]
	for j := next; j < len(t); {
		l, nx := lineAt(t, j)
		if fenceCloses(l, c, n) {
			return nx
		}
		j = nx
	}
	return len(t)
}

// isListItem reports whether line starts a list item: "-", "*" or "+", or
// up to nine digits and "." or ")", followed by whitespace or the end.
func isListItem(line string) bool {
	l := leftTrim(line)
	if l == "" {
		return false
	}
	k := 0
	switch l[0] {
	case '-', '*', '+':
		k = 1
	default:
		for k < len(l) && k < 9 && l[k] >= '0' && l[k] <= '9' {
			k++
		}
		if k == 0 || k >= len(l) || (l[k] != '.' && l[k] != ')') {
			return false
		}
		k++
	}
	return k == len(l) || l[k] == ' ' || l[k] == '\t' || l[k] == '\r'
}

// isHeading reports whether line is an ATX heading ("# Title").
func isHeading(line string) bool {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 {
		return false
	}
	k := 0
	for k < len(l) && l[k] == '#' {
		k++
	}
	return k >= 1 && k <= 6 && (k == len(l) || l[k] == ' ' || l[k] == '\t')
}

// listEnd returns the end of the list starting at i: list items, indented
// lines (with any fenced block they open), lazy continuation lines, and
// blank lines followed by more of the list.
func (s *splitter) listEnd(i int) int {
	t := s.text
	_, j := lineAt(t, i)
	end := j
	for j < len(t) {
		line, next := lineAt(t, j)
		switch {
		case isBlank(line):
			// Blank lines belong to the list only if more of it follows.
			k := next
			for k < len(t) {
				l, nx := lineAt(t, k)
				if !isBlank(l) {
					break
				}
				k = nx
			}
			if k >= len(t) {
				return end
			}
			l, _ := lineAt(t, k)
			if !isListItem(l) && !indented(l) {
				return end
			}
			j = k
		case isListItem(line):
			j, end = next, next
		case indented(line):
			if fenceOpen(line) > 0 {
				next = s.fenceEnd(j)
			}
			j, end = next, next
		case fenceOpen(line) > 0 || isHeading(line):
			return end
		default:
			// A lazy continuation line, but only right after a non-blank
			// line of the list.
			if end != j {
				return end
			}
			j, end = next, next
		}
	}
	return end
}

// paragraphEnd returns the end of the paragraph starting at i: it runs to a
// blank line, a fence or a list item.
func (s *splitter) paragraphEnd(i int) int {
	t := s.text
	_, j := lineAt(t, i)
	for j < len(t) {
		line, next := lineAt(t, j)
		if isBlank(line) || fenceOpen(line) > 0 || isListItem(line) {
			return j
		}
		j = next
	}
	return len(t)
}

// trimSpan trims whitespace off text[a:b] and counts its runes.
func (s *splitter) trimSpan(a, b int) (span, bool) {
	seg := s.text[a:b]
	l := strings.TrimLeftFunc(seg, unicode.IsSpace)
	a += len(seg) - len(l)
	l = strings.TrimRightFunc(l, unicode.IsSpace)
	b = a + len(l)
	if a >= b {
		return span{}, false
	}
	return span{start: a, end: b, runes: utf8.RuneCountInString(l)}, true
}

// paragraph handles a prose paragraph text[a:b].
func (s *splitter) paragraph(a, b int) {
	sp, ok := s.trimSpan(a, b)
	if !ok {
		return
	}
	if sp.runes <= s.size {
		line, _ := lineAt(s.text, sp.start)
		if sp.end <= sp.start+len(line) && isHeading(line) && sp.runes <= s.size/8 {
			if s.heading >= 0 {
				run := s.headingRunes + utf8.RuneCountInString(s.text[s.headingEnd:sp.end])
				if run <= s.size/8 {
					s.headingEnd, s.headingRunes = sp.end, run
					return
				}
				s.flushHeading() // a run of headings too long to glue
			}
			s.heading, s.headingEnd, s.headingRunes = sp.start, sp.end, sp.runes
			return
		}
		s.unit(sp)
		return
	}
	s.sentences(sp)
}

// block handles a code block or a list text[a:b], kept whole unless it is
// longer than MaxBlockFactor x Size.
func (s *splitter) block(a, b int) {
	sp, ok := s.trimSpan(a, b)
	if !ok {
		return
	}
	if sp.runes <= MaxBlockFactor*s.size {
		s.unit(sp)
		return
	}
	// Last resort: pieces of whole lines of at most Size runes.
	t := s.text
	var piece span
	have := false
	for i := sp.start; i < sp.end; {
		line, next := lineAt(t, i)
		if next > sp.end {
			next = sp.end
			line = t[i:next]
		}
		ls, ok := s.trimSpan(i, i+len(line))
		i = next
		if !ok {
			continue
		}
		if ls.runes > s.size {
			if have {
				s.unit(piece)
				have = false
			}
			s.words(ls)
			continue
		}
		if !have {
			piece, have = ls, true
			continue
		}
		gap := utf8.RuneCountInString(t[piece.end:ls.start])
		if piece.runes+gap+ls.runes <= s.size {
			piece.end = ls.end
			piece.runes += gap + ls.runes
			continue
		}
		s.unit(piece)
		piece = ls
	}
	if have {
		s.unit(piece)
	}
}

// abbreviations never end a sentence (compared lower-case, without the dot).
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "al": true,
	"approx": true, "ca": true, "esp": true, "incl": true, "resp": true,
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true,
	"jr": true, "st": true, "inc": true, "ltd": true, "co": true, "corp": true,
	"fig": true, "figs": true, "eq": true, "no": true, "nos": true, "vol": true,
	"pp": true, "ch": true, "sec": true, "ref": true,
	"jan": true, "feb": true, "mar": true, "apr": true, "jun": true, "jul": true,
	"aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
	"min": true, "max": true, "avg": true, "misc": true, "dept": true, "est": true,
}

// isAbbreviation reports whether the word ending at text[:dot] (dot is the
// index of a '.') is an abbreviation or an initial.
func isAbbreviation(text string, dot int) bool {
	start := dot
	for start > 0 && dot-start < 24 {
		r, n := utf8.DecodeLastRuneInString(text[:start])
		if unicode.IsSpace(r) || r == '(' || r == '[' || r == '"' || r == '\'' {
			break
		}
		start -= n
	}
	word := text[start:dot]
	if word == "" {
		return false
	}
	if r, n := utf8.DecodeRuneInString(word); n == len(word) && unicode.IsLetter(r) {
		return true // an initial: "J. Smith", "a. the first"
	}
	if len(word) > 8 {
		return false
	}
	if abbreviations[strings.ToLower(word)] {
		return true
	}
	return dottedInitials(word)
}

// dottedInitials reports whether word is single letters joined by dots,
// as in "e.g", "i.e" or "U.S".
func dottedInitials(word string) bool {
	parts := strings.Split(word, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		r, n := utf8.DecodeRuneInString(p)
		if n == 0 || n != len(p) || !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// sentences cuts a long paragraph at sentence boundaries and hands the
// sentences to the packer (a sentence longer than Size goes to words).
func (s *splitter) sentences(p span) {
	t := s.text
	start := p.start
	emit := func(end int) {
		sp, ok := s.trimSpan(start, end)
		start = end
		if !ok {
			return
		}
		if sp.runes > s.size {
			s.words(sp)
			return
		}
		s.unit(sp)
	}
	for i := p.start; i < p.end; {
		c := t[i]
		if c != '.' && c != '!' && c != '?' {
			if c < utf8.RuneSelf {
				i++
			} else {
				_, n := utf8.DecodeRuneInString(t[i:])
				i += n
			}
			continue
		}
		punct := i
		j := i + 1
		// Closing quotes or brackets after the punctuation.
		for j < p.end {
			r, n := utf8.DecodeRuneInString(t[j:])
			if r == '"' || r == '\'' || r == ')' || r == ']' || r == '\u201d' || r == '\u2019' || r == '*' || r == '_' || r == '`' {
				j += n
				continue
			}
			break
		}
		i = j
		if j >= p.end {
			break
		}
		r, _ := utf8.DecodeRuneInString(t[j:])
		if !unicode.IsSpace(r) {
			continue
		}
		if c == '.' && isAbbreviation(t, punct) {
			continue
		}
		// The next word must not start lower-case.
		k := j
		for k < p.end {
			r, n := utf8.DecodeRuneInString(t[k:])
			if !unicode.IsSpace(r) {
				break
			}
			k += n
		}
		if k < p.end {
			r, _ := utf8.DecodeRuneInString(t[k:])
			if unicode.IsLower(r) {
				continue
			}
		}
		emit(j)
		i = k
	}
	emit(p.end)
}

// words cuts a span longer than Size at whitespace into pieces of at most
// Size runes; a word longer than Size is cut at a rune boundary.
func (s *splitter) words(p span) {
	t := s.text
	i := p.start
	for i < p.end {
		for i < p.end { // skip whitespace
			r, n := utf8.DecodeRuneInString(t[i:])
			if !unicode.IsSpace(r) {
				break
			}
			i += n
		}
		if i >= p.end {
			return
		}
		start := i
		cut := -1 // where the last run of whitespace after a word begins
		prevSpace := false
		j, runes := i, 0
		for j < p.end && runes < s.size {
			r, n := utf8.DecodeRuneInString(t[j:])
			space := unicode.IsSpace(r)
			if space && !prevSpace {
				cut = j
			}
			prevSpace = space
			j += n
			runes++
		}
		end := j
		if j < p.end && cut > start {
			if r, _ := utf8.DecodeRuneInString(t[j:]); !unicode.IsSpace(r) {
				end = cut // do not cut the word that straddles the limit
			}
		}
		if sp, ok := s.trimSpan(start, end); ok {
			s.unit(sp)
		}
		i = end
	}
}

// flushHeading emits a pending heading that no block followed.
func (s *splitter) flushHeading() {
	if s.heading < 0 {
		return
	}
	sp := span{start: s.heading, end: s.headingEnd, runes: s.headingRunes}
	s.heading = -1
	s.pack(sp)
}

// unit hands a unit to the packer, gluing a pending heading to its front.
func (s *splitter) unit(u span) {
	if s.heading >= 0 {
		u.runes += utf8.RuneCountInString(s.text[s.heading:u.start])
		u.start = s.heading
		s.heading = -1
	}
	s.pack(u)
}

// pack adds a unit to the current chunk if it fits, or starts a new chunk.
// A current chunk shorter than Min takes the unit whatever its size.
func (s *splitter) pack(u span) {
	if !s.curSet {
		s.cur, s.curSet = u, true
		return
	}
	gap := utf8.RuneCountInString(s.text[s.cur.end:u.start])
	if s.cur.runes+gap+u.runes <= s.size || s.cur.runes < s.min {
		s.cur.end = u.end
		s.cur.runes += gap + u.runes
		return
	}
	s.out = append(s.out, s.cur)
	s.cur = u
}

// finish closes the last chunk (a short one joins the previous chunk) and
// returns the chunks' text.
func (s *splitter) finish() []string {
	if s.curSet {
		switch {
		case s.cur.runes >= s.min:
			s.out = append(s.out, s.cur)
		case len(s.out) > 0:
			s.out[len(s.out)-1].end = s.cur.end
		}
	}
	if len(s.out) == 0 {
		return nil
	}
	chunks := make([]string, len(s.out))
	for i, sp := range s.out {
		chunks[i] = s.text[sp.start:sp.end]
	}
	return chunks
}
