package ingest

import (
	"regexp"
	"strings"
)

// A change log is what an agent writes to say which files and symbols a
// change touched: "**`lib/x.ex`** — Added `has_many :refs`", "Updated
// `a.py` and `b.py`", "tests/test_x.py: Added tests for ...". The
// repository holds what changed and where; a later turn needs what such a
// line says beyond that: a reason or purpose ("to prefer the stored id",
// "for language inference"), a constraint ("required for the LiveView
// tests"), a default or a behaviour ("returns a record, not {:ok, ...}"),
// code, a setting or a command. changeLog reads a line that says none of
// those as the turn's status: what is left of its block stays.

// changeVerb opens what a change did to the names after it, told without
// a subject, by "I" or "we", or in the third person of a file's entry in
// a list ("Adds a column ..."). Matched against the lowercased text.
var changeVerb = regexp.MustCompile(`^(?:(?:i|we)(?:'ve| have)? (?:also |now )?)?(?:add(?:ed|s)|creat(?:ed|es)|updat(?:ed|es)|chang(?:ed|es)|modifi(?:ed|es)|remov(?:ed|es)|delet(?:ed|es)|mov(?:ed|es)|renam(?:ed|es)|register(?:ed|s)|replac(?:ed|es)|extend(?:ed|s)|expand(?:ed|s)|implement(?:ed|s)|introduc(?:ed|es)|wir(?:ed|es)|refactor(?:ed|s)|rewr(?:ote|ites)|convert(?:ed|s)|document(?:ed|s)|expos(?:ed|es)|defin(?:ed|es)|extract(?:ed|s))\b`)

// saysMore marks what a change's line says beyond the names it changed:
// a cause or purpose, a constraint, a default, a behaviour. Matched
// against the lowercased text with the names cut out.
var saysMore = regexp.MustCompile(`\b(?:so|for|because|since|when|whenever|if|unless|otherwise|instead|rather than|only|must|never|always|requires?|required|needs?|needed|cannot|can't|doesn't|does not|don't|won't|isn't|not|fails?|defaults?|returns?|prefer|avoid|ensures?|allows?|lets|which|that|via|by \w+ing|in order)\b`)

// determiner opens a noun phrase: "to the dashboard" is where a change
// went, "to prefer the stored id" why.
var determiner = map[string]bool{"the": true, "a": true, "an": true, "its": true, "their": true, "our": true, "this": true, "that": true, "these": true, "those": true, "each": true, "all": true, "every": true, "both": true, "any": true}

// purposeTo reports whether a lowercased text has "to" followed by a plain
// word that is no determiner: a purpose ("to prefer", "to keep"), not a
// place ("to `mix.exs`", "to the router").
func purposeTo(ls string) bool {
	fs := strings.Fields(ls)
	for i := 0; i+1 < len(fs); i++ {
		if fs[i] != "to" {
			continue
		}
		w := strings.TrimRight(fs[i+1], ",;.")
		if w == "" || determiner[w] {
			continue
		}
		plain := true
		for _, r := range w {
			if r < 'a' || r > 'z' {
				plain = false
				break
			}
		}
		if plain {
			return true
		}
	}
	return false
}

// changeDetailWords is the most words of prose, besides the change's verb
// and the names it changed, that a line has and still only reports the
// change ("in the dashboard header"). 2, 3, 4, 6 and 8 were measured
// (memtray eval sessions, dev and dev-more): none lost a fact on dev, 8
// lost one on dev-more; the memory counts differ by 1 to 3.
const changeDetailWords = 6

// nameSpans are the names a change log lists: a code span of one word, a
// path, an identifier, a setting. A code span with a space in it is code,
// a setting or a command, not a name (hasSnippet).
var nameSpans = []*regexp.Regexp{regexp.MustCompile("`[^`\\s]+`"), pathTok, identTok, settingTok}

// withoutNames returns text with its names (one-word code spans, paths,
// identifiers, settings) cut out.
func withoutNames(text string) string {
	for _, re := range nameSpans {
		text = re.ReplaceAllString(text, " ")
	}
	return text
}

// assignment is a setting given its value (KEY=value): configuration.
var assignment = regexp.MustCompile(`[\w.-]=\S`)

// hasSnippet reports whether text has code, a setting or a command in it:
// a code span with a space in it, or a KEY=value.
func hasSnippet(text string) bool {
	for _, m := range backtick.FindAllString(text, -1) {
		if strings.ContainsAny(m, " \t") {
			return true
		}
	}
	return assignment.MatchString(text)
}

// namesOnlyLine reports whether text is only names (paths, code spans,
// identifiers) and the words that join a list ("and", "or"), with at
// least one path or code span among them.
func namesOnlyLine(text string) bool {
	if !pathTok.MatchString(text) && !backtick.MatchString(text) {
		return false
	}
	for _, f := range strings.Fields(lower(withoutNames(text))) {
		switch strings.Trim(f, ".,;:!?()[]\"'`*—–-+&/") {
		case "", "and", "or", "plus":
			continue
		}
		return false
	}
	return true
}

// objectLead is what may come between a change's verb and the name of
// what it changed: an article, "new", a count.
var objectLead = regexp.MustCompile(`^(?:(?:a|an|the|new|\d+|two|three|four|five)\s+)*`)

// nameWord is a word that names a file or a symbol: parts joined by "_",
// "/" or "." ("hooks_controller.ex", "ui/main.py", "Repo.insert").
var nameWord = regexp.MustCompile(`^[\w@-]+(?:[_./][\w@-]+)+$`)

// namedObject reports whether the object of a change (the text after its
// verb) opens with a name (a code span, a path, an identifier) or is a
// list of names after a label ("New module: ui/shot.py"). "Created the PR
// description file at ..." describes what it made instead: what a later
// turn may look for.
func namedObject(raw string) bool {
	if _, list, ok := strings.Cut(raw, ":"); ok && namesOnlyLine(list) {
		return true
	}
	o := strings.TrimLeft(raw, " :*")
	o = o[len(objectLead.FindString(lower(o))):]
	if strings.HasPrefix(o, "`") {
		return true
	}
	f, _, _ := strings.Cut(o, " ")
	f = strings.TrimRight(f, ",;:.")
	return f != "" && (nameWord.MatchString(f) || identTok.FindString(f) == f)
}

// changeOnly reports whether a sentence (its path label cut off) only
// says that names were changed: a change verb, the names, a few words of
// where, and nothing that says more (saysMore, a cause, a purpose, code
// or a setting). A topic given the files it lives in ("Updated the
// readiness check: a.ts, b.ts") says where that subject lives, and is
// more than the change.
func changeOnly(rest string) bool {
	r := quoteFold.Replace(strings.TrimSpace(rest)) // lower folds quotes: keep offsets equal
	loc := changeVerb.FindStringIndex(lower(r))
	if loc == nil {
		return false
	}
	raw := r[loc[1]:]
	if !namedObject(raw) || hasSnippet(raw) {
		return false
	}
	if label, list, ok := strings.Cut(raw, ":"); ok && namesOnlyLine(list) && pathTok.MatchString(list) && proseWords(withoutNames(label)) >= 2 {
		return false
	}
	after := withoutNames(raw)
	la := lower(after)
	if saysMore.MatchString(la) || causeWord.MatchString(la) || purposeTo(la) {
		return false
	}
	return proseWords(after) <= changeDetailWords
}

// testTarget opens a change's line whose object is tests ("Added tests
// for ...", "Wrote 3 integration tests ..."): the tests hold what they
// check. Matched against the lowercased text.
var testTarget = regexp.MustCompile(`^(?:(?:i|we)(?:'ve| have)? (?:also )?)?(?:add(?:ed|s)|wr(?:ote|ites)|extend(?:ed|s)|updat(?:ed|es)|expand(?:ed|s)|cover(?:ed|s))\s+(?:(?:a|an|the|new|more|unit|integration|e2e|regression|\d+|[\w-]+)\s+){0,2}(?:tests?|specs?|test cases?|test describes?)\b`)

// testFile is the path of a test file: under tests/, test/, spec/ or
// __tests__/, or named test_x, x_test.y, x.test.y or x.spec.y.
var testFile = regexp.MustCompile(`(?:^|/)(?:tests?|spec|__tests__)/|(?:^|/)test_[\w.-]+$|_test\.\w+$|\.(?:test|spec)\.\w+$`)

// statusLabel is a parenthesis after a path that tells the file's state
// in the change ("(NEW)", "(MODIFIED - task 2)", "(new, committed in
// x.1)"), not what it does. Matched against the lowercased text.
var statusLabel = regexp.MustCompile(`^\((?:new|modified|changed|updated|created|deleted|removed|edited|committed|not committed|uncommitted|untracked|existing|unchanged)\b[^)]{0,60}\)`)

// pathLead splits a line led by a path ("**`lib/x.ex`** — ...",
// "`a/b.py` (NEW): ...", "tests/test_x.py: ...") into its path and the
// rest after the separator. ok is false for a line that does not open
// with a path and a separator (a sentence whose subject is a file:
// "`lib/x.ex` now preloads ...").
func pathLead(st string) (path, rest string, ok bool) {
	s := strings.TrimLeft(st, "*` ")
	end := strings.IndexAny(s, " *`:—–(")
	if end < 0 {
		end = len(s)
	}
	head := s[:end]
	if !strings.ContainsAny(head, "/.") {
		return "", "", false
	}
	if m := pathTok.FindString(head); m != head {
		return "", "", false
	}
	r := strings.TrimLeft(s[end:], "*` ")
	if loc := statusLabel.FindStringIndex(lower(r)); loc != nil {
		r = strings.TrimLeft(r[loc[1]:], "*` ")
	}
	if r == "" {
		return head, "", true
	}
	for _, sep := range []string{"—", "–", ":", "- ", "-- "} {
		if strings.HasPrefix(r, sep) {
			return head, strings.TrimSpace(r[len(sep):]), true
		}
	}
	return "", "", false
}

// changeLog reports whether a sentence of the model is a change log's
// line that says nothing but what changed: a path-led entry whose rest
// only reports a change, or describes a test file and gives no reason; a
// bare "Added `X`" line; "Added tests for ..." with no reason. ls is
// lower(st).
func changeLog(st, ls string) bool {
	if path, rest, ok := pathLead(st); ok {
		if changeOnly(rest) {
			return true
		}
		lr := lower(rest)
		return rest != "" && testFile.MatchString(path) && !causeWord.MatchString(lr) && !saysMore.MatchString(lower(withoutNames(rest))) && !hasSnippet(rest)
	}
	ls = ls[ackEnd(ls, false):]
	rest := strings.TrimLeft(ls, " ,.:;!—–-")
	if testTarget.MatchString(rest) && !causeWord.MatchString(rest) {
		return true
	}
	if !changeVerb.MatchString(rest) {
		return false // the common case: no change told
	}
	st = quoteFold.Replace(st) // lower folds quotes: keep offsets equal
	return changeOnly(st[len(st)-len(rest):])
}
