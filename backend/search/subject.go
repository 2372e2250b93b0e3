package search

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// A name written by its form ("--firmware", "-a", "./out", "all()",
// "$GOFLAGS", "#1234": memory.NameTerms) is what a prompt writing it is
// about. A memory that does not hold the name can be about the prompt only
// through the prompt's other words: "why does -a fail?" without "-a" is
// "why does fail?", which says too little to be about anything (Specific),
// and the memories it matches (failing runs) are noise, however well the
// vector leg ranks them (it reads "--firmware" as the word "firmware"). So
// a prompt's candidate lacking a name the prompt writes by its form is kept
// only when the prompt's words outside the names it lacks are specific on
// their own (subject); when no candidate is left, the prompt gets nothing.

// lackedNames returns the names of the query (formNames, as
// memory.NameTerms writes them) that a memory's text does not hold: none
// of its own names holds it (holdsName), nor does the text write it as
// the query does (writesName).
func lackedNames(formNames []string, text string) []string {
	var out []string
	var has []string
	var lower string
	for i, n := range formNames {
		if i == 0 {
			has, lower = memory.NameTerms(text), strings.ToLower(text)
		}
		if !slices.ContainsFunc(has, func(h string) bool { return holdsName(h, n) }) && !writesName(lower, n) {
			out = append(out, n)
		}
	}
	return out
}

// writesName reports whether lower, a memory's text lowercased, writes
// the name n as a query writes it, where the name's forms do not read it
// (memory.NameTerms: a flag after a typographic quote, “--export-gcode”):
// n not joined to a letter, digit, '_' or '-' before it, nor, unless it
// ends a folder with '/', after it.
func writesName(lower, n string) bool {
	for from := 0; from < len(lower); {
		i := strings.Index(lower[from:], n)
		if i < 0 {
			return false
		}
		i += from
		before, _ := utf8.DecodeLastRuneInString(lower[:i])
		after, _ := utf8.DecodeRuneInString(lower[i+len(n):])
		if !nameRune(before) && (strings.HasSuffix(n, "/") || !nameRune(after)) {
			return true
		}
		from = i + 1
	}
	return false
}

// nameRune reports whether r continues a name: a letter, a digit, '_'
// or '-'.
func nameRune(r rune) bool { return wordRune(r) || r == '-' }

// holdsName reports whether a memory's name term has holds the query's
// name n: the same name, or, for a path, the same path with more of it
// before or after a '/' ("opk/plugins/converters" in
// "opk/plugins/converters/base.py", "out" in "./out/", "converters/x.py"
// in "opk/plugins/converters/x.py"), or for a called name, the same name
// after a '.' ("slice()" in "np.slice()").
func holdsName(has, n string) bool {
	if has == n {
		return true
	}
	if strings.HasSuffix(n, "()") {
		return strings.HasSuffix(has, "."+n)
	}
	if !strings.Contains(n, "/") {
		return false
	}
	trim := func(s string) string { return strings.TrimSuffix(strings.TrimPrefix(s, "./"), "/") }
	has, n = trim(has), trim(n)
	return n != "" && (has == n || strings.HasPrefix(has, n+"/") || strings.HasSuffix(has, "/"+n) || strings.Contains(has, "/"+n+"/"))
}

// withoutNames returns text with every span writing one of names
// (memory.NameTermSpans) blanked: what the prompt says besides them.
func withoutNames(text string, names []string) string {
	b := []byte(text)
	for _, s := range memory.NameTermSpans(text) {
		if slices.Contains(names, s.Term) {
			for i := s.Start; i < s.End; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// subject drops, for a prompt (Query.Prompt) writing names by their form,
// the candidates lacking one of them (lackedNames) whose evidence would
// rest on the prompt's words outside the names they lack, when those words
// are not specific on their own (Specific on withoutNames). The candidates
// it drops are counted in Result.LackName; with none left the prompt gets
// nothing, as a generic one does (Evidence.Generic, Evidence.UnheldNames).
func (e *Engine) subject(ctx context.Context, r *queryRun) error {
	if !subjectNames || !r.q.Prompt || !e.gate(r) || !nameTermsOn {
		return nil
	}
	names := memory.NameTerms(r.q.Text)
	if len(names) == 0 {
		return nil
	}
	prob, maxInfo, err := e.wordInfo()
	if err != nil {
		return err
	}
	specific := map[string]bool{} // by the names lacked, joined
	held := map[string]bool{}
	kept := r.cands[:0]
	for _, c := range r.cands {
		lacks := lackedNames(names, c.m.Text)
		for _, n := range names {
			held[n] = held[n] || !slices.Contains(lacks, n)
		}
		if len(lacks) > 0 {
			key := strings.Join(lacks, "\x00")
			ok, seen := specific[key]
			if !seen {
				rest := withoutNames(r.q.Text, lacks)
				_, ok = Specific(QueryWords(rest, e.idx.Analyze, r.df, prob, maxInfo), maxInfo)
				specific[key] = ok
			}
			if !ok {
				r.res.LackName++
				continue
			}
		}
		kept = append(kept, c)
	}
	r.cands = kept
	if len(kept) == 0 {
		ev := &r.res.Evidence
		for _, n := range names {
			if !held[n] {
				ev.UnheldNames = append(ev.UnheldNames, n)
			}
		}
		ev.Generic = true
		r.res.NoEvidence = true
		r.done = true
	}
	return nil
}

// subjectNames turns subject on (ablation switch).
var subjectNames = true
