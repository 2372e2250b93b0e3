package ingest

import (
	"regexp"
	"strings"
)

// Joining (mergeSteps, mergeBySubject) puts a tool loop's statements into
// one memory, and a correction whose subject is only a pronoun ("So
// spotter.css is gitignored ... It IS tracked in git") names nothing that
// dropRevised could match against the statement it corrects: both end up
// in the memory. dropSelfCorrected reads each joined memory sentence by
// sentence and takes out what a later sentence of the same memory
// corrects.

// emphaticCue is an auxiliary or a negation written in capitals inside a
// sentence ("It IS tracked", "it does NOT run"): the writer insisting on
// the opposite of what was said before. Matched on the original case.
var emphaticCue = regexp.MustCompile(`\b(?:IS|ISN'T|ARE|AREN'T|WAS|WASN'T|WERE|DOES|DOESN'T|DID|DIDN'T|DO|DON'T|NOT|CAN|CAN'T|HAS|HASN'T|HAVE|WILL|WON'T)\b`)

// pronounLead opens a sentence whose subject is only a pronoun (after a
// connective or an interjection): it says nothing of its own subject, so
// the subject is the previous sentence's.
var pronounLead = regexp.MustCompile(`^` + leadWords + `(?:it|this|that|they|these|those)(?:'s|'re|\s)`)

// leadWords are the interjections and connectives a sentence may open
// with before its subject ("So it ...", "Wait, that ..."), as a regular
// expression's group repeated any number of times.
const leadWords = `(?:(?:so|but|and|wait|oh|hmm|no|ok|okay|well|ah)[,.:;!]?\s+)*`

// objectCue is a revision cue that names what it is about in its own
// object ("instead of collecting them into a slice", "despite the
// retry"): the words after it, up to the end of their clause, say what is
// replaced or held against, not the pronoun subject of the sentence.
var objectCue = regexp.MustCompile(`(?i)\b(?:instead\s+of|despite)\s+`)

// selfCorrection reports whether a sentence corrects prev, the sentence
// before it: a revision cue (revisionCue, or an emphatic capitalised
// auxiliary) with a pronoun as its subject, which stands for what prev
// said. A cue with an object of its own (objectCue) corrects prev only
// when its object is what prev says (cueObjectIn): "They yield results
// instead of collecting them" after a sentence about the functions'
// names describes a design, it does not replace their names.
func selfCorrection(prev, s string) bool {
	folded := quoteFold.Replace(strings.TrimSpace(s))
	ls := lower(folded) // the offsets of ls are those of folded
	if !pronounLead.MatchString(ls) {
		return false
	}
	if emphaticCue.MatchString(s) {
		return true
	}
	for _, m := range correctingCues(ls) {
		if o := objectCue.FindStringIndex(ls[m[0]:]); o == nil || o[0] != 0 {
			return true // a cue about the subject itself: "That didn't work"
		}
		if cueObjectIn(folded[m[0]:], prev) { // in its case: names are read from it
			return true
		}
	}
	return false
}

// cueObjectIn reports whether the object of the object cue opening cue
// (up to the end of its clause, cueClauseBreak) is what prev says: it
// shares a subject token with prev, its cue words left out, or names no
// subject of its own ("instead of that", "despite it"), so it refers back
// to prev.
func cueObjectIn(cue, prev string) bool {
	if selfCorrectOff["object"] {
		return true
	}
	subj := cueObject(cue)
	return len(subj) == 0 || overlap(subj, withoutCue(subjectOf(prev))) > 0
}

// cueObject returns the subject of the object of the object cue opening
// cue (objectCue), up to the end of its clause (cueClauseBreak), its cue
// words left out: what "instead of X" replaces, what "despite X" holds
// against. It is empty when the object names nothing of its own
// ("instead of that").
func cueObject(cue string) map[string]bool {
	return withoutCue(subjectOf(objectText(cue)))
}

// cueObjects returns, for a sentence whose every revision cue is an
// object cue naming a subject of its own ("... instead of polling the
// API"), the subjects of those objects, and the objects as written
// (up to the end of their clause): such a sentence corrects
// only a statement that says what it replaces (dropRevised), not one
// that merely shares a word with the rest of it. It returns nil when a
// cue of the sentence is not an object cue or its object names nothing
// ("instead of that"): the sentence revises as any other does.
func cueObjects(text string) ([]map[string]bool, []string) {
	if revisionOff["object"] {
		return nil, nil
	}
	folded := quoteFold.Replace(text)
	lt := lower(folded) // the offsets of lt are those of folded
	var objs []map[string]bool
	var written []string
	for _, m := range correctingCues(lt) {
		if o := objectCue.FindStringIndex(lt[m[0]:]); o == nil || o[0] != 0 {
			return nil, nil
		}
		obj := cueObject(folded[m[0]:])
		if len(obj) == 0 {
			return nil, nil
		}
		objs = append(objs, obj)
		written = append(written, objectText(folded[m[0]:])) // in its case: names are read from it
	}
	return objs, written
}

// objectText returns the object of the object cue opening cue
// (objectCue), up to the end of its clause (cueClauseBreak), as written.
// A clause break inside a code span ("instead of `type(x) is str`")
// ends no clause (clauseBreakOutsideCode).
func objectText(cue string) string {
	obj := cue[objectCue.FindStringIndex(cue)[1]:]
	if b := clauseBreakOutsideCode(obj); b >= 0 {
		obj = obj[:b]
	}
	return obj
}

// clauseBreakOutsideCode returns the offset of the first clause break of
// s (cueClauseBreak) outside a code span, or -1: the brackets of
// "`formatted_value()`" belong to a name. With ruleObjectCode off, a
// break inside a code span counts too, as it did.
func clauseBreakOutsideCode(s string) int {
	for _, b := range cueClauseBreak.FindAllStringIndex(s, -1) {
		if !ruleOn(ruleObjectCode) || strings.Count(s[:b[0]], "`")%2 == 0 {
			return b[0]
		}
	}
	return -1
}

// saysObject reports whether a statement's subject says one of a
// reviser's cue objects (cueObjects): it holds two of the object's
// tokens, or all of a one-token object, the same two-token bar
// dropRevised sets for the sentence as a whole. A nil objs restricts
// nothing.
func saysObject(subj map[string]bool, objs []map[string]bool) bool {
	if objs == nil {
		return true
	}
	for _, o := range objs {
		n := 0
		for w := range o {
			for t := range subj {
				if sameWord(w, t) {
					n++
					break
				}
			}
		}
		if n >= min(2, len(o)) {
			return true
		}
	}
	return false
}

// sameWord reports whether two subject tokens are one word: equal, or
// one is the other with a letter more or less at the end past a shared
// stem of four letters or more, which stem leaves apart ("skips" and
// "skipping" as "skipp").
func sameWord(a, b string) bool {
	if a == b {
		return true
	}
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n >= 4 && n >= max(len(a), len(b))-1
}

// selfCorrectOff names mechanisms of selfCorrection switched off
// ("object": an object cue corrects whatever its object), for measuring
// each one alone.
var selfCorrectOff = map[string]bool{}

// dropSelfCorrected takes out of each kept statement of the model the
// sentence a later sentence of the same statement corrects
// (selfCorrection): the one just before the correction, which its pronoun
// refers to. A statement left with nothing specific is dropped as
// revised. Also taking out the earlier sentences naming the corrected
// one's load-bearing tokens was measured (memtray eval sessions): it cost
// a fact on sessions-dev, the correct "gitignored but tracked" said in
// the same memory, and was left out.
func dropSelfCorrected(cands []Candidate) {
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.Origin == OriginInstruction {
			continue
		}
		ss := sentences(c.Text)
		if len(ss) < 2 {
			continue
		}
		cutAt := map[int]bool{}
		why := ""
		for k := 1; k < len(ss); k++ {
			if !selfCorrection(ss[k-1].text, ss[k].text) || cutAt[k-1] {
				continue
			}
			cutAt[k-1] = true
			if why == "" {
				why = ss[k].text
			}
		}
		if len(cutAt) == 0 {
			continue
		}
		var cut []string
		for k, s := range ss {
			if cutAt[k] {
				cut = append(cut, strings.TrimSpace(s.text))
			}
		}
		cutSentences(c, cut, "revised later: "+preview(why))
	}
}
