package eval

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

// IdentifierPrompts are the prompts the identifier probe asks about each
// rare identifier (IdentifierProbe), %s the identifier: where it is
// defined, why it fails, what it does, and the identifier alone.
var IdentifierPrompts = []string{
	"where is `%s` defined?",
	"why does %s fail?",
	"what does %s do?",
	"%s",
}

// IdentifiersPerMemory is how many of a memory's rare identifiers the
// probe asks about: the first ones its text writes.
const IdentifiersPerMemory = 2

// minIdentifierLen is the fewest characters a probed identifier has.
const minIdentifierLen = 4

// IdentifierProbe is what `eval sessions --probe-identifiers` measures: for
// every live memory of the sessions, prompts naming one rare identifier it
// holds (a token written as an identifier, which general language does not
// use and no other live memory holds: rareIdentifiers), asked as the prompt
// hook asks them in the memory's project (else the session's), as probes
// that record no access. The store holds exactly what each asks about, so
// an answer without that memory is a miss and an empty one a refusal.
type IdentifierProbe struct {
	ProbeCounts
	// Forms are the name-form probes (NameFormProbes): the same prompts
	// naming a token a memory writes as a flag, an environment variable,
	// a path, a called name or a number written as an identifier, which
	// no other live memory writes, whether or not general language uses
	// its words ("--firmware", "assets/", "abs()"). One entry a form, in
	// NameForms' order.
	Forms []FormProbe `json:"forms,omitempty"`
}

// FormProbe is the name-form probe of one form (NameForms).
type FormProbe struct {
	Form string `json:"form"`
	ProbeCounts
}

// ProbeCounts are the counts of a probe of names: the identifier probe's
// (IdentifierProbe) or one name form's (FormProbe).
type ProbeCounts struct {
	// Memories holding a rare identifier; Identifiers asked; Prompts asked
	// (Identifiers x IdentifierPrompts).
	Memories    int `json:"memories"`
	Identifiers int `json:"identifiers"`
	Prompts     int `json:"prompts"`
	// Hits gave the memory in the first SessionsK; Other gave memories,
	// not it; Empty gave nothing.
	Hits  int `json:"hits"`
	Other int `json:"other"`
	Empty int `json:"empty"`
	// Why the empty ones got nothing: the lexical test's memory was no
	// nearer than the sample's mean (search.Evidence.LexicalFar), the
	// prompt was generic, it named something no memory holds, no other
	// evidence, or the evidence held and no memory cleared the floors.
	EmptyLexicalFar     int `json:"empty_lexical_far"`
	EmptyGeneric        int `json:"empty_generic"`
	EmptyNamesUnknown   int `json:"empty_names_unknown"`
	EmptyNoEvidence     int `json:"empty_no_evidence"`
	EmptyFloors         int `json:"empty_floors"`
	MemoriesWithAnEmpty int `json:"memories_with_an_empty"`
	// LexicalOnly counts the prompts whose evidence held on the lexical
	// test alone (the vector test failed), LexicalZ the z of their lexical
	// memory (search.Evidence.LexicalZ) in bins: below 0 (LexicalFar),
	// 0-0.5, 0.5-1, 1 and above; LexicalZMin is the lowest (0 without
	// any). They say how near the identifier prompts come to LexicalFar.
	LexicalOnly int     `json:"lexical_only"`
	LexicalZ    [4]int  `json:"lexical_z_bins"`
	LexicalZMin float64 `json:"lexical_z_min"`
}

// identifierToken matches a token that may be an identifier: letters,
// digits and the joiners of names, paths and flags ("3bb8701" whole, not
// from its first letter).
var identifierToken = regexp.MustCompile(`-{0,2}[A-Za-z0-9_][A-Za-z0-9_.:/-]*[A-Za-z0-9_]`)

// tokenForms returns the lower-cased forms of text's tokens
// (identifierToken) and of their path segments, each once: what a memory
// holds for the probe's "no other memory holds it".
func tokenForms(text string) map[string]bool {
	out := map[string]bool{}
	for _, tok := range identifierToken.FindAllString(text, -1) {
		lt := strings.ToLower(tok)
		out[lt] = true
		for _, seg := range strings.Split(lt, "/") {
			if seg != "" {
				out[seg] = true
			}
		}
	}
	return out
}

// identifierCandidates returns the tokens of text written as identifiers,
// in the order the text first writes them, each once: a token that is
// not a URL, cut to its last path segment ("backend/search/evidence.go"
// gives "evidence.go"), trimmed of trailing joiners, at least
// minIdentifierLen long, with '_', "::", an inner '.' or '-', a leading
// "--", a capital after a lower-case letter, or letters and digits mixed
// (isIdentifier), with at least one letter.
func identifierCandidates(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, tok := range identifierToken.FindAllString(text, -1) {
		if strings.Contains(tok, "://") {
			continue
		}
		if i := strings.LastIndex(tok, "/"); i >= 0 {
			tok = tok[i+1:]
		}
		tok = strings.TrimRight(tok, ".:-")
		lt := strings.ToLower(tok)
		if len(tok) < minIdentifierLen || seen[lt] || !strings.ContainsFunc(tok, unicode.IsLetter) || !isIdentifier(tok) {
			continue
		}
		seen[lt] = true
		out = append(out, tok)
	}
	return out
}

// isIdentifier reports whether tok is written as an identifier (see
// identifierCandidates).
func isIdentifier(tok string) bool {
	if strings.HasPrefix(tok, "--") && len(tok) > 3 {
		return true
	}
	body := strings.TrimLeft(tok, "-")
	if strings.ContainsAny(body, "_") || strings.Contains(body, "::") {
		return true
	}
	letters, digits := 0, 0
	var prev rune
	for i, r := range body {
		switch {
		case unicode.IsLetter(r):
			letters++
			if i > 0 && unicode.IsUpper(r) && unicode.IsLower(prev) {
				return true // camelCase
			}
		case unicode.IsDigit(r):
			digits++
		case (r == '.' || r == '-') && i > 0 && i < len(body)-1:
			return true // a file name, pkg.Func, a kebab-case flag or name
		}
		prev = r
	}
	return letters > 0 && digits > 0 // "E1234", "3bb8701", "MK3S"
}

// rareIdentifiers returns, for each memory of ms (by id), the first
// IdentifiersPerMemory of its identifier candidates that general language
// does not use (search.GeneralWord) and that no other memory of ms holds
// (tokenForms).
func rareIdentifiers(ms []memory.Memory) (map[string][]string, error) {
	df := map[string]int{}
	for _, m := range ms {
		for f := range tokenForms(m.Text) {
			df[f]++
		}
	}
	out := map[string][]string{}
	for _, m := range ms {
		for _, id := range identifierCandidates(m.Text) {
			lid := strings.ToLower(id)
			if df[lid] != 1 {
				continue
			}
			general, err := generalLanguage(lid)
			if err != nil {
				return nil, err
			}
			if general {
				continue
			}
			out[m.ID] = append(out[m.ID], id)
			if len(out[m.ID]) == IdentifiersPerMemory {
				break
			}
		}
	}
	return out, nil
}

// generalLanguage reports whether general language uses the lower-cased
// token lid (search.GeneralWord): the token itself, or, when it joins
// letters and digits with '-' only ("one-off", "built-in", "--force"), each
// of its parts. A hyphenated compound of general words is English, not an
// identifier nobody else would write; "_", ".", "::", capitals and digits
// (snake_case, file.go, pkg::Fn, CamelCase, E1234) make one.
func generalLanguage(lid string) (bool, error) {
	general, err := search.GeneralWord(lid)
	if err != nil || general {
		return general, wrapProbe(err)
	}
	if strings.ContainsFunc(lid, func(r rune) bool { return r != '-' && !unicode.IsLetter(r) }) {
		return false, nil
	}
	for _, part := range strings.FieldsFunc(lid, func(r rune) bool { return r == '-' }) {
		if general, err := search.GeneralWord(part); err != nil || !general {
			return false, wrapProbe(err)
		}
	}
	return true, nil
}

// wrapProbe gives an error of the identifier probe its context.
func wrapProbe(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("eval sessions: identifier probe: %w", err)
}

// probeIdentifiers asks, after every other figure is measured, the
// identifier probe (IdentifierProbe) of every session's live memories, in
// set order and memory id order, then the name-form probes (NameForms,
// nameFormTokens), and reports them in r.rep.Identifiers; the dump lists
// every prompt not answered with its memory.
func (r *sessionsRun) probeIdentifiers(ctx context.Context) error {
	var ms []memory.Memory
	project := map[string]string{} // memory id -> the project it is asked in
	for _, l := range r.todo {
		live, proj := r.liveMemories(l.ls.ID)
		for _, m := range live {
			if _, ok := project[m.ID]; ok {
				continue
			}
			project[m.ID] = cmp.Or(m.Project, proj)
			ms = append(ms, m)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	ids, err := rareIdentifiers(ms)
	if err != nil {
		return err
	}
	p := &IdentifierProbe{}
	r.rep.Identifiers = p
	if r.opts.Dump != nil {
		fmt.Fprintf(r.opts.Dump, "\n## identifier probes: each prompt not answered with the memory holding its identifier\n")
	}
	r.progress(fmt.Sprintf("identifier probes: %d memories", len(ids)))
	if err := r.askNames(ctx, ms, project, ids, &p.ProbeCounts, ""); err != nil {
		return err
	}
	forms := nameFormTokens(ms, ids)
	for _, form := range NameForms {
		if r.opts.Dump != nil {
			fmt.Fprintf(r.opts.Dump, "\n## name-form probes (%s): each prompt not answered with the memory writing it\n", form)
		}
		p.Forms = append(p.Forms, FormProbe{Form: form})
		if err := r.askNames(ctx, ms, project, forms[form], &p.Forms[len(p.Forms)-1].ProbeCounts, form); err != nil {
			return err
		}
	}
	return nil
}

// askNames asks, for every memory of ms holding names (names, by memory
// id), IdentifierPrompts about each, in its project, and counts the
// answers in c; form names the probe in the dump and the session ids
// ("" for the identifier probe).
func (r *sessionsRun) askNames(ctx context.Context, ms []memory.Memory, project map[string]string, names map[string][]string, c *ProbeCounts, form string) error {
	tag := "eval-ident"
	if form != "" {
		tag = "eval-form-" + form
	}
	for _, m := range ms {
		if len(names[m.ID]) == 0 {
			continue
		}
		c.Memories++
		empty := false
		for _, id := range names[m.ID] {
			c.Identifiers++
			for k, tmpl := range IdentifierPrompts {
				q := fmt.Sprintf(tmpl, id)
				got, err := r.d.Services().Recaller.Recall(ctx, search.RecallRequest{SessionID: fmt.Sprintf("%s-%s-%s-%d", tag, m.ID, id, k),
					Prompt: q, Project: project[m.ID], Event: search.EventPrompt, Unrecorded: true})
				if err != nil {
					return fmt.Errorf("eval sessions: identifier probe %q: %w", q, err)
				}
				c.Prompts++
				outcome := c.count(m.ID, got)
				empty = empty || outcome != "hit" && outcome != "other"
				if outcome != "hit" && r.opts.Dump != nil {
					dumpIdentifierProbe(r.opts.Dump, m, project[m.ID], q, outcome, got)
				}
			}
		}
		if empty {
			c.MemoriesWithAnEmpty++
		}
	}
	return nil
}

// count counts one identifier prompt's answer, whose memory is id, and
// returns its outcome: "hit", "other", or why it was empty ("lexical far",
// "generic", "names unknown", "no evidence", "floors").
func (p *ProbeCounts) count(id string, got search.Recalled) string {
	if ev := got.Evidence; ev != nil && ev.Lexical && !ev.Vector && ev.Std > 0 {
		p.lexicalZ(ev.LexicalZ)
	}
	hits := got.Hits[:min(len(got.Hits), SessionsK)]
	switch {
	case slices.ContainsFunc(hits, func(h memory.Hit) bool { return h.Memory.ID == id }):
		p.Hits++
		return "hit"
	case len(got.Hits) > 0:
		p.Other++
		return "other"
	}
	p.Empty++
	ev := got.Evidence
	switch {
	case ev == nil || ev.Holds():
		p.EmptyFloors++
		return "floors"
	case ev.Generic:
		p.EmptyGeneric++
		return "generic"
	case ev.NamesUnknown:
		p.EmptyNamesUnknown++
		return "names unknown"
	case ev.Lexical && ev.LexicalFar:
		p.EmptyLexicalFar++
		return "lexical far"
	}
	p.EmptyNoEvidence++
	return "no evidence"
}

// lexicalZ counts a prompt held by the lexical test alone whose lexical
// memory lies z standard deviations above the sample's mean.
func (p *ProbeCounts) lexicalZ(z float64) {
	if p.LexicalOnly == 0 || z < p.LexicalZMin {
		p.LexicalZMin = z
	}
	p.LexicalOnly++
	switch {
	case z <= 0:
		p.LexicalZ[0]++
	case z < 0.5:
		p.LexicalZ[1]++
	case z < 1:
		p.LexicalZ[2]++
	default:
		p.LexicalZ[3]++
	}
}

// dumpIdentifierProbe writes an identifier prompt not answered with its
// memory m: the outcome, what it got and the evidence test.
func dumpIdentifierProbe(w io.Writer, m memory.Memory, project, q, outcome string, got search.Recalled) {
	fmt.Fprintf(w, "- %s [%s] in %q: %q (memory %s: %s)\n", outcome, m.ID, project, q, m.ID, oneLine(m.Text, 160))
	for _, h := range got.Hits {
		fmt.Fprintf(w, "  got %s: %s\n", h.Memory.ID, oneLine(h.Memory.Text, 120))
	}
	dumpEvidence(w, got.Evidence)
}
