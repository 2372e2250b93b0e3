package ingest

import (
	"regexp"
	"strings"
	"unicode"
)

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

// A user's message that asks for work often goes on to say how the work
// is to come out, in the words of a rule: "let's add a tabbed panel. Each
// panel should group its fields", "reorder the lists. Do not change the
// list items". Such a sentence is the request's detail, a constraint on
// what this turn delivers: it speaks of the things the request named (the
// panel, the lists), names nothing else of the project, and carries no
// word that makes it stand for later turns. A rule for every turn
// ("never add the co-authored-by footer", "don't commit until I say so",
// "use yarn") names its own object or none, so it is not one.

// imperativeOpen opens a sentence with an order on a determined object:
// a verb, then "the", "all", "these", "my" ... ("reorder the lists",
// "sort all the imports"), after an optional place it applies to ("In
// the README, ..."). The first word is no function word ("in the lists"
// is a place, "all the lists" a subject).
var imperativeOpen = regexp.MustCompile(`^(?:(?:in|for|on|inside|within)\s+[^,]{1,40}?\s*,\s*)?([a-z]+)\s+(?:the|all|these|those|this|that|my|our|every|each|both)\b`)

// requestOpen reports whether a user's lowercased sentence opens with an
// order of work: a request (taskRequest) or an imperative on a determined
// object (imperativeOpen) that is no how-to rule.
func requestOpen(ls string) bool {
	if taskRequest(ls) {
		return true
	}
	m := imperativeOpen.FindStringSubmatch(ls)
	return m != nil && !functionWords[m[1]] && !howToRule(ls)
}

// objectWords returns the words of a user's sentence that can name what
// it is about: no function words, no words of two letters, a plural's "s"
// cut ("lists" and "list items" share "list").
func objectWords(ls string) map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Fields(ls) {
		if w := strings.Trim(f, wordTrim); len(w) >= 3 && !functionWords[w] && isWord(w) {
			out[singular(w)] = true
		}
	}
	return out
}

// wordTrim is the punctuation around a word.
const wordTrim = ".,;:!?()\"'`*—–-…"

// orderVerb is the verb of a rule-worded order: after "don't", "never",
// "should", "must", "please" ... ("do not change the contents": change).
var orderVerb = regexp.MustCompile(`\b(?:don't|do not|dont|never|always|should(?:n't)?|must|shall|please|make sure to|need to|avoid)\s+(?:not\s+|be\s+)?([a-z]+)`)

// detailWords are the words a rule-worded sentence refers to the way a
// detail refers to its request: the words of its definite or distributive
// noun phrases ("each panel", "the dialog", "these lists") or, in an
// order opening the sentence ("do not change content of list items"),
// its object's words. The verbs of its order do not count: what it speaks
// of, not what it does, so "don't add the footer" after "add a sidebar"
// shares nothing with it. A generic subject ("tests must not hit the
// network" after "add tests for the parser") is a rule about every such
// thing, not a reference to the request's.
func detailWords(ls string) map[string]bool {
	out := definiteWords(ls)
	if orderOpen.MatchString(ls) {
		out = objectWords(ls)
	}
	for _, m := range orderVerb.FindAllStringSubmatch(ls, -1) {
		delete(out, singular(m[1]))
	}
	return out
}

// orderOpen opens a sentence with an order: "don't", "do not", "never",
// "avoid", "make sure", "please" ....
var orderOpen = regexp.MustCompile(`^(?:(?:please|and|but|also|so|then)\b[\s,]*)*(?:don't|do not|dont|never|no need to|avoid|make sure|ensure)\b`)

// referring opens a noun phrase that points at things known from the
// context ("the", "each", "these", "its" ...), not at new or generic ones.
var referring = map[string]bool{}

func init() {
	for _, w := range strings.Fields("the this that these those each every both all its their") {
		referring[w] = true
	}
}

// definiteWords returns the words of the noun phrases a referring word
// opens in a lowercased sentence, up to the next function word or
// punctuation ("each panel should ... the printer settings in pdl":
// panel, printer, setting).
func definiteWords(ls string) map[string]bool {
	out := map[string]bool{}
	in := false
	for _, f := range strings.Fields(ls) {
		w := strings.Trim(f, wordTrim)
		switch {
		case referring[w]:
			in = true
		case functionWords[w] || w == "":
			in = false
		case in && len(w) >= 3 && isWord(w):
			out[singular(w)] = true
		}
		if strings.ContainsAny(f[len(f)-1:], ".,;:!?)") {
			in = false // a phrase ends at its punctuation
		}
	}
	return out
}

// isWord reports whether f is letters only (paths, names with dots and
// numbers are not words of prose: specificity weighs them).
func isWord(f string) bool {
	for _, r := range f {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// singular cuts a plural's "s" ("panels", "settings"), leaving "ss".
func singular(w string) string {
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		return w[:len(w)-1]
	}
	return w
}

// requestDetail reports whether a rule-worded sentence of a user's
// message is the detail of a request made before it in the message
// (objects holds the objectWords of the request and of its details so
// far): it says no standing word (ruleWord), names nothing specific of
// the project (specificity below 2: no path, identifier, setting,
// "we"/"our"), and one of the words it speaks of (detailWords) is a word
// of the request or it is an order on a bare definite noun
// (bareDefinite).
func requestDetail(st, ls string, objects map[string]bool) bool {
	if len(objects) == 0 || ruleWord.MatchString(ls) || specificity(st) >= 2 {
		return false
	}
	return overlap(detailWords(ls), objects) > 0 || bareDefinite.MatchString(ls)
}

// bareDefinite is an order whose whole object is a definite noun with
// nothing to tell which one ("do not change the contents."): the reader
// is to find it in front of them, in the request before it. It is
// pronounOrder's twin with "the" for the pronoun, and only read after a
// request: alone, "don't touch the changelog" may be a rule.
var bareDefinite = regexp.MustCompile(`^(?:please )?(?:don't|do not|dont|no need to) (?:\w+ ){1,2}the [a-z]+[\s.!]*$`)
