package memory

import (
	"regexp"
	"strings"
)

// Load-bearing tokens: what a text names that a near-duplicate must not
// lose (paths and file names, identifiers, settings, numbers and
// versions, URLs, code spans). The write pipeline's dedup updates rather
// than skips a text that adds one, and the steward does not merge away a
// memory that names one its survivor lacks: both read them here, so they
// agree.
var (
	// PathToken is a path ("backend/store/store.go", "~/.config/x",
	// "./run.sh", ".github/workflows") or a file name by its extension,
	// dotted parts whole ("root.html.heex"); single-letter extensions only
	// c and h, so that "U.S." stays prose. A path ends before a sentence's
	// full stop ("in backend/store." names backend/store).
	PathToken = regexp.MustCompile(`(?:~|\.{1,2})?/[\w.@+-]*[\w@+-](?:/[\w.@+*-]*[\w@+*-])*|\.?\b[\w-]+(?:/[\w.@*-]*[\w@*-])+|\b[\w-]+(?:\.[\w-]+)*\.(?:go|py|rs|ts|tsx|js|jsx|mjs|cjs|java|kt|kts|swift|rb|php|c|h|cc|cpp|hpp|cs|sh|bash|zsh|yml|yaml|toml|json|ini|cfg|conf|env|lock|md|sql|proto|tf|tfvars|gradle|xml|plist|html|css|scss|vue|svelte|dockerfile|mod|sum|txt|csv|entitlements|ex|exs|heex|eex|leex|erl|hrl|hs|scala|lua|dart|zig|nim|ml|mli|clj|cljs|cljc|edn|pl|pm|jl|ps1|psm1|bat|groovy|gemspec|rake|erb|jsonl|ndjson|graphql|gql|prisma|tsv|sass|less|astro|mdx|rst|adoc|tex|nix|hcl|bzl|cmake|mk|sol|ipynb)\b`)
	// IdentToken is an identifier written as code: snake_case, camelCase,
	// PascalCase with an inner capital, CONSTANT_CASE.
	IdentToken = regexp.MustCompile(`\b(?:[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[0-9]*[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b`)
	// SettingToken is KEY=value where the key looks like a setting
	// (capitals, _ . -) or the value is not a bare number (read=4 is
	// arithmetic), and --flags; a value ends before a punctuation mark
	// that closes what holds it (nameValue: "“KEY=x”", "(--out=x)").
	SettingToken = regexp.MustCompile(`\b[A-Za-z_]*[A-Z_.-][\w.-]*=` + nameValue(",;") + `+|\b[a-z][a-z0-9]*=` + nameValue(",;") + `*(?:[A-Za-z/:]|\p{Ps}` + nameChar(",;") + `*[A-Za-z/:]` + nameChar(",;") + `*\p{Pe})` + nameValue(",;") + `*|--[a-z][\w-]+(?:=` + nameValue("") + `+)?`)
	// NumberToken is a version, a number with a unit or of two digits or
	// more, an IPv4 address or a ticket (ABC-123).
	NumberToken = regexp.MustCompile(`\b(?:v?\d+\.\d+(?:\.\d+)*(?:-[\w.]+)?|\d{2,}(?:\.\d+)?\s?(?:ms|s|m|h|d|kb|mb|gb|kib|mib|gib|%|k|px)?|\d+(?:\.\d+)?\s?(?:ms|s|kb|mb|gb|kib|mib|gib|%|x))\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[A-Z]{2,}-\d+\b`)
	// URLToken is an http(s) URL, up to a punctuation mark that closes
	// what holds it (nameValue: "(see https://x.dev/a)", "“https://x.dev”").
	URLToken = regexp.MustCompile(`\bhttps?://` + nameValue("") + `+`)
	// CodeSpanToken is an inline code span.
	CodeSpanToken = regexp.MustCompile("`[^`\n]+`")
)

// loadBearing lists the forms LoadBearing and NamesLoadBearing read:
// the patterns above, then the name forms of names.go (nameForms' last
// newNameForms), read unless loadBearingNames is off.
var loadBearing = append([]nameForm{{PathToken, 0, false, nil}, {IdentToken, 0, false, nil}, {SettingToken, 0, false, nil}, {NumberToken, 0, false, nil}, {URLToken, 0, false, nil}, {CodeSpanToken, 0, false, nil}},
	nameForms[len(nameForms)-newNameForms:]...)

// loadBearingForms returns the forms LoadBearing reads.
func loadBearingForms() []nameForm {
	if loadBearingNames {
		return loadBearing
	}
	return loadBearing[:len(loadBearing)-newNameForms]
}

// NamesLoadBearing reports whether text has a load-bearing token: what
// len(LoadBearing(text)) > 0 says, without listing them.
func NamesLoadBearing(text string) bool {
	for _, f := range loadBearingForms() {
		if !f.re.MatchString(text) {
			continue
		}
		if f.re != CallToken && !f.outside || len(formSpans(text, []nameForm{f})) > 0 {
			return true
		}
	}
	return false
}

// LoadBearing returns the distinct load-bearing tokens of text, code spans
// without their backticks.
func LoadBearing(text string) map[string]bool {
	out := map[string]bool{}
	for _, sp := range formSpans(text, loadBearingForms()) {
		out[strings.TrimSpace(strings.Trim(text[sp[0]:sp[1]], "`"))] = true
	}
	return out
}

// HoldsToken reports whether text holds the load-bearing token tok,
// written the same way or otherwise: as one of its own load-bearing
// tokens, or anywhere in it, letter case aside, where it begins and ends
// as a whole token. "MkDocs" is in "installs mkdocs, mkdocs-material",
// "ci.yml" in ".github/workflows/ci.yml" (a path ending in it), a code
// span's text outside backticks; "1.2" is not in "1.2.3", "8080" not in
// "18080", "foo" not in "foo_bar" or "foo-cli". A merge that keeps one
// text of two asks it of every token of the other (package steward).
func HoldsToken(text, tok string) bool {
	if tok == "" {
		return true
	}
	lt, lx := strings.ToLower(tok), strings.ToLower(text)
	for from := 0; from <= len(lx)-len(lt); {
		i := strings.Index(lx[from:], lt)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(lt)
		if tokenStart(lx, i) && tokenEnd(lx, end) {
			return true
		}
		from = i + 1
	}
	return false
}

// tokenStart reports whether a token may begin at s[i]: at the start, or
// after a character that cannot be part of it (a path's "/" can: a path
// that ends in the token holds it).
func tokenStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	return !(isWordByte(c) || c == '.' || c == '-')
}

// tokenEnd reports whether a token may end before s[i]: at the end, or
// before a character that cannot continue it (a full stop only when no
// word character follows: "1.2." ends a sentence, "1.2.3" goes on).
func tokenEnd(s string, i int) bool {
	if i == len(s) {
		return true
	}
	c := s[i]
	switch {
	case isWordByte(c) || c == '-' || c == '/':
		return false
	case c == '.':
		return i+1 == len(s) || !isWordByte(s[i+1])
	}
	return true
}

// isWordByte: an ASCII letter or digit, an underscore, or any byte of a
// multi-byte character (a letter of another script continues a word).
func isWordByte(c byte) bool {
	return c == '_' || c >= 0x80 || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')
}
