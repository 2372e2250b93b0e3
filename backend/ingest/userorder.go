package ingest

import (
	"regexp"
	"strings"
)

// What a user's order revises. A later turn's sentences reach Distill as
// later texts, each saying whose words it holds (LaterText.From, set by
// laterOf), so that a sentence is read as the user's or the model's. The
// model's plan revises nothing ("Change the parser to keep comments
// instead of dropping them" says what to try: revise-plan), but the
// user's order that puts one thing in another's place does: "Change it
// to use `pnpm install` instead of `npm ci`", "Use tabs rather than
// spaces", "Not `npm ci` but `pnpm install`", "Use `pnpm install`, not
// `npm ci`" revise a statement naming what is replaced (X: its
// load-bearing tokens, or its words in order, as saysObjectAsWritten
// reads them), whoever said it. A question or a guess of the user's
// revises nothing (cannotRevise).

// ruleUserOrder names the rule, as ablate lists it.
const ruleUserOrder = "revise-user-order"

// replacedBy are the forms of an order putting Y in X's place, each
// ending where X begins: "instead of X", "rather than X", "not X but Y"
// (X up to "but"), "Y, not X" (X to the sentence's end).
var (
	replacedObject = regexp.MustCompile(`\b(?:instead\s+of|rather\s+than)\s+`)
	notButObject   = regexp.MustCompile(`(?:^|[\s,;:(])not\s+(.+?)\s*,?\s+but\s+\S`)
	commaNotObject = regexp.MustCompile(`,\s*(?:and\s+)?not\s+([^,;]+?)\s*[.!]*$`)
)

// userOrderOpen opens a user's order: after any interjection ("yes please",
// "no,", "ok so"), a bare verb of work (planLead) or of choice ("use",
// "switch", "keep"), "let's", "we should", "I want", "always", "never",
// "don't". A pasted document's line ("Clerk instead of Auth.js when SSO
// is mandatory") orders nothing.
var userOrderOpen = regexp.MustCompile(`^(?:(?:yes|yeah|no|nope|ok|okay|please|pls|and|so|now|actually|also|then|but|well|hmm|instead)\b[\s,.;:!—–-]*)*(?:(?:let's|let us|we should|you should|we need to|you need to|i want(?: you)? to|i'd like(?: you)? to|i prefer to|always|never|don't|do not|just|only)\s+)?(?:use|switch|keep|put|set|go|stick|prefer|pick|choose|call|name|store|read|write|load|pass|return|send|show|print|log|start|stop|` + planLead.String()[len(`^(?:`):])

// userReplaced returns what a user's order (userOrderOpen) says is replaced
// (the X of replacedBy's forms, as written), each naming something a
// statement can say (userObjectNames); nil when it replaces nothing, or
// when it is no order, a question or a guess.
func userReplaced(st string) []string {
	if !ruleOn(ruleUserOrder) {
		return nil
	}
	folded := quoteFold.Replace(strings.TrimSpace(st))
	lt := lower(folded)
	if !userOrderOpen.MatchString(strings.TrimLeft(lt, "*_#> ")) || strings.HasSuffix(strings.TrimRight(lt, " *_`)\"'"), "?") || guessing(lt) {
		return nil
	}
	var out []string
	add := func(obj string) {
		if b := clauseBreakOutsideCode(obj); b >= 0 {
			obj = obj[:b]
		}
		if obj = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(obj), ".!")); userObjectNames(obj) {
			out = append(out, obj)
		}
	}
	for _, m := range replacedObject.FindAllStringIndex(lt, -1) {
		add(folded[m[1]:])
	}
	for _, m := range notButObject.FindAllStringSubmatchIndex(lt, -1) {
		add(folded[m[2]:m[3]])
	}
	if m := commaNotObject.FindStringSubmatchIndex(lt); m != nil {
		add(folded[m[2]:m[3]])
	}
	return out
}

// userObjectNames reports whether a replaced object names something a
// statement can be found saying: a load-bearing token, or a word of
// cueObjectWords ("instead of that" names nothing).
func userObjectNames(obj string) bool {
	return len(namedTokens(obj)) > 0 || len(cueObjectWords(obj)) > 0
}

// replacedNames are a user order's replaced objects (userReplaced) as
// saidBy looks for them, read once (a revision is weighed against every kept
// statement before it): each object's load-bearing tokens (namedTokens)
// or, when it names none, its words (cueObjectWords).
type replacedNames struct {
	tokens [][]string
	words  [][]string
}

// readReplaced reads objs for saidBy.
func readReplaced(objs []string) replacedNames {
	r := replacedNames{tokens: make([][]string, len(objs)), words: make([][]string, len(objs))}
	for i, o := range objs {
		if r.tokens[i] = namedTokens(o); len(r.tokens[i]) == 0 {
			r.words[i] = cueObjectWords(o)
		}
	}
	return r
}

// saidBy reports whether a statement says one of the replaced objects
// as the object says it: by one of its load-bearing tokens, or by its
// words in order, each the same word (its stem), within objectReach
// words of the one before: "relay" is not said by "related".
func (r replacedNames) saidBy(stmt string) bool {
	ls := lower(quoteFold.Replace(stmt))
	var words []string
	for i, tokens := range r.tokens {
		if len(tokens) > 0 {
			for _, t := range tokens {
				if strings.Contains(ls, t) {
					return true
				}
			}
			continue
		}
		if words == nil {
			for _, w := range wordTok.FindAllString(ls, -1) {
				words = append(words, stem(w))
			}
		}
		if inOrderExact(words, r.words[i]) {
			return true
		}
	}
	return false
}

// replacedFocus returns the subject of a user order's replaced objects:
// what it revises, for cutting the sentences of a packed statement that
// say it (revisedSentences).
func replacedFocus(objs []string) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		for t := range subjectOf(o) {
			out[t] = true
		}
	}
	return out
}

// inOrderExact is inOrder with words compared by their stems alone.
func inOrderExact(words, want []string) bool {
	if len(want) == 0 {
		return false
	}
	for i, w := range words {
		if w != want[0] {
			continue
		}
		k, last := 1, i
		for j := i + 1; j < len(words) && k < len(want) && j-last <= objectReach; j++ {
			if words[j] == want[k] {
				k, last = k+1, j
			}
		}
		if k == len(want) {
			return true
		}
	}
	return false
}
