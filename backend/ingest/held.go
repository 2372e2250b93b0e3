package ingest

import (
	"slices"
	"strings"
	"unsafe"
)

// Lines the session stated already. A long session's answers repeat
// themselves line by line: the commands to try the change ("app
// hooks --config your.yaml"), how to launch the app, the docs pages, said
// again under every turn's summary next to what the turn did. The answer
// as a whole is new (a test on whole memories finds little to drop); its
// list line is not. A list line of the model whose whole content a block
// of statements an earlier turn of the session said holds already
// (heldBy) is dropped with the reason reasonHeld, the rest of its block
// kept. A line that only names files is kept: it names where the lines
// next to it are about.
//
// What an earlier turn said is read from its text (saidBlocks: each
// block's sentences read as findings or changes), not from the memories
// it stored: those depend on what the session said after it (a statement
// revised later is dropped, and live capture revises an earlier turn only
// after the turn that revises it is decided), while its text and the
// class of each of its sentences do not. So live capture and batch ingest
// drop the same lines. A turn distilled again (a later turn revises it,
// the agent carried on after its Stop) keeps what it was first distilled
// with (Turn.held). What the session said is one append-only record per
// session (recentSession.said): a turn holds a window of it (how far it
// may look), not a copy, so a session's turns cost what they said once,
// not once per later turn.

// reasonHeld is why a line the session stated already is dropped.
const reasonHeld = "said in an earlier turn"

// heldText is a text the session said, read once for the held test: its
// lowercased form and its subject (subjectOf).
type heldText struct {
	lowered string
	subject map[string]bool
	// glosses are the identifiers its sentences gloss (gloss.go), for an
	// undo in other words.
	glosses []gloss
}

// heldTextBytes is what a heldText takes in a slice (its string header and
// map pointer).
const heldTextBytes = int(unsafe.Sizeof(heldText{}))

// Bytes of a subject map beyond its keys' bytes, as heldSize counts them:
// one entry's share of the map's table (its slot, a string header and a
// bool, its control byte, the free slots a table keeps: a table grows by
// doubling before it is full) and the map's own header and directory.
// Measured on amd64 (Go 1.26) over the model's texts of three dev
// sessions: about 60 bytes an entry, a block's map holding a dozen.
const (
	heldEntryBytes = 64
	heldMapBytes   = 64
)

// heldSize returns about the bytes texts take in memory: each one's
// lowered text and subject map (keys and table), its place in the slice.
// A block's subject map takes about three times its text.
func heldSize(texts []heldText) int {
	n := 0
	for _, h := range texts {
		n += heldTextBytes + len(h.lowered) + heldMapBytes
		for k := range h.subject {
			n += len(k) + heldEntryBytes
		}
		n += glossesSize(h.glosses)
	}
	return n
}

// saidBlocks reads what the model said in a turn: per block of each of
// its texts, the sentences sentenceClass reads as findings or changes,
// joined, and the identifiers they gloss (glossesIn).
func saidBlocks(t Turn) []heldText {
	var out []heldText
	for _, s := range t.Steps {
		if s.Error || strings.TrimSpace(s.Text) == "" {
			continue
		}
		prose, _ := splitFences(stripHarness(s.Text))
		for _, block := range splitBlocks(prose) {
			var said []string
			var gs []gloss
			for _, st := range sentences(block) {
				text := strings.TrimSpace(st.text)
				if c := sentenceClass(text, OriginFinal); c == ClassFinding || c == ClassChange {
					said = append(said, text)
					if !evidenceOff["gloss"] {
						gs = append(gs, glossesIn(lower(text), -1, nil)...)
					}
				}
			}
			if len(said) > 0 {
				text := strings.Join(said, " ")
				out = append(out, heldText{lowered: lower(text), subject: subjectOf(text), glosses: gs})
			}
		}
	}
	return out
}

// minHeldTokens is the fewest subject tokens a line has for the held
// test: a line of one name says too little to tell it was said before.
const minHeldTokens = 2

// heldLine reports whether a list line of the model is held by one of
// texts (heldBy) and says more than names of files (filesOnly).
func heldLine(st string, texts []heldText) bool {
	return len(texts) > 0 && !filesOnly(st) && heldBy(st, texts)
}

// heldBy reports whether one of texts holds the whole content of a line:
// every word of its subject (subjectOf) and every load-bearing token of
// it (its names, settings, flags: namedTokens) is in the text, a
// command's arguments left out (lineContent). A command given other
// arguments ("--config your.yaml" for "--config FILE") is held by the
// same command with the same flags.
func heldBy(line string, texts []heldText) bool {
	content := lineContent(line)
	subj := subjectOf(content)
	if len(subj) < minHeldTokens {
		return false
	}
	names := namedTokens(content)
	for _, h := range texts {
		if overlap(subj, h.subject) == len(subj) && namesAll(h.lowered, names) {
			return true
		}
	}
	return false
}

// filesOnly reports whether a line only names files, after at most a
// short label ("File: `app/cli.py`", "Includes: a.py, b.py", "docs/x.md").
func filesOnly(st string) bool {
	if label, rest, ok := strings.Cut(st, ": "); ok && !strings.ContainsAny(label, "`/") && wordCount(label) <= 2 {
		st = rest
	}
	return namesOnlyLine(st)
}

// lineContent returns a line with the arguments of the command in it left
// out: the words after its first flag that are no flags (the flags'
// values, the operands), which a repetition of the command varies
// ("--config your.yaml", "--out ./out"); the program, its subcommands
// and its flags stay. A short label before the command ("CLI: ...") is
// cut off. A line that is no command is returned as it is.
func lineContent(line string) string {
	cmd := strings.Trim(line, "` ")
	if label, rest, ok := strings.Cut(cmd, ": "); ok && wordCount(label) <= 3 && !strings.Contains(label, "`") {
		cmd = strings.Trim(rest, "` ")
	}
	fs := strings.Fields(cmd)
	first := slices.IndexFunc(fs, func(f string) bool { return strings.HasPrefix(strings.TrimLeft(f, "["), "--") })
	if first < 1 || !commandHead(fs[:first]) {
		return line
	}
	out := slices.Clone(fs[:first])
	for _, f := range fs[first:] {
		if f = strings.Trim(f, "[]()`,;"); strings.HasPrefix(f, "--") {
			flag, _, _ := strings.Cut(f, "=")
			out = append(out, flag)
		}
	}
	return strings.Join(out, " ")
}

// commandHead reports whether the words before a command's first flag are
// a program and its subcommands: settings first (KEY=value), then at
// least one lowercase word of letters, digits, "-", "_" or ".", and no
// prose punctuation.
func commandHead(fs []string) bool {
	prog := false
	for _, f := range fs {
		if !prog && assignment.MatchString(f) {
			continue
		}
		for _, r := range f {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
				return false
			}
		}
		prog = true
	}
	return prog
}

// lineDrops gathers, by reason, the lines of a block dropped one by one
// while the rest of the block may stay: each reason's lines are shown in
// the feed as one dropped candidate (describeCandidates counts it).
type lineDrops struct {
	order []string // the reasons, in the order first met
	class map[string]string
	lines map[string][]string
}

// add records a line dropped for reason, read as class.
func (d *lineDrops) add(reason, class, line string) {
	if d.lines == nil {
		d.lines, d.class = map[string][]string{}, map[string]string{}
	}
	if _, ok := d.lines[reason]; !ok {
		d.order = append(d.order, reason)
		d.class[reason] = class
	}
	d.lines[reason] = append(d.lines[reason], line)
}

// candidates returns a dropped candidate per reason, its lines joined.
func (d *lineDrops) candidates(origin string, pos int) []Candidate {
	out := make([]Candidate, 0, len(d.order))
	for _, r := range d.order {
		out = append(out, Candidate{Text: shorten(strings.Join(d.lines[r], "\n")), Origin: origin, Class: d.class[r], Reason: r, pos: pos})
	}
	return out
}
