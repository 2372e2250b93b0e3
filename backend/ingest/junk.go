package ingest

import (
	"regexp"
	"strings"
)

// Statements with nothing in them a developer would want next week, read
// by their form, not by any project's words:
//
//   - a lead-in whose content was cut ("To summarize what we've done in
//     the session directory:"): the list or the code it introduced is in
//     no statement it is part of (leadInCut);
//   - the items of a list that a plan, a guess or a suggestion introduces
//     ("We need to:", "the files most likely to need changes are:",
//     "some potential additions could include:"): what was proposed, not
//     what is (proposalIntro);
//   - a suggestion of what could be added or changed ("This file might
//     need updates to ...", "utilities that could be considered
//     additions"): suggestCue;
//   - the agent's talk about its own edit mechanism or itself ("Here is
//     the corrected SEARCH/REPLACE block", "a set of rules that I (the AI
//     assistant) must follow"): editTalk;
//   - the agent narrating its act in a participle with no verb of the
//     project after it ("Removing the task specification since we're
//     handling this as a direct change", "Adding a TSDoc block for ...,
//     describing its purpose"): actParticiple.
//
// Each rule has a name (ruleLeadIn, ...) that ablate can turn off.

// Names of the rules of this file, as ablate lists them.
const (
	ruleLeadIn     = "leadin"
	ruleProposal   = "proposal"
	ruleSuggest    = "suggest"
	ruleEditTalk   = "edittalk"
	ruleParticiple = "participle"
)

// ablate lists, comma-separated, the rules of this file that are off. It
// is empty in every build but one made to measure what a rule does
// (go build -ldflags "-X github.com/memtray/memtray/backend/ingest.ablate=leadin").
var ablate = ""

// ruleOn reports whether the rule named name is on (not listed in ablate).
func ruleOn(name string) bool {
	if ablate == "" {
		return true
	}
	for _, r := range strings.Split(ablate, ",") {
		if strings.TrimSpace(r) == name {
			return false
		}
	}
	return true
}

// reasonLeadIn is why a lead-in is cut from what a block keeps.
const reasonLeadIn = "lead-in with what it introduces cut"

// leadInCut returns the indexes of kept (the statements a block keeps, in
// order) that are lead-ins left without what they introduce: a sentence
// ending in a colon that is the last the block keeps, or whose next
// sentence of the block (order, the block's sentences) the block did not
// keep. A lead-in that names something (namesThing: "To create the index
// of the schemas, here is the block for `schemas/index.ts`:") says where
// a thing is and stays.
func leadInCut(kept, order []string) []int {
	if !ruleOn(ruleLeadIn) {
		return nil
	}
	var cut []int
	for i, k := range kept {
		if !strings.HasSuffix(k, ":") || namesThing(k) {
			continue
		}
		next := -1
		for j, s := range order {
			if strings.HasSuffix(k, s) {
				next = j + 1
			}
		}
		if next < 0 {
			continue
		}
		if i+1 < len(kept) && next < len(order) && strings.HasSuffix(kept[i+1], order[next]) {
			continue // what it introduces follows it in the statement
		}
		cut = append(cut, i)
	}
	return cut
}

// withoutIndexes returns ss without the elements at the indexes idx
// (ascending).
func withoutIndexes(ss []string, idx []int) []string {
	if len(idx) == 0 {
		return ss
	}
	out := make([]string, 0, len(ss)-len(idx))
	k := 0
	for i, s := range ss {
		if k < len(idx) && idx[k] == i {
			k++
			continue
		}
		out = append(out, s)
	}
	return out
}

// proposalIntro reports whether a sentence introducing a list offers
// what the list holds as what could be, not what is, in the forms
// proposes reads: an offer after a condition ("Once you add these files,
// I can:") or a suggestion ("some potential additions could include:").
// Its items, also in the blocks after it, are what was proposed (the
// forms offer and optionsIntro read, "If you want, I can:", "I have two
// options:", are cut from the statement that holds their items: evidence.go). The agent announcing its own next acts is none: an agent that
// edits by itself (Aider: "I will update `CONVENTIONS.md` as follows:")
// does what it lists, and the list is its only account of the change;
// between tool calls "I'll focus on the key files:" is followed by what
// they hold, and "Let's implement a helper in `tasks.ts`:" by its design.
// A compaction summary (origin OriginSummary) retells, it proposes
// nothing.
func proposalIntro(st, origin string) bool {
	return origin != OriginSummary && strings.HasSuffix(st, ":") && proposes(lower(st))
}

// proposes reports whether a lowercased lead-in of a list proposes what
// the list holds in the words offer and optionsIntro leave out: a
// condition then the writer's modal (condOfferIntro) or a suggestion
// (suggestCue, suggestIntro).
func proposes(lt string) bool {
	return ruleOn(ruleProposal) && (condOfferIntro.MatchString(lt) || suggestCue.MatchString(lt) || suggestIntro.MatchString(lt))
}

// condOfferIntro is a lead-in that offers, after a condition, what the
// list under it holds: "Once you add these files, I can:", "If that works
// for you, we could:". offer's conditionalOffer needs the verb, which here
// is each item's.
var condOfferIntro = regexp.MustCompile(`^(?:if|when|once)\b[^.;:!?]*?,\s*(?:then\s+)?(?:i|we)(?:'ll|'d|\s+(?:can|could|will|would|might))(?:\s+also)?\s*:$`)

// suggestCue marks a suggestion of what could be added or changed, with
// the modal that makes it one: "This file might need updates to ...",
// "utilities that could be considered additions", "it could be further
// enhanced by including", "worth adding". It
// says what nobody decided. Matched on lowercased text.
var suggestCue = regexp.MustCompile(`\b(?:could|might|may)(?: also| further| potentially)? (?:need (?:updates?|changes?|modifications?|to be (?:updated|changed|modified))|be(?: further| also)? (?:considered|added|introduced|worth|useful|helpful|beneficial|enhanced|extended|improved))\b|\bworth (?:considering|adding|exploring)\b|\b(?:potential|possible) (?:additions?|improvements?|enhancements?)\b`)

// suggestIntro marks a list's lead-in that offers what the list holds as
// what could be: "some potential additions could include:", "it could
// be further enhanced by including utilities such as:". Read only on a
// sentence that introduces a list (proposalIntro).
var suggestIntro = regexp.MustCompile(`\b(?:could|might|may)(?: also| further)? (?:include|add|use|consider|benefit)\b`)

// suggestion reports whether a lowercased sentence suggests what could be
// added or changed (suggestCue).
func suggestion(ls string) bool {
	return ruleOn(ruleSuggest) && suggestCue.MatchString(ls)
}

// editTalk marks the agent talking about its own edit mechanism, the
// form a harness has it deliver its edits in (Aider's SEARCH/REPLACE
// blocks, a tool's old_string/new_string), or about itself as the
// assistant ("I (the AI assistant) must follow"): what it says is about
// the session's machinery, not the project. Matched on lowercased text.
var editTalk = regexp.MustCompile(`\b(?:search/replace|search block|replace block|search section|old_string|new_string|str_replace)\b|\((?:the |an )?ai(?: assistant| model)?\)|\b(?:as an ai|the ai assistant)\b`)

// talksEdits reports whether a sentence (ls lowercased) is the agent's
// talk about its edit mechanism or itself (editTalk) and names nothing of
// the project once the words of that talk are taken out ("Here is the
// corrected `SEARCH/REPLACE` block"). One that names a path or a name
// ("... here is the block for `schemas/index.ts`:", "The previous
// `SEARCH` block didn't match the start of `iterables.intersection.ts`")
// says where something is, and stays.
func talksEdits(st, ls string) bool {
	if !ruleOn(ruleEditTalk) || !mayTalkEdits(ls) || !editTalk.MatchString(ls) {
		return false
	}
	return !namesThing(editTalkAny.ReplaceAllString(st, ""))
}

// mayTalkEdits reports whether a lowercased sentence holds a word editTalk
// needs ("search", "replace", "_string", "ai" after a space or a
// parenthesis): most sentences hold none, and the substring tests cost
// less than the expression.
func mayTalkEdits(ls string) bool {
	return strings.Contains(ls, "search") || strings.Contains(ls, "replace") || strings.Contains(ls, "_string") || strings.Contains(ls, " ai") || strings.Contains(ls, "(ai")
}

// editTalkAny is editTalk matched on text of any case.
var editTalkAny = regexp.MustCompile(`(?i)` + editTalk.String())

// actParticiple opens a sentence with the present participle of a verb
// of the agent's work, followed by what it acts on: "Removing the task
// specification ...", "Adding a TSDoc block for ...".
var actParticiple = regexp.MustCompile(`^(?:add|remov|delet|updat|modify|chang|replac|renam|mov|creat|writ|fix|implement|refactor|extract|convert|introduc|defin|sort|reorder|mapp|iterat|insert|append|wrapp|splitt|merg|revert|restor|edit|adjust|improv|expand|document|ensur|includ|apply|generat|comment|uncomment|committ|push)ing\s+(?:the|a|an|this|that|these|those|its|their|our|my|all|each|every|some|any|it|them|both|another|new|\x60)`)

// projectVerb is a finite verb or an auxiliary after a participle (in
// the third person, not a bare form that is as often a noun: "return
// value", "a fix"): the participle is then a subject ("Adding a column requires a migration",
// "Setting the flag breaks the build"), and the sentence says what is.
var projectVerb = regexp.MustCompile(`\b(?:is|are|was|were|isn't|aren't|wasn't|weren't|has|have|had|will|would|can|could|should|must|does|do|did|doesn't|don't|didn't|won't|can't|cannot|requires|needs|causes|caused|breaks|broke|makes|made|means|fails|failed|works|worked|keeps|returns|leads|led|triggers|fixes|fixed|solves|resolves|prevents|avoids|ensures|allows|lets|gives|takes|costs)\b`)

// participleAct reports whether a lowercased sentence narrates the
// agent's act in a participle (actParticiple) with no verb of the
// project after it (projectVerb): narration, whatever reason it gives.
func participleAct(ls string) bool {
	if !ruleOn(ruleParticiple) {
		return false
	}
	loc := actParticiple.FindStringIndex(ls)
	return loc != nil && !projectVerb.MatchString(ls[loc[1]:])
}
