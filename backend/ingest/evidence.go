package ingest

import (
	"regexp"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// A turn, and the turns after it, show more than the sentences that
// revise a statement outright (dropRevised): a later sentence may undo
// what a statement describes (a removal, a move, a revert, the user
// saying they changed their own files), and a list the model introduced
// as options is a choice put to the user. dropUnsettled drops what this
// evidence says is not the settled version.
//
// Two more mechanisms were measured and left out (memtray eval sessions
// on sessions-dev and sessions-dev-more): a claim followed in its turn by
// a failing tool result naming its tokens, and a shell command of the
// turn that moves or deletes a file a statement names (mv, rm). Neither
// removed a trap on sessions-dev and each cost a fact on one of the sets.
// What a move or a deletion does revise, a statement of where the file
// was, is dropRelocated's (moved.go).
// A guess nothing later confirms is dropUnconfirmed's (guess.go), a
// correction that says "it" inside one joined memory dropSelfCorrected's
// (selfcorrect.go).

// evidenceOff names mechanisms of dropUnsettled switched off ("offered",
// "undone", "gloss": an undo in other words, gloss.go), for measuring
// each one alone.
var evidenceOff = map[string]bool{}

// dropUnsettled drops from the model's kept statements the options it
// offered the user (dropOffered) and what a later sentence undoes
// (dropUndone). sents are the turn's and the later turns' sentences,
// positioned as Distill numbers them; later holds the later turns' texts;
// removals are the settings the turn's and later turns' patches remove
// (glossdiff.go), as undos for the gloss link.
func dropUnsettled(t Turn, cands []Candidate, sents []posSentence, later []LaterText, removals []undo) {
	if !evidenceOff["offered"] {
		dropOffered(t, cands)
	}
	if !evidenceOff["undone"] {
		dropUndone(t, cands, sents, later, removals)
	}
}

// stepSentences returns the sentences of a model text as Distill reads
// them (list markers and leading acknowledgements cut off).
func stepSentences(text string) []string {
	prose, _ := splitFences(stripHarness(text))
	var out []string
	for _, s := range sentences(prose) {
		st := stripAck(s.text)
		if st != "" {
			out = append(out, st)
		}
	}
	return out
}

// cutSentences takes the sentences cut out of a candidate's text; a
// candidate left with nothing specific is dropped with reason, one left
// with something records each piece cut, with reason, in its cuts. A
// sentence left opening with a pronoun whose referent was cut gets the
// cut sentence's subject back, or is cut too (mendDangling).
func cutSentences(c *Candidate, cut []string, reason string) {
	if len(cut) == 0 {
		return
	}
	orig := c.Text
	rewrites, more := mendDangling(orig, cut)
	cut = append(cut, more...)
	for _, r := range rewrites {
		orig = replaceSentence(orig, r[0], r[1])
	}
	text, ok := cutLeaves(orig, cut)
	if !ok {
		c.Keep, c.Reason = false, reason
		return
	}
	c.cuts = recordCuts(c.cuts, c.Text, cut, reason)
	c.Text = text
	c.subject = subjectOf(text)
}

// recordCuts returns cuts with each piece of pieces that text holds
// added, with reason.
func recordCuts(cuts []cutPiece, text string, pieces []string, reason string) []cutPiece {
	for _, s := range pieces {
		if s = strings.TrimSpace(s); s != "" && strings.Contains(text, s) {
			cuts = append(cuts, cutPiece{text: s, reason: reason})
		}
	}
	return cuts
}

// undoCue marks a sentence that undoes or replaces what exists: a removal,
// a move or rename, a revert, something put back, or the user saying
// they changed their own files.
var undoCue = regexp.MustCompile(`\b(?:removed|deleted|replaced|renamed|moved|reverted|reintroduced|restored|re-?added|rolled back|undid)\b|` + ownChange.String())

// ownChange marks the user saying they changed their own files ("I have
// updated my oxlint configuration"): what the file was said to hold is
// stale, whatever else the statement names.
var ownChange = regexp.MustCompile(`\bi(?:'ve| have)? (?:just |now )?(?:updated|changed|modified|edited|rewrote|rewritten|fixed|reworked) my\b`)

// undoStems are substrings every sentence undoCue or undoAsked matches
// has one of: a cheap test before the regular expressions.
var undoStems = []string{"remov", "delet", "replac", "renam", "mov", "revert", "reintroduc", "restor", "add", "roll", "undo", "undid", " my"}

// mayUndo reports whether a lowercased sentence may match undoCue or
// undoAsked.
func mayUndo(ls string) bool {
	for _, st := range undoStems {
		if strings.Contains(ls, st) {
			return true
		}
	}
	return false
}

// undoNarrated marks the agent telling the undo it makes next ("Now let
// me also remove the `x.cfg` file since we no longer need it"): in a
// tool loop the removal follows the sentence, as it follows a request.
var undoNarrated = regexp.MustCompile(`\blet me (?:also |now |just )?(?:remove|delete|revert|roll back|undo)\b`)

// undoAsked marks a sentence of a later turn that asks for an undo.
var undoAsked = regexp.MustCompile(`^(?:please )?(?:remove|delete|replace|rename|move|revert|reintroduce|restore|re-?add|roll back|undo)\b`)

// dropUndone takes out of the model's kept statements each sentence that
// a later sentence undoes: it removes, moves, renames, reverts or puts
// back something the sentence names (a token of the undo verb's object,
// and a second shared subject token or a long one said within
// revisionReach; path components count as subject tokens), so the
// sentence describes a state the session left. When the user says they
// changed their own file, naming it is enough. A later turn's request
// ("Remove the current X") counts as an undo; the turn's own plans do
// not.
func dropUndone(t Turn, cands []Candidate, sents []posSentence, later []LaterText, removals []undo) {
	asked := map[string]bool{} // the sentences of later turns
	for _, l := range later {
		if !l.words() {
			continue
		}
		for _, s := range sentences(l.Text) {
			asked[s.text] = true
		}
	}
	var undos []undo
	for _, s := range sents {
		if u, ok := undoOf(s, asked[s.text]); ok {
			undos = append(undos, u)
		}
	}
	var links []glossUndo // undos of an identifier the session glossed (gloss.go)
	if gus := append(slices.Clip(undos), removals...); !evidenceOff["gloss"] && len(gus) > 0 {
		links = glossUndos(gus, sessionGlosses(t.held, sents, gus))
	}
	if len(undos) == 0 && len(links) == 0 {
		return
	}
	stepSents := map[int][]string{} // the sentences of each step, split once
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		if _, ok := stepSents[c.step]; !ok {
			stepSents[c.step] = stepSentences(t.Steps[c.step].Text)
		}
		if cut, why := undoneIn(c.Text, stepSents[c.step], c.pos, undos); len(cut) > 0 {
			cutSentences(c, cut, "undone later: "+preview(why))
		}
		if len(links) == 0 || !c.Keep {
			continue
		}
		if cut, why := glossUndoneIn(c.Text, stepSents[c.step], c.pos, links); len(cut) > 0 {
			cutSentences(c, cut, why)
		}
	}
}

// undo is a sentence that undoes what exists (undoCue), or a later
// turn's request for an undo (undoAsked).
type undo struct {
	posSentence
	subject, tokens map[string]bool
	own             bool // the user changed their own files
	removed         bool // a setting a patch removed (glossdiff.go), read by the gloss link only
}

// undoOf returns s as an undo when it is one; fromLater says s is a
// sentence of a later turn, where a request ("Remove the X") counts too.
// Batch (dropUndone) and live capture (Pipeline.revise) share this test.
func undoOf(s posSentence, fromLater bool) (undo, bool) {
	ls := lower(strings.TrimSpace(s.text))
	if !mayUndo(ls) || !(undoCue.MatchString(ls) || fromLater && undoAsked.MatchString(ls) || !evidenceOff["undo-narrated"] && undoNarrated.MatchString(ls)) || replacedAnew(ls) {
		return undo{}, false
	}
	return undo{posSentence: s, subject: pathSubject(s.text), tokens: undoneTokens(s.text), own: ownChange.MatchString(ls)}, true
}

// undoneIn returns the sentences of sents found in text that an undo said
// after position pos undoes, and the first undo's text: the undo names a
// token of the sentence, and shares a second subject token with it, or a
// long one within revisionReach, or is the user's change of their own
// files. A sentence that itself reports an undo is never undone, nor is
// one the undo carries out (carriedOut: it proposes the undo), nor one
// saying nothing of where a thing is that the undo only moves
// (keptWhereMoved). Batch
// (dropUndone) and live capture (Pipeline.revise) share this rule.
func undoneIn(text string, sents []string, pos int, undos []undo) (cut []string, why string) {
	for _, st := range sents {
		if !holdsSentence(text, st) || undoCue.MatchString(lower(st)) {
			continue // not kept, or itself a report of an undo
		}
		subj := pathSubject(st)
		for _, u := range undos {
			if u.pos <= pos || strings.Contains(u.text, st) || overlap(subj, u.tokens) == 0 {
				continue
			}
			if n, long := overlapLong(subj, u.subject); u.own || n >= 2 || (long && u.pos-pos <= revisionReach) {
				if carriedOut(st, u) || keptWhereMoved(st, u) {
					continue // the undo does what st proposes, or moves what st does not place (carried.go)
				}
				cut = append(cut, st)
				if why == "" {
					why = u.text
				}
				break
			}
		}
	}
	return cut, why
}

// cutLeaves returns text with the sentences cut taken out and whether
// what is left is still a statement worth keeping (four words and
// something specific): cutSentences' test.
func cutLeaves(text string, cut []string) (string, bool) {
	for _, s := range cut {
		text = replaceSentence(text, s, "")
	}
	text = strings.Join(strings.Fields(text), " ")
	return text, wordCount(text) >= 4 && findingWeight(text, lower(text)) >= 1
}

// undoObject is what follows an undo verb up to a word that ends its
// object ("moved X to Y", "replaced X with Y", "removed X from Y").
var undoObject = regexp.MustCompile(`(?i)\b(?:removed|deleted|replaced|renamed|moved|reverted|reintroduced|restored|re-?added|rolled back|undid|remove|delete|replace|rename|move|revert|reintroduce|restore|re-?add|roll back|undo|(?:updated|changed|modified|edited|rewrote|rewritten|fixed|reworked) my)\b((?:\s+[^\s,;]+){1,8})`)

// quotedName is a one-word name in double quotes (after quoteFold).
var quotedName = regexp.MustCompile(`"([^"\s]+)"`)

// objectStop ends an undo verb's object.
var objectStop = regexp.MustCompile(`(?i)\s(?:to|with|from|into|since|because|so|as|for|and|in favou?r of|instead)\s`)

// undoneTokens returns the load-bearing tokens of what a sentence's undo
// verbs act on (the subject words when the user changed their own
// files: "I have updated my oxlint configuration"). A one-word name in
// double quotes, typographic or not, is a name as one in backticks is
// (quotedName): "removed the deploy “continue-on-error”" undoes
// continue-on-error.
func undoneTokens(text string) map[string]bool {
	out := map[string]bool{}
	if !evidenceOff["undo-quotes"] {
		text = quotedName.ReplaceAllString(quoteFold.Replace(text), "`$1`")
	}
	for _, m := range undoObject.FindAllStringSubmatch(text, -1) {
		obj := m[1] + " "
		if loc := objectStop.FindStringIndex(obj); loc != nil {
			obj = obj[:loc[0]]
		}
		toks := loadTokens(obj)
		if strings.HasSuffix(strings.ToLower(m[0][:len(m[0])-len(m[1])]), " my") {
			toks = subjectOf(obj) // the user's own files, named in plain words
		}
		for t := range toks {
			out[t] = true
		}
	}
	return out
}

// loadTokens returns the load-bearing tokens of text, lowercased.
func loadTokens(text string) map[string]bool {
	out := map[string]bool{}
	for t := range memory.LoadBearing(text) {
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
// as offers ("If you want, I can:") or as what is left to do ("Next
// steps:", a "- Next steps" bullet over its sub-items), even when the
// list stands in its own paragraph: a choice put to the user, an offer
// or a to-do is not a fact.
func dropOffered(t Turn, cands []Candidate) {
	items := map[int][]string{} // the offered items of each step, found once
	for i := range cands {
		c := &cands[i]
		if !c.Keep || c.Origin == OriginUser || c.step < 0 || c.step >= len(t.Steps) {
			continue
		}
		if _, ok := items[c.step]; !ok {
			items[c.step] = offeredItems(t.Steps[c.step].Text)
		}
		var offered []string
		for _, it := range items[c.step] {
			if holdsSentence(c.Text, it) {
				offered = append(offered, it)
			}
		}
		if len(offered) > 0 {
			cutSentences(c, offered, "offered or left to do: "+preview(offered[0]))
		}
	}
}

// offeredItems returns the sentences of the list items that an intro of
// options, offers or next steps (offerIntro) heads in a model text: the
// items that follow a line ending in such an intro, up to the next line
// that is not a list item, and the items nested under a list item that
// is such an intro, up to the next item as shallow as it.
func offeredItems(text string) []string {
	prose, _ := splitFences(stripHarness(text))
	var out []string
	in, nested, depth := false, false, 0
	for _, raw := range strings.Split(prose, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " \t"))
		item := listMark.MatchString(line)
		if in && item && (!nested || indent > depth) {
			for _, s := range sentences(line) {
				st := stripAck(s.text)
				if st != "" {
					out = append(out, st)
				}
			}
			continue
		}
		in, nested, depth = offerIntro(line), item, indent
	}
	return out
}

// offerIntro reports whether a line introduces options, offers or next
// steps: its last sentence ends with a colon and offers, proposes or
// names choices ("We could go either way:", "If you want, I can:", "Some
// potential additions could include:", proposes), or the line is a
// heading of what is left to do ("Next steps", "- Follow-ups:").
func offerIntro(line string) bool {
	ss := sentences(line)
	if len(ss) == 0 {
		return false
	}
	last := ss[len(ss)-1]
	lt := lower(strings.TrimSpace(last.text))
	if last.intro && (optionsIntro.MatchString(lt) || offers(lt) || proposes(lt)) {
		return true
	}
	head := strings.TrimRight(strings.Trim(strings.TrimSpace(last.text), "*_"), ":")
	return len(ss) == 1 && wordCount(head) <= 5 && planHeading.MatchString(head)
}
