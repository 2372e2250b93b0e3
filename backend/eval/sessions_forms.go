package eval

import (
	"regexp"
	"slices"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// NameForms are the forms of the name-form probes (IdentifierProbe.Forms),
// in the order they are asked: a flag ("--dry-run", "-n"), an environment
// variable ("$GOFLAGS", "GOFLAGS=-race"), a path ("cmd/opk/main.go",
// "assets/"), a called name ("abs()", "os.path.join()") and a number
// written as an identifier (a version "v1.2.3", an issue "#1234", a port
// ":8080", a ticket "ABC-123").
var NameForms = []string{"flag", "env", "path", "call", "number"}

// envAssign is an environment variable set in a KEY=value (its first
// group): capitals, digits and '_', starting with a capital.
var envAssign = regexp.MustCompile(`(?:^|[^\w$.-])([A-Z][A-Z0-9_]*[A-Z0-9])=`)

// formTokens returns the tokens text writes in form (NameForms), as the
// probe names them, in the order the text writes them, each once
// (case-insensitively):
//   - flag: memory.FlagToken's flag without its value;
//   - env: memory.EnvToken's variable without '$' and braces, and the key
//     of a KEY=value of capitals (envAssign);
//   - path: memory.PathToken's and memory.DirToken's paths outside URLs
//     with a '/' that are not two words joined by one ("and/or",
//     "client/server"; memory.IsPathName);
//   - call: memory.CallToken's called name, with "()";
//   - number: memory.VersionToken's versions and memory.IDToken's issue
//     numbers, ports and tickets, as written ("#1234", ":8080").
func formTokens(text, form string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(tok string) {
		if lt := strings.ToLower(tok); tok != "" && !seen[lt] {
			seen[lt] = true
			out = append(out, tok)
		}
	}
	urls := memory.URLToken.FindAllStringIndex(text, -1)
	inURL := func(s int) bool {
		return slices.ContainsFunc(urls, func(u []int) bool { return u[0] <= s && s < u[1] })
	}
	switch form {
	case "flag":
		for _, m := range memory.FlagToken.FindAllStringSubmatch(text, -1) {
			add(strings.SplitN(m[1], "=", 2)[0])
		}
	case "env":
		var spans [][]int
		spans = append(spans, memory.EnvToken.FindAllStringIndex(text, -1)...)
		for _, m := range envAssign.FindAllStringSubmatchIndex(text, -1) {
			spans = append(spans, m[2:4])
		}
		slices.SortStableFunc(spans, func(a, b []int) int { return a[0] - b[0] })
		for _, sp := range spans {
			add(strings.Trim(text[sp[0]:sp[1]], "${}"))
		}
	case "path":
		var spans [][]int
		spans = append(spans, memory.PathToken.FindAllStringIndex(text, -1)...)
		for _, m := range memory.DirToken.FindAllStringSubmatchIndex(text, -1) {
			spans = append(spans, m[2:4])
		}
		slices.SortStableFunc(spans, func(a, b []int) int { return a[0] - b[0] })
		for _, sp := range spans {
			if tok := text[sp[0]:sp[1]]; strings.Contains(tok, "/") && !inURL(sp[0]) && memory.IsPathName(tok) {
				add(tok)
			}
		}
	case "call":
		for _, m := range memory.CallToken.FindAllString(text, -1) {
			if name, args, _ := strings.Cut(m, "("); args != "s)" && args != "es)" {
				add(name + "()")
			}
		}
	case "number":
		var spans [][]int
		spans = append(spans, memory.VersionToken.FindAllStringIndex(text, -1)...)
		spans = append(spans, memory.IDToken.FindAllStringIndex(text, -1)...)
		slices.SortStableFunc(spans, func(a, b []int) int { return a[0] - b[0] })
		for _, sp := range spans {
			if !inURL(sp[0]) {
				add(text[sp[0]:sp[1]])
			}
		}
	}
	return out
}

// nameFormTokens returns, for each form of NameForms, the tokens each
// memory of ms (by id) writes in that form (formTokens) that no other
// memory of ms writes in it and that the identifier probe does not ask
// about already (idents, rareIdentifiers' answer), the first
// IdentifiersPerMemory of them.
func nameFormTokens(ms []memory.Memory, idents map[string][]string) map[string]map[string][]string {
	out := map[string]map[string][]string{}
	for _, form := range NameForms {
		toks := make([][]string, len(ms))
		df := map[string]int{}
		for i, m := range ms {
			toks[i] = formTokens(m.Text, form)
			for _, t := range toks[i] {
				df[strings.ToLower(t)]++
			}
		}
		byID := map[string][]string{}
		for i, m := range ms {
			for _, t := range toks[i] {
				if df[strings.ToLower(t)] != 1 || slices.ContainsFunc(idents[m.ID], func(id string) bool { return strings.EqualFold(id, t) }) {
					continue
				}
				byID[m.ID] = append(byID[m.ID], t)
				if len(byID[m.ID]) == IdentifiersPerMemory {
					break
				}
			}
		}
		out[form] = byID
	}
	return out
}
