package steward

import (
	"regexp"
	"strings"
)

// The load-bearing tokens of a text: paths, identifiers, settings, numbers,
// versions, URLs and code spans, what a merge must not lose. These patterns
// are a copy of backend/ingest's (ingest.LoadBearing, which the write
// pipeline's dedup uses): the steward may not import ingest, and a shared
// home (backend/memory) is outside this change. TestLoadBearingMatchesIngest
// keeps the two in step.
var (
	pathTok    = regexp.MustCompile(`(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+*-]+)*|\b[\w-]+(?:/[\w.@*-]+)+|\b[\w-]+\.(?:go|py|rs|ts|tsx|js|jsx|mjs|cjs|java|kt|kts|swift|rb|php|c|h|cc|cpp|hpp|cs|sh|bash|zsh|yml|yaml|toml|json|ini|cfg|conf|env|lock|md|sql|proto|tf|tfvars|gradle|xml|plist|html|css|scss|vue|svelte|dockerfile|mod|sum|txt|csv|entitlements)\b`)
	identTok   = regexp.MustCompile(`\b(?:[A-Za-z][a-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[0-9]*[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)\b`)
	settingTok = regexp.MustCompile(`\b[A-Za-z_]*[A-Z_.-][\w.-]*=[^\s,;]+|\b[a-z][a-z0-9]*=[^\s,;]*[A-Za-z/:][^\s,;]*|--[a-z][\w-]+(?:=\S+)?`)
	numberTok  = regexp.MustCompile(`\b(?:v?\d+\.\d+(?:\.\d+)*(?:-[\w.]+)?|\d{2,}(?:\.\d+)?\s?(?:ms|s|m|h|d|kb|mb|gb|kib|mib|gib|%|k|px)?|\d+(?:\.\d+)?\s?(?:ms|s|kb|mb|gb|kib|mib|gib|%|x))\b|\b(?:\d{1,3}\.){3}\d{1,3}\b|\b[A-Z]{2,}-\d+\b`)
	urlTok     = regexp.MustCompile(`\bhttps?://\S+`)
	backtick   = regexp.MustCompile("`[^`\n]+`")
)

// LoadBearing returns the distinct load-bearing tokens of text, as
// ingest.LoadBearing does.
func LoadBearing(text string) map[string]bool {
	out := map[string]bool{}
	for _, re := range []*regexp.Regexp{pathTok, identTok, settingTok, numberTok, urlTok, backtick} {
		for _, m := range re.FindAllString(text, -1) {
			out[strings.TrimSpace(strings.Trim(m, "`"))] = true
		}
	}
	return out
}
