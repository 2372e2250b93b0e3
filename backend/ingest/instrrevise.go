package ingest

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// The file is the authority. A rule of an instruction file stored from
// one edit stands until an edit of the file takes it out: a line the
// edit's old text holds and its new text does not (SEARCH/REPLACE,
// old_string/new_string, a patch's "-" lines), or, for a write of the
// whole file (Claude Code's Write, a patch's "*** Add File"), a rule the
// new content does not hold. Within a session, a later turn's removal
// revises an earlier turn's statement when the turn is distilled again
// (instructionCandidates, "revised later"); reviseInstrRules does it for
// every standing statement of the file in the project, whichever session
// or turn stored it. The rule the edit wrote in the removed line's place
// (the same hunk of the edit, lineReplacements) supersedes it; a rule
// removed with nothing in its place is moved to the trash (the file holds
// no version of it; the trash keeps it restorable), as a statement a
// later turn revises with no successor is.

// ruleInstrRevise names, for ablate (junk.go), the revision of stored
// instruction statements an edit takes out of their file.
const ruleInstrRevise = "instrrevise"

// maxAlignCells bounds the lines of an edit (old times new) aligned to
// find what replaced a removed line; a larger edit's removed lines are
// revised with no successor.
const maxAlignCells = 250_000

// goneRule is a line an edit took out of an instruction file (normLine)
// and the line it wrote in its place, "" for none.
type goneRule struct {
	line, by string
}

// fileChange is what a turn's edits did to one instruction file: the
// rule lines they took out, and, for a write of the whole file, its new
// text (normalised lines joined by spaces).
type fileChange struct {
	gone  []goneRule
	whole string
}

// ruleLine reports whether a normalised line can be the text of a rule
// (three prose words or more): a shorter one ("example:", "}") is held
// by too many rules to say which one lost it.
func ruleLine(l string) bool {
	return proseWords(l) >= 3
}

// turnRuleChanges returns, by file (instrKey), what the turn's edits of
// instruction files took out: a rule line one edit removes and no edit of
// the turn writes again (a move within the file is no removal), with its
// replacement; and the new text of a whole-file write.
func turnRuleChanges(edits []instrEdit) map[string]*fileChange {
	written := map[string]map[string]bool{} // by file, every line the turn's edits write
	for _, e := range edits {
		k := instrKey(e.file)
		if written[k] == nil {
			written[k] = map[string]bool{}
		}
		for _, l := range e.after {
			written[k][normLine(l)] = true
		}
	}
	out := map[string]*fileChange{}
	get := func(k string) *fileChange {
		if out[k] == nil {
			out[k] = &fileChange{}
		}
		return out[k]
	}
	for _, e := range edits {
		k := instrKey(e.file)
		if e.whole {
			get(k).whole = wholeText(e.after)
			continue
		}
		for _, g := range lineReplacements(e) {
			if !written[k][g.line] {
				get(k).gone = append(get(k).gone, g)
			}
		}
	}
	return out
}

// wholeText is a file's content as its statements' rules are compared
// with it (normRule): the list markers off, the lines joined by spaces.
func wholeText(lines []string) string {
	parts := make([]string, 0, len(lines))
	for _, l := range lines {
		if m := listMarker.FindStringSubmatch(l); m != nil {
			l = m[2]
		}
		parts = append(parts, l)
	}
	return normRule(strings.Join(parts, " "))
}

// lineReplacements returns the rule lines an edit removes (ruleLine),
// each with the rule line it added in the same hunk (the edit's old and
// new lines aligned by their longest common run), the k-th removed with
// the k-th added (the last one when fewer were added).
func lineReplacements(e instrEdit) []goneRule {
	a, b := normLines(e.before), normLines(e.after)
	inA, inB := lineSet(a), lineSet(b)
	var out []goneRule
	if len(a)*len(b) > maxAlignCells {
		for _, l := range a {
			if ruleLine(l) && !inB[l] {
				out = append(out, goneRule{line: l})
			}
		}
		return out
	}
	// lcs[i][j]: the longest common run of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var removed, added []string
	flush := func() {
		for k, l := range removed {
			g := goneRule{line: l}
			if len(added) > 0 {
				g.by = added[min(k, len(added)-1)]
			}
			out = append(out, g)
		}
		removed, added = nil, nil
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			flush()
			i, j = i+1, j+1
		case j < len(b) && (i == len(a) || lcs[i][j+1] >= lcs[i+1][j]):
			if ruleLine(b[j]) && !inA[b[j]] {
				added = append(added, b[j])
			}
			j++
		default:
			if ruleLine(a[i]) && !inB[a[i]] {
				removed = append(removed, a[i])
			}
			i++
		}
	}
	flush()
	return out
}

// normLines returns the lines as normLine reads them, those of fenced
// blocks (code, an example) as "": no rule is read from them.
func normLines(ls []string) []string {
	out := make([]string, len(ls))
	var fence []fenceLevel
	for i, l := range ls {
		if m := fenceLine(l); m != nil {
			fence = fenceStep(fence, m)
			continue
		}
		if len(fence) == 0 {
			out[i] = normLine(l)
		}
	}
	return out
}

func lineSet(ls []string) map[string]bool {
	out := make(map[string]bool, len(ls))
	for _, l := range ls {
		out[l] = true
	}
	return out
}

// holdsLine reports whether a normalised text holds a normalised line as
// whole words.
func holdsLine(text, line string) bool {
	line = normRule(line)
	if line == "" {
		return false
	}
	for from := 0; ; {
		k := strings.Index(text[from:], line)
		if k < 0 {
			return false
		}
		k += from
		end := k + len(line)
		if (k == 0 || !wordRune(text[k-1])) && (end == len(text) || !wordRune(text[end])) {
			return true
		}
		from = k + 1
	}
}

func wordRune(b byte) bool {
	return b == '_' || b >= 0x80 || unicode.IsLetter(rune(b)) || unicode.IsDigit(rune(b))
}

// goneBy reports whether the change took out the rule a stored statement
// of the file states (rest: its text after the file's name), why, and
// the line written in its place (by): it holds a line the turn's edits
// removed, or the whole file was written without its rule (the lead-in
// aside).
func (fc *fileChange) goneBy(file, rest string) (why, by string, gone bool) {
	n := normRule(rest)
	for _, g := range fc.gone {
		if holdsLine(n, g.line) {
			return fmt.Sprintf("%s no longer holds %q", file, g.line), g.by, true
		}
	}
	if fc.whole == "" {
		return "", "", false
	}
	rule := n
	if _, r, ok := strings.Cut(n, ": "); ok && leadInOf(n, r) {
		rule = r
	}
	if strings.Contains(fc.whole, rule) {
		return "", "", false
	}
	return file + " was written whole without it", "", true
}

// reviseInstrRules revises each standing statement of an instruction
// file in t's project that t's edits took out of the file (see above):
// superseded by the memory t stored of the rule written in its place, or
// trashed. cands are t's candidates, listed in *dec from base on; each
// memory revised is listed in *dec after them. It returns how many.
func (p *Pipeline) reviseInstrRules(ctx context.Context, t Turn, cands []Candidate, base int, dec *memory.Decision) (int, error) {
	if !ruleOn(ruleInstrRevise) {
		return 0, nil
	}
	edits, _ := stepEdits(t, turnPatches(t))
	changes := turnRuleChanges(edits)
	if len(changes) == 0 {
		return 0, nil
	}
	own := map[string]bool{} // what t stored or reinforced
	for i := range cands {
		if id := dec.Candidates[base+i].MemoryID; id != "" {
			own[id] = true
		}
	}
	type revision struct {
		m      memory.Memory
		why    string
		byLine string
	}
	var revs []revision
	err := p.store.Iterate(ctx, store.Filter{Projects: []string{t.Project}, Kinds: []memory.Kind{memory.KindConvention}}, func(m memory.Memory) error {
		if own[m.ID] || m.Superseded() {
			return nil // a file of no project is none of another project's (Projects, not Project: "" would be every project)
		}
		file, rest, ok := instrRuleParts(m.Text)
		if !ok || changes[file] == nil {
			return nil
		}
		if why, by, gone := changes[file].goneBy(file, rest); gone {
			revs = append(revs, revision{m: m, why: why, byLine: by})
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read the rules of the instruction files edited: %w", err)
	}
	n := 0
	for _, r := range revs {
		cv, ok, err := p.reviseOne(ctx, t, storedStatement{id: r.m.ID, text: r.m.Text}, r.why, ruleSuccessor(r.byLine, cands, base, dec))
		if err != nil {
			return n, err
		}
		if ok {
			dec.Candidates = append(dec.Candidates, cv)
			n++
		}
	}
	return n, nil
}

// ruleSuccessor returns the memory t stored (or reinforced) of the
// instruction statement holding line, "" for none.
func ruleSuccessor(line string, cands []Candidate, base int, dec *memory.Decision) string {
	if line == "" {
		return ""
	}
	for i, c := range cands {
		cv := dec.Candidates[base+i]
		if c.Origin == OriginInstruction && cv.Kept && cv.MemoryID != "" && holdsLine(normRule(c.Text), line) {
			return cv.MemoryID
		}
	}
	return ""
}
