package ingest

import "regexp"

// needLead opens a user's need for something the turn is to build: "we
// will also need ...", "I think we need a setting for ...", "we do need a
// way to ...". A need stated with a rule word ("we will always need ...")
// stands (standing); a need without an article ("we need Node 20 for the
// build") is a fact about the project and is not matched.
var needLead = regexp.MustCompile(`^(?:(?:ok(?:ay)?|yes|yeah|so|and|also|then|now|but)\b[\s,.;:!—–-]*)*(?:i think |i guess )?(?:we(?:'ll| will)(?: also| still)? (?:need|want)\b|we (?:also |still |do )?(?:need|want) (?:a|an|some|more|another|other)\b)`)

// workOrder opens a user's order to do a piece of work now: an imperative
// verb of change, after "please", "let's", "can you" or an "ok,"/"yes,".
// "Use", "keep", "prefer" are not in it: "please use pnpm instead of npm"
// is a rule.
var workOrder = regexp.MustCompile(`^(?:(?:ok(?:ay)?|yes|yeah|sure|so|and|also|then|now|but|next|first|finally)\b[\s,.;:!—–-]*)*(?:(?:please|pls|let's|lets|go ahead and|can you|could you|would you)\s+)?(?:add|remove|delete|create|update|fix|rename|move|implement|change|refactor|extract|modify|adjust|extend|wire|generate|replace|rewrite|convert|split|merge|write|build)\b`)

// contrast is the "instead of" or "rather than" that makes a user's
// sentence a rule ("use pnpm instead of npm"), unless the sentence is an
// order of work (workOrder) whose object it describes ("add the export
// button and instead of a modal, rename the dialog": this turn's change).
var contrast = regexp.MustCompile(`\b(?:instead of|rather than)\b`)

// partitive is "each of the ..." or "every one of our ...": it counts the
// things of this turn's work ("find settings for each of the tab
// panels"), where "each time" or "each commit" says a rule stands.
var partitive = regexp.MustCompile(`\b(?:each|every one) of (?:the|these|those|our|my|your|its|their)\b`)
