package ingest

import (
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// Statements a later turn updates. A long session states its state again
// and again, a little changed each time: "docs/overview.md: OPK concepts
// and UI" in one answer, "docs/overview.md: OPK concepts, UI and the
// Settings section" in a later one; "Matrix: 3.11, 3.12" then "Matrix:
// 3.10 to 3.14, Windows excluded". The later statement is the session's
// current version; the earlier one, stored, is stale. A whole-memory test
// (supersedeRestated) misses it: the memories around the two statements
// differ. dropUpdated works per statement (a sentence or a list line): a
// kept statement of the model is cut out of its candidate (the rest of it
// kept) when a later turn of the session states the same subject anew
// (updatedBy): the same lead (leadOf: a "Label: …" or a leading path,
// identifier or code span), most of the rest said again, and something
// said that the statement did not. Live capture distils the earlier turn
// again when a new turn updates it (mayUpdate), and the memory loses
// the statement there too: re-packed with what remains, its id and history
// kept (settle), or superseded by the updating memory when nothing
// remains. Only a turn with a statement t updates is distilled again: the
// turn remembers the statements nothing updated yet (pendingLead).

// reasonUpdated opens the reason of a statement cut because a later turn
// states its subject anew.
const reasonUpdated = "updated later: "

// maxLeadWords is the most words a "Label: …" lead has: a longer text
// before a colon is a sentence introducing what follows, not a label.
const maxLeadWords = 4

// updateOff names mechanisms of dropUpdated switched off ("all": the rule
// itself), for measuring each one alone.
var updateOff = map[string]bool{}

// leadOf returns the leading subject of a statement, lowercased, and what
// the statement says of it: the label of "Label: …" (at most maxLeadWords
// words, not a sentence), else a code span it opens with, else its first
// word when that is a load-bearing token (a path, an identifier, a
// setting). It returns "" when the statement opens with none of them.
func leadOf(st string) (lead, rest string) {
	s := strings.TrimLeft(st, "*_ ")
	if label, after, ok := strings.Cut(s, ": "); ok {
		label = strings.Trim(label, "*_` ")
		if label != "" && len(strings.Fields(label)) <= maxLeadWords && !strings.ContainsAny(label, "!?,;") && !strings.Contains(label, ". ") {
			return lower(label), after
		}
	}
	if strings.HasPrefix(s, "`") {
		if end := strings.IndexByte(s[1:], '`'); end > 0 {
			return lower(s[1 : 1+end]), s[2+end:]
		}
	}
	first, after, _ := strings.Cut(s, " ")
	first = strings.Trim(first, "*_`,;:()")
	if first != "" && memory.NamesLoadBearing(first) {
		return lower(first), after
	}
	return "", ""
}

// leadKeys returns what leadOf's lead may be, read cheaply enough for
// every sentence a session says later: the text before ": " and the first
// word (or leading code span), lowercased, for a lookup before leadOf
// reads the sentence whole.
func leadKeys(st string) (label, first string) {
	s := strings.TrimLeft(st, "*_ ")
	if l, _, ok := strings.Cut(s, ": "); ok && len(l) <= 80 {
		label = lower(strings.Trim(l, "*_` "))
	}
	if strings.HasPrefix(s, "`") {
		if end := strings.IndexByte(s[1:], '`'); end > 0 {
			return label, lower(s[1 : 1+end])
		}
	}
	f, _, _ := strings.Cut(s, " ")
	return label, lower(strings.Trim(f, "*_`,;:()"))
}

// leadFilterOff switches mayUpdate's lead filter off (every sentence of
// the new turn read and classified, as at 764e448), for the benchmark
// that measures it.
var leadFilterOff = false

// mayLead reports whether leadOf's lead of st may be one of leads: it
// tries every lead leadOf may return (the label before ": ", a leading
// code span, the first word) without reading whether the label or word
// qualifies (NamesLoadBearing), so that false means leadOf's lead is
// none of leads, whatever the sentence; unlike leadKeys, a label of any
// length is tried.
func mayLead(st string, leads map[string]bool) bool {
	s := strings.TrimLeft(st, "*_ ")
	if l, _, ok := strings.Cut(s, ": "); ok && leads[lower(strings.Trim(l, "*_` "))] {
		return true
	}
	if strings.HasPrefix(s, "`") {
		if end := strings.IndexByte(s[1:], '`'); end > 0 && leads[lower(s[1:1+end])] {
			return true
		}
	}
	f, _, _ := strings.Cut(s, " ")
	return leads[lower(strings.Trim(f, "*_`,;:()"))]
}

// updatable is a kept statement of the turn that a later one may update.
type updatable struct {
	text    string
	lead    string          // leadOf's
	rest    map[string]bool // the subject of what it says of its lead
	subject map[string]bool // the subject of the whole statement
	cand    int             // the candidate holding it
}

// updatedBy reports whether the later statement b (its lead a's, what it
// says of it restB) states a's subject anew: a and b share at least two
// of the tokens and words they say of the lead, at least half of what
// each says (a later statement saying much else under the same label is
// about something else; one saying much less is a mention), and b says
// something a does not (a word or a load-bearing token a lacks): a later
// statement that only repeats a part of a is no newer version of it.
func updatedBy(a updatable, b string, restB map[string]bool) bool {
	n := overlap(a.rest, restB)
	if n < 2 || 2*n < len(a.rest) || 2*n < len(restB) {
		return false
	}
	for t := range subjectOf(b) {
		if !a.subject[t] {
			return true
		}
	}
	return !namesAll(lower(a.text), namedTokens(b))
}

// dropUpdated cuts out of each kept candidate of the model (not the
// user's words, not what the user taught, not an instruction line) each
// statement of it (a sentence of turn, the turn's own) that a later
// statement of the session (later: the sentences of later turns) updates
// (updatedBy). The later statement is one distillation keeps (a finding
// or a change) and says more than the turn does: a later line a block of
// the turn holds whole is dropped there as said before (held.go), and
// must not take the earlier statement with it. A line only of file names
// is no statement about them, and a line introducing a list (ending in
// ":") says what follows, not of its lead: neither is updated nor
// updates. The reason names the later statement.
func dropUpdated(t Turn, cands []Candidate, turn, later []posSentence) []pendingLead {
	if updateOff["all"] {
		return nil
	}
	var us []updatable
	byLead := map[string][]int{}
	for _, s := range turn {
		// The cheap tests first: the candidate holding the statement (a
		// substring test) before the subject of what it says.
		if strings.HasSuffix(s.text, ":") {
			continue
		}
		cand := holderOf(cands, s.text)
		if cand < 0 {
			continue
		}
		lead, rest := leadOf(s.text)
		if lead == "" || filesOnly(s.text) {
			continue
		}
		restSubj := subjectOf(rest)
		if len(restSubj) < 2 {
			continue
		}
		byLead[lead] = append(byLead[lead], len(us))
		us = append(us, updatable{text: s.text, lead: lead, rest: restSubj, subject: subjectOf(s.text), cand: cand})
	}
	if len(us) == 0 {
		return nil
	}
	if len(later) == 0 {
		return pendingOf(us, nil)
	}
	var said []heldText // what the turn said, read once a later statement needs it
	saidRead := false
	type piece struct {
		cand int
		why  string
	}
	cut := map[piece][]string{}
	var order []piece
	done := map[int]bool{}
	for _, l := range later {
		label, first := leadKeys(l.text)
		if len(byLead[label]) == 0 && len(byLead[first]) == 0 {
			continue
		}
		lead, rest := leadOf(l.text)
		idx := byLead[lead]
		if len(idx) == 0 || strings.HasSuffix(l.text, ":") {
			continue
		}
		if c := sentenceClass(l.text, OriginFinal); c != ClassFinding && c != ClassChange {
			continue
		}
		restB := subjectOf(rest)
		if !saidRead {
			said, saidRead = saidBlocks(t), true
		}
		if heldBy(l.text, said) {
			continue
		}
		for _, k := range idx {
			if done[k] || !updatedBy(us[k], l.text, restB) {
				continue
			}
			done[k] = true
			p := piece{us[k].cand, l.text}
			if cut[p] == nil {
				order = append(order, p)
			}
			cut[p] = append(cut[p], us[k].text)
		}
	}
	for _, p := range order {
		if c := &cands[p.cand]; c.Keep {
			cutSentences(c, cut[p], reasonUpdated+preview(p.why))
		}
	}
	return pendingOf(us, done)
}

// holderOf returns the index of the model's kept candidate that holds
// statement st as a sentence of its own (holdsSentence), preferring one
// where a sentence opens at it (sentenceSpan) over one that only quotes
// it inside a sentence; -1 when none does.
func holderOf(cands []Candidate, st string) int {
	held := -1
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.Origin == OriginInstruction || c.taught {
			continue
		}
		switch at, opens := sentenceSpan(c.Text, st); {
		case opens:
			return i
		case at >= 0 && held < 0:
			held = i
		}
	}
	return held
}

// pendingLead is a statement of a turn that a later statement of its
// session may still update (dropUpdated): one of its kept statements with
// a lead that nothing the session said after the turn updated yet. Live
// capture remembers them with the turn (recentTurn.pending), so that
// mayUpdate tells exactly whether a new turn updates one.
type pendingLead struct {
	lead, text string
}

// pendingBytes is what a pendingLead takes beyond its strings' bytes: its
// two string headers.
var pendingBytes = 2 * stringBytes

// pendingOf returns the statements of us that done does not mark.
func pendingOf(us []updatable, done map[int]bool) []pendingLead {
	var out []pendingLead
	for k, u := range us {
		if !done[k] {
			out = append(out, pendingLead{lead: u.lead, text: u.text})
		}
	}
	return out
}

// mayUpdate returns the indexes, from from on, of the earlier turns of a
// session (as a live session remembers them) a statement of the new turn
// t updates (dropUpdated): a statement of t that distillation keeps (a
// finding or a change, not introducing a list), that the earlier turn did
// not say already (held), updates one of the earlier turn's statements
// that nothing said since updated (recentTurn.pending, from the turn's
// last distillation). That is the test dropUpdated makes when the earlier
// turn is distilled again knowing t, so live capture distils again every
// turn batch ingest would cut a statement of, and no other: a turn whose
// statements t only may update (it names their lead and some of their
// words) is left as it is.
func mayUpdate(t Turn, earlier []recentTurn, from int) map[int]bool {
	if updateOff["all"] || from >= len(earlier) {
		return nil
	}
	// Only a statement naming the lead of a pending statement can update
	// it: t's other sentences (a pasted file, a log) are not read further
	// (mayLead), nor classified.
	leads := map[string]bool{}
	for i := from; i < len(earlier); i++ {
		for _, p := range earlier[i].pending {
			leads[p.lead] = true
		}
	}
	if len(leads) == 0 && !leadFilterOff {
		return nil
	}
	type statement struct {
		text, lead string
		rest       map[string]bool // the subject of what it says of its lead
	}
	var later []statement
	for _, text := range append(userTexts(t), stepTexts(t)...) {
		for _, s := range sentences(text) {
			if !leadFilterOff && !mayLead(s.text, leads) {
				continue
			}
			l, rest := leadOf(s.text)
			if l == "" || (!leadFilterOff && !leads[l]) || strings.HasSuffix(s.text, ":") {
				continue
			}
			if c := sentenceClass(s.text, OriginFinal); c == ClassFinding || c == ClassChange {
				later = append(later, statement{s.text, l, subjectOf(rest)})
			}
		}
	}
	if len(later) == 0 {
		return nil
	}
	var out map[int]bool
	held := make([]int8, len(later)) // per earlier turn: 0 not read, 1 held by it, 2 not
	for i := from; i < len(earlier); i++ {
		e := &earlier[i]
		clear(held)
	pending:
		for _, p := range e.pending {
			var u *updatable // read once a statement of t names its lead
			for k, l := range later {
				if l.lead != p.lead {
					continue
				}
				if held[k] == 0 {
					held[k] = 2
					if heldBy(l.text, e.said) {
						held[k] = 1
					}
				}
				if held[k] == 1 {
					continue
				}
				if u == nil {
					_, rest := leadOf(p.text)
					u = &updatable{text: p.text, lead: p.lead, rest: subjectOf(rest), subject: subjectOf(p.text)}
				}
				if updatedBy(*u, l.text, l.rest) {
					if out == nil {
						out = map[int]bool{}
					}
					out[i] = true
					break pending
				}
			}
		}
	}
	return out
}

// updatedWhy returns the later statement that updated a statement of text,
// kept before, that the new distillation now dropped or cut (reasonUpdated),
// or "" when none did.
func updatedWhy(now []Candidate, text string) string {
	for _, c := range now {
		if !c.Keep && strings.HasPrefix(c.Reason, reasonUpdated) && holdsPiece(text, c.Text) {
			return strings.TrimPrefix(c.Reason, reasonUpdated)
		}
		for _, k := range c.cuts {
			if strings.HasPrefix(k.reason, reasonUpdated) && holdsPiece(text, k.text) {
				return strings.TrimPrefix(k.reason, reasonUpdated)
			}
		}
	}
	return ""
}
