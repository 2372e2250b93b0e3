package ingest

import (
	"regexp"
	"strings"
)

// Undos in words that revise nothing: one that carries out what a
// statement proposed (carriedOut), and a move of a thing a statement
// says nothing of the place of (keptWhereMoved). dropUndone takes out a
// kept sentence when a later sentence removes, moves or replaces what it
// names: the sentence described a state the session left. A sentence
// that proposes the undo itself ("you can simplify this method by
// removing the `xbrl_tag` logic", "Move `resolveRepoPath` to a new
// file") describes no state the undo leaves: the later "Removed XBRL tag
// checking" or "Move the `resolveRepoPath` tests" carries it out, which
// confirms it, as "Instead, we only added X" confirms a statement that X
// was added (confirmsStatement). An undo of the other direction (a
// revert, a restore, re-adding) still undoes a proposal to remove: it
// takes the removal back.
//
// A sentence that finds fault with the thing ("The CI step used `dir
// dist || ls -l dist`, which fails on Windows PowerShell") was measured
// as carried out alike by the removal that fixes it, and left out: a
// diagnosis is confirmed only when its fix works, and on sessions-dev
// that one was wrong (D7's first trap: the failures were elsewhere).

// ruleCarriedOut names carriedOut for ablate (junk.go).
const ruleCarriedOut = "undo-carried-out"

// undoKinds maps an undo verb's stem to the kind of change it makes:
// "remove" (removed, deleted, dropped), "move" (moved, renamed), "replace".
// A verb of no kind here (revert, restore, re-add, roll back, undo, the
// user's change of their own files) carries out no proposal.
var undoKinds = []struct{ stem, kind string }{
	{"remov", "remove"}, {"delet", "remove"}, {"drop", "remove"}, {"get rid", "remove"}, {"got rid", "remove"},
	{"mov", "move"}, {"renam", "move"}, {"relocat", "move"},
	{"replac", "replace"},
}

// undoVerbKind returns the kind of the first undo verb of a lowercased
// sentence (undoCue, undoAsked, undoNarrated: the verb that makes it an
// undo), "" when it is of no kind undoKinds knows.
func undoVerbKind(ls string) string {
	m := undoVerb.FindString(ls)
	if m == "" {
		return ""
	}
	return verbKind(m)
}

// undoVerb is any undo verb, in any tense, of undoCue, undoAsked and
// undoNarrated.
var undoVerb = regexp.MustCompile(`\b(?:remov\w*|delet\w*|replac\w*|renam\w*|mov(?:e|ed|es|ing)|revert\w*|reintroduc\w*|restor\w*|re-?add\w*|roll(?:ed)? back|undo|undid|(?:updated|changed|modified|edited|rewrote|rewritten|fixed|reworked) my)\b`)

// verbKind returns the kind of an undo verb (undoKinds), "" for none.
func verbKind(verb string) string {
	for _, k := range undoKinds {
		if strings.HasPrefix(verb, k.stem) {
			return k.kind
		}
	}
	return ""
}

// proposedUndo is an undo verb that proposes the change rather than
// reports it (an order, a gerund, a modal's infinitive: "Move X",
// "by removing X", "you can drop X"), with its object. A passive "X
// should be removed" holds the participle undoCue reads as a report of
// an undo, and undoneIn leaves such a sentence alone already.
var proposedUndo = regexp.MustCompile(`(?i)\b(remove|removing|delete|deleting|drop|dropping|get rid of|getting rid of|move|moving|relocate|relocating|rename|renaming|replace|replacing)\b((?:\s+[^\s,;]+){1,8})`)

// carriedOut reports whether the undo u carries out what the kept
// sentence st says rather than undoing it: st proposes an undo of the
// same kind of something u acts on.
func carriedOut(st string, u undo) bool {
	kind := undoVerbKind(lower(strings.TrimSpace(u.text)))
	if kind == "" || u.own {
		return false
	}
	return ruleOn(ruleCarriedOut) && proposesUndo(st, kind, u.tokens)
}

// proposesUndo reports whether a sentence proposes an undo of kind of one of
// tokens (the load-bearing tokens of what the later undo acts on): an
// undo verb of that kind ("removing the `xbrl_tag` logic") whose object
// names one of them, not negated in its clause ("don't remove X"
// proposes keeping X).
func proposesUndo(st string, kind string, tokens map[string]bool) bool {
	text := quotedName.ReplaceAllString(quoteFold.Replace(st), "`$1`")
	lt := lower(text) // the offsets of lt are those of text
	for _, m := range proposedUndo.FindAllStringSubmatchIndex(text, -1) {
		if verbKind(lt[m[2]:m[3]]) != kind || negatedBefore(lt, m[2]) {
			continue
		}
		obj := text[m[4]:m[5]] + " "
		if loc := objectStop.FindStringIndex(obj); loc != nil {
			obj = obj[:loc[0]]
		}
		if namesAny(loadTokens(obj), tokens) {
			return true
		}
	}
	return false
}

// negatedBefore reports whether the clause of lt holding offset i holds a
// negation before i (negation): "we should not remove it" proposes
// nothing.
func negatedBefore(lt string, i int) bool {
	return negation.MatchString(lt[clauseStart(lt, i):i])
}

// namesAny reports whether a holds a token of b.
func namesAny(a, b map[string]bool) bool {
	for t := range a {
		if b[t] {
			return true
		}
	}
	return false
}

// ruleMovePlace names keptWhereMoved for ablate (junk.go).
const ruleMovePlace = "undo-move-place"

// keptWhereMoved reports whether the undo u only moves what the kept
// sentence st names (a move or relocation in words: "Move the
// `describe('resolveRepoPath', ...)` block to `repo-utils.test.ts`",
// "Moved `resolveRepoPath` to a new file") while st says nothing of
// where it is: no path or file name (pathTok), no locative ("is in",
// "lives at": locative, placed). A move leaves what a thing is and does
// as it was ("`resolveRepoPath` is a utility for resolving a repository path",
// "Refactor `resolveRepoPath` to use a local `promisify(exec)`"); only
// where it is changes, as dropRelocated reads a tool call's move
// (moved.go). A rename is no move here: the old name is stale wherever
// it is said.
func keptWhereMoved(st string, u undo) bool {
	if !ruleOn(ruleMovePlace) || u.own {
		return false
	}
	m := undoVerb.FindString(lower(strings.TrimSpace(u.text)))
	if !strings.HasPrefix(m, "mov") && !strings.HasPrefix(m, "relocat") {
		return false
	}
	return !pathTok.MatchString(st) && !locative.MatchString(st) && !placed.MatchString(st)
}

// placed says where a thing is in words a path need not follow: a
// folder's name with its slash ("`scripts/`"), or a verb of being or
// placing with a locative preposition within a few words after it ("lives
// in the repo-root `scripts/` directory", "Placing X in the tasks
// module").
var placed = regexp.MustCompile(`(?i)\b[\w.-]+/(?:[\s` + "`" + `'")]|$)|\b(?:is|are|was|were|lives?|sits?|resides?|located|stored|kept|placed|placing|defined|declared)\b(?:\s+[^\s.;:]+){0,3}?\s+(?:in|at|under|inside|within|into)\b`)
