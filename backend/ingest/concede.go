package ingest

import (
	"regexp"
	"strings"
)

// A reply that concedes a point the user made opens with an
// acknowledgement ("You're right that ...", "Good catch - ...", "I
// apologize for the confusion. ..."). The acknowledgement says nothing;
// what follows it is read on its own: ackEnd finds where it ends for the
// sentence's class, stripAck cuts it off the statement's text.

// ackClause is a lead that takes a clause saying what it is for ("I
// apologize for the confusion", "thanks for catching that", "you're right
// about that"): the clause is part of the acknowledgement.
var ackClause = regexp.MustCompile(`^(?:(?:i )?apologi[sz]e|(?:my )?apologies|(?:i'm |i am )?(?:so |really |very )?sorry|thanks|thank you|(?:you'?re|you are) (?:\w+ )?(?:right|correct))$`)

// concession is an acknowledgement that the user was right: it concedes a
// point rather than merely agreeing to go on ("sure", "ok").
var concession = regexp.MustCompile(`^(?:(?:you'?re|you are) (?:absolutely |totally |completely |quite |exactly |entirely |so )?(?:right|correct)|good (?:catch|point|call|eye|spot)|fair (?:point|enough)|my (?:mistake|bad|apologies|fault)|(?:i )?apologi[sz]e|apologies|(?:i'm |i am )?(?:so |really |very )?sorry|i stand corrected|thanks? (?:you )?for (?:catching|pointing|noticing|flagging|spotting|the correction))\b`)

// ackConnector joins an acknowledgement to what follows ("You're right,
// and I apologize ...", "Good catch, but ...").
var ackConnector = regexp.MustCompile(`^(?:and|but|so)\s+`)

// maxAckLeads bounds the acknowledgements read off one sentence ("Ah
// yes, you're right - ...").
const maxAckLeads = 4

// ackEnd returns the byte offset where the acknowledgements that open a
// lowercased sentence (lower) end: ackLead's words, a concession, and an
// apology's or a thanks' clause ("I apologize for the confusion").
// strict (for a statement's text, not its class) cuts a word that may
// open a statement too ("No migration is needed", "Right now ...") only
// when punctuation follows it; a concession is always cut.
func ackEnd(ls string, strict bool) int {
	end := 0
	conceded := false
	for i := 0; i < maxAckLeads; i++ {
		rest := ls[end:]
		if conceded {
			if loc := ackConnector.FindStringIndex(rest); loc != nil {
				end += loc[1]
				end += ackEnd(ls[end:], strict)
				break
			}
		}
		m := ackLead.FindStringSubmatchIndex(rest)
		if m == nil || m[1] == 0 {
			break
		}
		word, n := rest[:m[3]], m[1]
		con := concession.MatchString(rest)
		switch {
		case strings.TrimSpace(rest[m[3]:n]) != "":
			// punctuation ends the lead
		case ackClause.MatchString(word):
			if c := clauseEnd(rest[n:]); c > 0 { // "I apologize for the confusion"
				n += c
				n += len(rest[n:]) - len(strings.TrimLeft(rest[n:], " ,.:;!—–-"))
			} else if con && strings.HasPrefix(rest[n:], "that ") { // "You're right that X ..."
				n += len("that ")
			}
		case strict && !con && n < len(rest) && ackEnd(rest[n:], true) == 0:
			return end // "No migration is needed": a statement, not an answer
		}
		conceded = conceded || con
		end += n
	}
	return end
}

// clauseEnd returns the length of the "for ...", "about ..." or "to ..."
// clause that opens s ("for the confusion", "to question this"), up to
// the punctuation that ends it, or 0.
func clauseEnd(s string) int {
	if !strings.HasPrefix(s, "for ") && !strings.HasPrefix(s, "about ") && !strings.HasPrefix(s, "to ") {
		return 0
	}
	end := len(s)
	if i := strings.IndexAny(s, ".,;:!?—–"); i >= 0 {
		end = i
	}
	if i := strings.Index(s, " - "); i >= 0 && i < end {
		end = i
	}
	return end
}

// stripAck cuts the acknowledgements that open a sentence conceding a
// point (ackEnd, strict; concedes) and the punctuation after them: what
// is left is the statement. A sentence that opens with "Okay," or "Sure,"
// and concedes nothing is left as it is.
func stripAck(s string) string {
	s = strings.TrimSpace(s)
	ls := lower(s)
	if !concedes(ls) {
		return s
	}
	n := ackEnd(ls, true)
	if n == 0 {
		return s
	}
	return capitalizeLead(strings.TrimSpace(strings.TrimLeft(s[foldedOffset(s, n):], " ,.:;!—–-")))
}

// sentenceOpeners are the closed class of words (determiners, pronouns)
// a statement left lowercase by a cut lead opens with; a sentence opening
// with anything else (an identifier, a command: "npm run build ...") keeps
// its case.
var sentenceOpeners = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the this that these those it its we our you your i my they their
		there all every each no some any both either neither`) {
		sentenceOpeners[w] = true
	}
}

// capitalizeLead writes the first letter of s in upper case when s opens
// with a word of sentenceOpeners: what is left after a cut lead reads as
// the sentence it is ("the cache lives in ..." becomes "The cache ...").
func capitalizeLead(s string) string {
	w, _, _ := strings.Cut(s, " ")
	if w == "" || !sentenceOpeners[w] {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// foldedOffset maps a byte offset of quoteFold.Replace(s) (the offsets of
// lower) back to s.
func foldedOffset(s string, off int) int {
	folded := 0
	for i, r := range s {
		if folded >= off {
			return i
		}
		switch r {
		case '’', '‘', '“', '”':
			folded++
		default:
			folded += len(string(r))
		}
	}
	return len(s)
}

// concedes reports whether a lowercased sentence opens with a concession
// (concession, after any "ah", "yes", "ok").
func concedes(ls string) bool {
	for i := 0; i < maxAckLeads; i++ {
		if concession.MatchString(ls) {
			return true
		}
		m := ackLead.FindStringIndex(ls)
		if m == nil || m[1] == 0 {
			return false
		}
		ls = ls[m[1]:]
	}
	return false
}
