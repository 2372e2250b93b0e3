package ingest

import (
	"regexp"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// A turn shows more than its sentences: the tools' results say whether a
// claim held, a guess may never be checked, and a later change may undo
// what a statement describes. dropUnsettled drops the kept statements
// that this evidence says are not the settled version.

// evidenceOff names mechanisms of dropUnsettled switched off, for
// measuring each one alone ("offered", "failed", "guess", "undone").
var evidenceOff = map[string]bool{}

// evidenceTrace, when set, sees every cut (tests).
var evidenceTrace func(reason string, cut []string)

// dropUnsettled drops kept statements of the model that the turn's tool
// results contradict (dropFailed), that are unverified guesses
// (dropGuesses), that a later change undoes (dropUndone) or that were
// only options offered to the user (dropOffered). sents are the turn's
// and the later turns' sentences, positioned as Distill numbers them;
// later holds the later turns' texts.
func dropUnsettled(t Turn, cands []Candidate, sents []posSentence, later []string) {
	if !evidenceOff["offered"] {
		dropOffered(t, cands)
	}
	if !evidenceOff["failed"] {
		dropFailed(t, cands)
	}
	if !evidenceOff["guess"] {
		dropGuesses(t, cands, sents)
	}
	if !evidenceOff["undone"] {
		dropUndone(t, cands, sents, later)
	}
}

// failedHead marks the opening of tool output that reports a failure,
// for tools whose results do not carry is_error.
var failedHead = regexp.MustCompile(`(?i)^\W*(?:exit (?:code|status):? ?[1-9]|error\b|fatal\b|failed\b|.{0,80}\b(?:failed to|did not conform|not found|does not exist|no such file|command not found)\b)`)

// errorLine marks a line of tool output that says what went wrong.
var errorLine = regexp.MustCompile(`(?i)\b(?:error|errors|undefined|unknown|does not exist|doesn't exist|not found|no such|could not|couldn't|cannot|can't|failed|fails|failure|invalid|unresolved|not (?:a|an) |no (?:function|method|module|field)|E\d{4}|exception|panic|badmaperror|mismatch)\b`)

// failedResult reports whether a tool result says the call failed.
func failedResult(r memory.ToolResult) bool {
	head := r.Content
	if len(head) > 200 {
		head = head[:200]
	}
	return r.IsError || failedHead.MatchString(head)
}

// maxEvidenceBytes bounds how much of one tool result is searched for a
// statement's tokens.
const maxEvidenceBytes = 8 << 10

// claimTokens returns the tokens of a statement specific enough that a
// tool's output naming them is about the statement: paths, identifiers,
// settings and code spans of four characters or more, lowercased.
func claimTokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, re := range []*regexp.Regexp{pathTok, identTok, settingTok, backtick} {
		for _, m := range re.FindAllString(text, -1) {
			m = strings.ToLower(strings.TrimSpace(strings.Trim(m, "`.,;:()[]{}\"'")))
			if len(m) < 4 || seen[m] {
				continue
			}
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// negated marks a sentence that denies or corrects: restating a token in
// it does not restate the claim.
var negated = regexp.MustCompile(`\b(?:not|no longer|never|doesn't|don't|isn't|aren't|wasn't|won't|can't|cannot|didn't|failed|fails|error|wrong)\b`)

// dropFailed drops a kept statement of the model when a tool result later
// in the turn fails and names one of the statement's specific tokens: the
// claim (a fix, a cause, an API) did not hold. A statement survives when
// the model names the token again, without denying it, after a later
// tool call succeeded: that later text is the settled version.
func dropFailed(t Turn, cands []Candidate) {
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.Origin == OriginSummary || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		for _, tok := range claimTokens(c.Text) {
			if f := failedAfter(t, c.step, tok); f > 0 && !restatedAfter(t, f, tok) {
				c.Keep, c.Reason = false, "contradicted by a tool result: "+preview(failedText(t.Steps[f], tok))
				break
			}
		}
	}
}

// failedAfter returns the last step after step whose results include a
// failure naming tok, or -1.
func failedAfter(t Turn, step int, tok string) int {
	last := -1
	for j := step + 1; j < len(t.Steps); j++ {
		for _, r := range t.Steps[j].Results {
			if failedResult(r) && resultNames(r, tok) {
				last = j
			}
		}
	}
	return last
}

// resultNames reports whether a line of r that says what went wrong
// names tok.
func resultNames(r memory.ToolResult, tok string) bool {
	body := r.Content
	if len(body) > maxEvidenceBytes {
		body = body[:maxEvidenceBytes]
	}
	body = lower(body)
	for i := strings.Index(body, tok); i >= 0; {
		start := strings.LastIndexByte(body[:i], '\n') + 1
		end := len(body)
		if j := strings.IndexByte(body[i:], '\n'); j >= 0 {
			end = i + j
		}
		if errorLine.MatchString(body[start:end]) {
			return true
		}
		k := strings.Index(body[end:], tok)
		if k < 0 {
			break
		}
		i = end + k
	}
	return false
}

// failedText returns the failing result of a step that names tok.
func failedText(s Step, tok string) string {
	for _, r := range s.Results {
		if failedResult(r) && resultNames(r, tok) {
			return r.Content
		}
	}
	return ""
}

// restatedAfter reports whether, after the failure at step f, a tool call
// succeeded and then the model named tok again in a sentence that does
// not deny it.
func restatedAfter(t Turn, f int, tok string) bool {
	ok := false
	for j := f; j < len(t.Steps); j++ {
		if j > f && ok && t.Steps[j].Text != "" {
			for _, s := range sentences(t.Steps[j].Text) {
				ls := lower(s.text)
				if strings.Contains(ls, tok) && !negated.MatchString(ls) && !revisionCue.MatchString(ls) {
					return true
				}
			}
		}
		for _, r := range t.Steps[j].Results {
			if !failedResult(r) {
				ok = true
			}
		}
	}
	return false
}

// guessCue marks a sentence worded as a guess: a likely cause, a belief,
// an appearance, a "known bug" named without a source.
var guessCue = regexp.MustCompile(`\b(?:probably|likely|most likely|presumably|possibly|perhaps|maybe|might(?: be| have| not)?|may (?:be|have)|could be|i (?:think|believe|suspect|guess|assume)|my guess|seems?(?: to| like)?|appears? to|apparently|known (?:[\w-]+ ){0,3}(?:bug|issue|limitation|quirk))\b`)

// confirmCue marks a sentence that settles a guess.
var confirmCue = regexp.MustCompile(`\b(?:confirm(?:ed|s)?|verified|indeed|as (?:expected|suspected)|that was (?:it|the (?:issue|problem|cause))|root cause (?:is|was)|this (?:proves|shows)|fixed it|that fixed)\b`)

// dropGuesses takes the sentences worded as guesses out of the model's
// kept statements unless a later sentence confirms them (a confirmation
// cue sharing the guess's subject); a statement left with nothing
// specific is dropped.
func dropGuesses(t Turn, cands []Candidate, sents []posSentence) {
	var confirms []posSentence
	for _, s := range sents {
		if confirmCue.MatchString(lower(s.text)) {
			confirms = append(confirms, s)
		}
	}
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		var guesses []string
		for _, s := range stepSentences(t.Steps[c.step].Text) {
			if guessCue.MatchString(lower(s)) && strings.Contains(c.Text, s) && !confirmed(s, c.pos, confirms) {
				guesses = append(guesses, s)
			}
		}
		if len(guesses) > 0 {
			cutSentences(c, guesses, "unverified guess: "+preview(guesses[0]))
		}
	}
}

// stepSentences returns the sentences of a model text as Distill reads
// them (list markers and leading acknowledgements cut off).
func stepSentences(text string) []string {
	prose, _ := splitFences(noiseTags.ReplaceAllString(StripInjected(text), ""))
	var out []string
	for _, s := range sentences(prose) {
		st := strings.TrimSpace(strings.TrimLeft(ackLead.ReplaceAllString(strings.TrimSpace(s.text), ""), " ,.:;!—–-"))
		if st != "" {
			out = append(out, st)
		}
	}
	return out
}

// cutSentences takes the sentences cut out of a candidate's text; a
// candidate left with nothing specific is dropped with reason.
func cutSentences(c *Candidate, cut []string, reason string) {
	if len(cut) == 0 {
		return
	}
	if evidenceTrace != nil {
		evidenceTrace(reason, cut)
	}
	text := c.Text
	for _, s := range cut {
		text = strings.Replace(text, s, "", 1)
	}
	text = strings.Join(strings.Fields(text), " ")
	if wordCount(text) < 4 || findingWeight(text, lower(text)) < 1 {
		c.Keep, c.Reason = false, reason
		return
	}
	c.Text = text
	c.subject = subjectOf(text)
}

// confirmed reports whether a confirming sentence after pos shares the
// guess's subject.
func confirmed(guess string, pos int, confirms []posSentence) bool {
	subj := subjectOf(guess)
	for _, s := range confirms {
		if s.pos <= pos {
			continue
		}
		if n, long := overlapLong(subj, subjectOf(s.text)); n >= 2 || long {
			return true
		}
	}
	return false
}

// undoCue marks a sentence that undoes or replaces what exists: a removal,
// a move or rename, a revert, something put back, or the user saying
// they changed their own files.
var undoCue = regexp.MustCompile(`\b(?:removed|deleted|replaced|renamed|moved|reverted|reintroduced|restored|re-?added|rolled back|undid)\b|\bi(?:'ve| have)? (?:just |now )?(?:updated|changed|modified|edited|rewrote|rewritten|fixed|reworked) my\b`)

// undoAsked marks a sentence of a later turn that asks for an undo.
var undoAsked = regexp.MustCompile(`^(?:please )?(?:remove|delete|replace|rename|move|revert|reintroduce|restore|re-?add|roll back|undo)\b`)

// dropUndone takes out of the model's kept statements each sentence that
// a later sentence undoes: it removes, moves, renames, reverts or puts
// back something the sentence names (a shared load-bearing token, and a
// second shared subject token or a long one said within revisionReach;
// path components count as subject tokens), so the sentence describes a
// state the session left.
func dropUndone(t Turn, cands []Candidate, sents []posSentence, later []string) {
	asked := map[string]bool{} // the sentences of later turns
	for _, l := range later {
		for _, s := range sentences(l) {
			asked[s.text] = true
		}
	}
	type undo struct {
		posSentence
		subject, tokens map[string]bool
	}
	var undos []undo
	for _, s := range sents {
		if ls := lower(strings.TrimSpace(s.text)); undoCue.MatchString(ls) || asked[s.text] && undoAsked.MatchString(ls) {
			undos = append(undos, undo{s, pathSubject(s.text), undoneTokens(s.text)})
		}
	}
	if len(undos) == 0 {
		return
	}
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		var cut []string
		why := ""
		for _, st := range stepSentences(t.Steps[c.step].Text) {
			if !strings.Contains(c.Text, st) || undoCue.MatchString(lower(st)) {
				continue // not kept, or itself a report of an undo
			}
			subj, toks := pathSubject(st), loadTokens(st)
			for _, u := range undos {
				if u.pos <= c.pos || strings.Contains(u.text, st) || overlap(toks, u.tokens) == 0 {
					continue
				}
				if n, long := overlapLong(subj, u.subject); n >= 2 || (long && u.pos-c.pos <= revisionReach) {
					cut = append(cut, st)
					if why == "" {
						why = u.text
					}
					break
				}
			}
		}
		if len(cut) > 0 {
			cutSentences(c, cut, "undone later: "+preview(why))
		}
	}
}

// undoObject is what follows an undo verb up to a word that ends its
// object ("moved X to Y", "replaced X with Y", "removed X from Y").
var undoObject = regexp.MustCompile(`(?i)\b(?:removed|deleted|replaced|renamed|moved|reverted|reintroduced|restored|re-?added|rolled back|undid|remove|delete|replace|rename|move|revert|reintroduce|restore|re-?add|roll back|undo|(?:updated|changed|modified|edited|rewrote|rewritten|fixed|reworked) my)\b((?:\s+[^\s,;]+){1,8})`)

// objectStop ends an undo verb's object.
var objectStop = regexp.MustCompile(`(?i)\s(?:to|with|from|into|since|because|so|as|for|and|in favou?r of|instead)\s`)

// undoneTokens returns the load-bearing tokens of what a sentence's undo
// verbs act on.
func undoneTokens(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range undoObject.FindAllStringSubmatch(text, -1) {
		obj := m[1] + " "
		if loc := objectStop.FindStringIndex(obj); loc != nil {
			obj = obj[:loc[0]]
		}
		for t := range loadTokens(obj) {
			out[t] = true
		}
	}
	return out
}

// loadTokens returns the load-bearing tokens of text, lowercased.
func loadTokens(text string) map[string]bool {
	out := map[string]bool{}
	for t := range LoadBearing(text) {
		if t = strings.ToLower(strings.Trim(t, "`.,;:()[]{}\"'")); len(t) >= 3 {
			out[t] = true
		}
	}
	return out
}

// pathSubject is subjectOf with each path's directories and file name
// added, so "scripts/x.sh" and "priv/scripts/x.sh" share a subject.
func pathSubject(text string) map[string]bool {
	out := subjectOf(text)
	for _, m := range pathTok.FindAllString(text, -1) {
		for _, part := range strings.Split(strings.ToLower(m), "/") {
			if len(part) >= 4 && part != "home" && part != "users" {
				out[part] = true
			}
		}
	}
	return out
}

// dropOffered drops from the model's kept statements the items of a
// list that a sentence introduces as options ("I have two options:"),
// even when the list stands in its own paragraph: a choice put to the
// user is not a fact.
func dropOffered(t Turn, cands []Candidate) {
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		var offered []string
		for _, it := range offeredItems(t.Steps[c.step].Text) {
			if strings.Contains(c.Text, it) {
				offered = append(offered, it)
			}
		}
		if len(offered) > 0 {
			cutSentences(c, offered, "offered as an option: "+preview(offered[0]))
		}
	}
}

// offeredItems returns the sentences of the list items that follow an
// options intro ("I have two options:") in a model text, up to the next
// line that is not a list item.
func offeredItems(text string) []string {
	prose, _ := splitFences(noiseTags.ReplaceAllString(StripInjected(text), ""))
	var out []string
	in := false
	for _, line := range strings.Split(prose, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case in && listMark.MatchString(line):
			for _, s := range sentences(line) {
				st := strings.TrimSpace(strings.TrimLeft(ackLead.ReplaceAllString(strings.TrimSpace(s.text), ""), " ,.:;!—–-"))
				if st != "" {
					out = append(out, st)
				}
			}
		default:
			in = false
			if ss := sentences(line); len(ss) > 0 {
				last := ss[len(ss)-1]
				in = last.intro && optionsIntro.MatchString(lower(last.text))
			}
		}
	}
	return out
}
