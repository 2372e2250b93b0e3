package ingest

import (
	"regexp"
	"strings"
)

// A list item that says it tells earlier work again. Codex ends nearly
// every answer with the state of the whole work, and marks the parts an
// earlier turn did inside the list, not in a section's title (recap
// sections, sections.go): "- Orca and Cura generation (earlier)" or "-
// OpenPrintTag NFC/DB/Remote (from previous step)" over the items an
// earlier answer listed, "- M-code Reference expanded earlier (Exhaust,
// Aux, ...)", "- Firmware Mapping and other help docs already in place".
// Such an item, and the items nested under it, restate what the turns
// that did that work said: they are read as a recap section's lines
// (sectionRecap: dropped with reasonRecap, each shown in the feed, unless
// a line gives a reason; never in a compaction summary). A mark on one
// part of an item ("tool_change (existing), before_tool_change, ...")
// says nothing of the rest of it: only a closing mark, or a verb of work
// done earlier, marks the item.

// ruleRecapItem names the rule, as ablate lists it.
const ruleRecapItem = "recapitem"

// recapItemClose is a closing parenthesis that marks an item as earlier
// work: "(earlier)", "(from previous step)", "(existing)", "(unchanged)",
// "(already landed)", "(done earlier)", "(new previously)". Matched
// against the lowercased item, its closing punctuation cut.
var recapItemClose = regexp.MustCompile(`\((?:[^()]*\s)?(?:earlier|previous|previously|existing|unchanged|already \w+)(?:\s[^()]*)?\)$`)

// recapItemWork is work told as done before this turn: "expanded
// earlier", "previously added", "already in place". Matched against the
// lowercased item.
var recapItemWork = regexp.MustCompile(`\b(?:\w+ed|done|made|built|written) (?:earlier|previously)\b|\bpreviously (?:\w+ed|done|made|built|written)\b|\balready (?:in place|present|live|landed|there|done|implemented|shipped)\b`)

// maxRecapTitleWords is the most words (spaced apart) an item has before
// its mark: a
// longer item says something of its own, the mark qualifying only a part
// of it ("CLI `opk gen` now supports `--bundle` for cura, prusa, ideamaker
// (already supported orca)", "if not available, GUI imports use the stubs
// added earlier", "Custom Peripherals list with Add/Remove and combo for
// Hook (dynamic: explicit hooks + hooks already present)").
const maxRecapTitleWords = 8

// recapAmends is a word that makes an item about earlier work a
// correction of it, not a recap: "The changes we made earlier were close
// but not quite right". Matched against the lowercased item.
var recapAmends = regexp.MustCompile(`\b(?:not|no|but|however|wrong|broke|broken|instead|missed|incorrect)\b`)

// recapItem reports whether a list item (its marker cut) says it tells
// earlier work again: a closing mark (recapItemClose) or a verb of work
// done earlier (recapItemWork) after at most maxRecapTitleWords words, in
// an item that corrects nothing (recapAmends). title reports whether the
// item has the shape of a title over the lines after it: a closing mark,
// no sentence's full stop ("OpenPrintTag NFC/DB/Remote (from previous
// step)", not "Converted the list to links (done earlier).").
func recapItem(item string) (ok, title bool) {
	if !ruleOn(ruleRecapItem) {
		return false, false
	}
	it := strings.TrimSpace(item)
	li := lower(strings.TrimRight(it, ".;:"))
	if !recapWord(li) || recapAmends.MatchString(li) {
		return false, false
	}
	if loc := recapItemClose.FindStringIndex(li); loc != nil && len(strings.Fields(li[:loc[0]])) <= maxRecapTitleWords {
		return true, strings.HasSuffix(it, ")")
	}
	loc := recapItemWork.FindStringIndex(li)
	return loc != nil && len(strings.Fields(li[:loc[0]])) <= maxRecapTitleWords, false
}

// recapWords are the words every mark of recapItemClose and recapItemWork
// holds one of: a substring test before the expressions, which most list
// items need not run.
var recapWords = []string{"earlier", "previous", "existing", "unchanged", "already"}

// recapWord reports whether a lowercased item holds one of recapWords.
func recapWord(li string) bool {
	for _, w := range recapWords {
		if strings.Contains(li, w) {
			return true
		}
	}
	return false
}

// recapItems follows the recap items of a block's lines: next returns
// whether a line is read as a recap. A block reaches sectionSentences with
// its lines trimmed (splitBlocks), so nesting is read from where the
// item stands: a recap item shaped as a title (recapItem) opening its
// block titles the block, as
// Codex sets each top-level item apart with its nested items ("-
// OpenPrintTag NFC/DB/Remote (from previous step)", a blank line before
// and after its items); a recap item inside a block is a recap alone.
type recapItems struct {
	block bool // the block's first line is a recap item: every line of it is recap
	n     int  // the lines read
}

// next reads the block's next line and reports whether it is a recap
// item or a line of a block one titles.
func (r *recapItems) next(line string) bool {
	r.n++
	if r.block {
		return true
	}
	m := listMarker.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	ok, title := recapItem(m[2])
	r.block = ok && title && r.n == 1
	return ok
}
