package ingest

import (
	"maps"
	"regexp"
)

// revisionOff names mechanisms of dropRevised switched off ("cue-word",
// "focus", "cue-alone", "vague-near"), for measuring each one alone, and
// the other users of correcting put back on the raw revisionCue
// ("raw-confirm", "raw-mend", "raw-context": correctsFor).
var revisionOff = map[string]bool{}

// withoutCue returns a revising sentence's subject less its revision cue
// words ("instead", "persist"): the cue marks a correction, it does not
// name what is corrected, so "instead of polling ..." and "... uses
// webhooks instead" share no subject through it (turnjudge.go's revised
// subject leaves the cue out alike).
func withoutCue(subj map[string]bool) map[string]bool {
	if revisionOff["cue-word"] {
		return subj
	}
	out := make(map[string]bool, len(subj))
	for t := range subj {
		if !cueWord(t) {
			out[t] = true
		}
	}
	return out
}

// cueClauseBreak splits a revising sentence into clauses: at punctuation
// that ends one (commas, semicolons, a colon before a space, brackets,
// a dash between spaces) and before a conjunction opening a contrasting
// clause. A colon inside a token (":otel_span.x/1", "a:b") splits nothing.
var cueClauseBreak = regexp.MustCompile(`[,;()\[\]]|:(?:\s|$)|\s[-–—]+\s|\b(?:but|while|whereas|although|though)\b`)

// cueFocus returns the subject of the clauses of a revising sentence that
// hold its revision cue, the cue words left out: what the correction is
// about. "Let's move the session path into one function all the commands
// use, instead of duplicating it" corrects the duplication, not every
// statement naming sessions or commands; "Used implicit try (rescue at
// function level) instead" corrects the explicit try.
func cueFocus(text string) map[string]bool {
	text = quoteFold.Replace(text) // the offsets of lt are those of the folded text
	lt := lower(text)
	var clauses [][2]int
	start := 0
	for _, c := range cueClauseBreak.FindAllStringIndex(lt, -1) {
		clauses = append(clauses, [2]int{start, c[0]})
		start = c[1]
	}
	clauses = append(clauses, [2]int{start, len(lt)})
	subj := func(i int) map[string]bool {
		if i < 0 || i >= len(clauses) {
			return nil
		}
		return withoutCue(subjectOf(text[clauses[i][0]:clauses[i][1]]))
	}
	out := map[string]bool{}
	for i, c := range clauses {
		if !correcting(lt[c[0]:c[1]]) {
			continue
		}
		s := subj(i)
		if len(s) == 0 && !revisionOff["cue-alone"] {
			// A cue that stands alone ("Instead, we ...", "... (at
			// function level) instead.") governs the clauses beside it;
			// when a clause after it is negated ("Instead, we only added
			// X but didn't change Y"), that clause is what it corrects,
			// and the others say what is so (confirmsStatement).
			s = map[string]bool{}
			if neg := negatedAfter(lt, clauses, i); len(neg) > 0 {
				for _, k := range neg {
					maps.Copy(s, subj(k))
				}
			} else {
				maps.Copy(s, subj(i-1))
				maps.Copy(s, subj(i+1))
			}
		}
		maps.Copy(out, s)
	}
	return out
}

// aboutFocus reports whether a statement's subject holds a token of the
// reviser's focus (cueFocus): a correction revises only what names what
// it corrects.
func aboutFocus(subj, focus map[string]bool) bool {
	return revisionOff["focus"] || overlap(subj, focus) > 0
}

// conditionalLead opens a conditional clause: a revision cue inside one
// ("If deploy still fails, check the Pages settings") is advice about
// what may happen, not a report that something failed.
var conditionalLead = regexp.MustCompile(`\b(?:if|unless|in case|when|whenever)\b`)

// stillState is the part of revisionCue that tells a state goes on
// ("still shows", "still happens", "still there"): a correction only
// when what goes on is a problem (problemWord).
var stillState = regexp.MustCompile(`^still (?:show\w*|happen\w*|there)$`)

// problemWord names something wrong that may go on after a fix: an
// error, a warning, a failure, the old or same value, nothing shown.
var problemWord = regexp.MustCompile(`\b(?:errors?|warnings?|fail\w*|exceptions?|bugs?|crash\w*|broken|wrong|incorrect|old|stale|same|nothing|blank|empty|missing|issues?|problems?|panic\w*|[45]\d\d)\b`)

// correctingCues returns the spans of the revision cues of lt (a
// sentence, lowered) that correct something. Left out: a cue inside a
// conditional clause (conditionalLead between the start of the cue's
// clause, cueClauseBreak, and the cue), which tells what to do should it
// happen, and a state that goes on (stillState) whose clause names no
// problem ("The toolbar still shows the quick actions").
func correctingCues(lt string) [][]int {
	if !cueMemo.has(lt) {
		return nil // most sentences: no cue, told by the memo (cueMemo)
	}
	ms := revisionCue.FindAllStringIndex(lt, -1)
	out := ms[:0]
	for _, m := range ms {
		start := clauseStart(lt, m[0])
		if !revisionOff["conditional"] && conditionalLead.MatchString(lt[start:m[0]]) {
			continue
		}
		if embeddedActually(lt, start, m) {
			continue
		}
		if !revisionOff["state"] && stillState.MatchString(lt[m[0]:m[1]]) && !problemWord.MatchString(lt[start:cueClauseEnd(lt, m[1])]) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// correcting reports whether a sentence, lowered, holds a revision cue
// that corrects something (correctingCues).
func correcting(lt string) bool {
	return len(correctingCues(lt)) > 0
}

// correctsFor is correcting for one of its users outside dropRevised
// (use names it in revisionOff): with revisionOff[use] set it reads the
// raw revisionCue, as that user did before, for measuring the change.
func correctsFor(use, lt string) bool {
	if revisionOff[use] {
		return revisionCue.MatchString(lt)
	}
	return correcting(lt)
}

// clauseStart returns the offset in lt where the clause holding offset i
// starts: after the last clause break (cueClauseBreak) before i.
func clauseStart(lt string, i int) int {
	start := 0
	for _, b := range cueClauseBreak.FindAllStringIndex(lt[:i], -1) {
		start = b[1]
	}
	return start
}

// cueClauseEnd returns the offset in lt where the clause holding offset i
// ends: at the first clause break (cueClauseBreak) after i.
func cueClauseEnd(lt string, i int) int {
	if b := cueClauseBreak.FindStringIndex(lt[i:]); b != nil {
		return i + b[0]
	}
	return len(lt)
}
