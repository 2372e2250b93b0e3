package ingest

import (
	"context"
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// One rule of an instruction file, one memory. A statement read from an
// instruction file (instrStatements) is stored as "FILE: lead-in: rule":
// the lead-in or heading it sits under is written when the edit shows it,
// and an edit of a few lines shows no lead-in ("FILE: rule"). The same
// rule of the same file is then stored in two texts, too short to be near
// duplicates of each other when the rule is short (a lead-in of eight
// words against a rule of five). Before the similarity test, a new
// statement of an instruction file is matched by its rule's own text
// against the project's standing statements of the same file closest to
// it (sameRuleMemory): the same rule with the lead-in supersedes the
// version without, and the version without reinforces the one with.

// ruleInstrDedup names, for ablate (junk.go), the dedup of instruction
// statements by their file and rule text.
const ruleInstrDedup = "instrdedup"

// instrRuleNeighbours is how many of the project's memories closest to a
// new instruction statement are read for the same rule: versions of one
// rule are close, if not near duplicates.
const instrRuleNeighbours = 5

// instrRuleParts splits a memory text of an instruction file's statement
// ("CONVENTIONS.md: When writing Markdown files: Bullet lists use ...")
// into the file's base name, lowercased, and the rest; ok is false for
// any other text.
func instrRuleParts(text string) (file, rest string, ok bool) {
	head, rest, found := strings.Cut(text, ": ")
	if !found || head == "" || strings.ContainsAny(head, " \t") || !InstructionFile(head) {
		return "", "", false
	}
	return instrKey(head), rest, true
}

// normRule is a rule's text as versions of it are compared: emphasis and
// spaces as cleanInstr leaves them, lowercased, no closing punctuation.
func normRule(s string) string {
	return strings.TrimRight(strings.ToLower(cleanInstr(s)), ".;:,!")
}

// sameInstrRule reports whether two memory texts state the same rule of
// the same instruction file, one with the lead-in it sits under and the
// other with or without it ("F: rule", "F: lead-in: rule"); fuller says
// that a holds a lead-in b does not.
func sameInstrRule(a, b string) (same, fuller bool) {
	fa, ra, oka := instrRuleParts(a)
	fb, rb, okb := instrRuleParts(b)
	if !oka || !okb || fa != fb {
		return false, false
	}
	na, nb := normRule(ra), normRule(rb)
	switch {
	case na == nb:
		return true, false
	case leadInOf(na, nb):
		return true, true
	case leadInOf(nb, na):
		return true, false
	}
	return false, false
}

// leadInOf reports whether the normalised rule text long is short with a
// lead-in before it ("lead-in: short"), the lead-in a name for a section
// (at most maxContextRunes, no sentence ended in it).
func leadInOf(long, short string) bool {
	if proseWords(short) < 3 {
		return false
	}
	lead, ok := strings.CutSuffix(long, ": "+short)
	return ok && lead != "" && runeLen(lead) <= maxContextRunes && !strings.ContainsAny(lead, ".!?")
}

// sameRuleMemory places m, a statement of an instruction file, when a
// standing memory of its project among the instrRuleNeighbours closest
// holds the same rule of the same file (sameInstrRule): m supersedes it
// when m adds the lead-in, else reinforces it. done says it decided.
func (p *Pipeline) sameRuleMemory(ctx context.Context, r *run, m memory.Memory) (outcome, memory.Memory, string, bool, error) {
	if !ruleOn(ruleInstrDedup) || m.Kind != memory.KindConvention {
		return 0, memory.Memory{}, "", false, nil
	}
	if _, _, ok := instrRuleParts(m.Text); !ok {
		return 0, memory.Memory{}, "", false, nil
	}
	near, err := p.store.VectorSearch(ctx, m.Embedding, instrRuleNeighbours, ownProject(r.ex.Project, m.EmbeddingModel))
	if err != nil {
		return 0, memory.Memory{}, "", false, fmt.Errorf("find the same rule: %w", err)
	}
	var olds []memory.Memory // the neighbours of the same file, nearest first
	for _, s := range near {
		if r.setAside(s.ID) {
			continue
		}
		old, err := p.store.Get(ctx, s.ID)
		if err != nil {
			return 0, memory.Memory{}, "", false, fmt.Errorf("read the same rule: %w", err)
		}
		same, fuller := sameInstrRule(m.Text, old.Text)
		if !same {
			olds = append(olds, old)
			continue
		}
		if !fuller {
			_, stored, _, err := p.duplicate(ctx, r, old.ID, outMerged)
			return outMerged, stored, fmt.Sprintf("the same rule of its file as %s", old.ID), true, err
		}
		return p.newRuleVersion(ctx, r, m, old, "the same rule of its file, with the lead-in it sits under")
	}
	if !ruleOn(ruleInstrVersion) {
		return 0, memory.Memory{}, "", false, nil
	}
	for _, old := range olds {
		if restatesRule(old.Text, m.Text) {
			return p.newRuleVersion(ctx, r, m, old, "the file's rule as it reads now")
		}
	}
	return 0, memory.Memory{}, "", false, nil
}

// newRuleVersion stores m as the new version of old, which it supersedes.
func (p *Pipeline) newRuleVersion(ctx context.Context, r *run, m, old memory.Memory, what string) (outcome, memory.Memory, string, bool, error) {
	m.Importance = max(m.Importance, old.Importance)
	out, stored, why, err := p.commit(ctx, r, m, old.ID, fmt.Sprintf("updates %s (%s)", old.ID, what))
	if out == outCreated {
		out = outUpdated
	}
	return out, stored, why, true, err
}

// ruleInstrVersion names, for ablate (junk.go), the supersession of an
// instruction statement by a later statement of its file that restates
// its rule.
const ruleInstrVersion = "instrversion"

// restatesRule reports whether the instruction statement b, stored after
// a, restates a's rule (the restatement test of one turn, dropRestated,
// on the rules' own words: mayRestate, namesAll, statesRules): a later
// edit of the file shows the rule as the file says it now ("Write
// comprehensive TSDoc comments ..., TSDoc variant" after "Write
// comprehensive JSDoc comments ..."), whichever session stored a. Both
// must be statements of the same file.
func restatesRule(a, b string) bool {
	fa, ra, oka := instrRuleParts(a)
	fb, rb, okb := instrRuleParts(b)
	if !oka || !okb || fa != fb {
		return false
	}
	ca := Candidate{Text: a, Origin: OriginInstruction, Class: ClassInstruction, Keep: true, subject: subjectOf(ruleOnly(ra))}
	cb := Candidate{Text: b, Origin: OriginInstruction, Class: ClassInstruction, Keep: true, subject: subjectOf(ruleOnly(rb))}
	return mayRestate(ca, cb) && namesAll(lower(b), namedTokens(a)) && statesRules(a, b) && asCertain(ca, cb)
}

// ruleOnly is a stored statement's text after its file's name without
// the lead-in it may open with ("When writing Markdown files: ..."): a
// name for a section (leadInOf) before ": ".
func ruleOnly(rest string) string {
	if lead, rule, ok := strings.Cut(rest, ": "); ok && leadInOf(normRule(rest), normRule(rule)) && lead != "" {
		return rule
	}
	return rest
}
