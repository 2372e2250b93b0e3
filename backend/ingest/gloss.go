package ingest

import (
	"fmt"
	"regexp"
	"strings"
	"unsafe"

	"github.com/memtray/memtray/backend/memory"
)

// An undo in other words. The agent names a setting once beside what it
// does in plain words ("Made the deploy step non-blocking
// (continue-on-error: true)"), then speaks of it either way: a later
// summary says "Marked the deploy step as non-blocking", the undo says
// "I removed the deploy `continue-on-error`". The undo names the setting,
// the statement its description: they share the subject ("deploy") and
// nothing that tells the one undoes the other. The session's own gloss
// links them: dropUndone cuts a statement that says every word of a
// gloss's description when a later undo names the gloss's identifier and
// shares a word of the description (the same subject).
//
// A gloss is read from a sentence the model said as a finding or a change,
// in one of three forms: the identifier alone in brackets after its
// description, a value or none ("made X non-blocking (`flag`: true)"),
// the identifier in backticks after "by", "via", "with", "using" or
// "through" ("made X quiet by setting `QUIET`"), or the identifier in
// backticks before ", which" and its description ("`flag`, which makes X
// non-blocking"). The description is its clause's main part (up to a
// conditional or causal word: "if Pages isn't enabled" is not what the
// setting does), in plain words (no code span or load-bearing token of
// its own), of two subject words or more. An identifier that is a path or
// a file name is no setting. Glosses come from what earlier turns
// of the session said (Turn.held: the session's record, bounded and
// counted with its recent turns, the same live and in batch) and from the
// sentences of the turn and of later turns said before the undo.

// gloss is the session's gloss of an identifier: its description's
// subject words, the identifier's own left out.
type gloss struct {
	ident string          // lowered, without backticks
	desc  string          // the description as said, lowered
	words map[string]bool // subjectOf(desc), without ident
	pos   int             // where it was said; -1 for an earlier turn
}

// glossIdent is an identifier as a gloss names it: in backticks (letters,
// digits and - _ . : @ $), or bare when compound (kebab-case or
// snake_case).
const glossIdent = "`[-\\w.:@$]{3,}`|[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+"

var (
	// parenGloss is an identifier alone in brackets, with a value or none:
	// "(continue-on-error: true)", "(`retries=3`)".
	parenGloss = regexp.MustCompile(`\((` + glossIdent + `)(?:\s*[:=]\s*[^()\s]+)?\s*\)`)
	// viaGloss is a backticked identifier after "by", "via", "with",
	// "using" or "through", a verb of setting it between or none.
	viaGloss = regexp.MustCompile("\\b(?:by|via|with|using|through)\\s+(?:(?:setting|adding|passing|enabling|disabling|turning on|turning off)\\s+)?(`[-\\w.:@$]{3,}`)")
	// whichGloss is a backticked identifier, a value or none, then
	// ", which": its description follows.
	whichGloss = regexp.MustCompile("(`[-\\w.:@$]{3,}`)(?:\\s*[:=]\\s*[^\\s,]+)?,\\s+which\\s+")
	// glossBreak ends a description's clause: a sentence's end, a comma,
	// a colon, a bracket, a dash between spaces, a line's end.
	glossBreak = regexp.MustCompile(`[.;!?](?:\s|$)|,\s|:\s|[()\[\]]|\s[-–—]+\s|\n`)
	// glossSide opens the part of a clause that is not what the setting
	// does: a condition, a cause, a purpose, a time.
	glossSide = regexp.MustCompile(`\b(?:if|unless|when|whenever|while|once|until|because|since|so|after|before)\b`)
)

// minGlossWords is the fewest subject words a gloss's description has: one
// word ("tests") says too little to tell a statement says the same.
const minGlossWords = 2

// glossesIn returns the glosses of lt, a sentence said as a finding or a
// change (lowered), each at pos; with want, only those whose identifier
// is in it (the tokens of the session's undos).
func glossesIn(lt string, pos int, want map[string]bool) []gloss {
	if !strings.ContainsAny(lt, "(`") {
		return nil
	}
	var out []gloss
	add := func(ident, desc string) {
		ident = strings.Trim(ident, "`")
		if want != nil && !want[ident] || pathTok.MatchString(ident) || urlTok.MatchString(ident) {
			return
		}
		if i := glossSide.FindStringIndex(desc); i != nil {
			desc = desc[:i[0]]
		}
		desc = strings.TrimSpace(desc)
		if strings.Contains(desc, "`") || memory.NamesLoadBearing(desc) {
			return // not plain words: it names code of its own
		}
		words := subjectOf(desc)
		delete(words, ident)
		if len(words) >= minGlossWords {
			out = append(out, gloss{ident: ident, desc: desc, words: words, pos: pos})
		}
	}
	before := func(at int) string { return lt[glossClauseStart(lt, at):at] }
	for _, m := range parenGloss.FindAllStringSubmatchIndex(lt, -1) {
		add(lt[m[2]:m[3]], before(m[0]))
	}
	for _, m := range viaGloss.FindAllStringSubmatchIndex(lt, -1) {
		add(lt[m[2]:m[3]], before(m[0]))
	}
	for _, m := range whichGloss.FindAllStringSubmatchIndex(lt, -1) {
		end := len(lt)
		if b := glossBreak.FindStringIndex(lt[m[1]:]); b != nil {
			end = m[1] + b[0]
		}
		add(lt[m[2]:m[3]], lt[m[1]:end])
	}
	return out
}

// glossClauseStart returns where the clause ending at offset at of lt starts:
// after the last glossBreak before it.
func glossClauseStart(lt string, at int) int {
	start := 0
	for _, b := range glossBreak.FindAllStringIndex(lt[:at], -1) {
		start = b[1]
	}
	return start
}

// sessionGlosses returns the glosses the session said of what its undos
// name: in its earlier turns (held's, read when the turn was recorded:
// position -1) and in sents (the turn's and the later turns' sentences),
// a sentence read only when said as a finding or a change, as saidBlocks
// reads them.
func sessionGlosses(held []heldText, sents []posSentence, undos []undo) []gloss {
	want := map[string]bool{}
	for _, u := range undos {
		for t := range u.tokens {
			want[t] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	names := func(lt string) bool {
		for t := range want {
			if strings.Contains(lt, t) {
				return true
			}
		}
		return false
	}
	var out []gloss
	for _, h := range held {
		for _, g := range h.glosses {
			if want[g.ident] {
				out = append(out, g)
			}
		}
	}
	for _, s := range sents {
		if !strings.ContainsAny(s.text, "(`") {
			continue // no form of a gloss: spare lowering every later sentence
		}
		lt := lower(s.text)
		if !names(lt) {
			continue
		}
		if c := sentenceClass(strings.TrimSpace(s.text), OriginFinal); c != ClassFinding && c != ClassChange {
			continue
		}
		out = append(out, glossesIn(lt, s.pos, want)...)
	}
	return out
}

// glossUndo is an undo of a glossed identifier: the undo names it and
// shares a word of its description, said after the gloss.
type glossUndo struct {
	undo
	gloss
}

// glossUndos pairs each undo with the glosses of what it undoes.
func glossUndos(undos []undo, glosses []gloss) []glossUndo {
	var out []glossUndo
	for _, u := range undos {
		for _, g := range glosses {
			if g.pos < u.pos && u.tokens[g.ident] && overlap(u.subject, g.words) > 0 {
				out = append(out, glossUndo{u, g})
			}
		}
	}
	return out
}

// glossUndoneIn returns the sentences of sents found in text (said at pos)
// that say a gloss's description in other words than its identifier,
// which a later undo removes, and why: every word of the description is
// in the sentence's subject, the identifier is not (that is undoneIn's,
// but for a patch's removal, which undoneIn does not read: a sentence
// naming the setting beside its description, the gloss itself, goes too),
// and the sentence reports no undo itself.
func glossUndoneIn(text string, sents []string, pos int, links []glossUndo) (cut []string, why string) {
	for _, st := range sents {
		lt := lower(st)
		if !holdsSentence(text, st) || undoCue.MatchString(lt) {
			continue
		}
		subj := pathSubject(st)
		for _, l := range links {
			if l.undo.pos <= pos || !l.removed && strings.Contains(lt, l.ident) || overlap(subj, l.words) < len(l.words) {
				continue
			}
			cut = append(cut, st)
			if why == "" {
				why = fmt.Sprintf("undone later: %s (the session said %q for %s)", preview(l.undo.text), l.desc, l.ident)
			}
			break
		}
	}
	return cut, why
}

// Bytes of a gloss as glossesSize counts them: its place in a slice, and a
// subject map's header (heldMapBytes) and entries (heldEntryBytes).
const glossBytes = int(unsafe.Sizeof(gloss{}))

// glossesSize returns about the bytes glosses take in memory, as heldSize
// counts a held text: each one's strings and its words' map.
func glossesSize(gs []gloss) int {
	n := 0
	for _, g := range gs {
		n += glossBytes + len(g.ident) + len(g.desc) + heldMapBytes
		for w := range g.words {
			n += len(w) + heldEntryBytes
		}
	}
	return n
}
