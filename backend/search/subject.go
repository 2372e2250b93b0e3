package search

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/memory"
)

// A name written by its form ("--firmware", "-a", "./out", "all()",
// "$GOFLAGS", "#1234", "2.4": subjectSpans) is what a prompt writing it is
// about. A memory that does not hold the name can be about the prompt only
// through the prompt's other words: "why does -a fail?" without "-a" is
// "why does fail?", which says too little to be about anything (Specific),
// and the memories it matches (failing runs) are noise, however well the
// vector leg ranks them (it reads "--firmware" as the word "firmware"). So
// a prompt's candidate lacking a name the prompt writes by its form is kept
// only when the prompt's words outside the names it lacks are specific on
// their own (subject); when no candidate is left, the prompt gets nothing.

// lackedNames returns the names of the query (formNames, as
// subjectTerms writes them) that a memory's text does not hold: none
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
// the name n as a query writes it, where the names field's forms do not
// read it (memory.NameTerms: a version, which the field does not hold;
// a name the forms read only where the query writes it, as a flag
// after a letter):
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

// subjectSpans returns the names text writes by their form that a prompt
// can be about (each with its span): the names field's
// (memory.NameTermSpans: flags, folders, paths, calls, variables, numbers
// written as identifiers) and versions (memory.VersionToken: "2.4",
// "v0.4.1-rc.1"), which the word analyzer keeps whole, outside the others.
func subjectSpans(text string) []memory.NameTermSpan {
	spans := memory.NameTermSpans(text)
	if !strings.ContainsAny(text, "0123456789") {
		return spans
	}
	n := len(spans)
	for _, m := range memory.VersionToken.FindAllStringIndex(text, -1) {
		if !slices.ContainsFunc(spans[:n], func(s memory.NameTermSpan) bool { return s.Start <= m[0] && m[1] <= s.End }) {
			spans = append(spans, memory.NameTermSpan{Term: strings.ToLower(text[m[0]:m[1]]), Start: m[0], End: m[1]})
		}
	}
	return spans
}

// subjectTerms returns the terms of subjectSpans, each once, in the order
// written.
func subjectTerms(text string) []string {
	var out []string
	for _, s := range subjectSpans(text) {
		if !slices.Contains(out, s.Term) {
			out = append(out, s.Term)
		}
	}
	return out
}

// withoutNames returns text with every span writing one of names
// (subjectSpans) blanked: what the prompt says besides them.
func withoutNames(text string, names []string) string {
	b := []byte(text)
	for _, s := range subjectSpans(text) {
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
	names := subjectTerms(r.q.Text)
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
