package memory

import (
	"regexp"
	"slices"
	"strings"
)

// Names written by their form: what a text writes as the name of a thing
// (a flag, an environment variable, a path, a dotted or called name, a
// version, a port or an issue number) rather than as a word of the
// language, whatever words it is made of: "--firmware" names a flag
// though "firmware" is a word, "assets/" a folder, "abs(self._value)" a
// call. The evidence test of a recall reads a query's words inside one as
// names (search.nameWords), LoadBearing counts each as a token a
// restatement must keep: one notion, so that what a prompt asks about by
// name and what a statement names agree.
var (
	// FlagToken is a command-line flag as written after a space, an
	// ASCII quote, '=' or an opening punctuation mark of any script
	// (opensName: "(", "“", "‘", "«", "„"): "--dry-run", "-n",
	// "--firmware=x" (its value too, up to a closing mark: nameValue);
	// its first group is the flag. A dash inside a word ("e-mail"), after
	// a closing bracket ("f(x)-y") or before a digit ("-5") is none.
	FlagToken = regexp.MustCompile("(?:^|[\\s`\"'=" + opensName + "])(--?[A-Za-z][\\w-]*(?:=" + nameValue(",;`\"'") + "+)?)")
	// DirToken is a folder written with its trailing slash ("assets/",
	// "./build/", "~/.config/"), between spaces, ASCII quotes or
	// punctuation marks that open (opensName) and close (closesName) in
	// any script ("“assets/”", "(docs/)"); its first group is the folder.
	DirToken = regexp.MustCompile("(?:^|[\\s`\"'" + opensName + "])((?:~|\\.{1,2})?/?(?:[\\w.@-]*\\w/)+)(?:$|[\\s`\"',;:?!" + closesName + "]|\\.(?:$|[\\s" + closesName + "]))")
	// CallToken is a called name, dotted or not, with its arguments on
	// one line: "abs(self._value)", "os.path.join(a, b)", "useMemo()".
	// An English plural mark ("file(s)", "match(es)") is none
	// (callArgsPlural).
	CallToken = regexp.MustCompile(`\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\([^()\n]{0,80}\)`)
	// DottedToken is a dotted name: two or more parts of two characters
	// or more, each starting with a letter or '_', joined by '.' with no
	// space ("self._value", "os.path", "Node.js", "example.com"); "e.g."
	// and "U.S." are none.
	DottedToken = regexp.MustCompile(`\b[A-Za-z_]\w+(?:\.[A-Za-z_]\w+)+\b`)
	// EnvToken is an environment variable written with its '$'
	// ("$GOFLAGS", "${HOME}").
	EnvToken = regexp.MustCompile(`\$\{?[A-Za-z_]\w*\}?`)
	// VersionToken is a version: digits joined by '.', with an optional
	// leading 'v' and a pre-release ("1.22", "v0.4.1-rc.1").
	VersionToken = regexp.MustCompile(`\bv?\d+(?:\.\d+)+(?:-[\w.]+)?\b`)
	// IDToken is a number written as an identifier: after '#' or ':' (an
	// issue "#1234", a port ":8080", a line "main.go:42") or after
	// capitals and a dash (a ticket "ABC-123"); its first group is the
	// number.
	IDToken = regexp.MustCompile(`(?:[#:]|\b[A-Z]{2,}-)(\d+)\b`)
)

// opensName and closesName are the Unicode categories of the
// punctuation marks a name written by its form may stand after and
// before, for the readers whose pattern says what is around a name
// (FlagToken, DirToken), as a character class's contents: opening
// punctuation (Ps: "(", "[", "{", "「"), initial and final quotes (Pi,
// Pf: "‘", "“", "«", "’", "”", "»"; both, as a final quote opens in some
// languages, "”x”", "»x«"), and closing punctuation (Pe: ")", "]",
// "」"). A closing bracket before a name is none ("f(x)-y" is
// arithmetic), nor an opening one after it.
const (
	opensName  = `\p{Ps}\p{Pi}\p{Pf}`
	closesName = `\p{Pe}\p{Pi}\p{Pf}`
)

// nameValue returns the pattern of one character of a value written
// after '=' in a name (a flag's "--out=x", a setting's "KEY=x", a URL's
// path): none of the white space, of stop (the pattern's own ASCII
// stops, a character class's contents) or of the Unicode punctuation
// marks that open or close (Ps, Pe, Pi, Pf), which end a value written
// inside them ("“--out=x”", "(KEY=x)"), unless it opens a group of
// such characters it closes ("--x=f(a)", "https://w/Foo_(bar)").
func nameValue(stop string) string {
	c := nameChar(stop)
	return `(?:` + c + `|\p{Ps}` + c + `*\p{Pe})`
}

// nameChar returns the pattern of one character of a value (nameValue)
// outside a group: none of the white space, of stop or of the
// punctuation marks that open or close.
func nameChar(stop string) string {
	return `[^\s` + stop + `\p{Ps}\p{Pe}\p{Pi}\p{Pf}]`
}

// nameForm is a pattern of a name written by its form and the group of a
// match that is the name (0: all of it).
type nameForm struct {
	re    *regexp.Regexp
	group int
	// outside leaves out a match inside a span of a form without it
	// (formSpans): the forms nameForms lists first, which come first.
	outside bool
	// keep, when set, says whether a match is a name of the form.
	keep func(string) bool
}

// nameForms are the forms NameSpans finds: the load-bearing paths,
// identifiers, settings and code spans, and the forms above.
var nameForms = []nameForm{
	{PathToken, 0, false, IsPathName}, {IdentToken, 0, false, nil}, {SettingToken, 0, false, nil}, {CodeSpanToken, 0, false, nil}, {URLToken, 0, false, nil},
	{FlagToken, 1, true, nil}, {DirToken, 1, true, nil}, {CallToken, 0, true, nil}, {DottedToken, 0, true, nil}, {EnvToken, 0, true, nil}, {VersionToken, 0, true, nil}, {IDToken, 1, true, nil},
}

// newNameForms is how many of nameForms' last entries are the forms this
// file adds to the load-bearing ones (LoadBearing reads them unless
// loadBearingNames is off).
const newNameForms = 7

// loadBearingNames makes LoadBearing read the name forms of this file
// (ablation switch).
var loadBearingNames = true

// NameSpans returns the byte offsets [start, end) of the names text
// writes by their form (nameForms): paths and folders, identifiers,
// settings and flags, code spans and URLs, called and dotted names,
// environment variables, versions, ports and issue numbers. Spans may
// overlap.
func NameSpans(text string) [][2]int {
	return formSpans(text, nameForms)
}

// formSpans returns the spans of text's names in forms (each form's
// group), leaving out an English plural mark CallToken matches and, for a
// form read only outside the others (nameForm.outside), a match inside a
// span of a form that is not: inside a code span, a URL, a path, an
// identifier or a setting, that is the name ("`type(self._value) is
// str`", "https://x.github.io/y", "pdl-spec/mkdocs.yml"), not each name
// it holds.
func formSpans(text string, forms []nameForm) [][2]int {
	var out [][2]int
	whole := 0 // out[:whole] are the spans of the forms not read only outside
	for _, f := range forms {
		if !f.outside {
			whole = len(out)
		}
		for _, m := range f.re.FindAllStringSubmatchIndex(text, -1) {
			s, e := m[2*f.group], m[2*f.group+1]
			if s < 0 || f.re == CallToken && callArgsPlural(text[s:e]) || f.keep != nil && !f.keep(text[s:e]) ||
				f.outside && slices.ContainsFunc(out[:whole], func(w [2]int) bool { return w[0] <= s && e <= w[1] }) {
				continue
			}
			out = append(out, [2]int{s, e})
		}
		if !f.outside {
			whole = len(out)
		}
	}
	return out
}

// IsPathName reports whether tok, a PathToken match, is written as a
// path rather than as two words joined by a slash ("and/or",
// "row/col", "notes/history"): a leading '/', '.' or '~', a trailing
// '/', a second '/' or a file name by its extension after the slash
// make a path ("src/app", two words, does not). LoadBearing counts
// such pairs as before; the name forms (NameSpans) do not.
func IsPathName(tok string) bool {
	if tok == "" || strings.ContainsAny(tok[:1], "/.~") || strings.HasSuffix(tok, "/") || strings.Count(tok, "/") != 1 {
		return true
	}
	last := tok[strings.LastIndex(tok, "/")+1:]
	return last != "" && PathToken.FindString(last) == last
}

// callArgsPlural reports whether call, a CallToken match, is a word with
// an English plural mark ("file(s)", "match(es)") rather than a call.
func callArgsPlural(call string) bool {
	i := strings.IndexByte(call, '(')
	args := call[i+1 : len(call)-1]
	return args == "s" || args == "es"
}

// NameTerms returns the names text writes by a form the word analyzer
// of the text index splits or strips, each as the form writes it,
// lowercased, in the order written, each once: a flag without its value
// ("--firmware", "-n"), a folder ("examples/"), a path with a '/' outside
// a URL that is not two words joined by one ("./out", "cmd/opk/main.go";
// IsPathName), a called name without its arguments ("slice()"), an
// environment variable with its '$' ("$goflags") and a number written as
// an identifier ("#1234", ":8080", "abc-123"). The text index holds them
// as terms of their own beside the words, so that a query naming
// "--firmware" finds the memory that writes the flag before the ones
// that only say "firmware".
func NameTerms(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range NameTermSpans(text) {
		if !seen[n.Term] {
			seen[n.Term] = true
			out = append(out, n.Term)
		}
	}
	return out
}

// NameTermSpan is one name NameTermSpans finds: its term, as NameTerms
// gives it, and the bytes [Start, End) of text that write it (a flag's
// value and a call's arguments included).
type NameTermSpan struct {
	Term       string
	Start, End int
}

// NameTermSpans returns every name NameTerms finds in text, in the order
// written, each occurrence with the span that writes it.
func NameTermSpans(text string) []NameTermSpan {
	var ts []NameTermSpan
	// Each form's pattern holds a character it cannot match without:
	// a text without it is not searched for the form (the regular
	// expressions cost ~0.2 ms a memory, paid for every record at Open).
	dash, slash := strings.IndexByte(text, '-') >= 0, strings.IndexByte(text, '/') >= 0
	if dash {
		for _, m := range FlagToken.FindAllStringSubmatchIndex(text, -1) {
			ts = append(ts, NameTermSpan{strings.SplitN(text[m[2]:m[3]], "=", 2)[0], m[2], m[3]})
		}
	}
	if slash {
		for _, m := range DirToken.FindAllStringSubmatchIndex(text, -1) {
			ts = append(ts, NameTermSpan{text[m[2]:m[3]], m[2], m[3]})
		}
		for _, m := range PathToken.FindAllStringIndex(text, -1) {
			if tok := text[m[0]:m[1]]; strings.Contains(tok, "/") && IsPathName(tok) {
				ts = append(ts, NameTermSpan{tok, m[0], m[1]})
			}
		}
	}
	if strings.IndexByte(text, '(') >= 0 {
		for _, m := range CallToken.FindAllStringIndex(text, -1) {
			if call := text[m[0]:m[1]]; !callArgsPlural(call) {
				ts = append(ts, NameTermSpan{call[:strings.IndexByte(call, '(')] + "()", m[0], m[1]})
			}
		}
	}
	if strings.IndexByte(text, '$') >= 0 {
		for _, m := range EnvToken.FindAllStringIndex(text, -1) {
			ts = append(ts, NameTermSpan{"$" + strings.Trim(text[m[0]:m[1]], "${}"), m[0], m[1]})
		}
	}
	if dash || strings.ContainsAny(text, "#:") {
		for _, m := range IDToken.FindAllStringIndex(text, -1) {
			ts = append(ts, NameTermSpan{text[m[0]:m[1]], m[0], m[1]})
		}
	}
	if len(ts) == 0 {
		return nil
	}
	urls := URLToken.FindAllStringIndex(text, -1)
	inURL := func(s int) bool {
		return slices.ContainsFunc(urls, func(u []int) bool { return u[0] <= s && s < u[1] })
	}
	slices.SortStableFunc(ts, func(a, b NameTermSpan) int { return a.Start - b.Start })
	out := ts[:0]
	for _, t := range ts {
		if !inURL(t.Start) {
			t.Term = strings.ToLower(t.Term)
			if t.Term != "" {
				out = append(out, t)
			}
		}
	}
	return out
}
