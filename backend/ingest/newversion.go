package ingest

import "regexp"

// A replacement by a new version of the same thing undoes nothing. "Replace
// the existing `render()` method with this updated version" and "Replaced
// the old `render()` with the one below" give `render()` anew: what was
// said of `render()` is not made false by it (a correction may do that,
// dropRevised reads those), and `render()` still exists. "Replace `npm
// ci` with `pnpm install`" puts another thing in X's place: an undo of X
// (undoOf). Read by form: the replacement is a new version, a pointer to
// text given beside the sentence ("with these", "with the following",
// "with the one provided above", "with:"), not a thing named.

// ruleNewVersion names the rule, as ablate lists it.
const ruleNewVersion = "undo-new-version"

// newVersion is a replacement of X "with" a new version of it: a
// demonstrative or "the following", "the one(s) (provided|shown|...)", a
// new or updated version, code or implementation, or a colon ending the
// sentence (the code follows).
var newVersion = regexp.MustCompile(`\breplac(?:e|ed|es|ing)\b[^;]*?\bwith\s*(?::\s*$|(?:these|this|those|the following|the (?:code|version|one|ones|snippet|block) (?:below|above)|the ones?\b[^.;,]*?\b(?:provided|shown|given|above|below|here))\b|(?:(?:the|this|these|an?|my) )?(?:updated|new|revised|corrected|fixed|modified|improved|rewritten) (?:versions?|code|implementations?|ones?)\b)`)

// otherUndo is an undo verb other than replacing (undoCue, undoAsked): a
// sentence that also removes or reverts something undoes that.
var otherUndo = regexp.MustCompile(`\b(?:remov|delet|renam|mov|revert|reintroduc|restor|re-?add|rolled back|roll back|undo|undid)\w*`)

// replacedAnew reports whether a lowercased sentence's only undo is a
// replacement by a new version of the same thing (newVersion).
func replacedAnew(ls string) bool {
	return ruleOn(ruleNewVersion) && newVersion.MatchString(ls) && !otherUndo.MatchString(ls) && !ownChange.MatchString(ls)
}
