package transcript

import "strings"

// mdFence follows the fenced code blocks of markdown text line by line.
//
// A line of three or more backticks or tildes (any indentation; an info
// string may follow, without backticks for a backtick fence) opens a
// block. Inside one, a fence line with an info string ("```bash" in a
// "```markdown" rule, "```markdown" in the output of `head README.md`)
// opens a block nested in it, as its writer meant, though CommonMark would
// read it as code; a bare fence line of the same character, at least as
// long and indented like an open block's opening line (two spaces less to
// three more) closes that block and the blocks nested in it. So the
// fences inside a block end neither it nor, unbalanced, the text after it.
type mdFence struct {
	levels []fenceLevel
}

type fenceLevel struct {
	ch     byte
	n      int // the length of the opening run
	indent int // the opening line's indentation
}

// in reports whether the last line read is inside a fenced block (or is
// its opening line).
func (f *mdFence) in() bool { return len(f.levels) > 0 }

// line reads one line: it opens or closes a block; it reports whether the
// line is a fence line.
func (f *mdFence) line(s string) bool {
	ch, n, indent, info, ok := fenceRun(s)
	if !ok || (ch == '`' && strings.Contains(info, "`")) {
		return false // not a fence; "```x``` is ..." is inline code
	}
	if len(f.levels) == 0 || strings.TrimSpace(info) != "" {
		f.levels = append(f.levels, fenceLevel{ch: ch, n: n, indent: indent})
		return true
	}
	for i := len(f.levels) - 1; i >= 0; i-- {
		l := f.levels[i]
		if ch == l.ch && n >= l.n && indent >= l.indent-2 && indent <= l.indent+3 {
			f.levels = f.levels[:i]
			break
		}
	}
	return true
}

// fenceRun reads a fence line: its character, the length of its run, its
// indentation (a tab counts four) and what follows the run.
func fenceRun(s string) (ch byte, n, indent int, info string, ok bool) {
	i := 0
	for ; i < len(s) && (s[i] == ' ' || s[i] == '\t'); i++ {
		if s[i] == '\t' {
			indent += 4
		} else {
			indent++
		}
	}
	if i == len(s) || (s[i] != '`' && s[i] != '~') {
		return 0, 0, 0, "", false
	}
	ch = s[i]
	j := i
	for j < len(s) && s[j] == ch {
		j++
	}
	if j-i < 3 {
		return 0, 0, 0, "", false
	}
	return ch, j - i, indent, s[j:], true
}
