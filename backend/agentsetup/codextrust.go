package agentsetup

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Codex (0.171) runs a hook from ~/.codex/hooks.json only once it is
// trusted: config.toml holds, per hook,
//
//	[hooks.state."<hooks.json path>:<event>:<group index>:<handler index>"]
//	trusted_hash = "sha256:<hex>"
//
// which Codex's own review ("Hooks need review" at startup, or /hooks)
// writes, and an untrusted hook is skipped silently (codex exec) or left to
// that review. The hash is Codex's fingerprint of the hook as configured
// (codexHookHash), so a trust entry covers exactly one command, timeout and
// position: change any of them and Codex asks again. Setup writes these
// entries for memtray's own hooks inside its block of config.toml, as part
// of the change it shows, so that undo takes them out with the rest.

// codexTrust is one trust entry setup writes for a memtray hook.
type codexTrust struct {
	agentEvent string
	key, hash  string
}

// codexHookPos is where a memtray hook sits in hooks.json after setup's
// merge, and whether it is exactly as setup writes it (no matcher, no
// other fields: what codexHookHash covers).
type codexHookPos struct {
	group, handler int
	plain          bool
	command        string
	timeout        int
}

// codexEventLabel is Codex's name for a hook event in trust keys and
// hashes: UserPromptSubmit → user_prompt_submit.
func codexEventLabel(agentEvent string) string {
	var b strings.Builder
	for i, r := range agentEvent {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// codexTrustKey is the key of a hook's entry under hooks.state.
func codexTrustKey(hooksPath, agentEvent string, group, handler int) string {
	return fmt.Sprintf("%s:%s:%d:%d", hooksPath, codexEventLabel(agentEvent), group, handler)
}

// codexHookHash is Codex's fingerprint of a command hook with no matcher,
// not async and no status message: the SHA-256 of the canonical JSON
// (object keys sorted, no spaces, serde_json's escaping) of
// {"event_name": label, "hooks": [{"async": false, "command": …,
// "timeout": …, "type": "command"}]}. Checked against real Codex 0.171
// (testdata/codex-0.171-hooks-list.json).
func codexHookHash(agentEvent, command string, timeout int) string {
	var b strings.Builder
	b.WriteString(`{"event_name":`)
	writeSerdeString(&b, codexEventLabel(agentEvent))
	b.WriteString(`,"hooks":[{"async":false,"command":`)
	writeSerdeString(&b, command)
	b.WriteString(`,"timeout":`)
	b.WriteString(strconv.Itoa(timeout))
	b.WriteString(`,"type":"command"}]}`)
	sum := sha256.Sum256([]byte(b.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// writeSerdeString writes s as a JSON string the way serde_json does: only
// '"', '\\' and control characters escaped (\b \f \n \r \t short, the rest
// \u00xx), everything else as UTF-8. Go's encoding/json differs (it escapes
// <, >, &, U+2028 and U+2029).
func writeSerdeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

var (
	tomlHooksStateHeader = regexp.MustCompile(`^\s*\[\s*hooks\s*\.\s*state\s*\.\s*("(?:[^"\\]|\\.)*"|'[^']*')\s*\]\s*(#.*)?$`)
	tomlHooksRootKey     = regexp.MustCompile(`^\s*(hooks|"hooks"|'hooks')\s*[.=]`)
	tomlStateKey         = regexp.MustCompile(`^\s*(state|"state"|'state')\s*[.=]`)
	tomlHooksTable       = regexp.MustCompile(`^\s*\[\s*(hooks|"hooks"|'hooks')\s*\]\s*(#.*)?$`)
	tomlTrustedHash      = regexp.MustCompile(`^\s*trusted_hash\s*=\s*(.*)$`)
)

// tomlKeyString reads a quoted TOML key ("…" with escapes, or '…').
func tomlKeyString(q string) (string, bool) {
	if len(q) < 2 {
		return "", false
	}
	if q[0] == '\'' {
		return q[1 : len(q)-1], true
	}
	s, err := strconv.Unquote(q)
	if err != nil {
		// TOML's \UXXXXXXXX and Go's agree; anything else is not a key
		// setup wrote.
		return "", false
	}
	return s, true
}

// tomlEntry is a table of a TOML file, by lines: its header line and the
// lines up to the next header.
type tomlEntry struct {
	header string
	lines  []string // header first
}

// splitTOMLEntries splits lines into the lines before the first table
// header and one entry per table.
func splitTOMLEntries(lines []string) (pre []string, entries []tomlEntry) {
	for _, l := range lines {
		if tomlTableHeader.MatchString(l) {
			entries = append(entries, tomlEntry{header: l, lines: []string{l}})
			continue
		}
		if len(entries) == 0 {
			pre = append(pre, l)
			continue
		}
		e := &entries[len(entries)-1]
		e.lines = append(e.lines, l)
	}
	return pre, entries
}

// trustKeyOf is the key of a [hooks.state."…"] header ("" for another
// line).
func trustKeyOf(header string) string {
	m := tomlHooksStateHeader.FindStringSubmatch(header)
	if m == nil {
		return ""
	}
	k, _ := tomlKeyString(m[1])
	return k
}

// trustedHashOf is an entry's trusted_hash ("" when none).
func trustedHashOf(e tomlEntry) string {
	for _, l := range e.lines[1:] {
		if m := tomlTrustedHash.FindStringSubmatch(l); m != nil {
			return tomlString(m[1])
		}
	}
	return ""
}

// codexBlockParts sorts the lines between memtray's block markers into
// memtray's own and the rest. Codex writes a new table (its own trust
// entries, an MCP server added with `codex mcp add`) at the end of
// config.toml, which is inside memtray's block when that block comes last:
// such a table is not memtray's and must outlive setup's rewrite of the
// block and its undo. Memtray's are [mcp_servers.memtray] and the
// [hooks.state."…"] entries whose key is in own or whose trusted_hash is in
// ownHash (a memtray hook's, at a position it no longer has). extra holds
// the lines of own keys' entries other than the header and trusted_hash
// (Codex's `enabled = false` when the user turned a hook off), by key.
func codexBlockParts(block []string, own, ownHash map[string]bool) (foreign []string, extra map[string][]string) {
	_, entries := splitTOMLEntries(block)
	extra = map[string][]string{}
	for _, e := range entries {
		switch {
		case tomlMemtrayTable.MatchString(e.header):
			continue
		case trustKeyOf(e.header) != "":
			k := trustKeyOf(e.header)
			if own[k] {
				for _, l := range e.lines[1:] {
					t := strings.TrimSpace(l)
					if t == "" || strings.HasPrefix(t, "#") || tomlTrustedHash.MatchString(l) {
						continue
					}
					extra[k] = append(extra[k], l)
				}
				continue
			}
			if ownHash[trustedHashOf(e)] {
				continue
			}
		}
		foreign = append(foreign, e.lines...)
	}
	// A foreign table's trailing blank lines (and comments of ours that
	// end the block) are not worth keeping.
	for len(foreign) > 0 && strings.TrimSpace(foreign[len(foreign)-1]) == "" {
		foreign = foreign[:len(foreign)-1]
	}
	return foreign, extra
}

// codexTrustOutside looks at config.toml's lines outside memtray's blocks
// for what stops setup from writing its trust entries: a hooks or
// hooks.state defined as a value (then [hooks.state."…"] tables are
// invalid TOML), and trust entries for the keys setup would write (a second
// table of the same name is invalid TOML too). It returns the line of a
// blocking definition (0 when none) and, by key, the hash trusted there.
func codexTrustOutside(lines []string, inBlock func(int) bool, keys map[string]bool) (blockedAt int, have map[string]string) {
	have = map[string]string{}
	rootScope, inHooks := true, false
	for i := 0; i < len(lines); i++ {
		if inBlock(i) {
			continue
		}
		l := lines[i]
		if tomlTableHeader.MatchString(l) {
			rootScope = false
			inHooks = tomlHooksTable.MatchString(l)
			k := trustKeyOf(l)
			if k == "" || !keys[k] {
				continue
			}
			e := tomlEntry{header: l, lines: []string{l}}
			for j := i + 1; j < len(lines) && !inBlock(j) && !tomlTableHeader.MatchString(lines[j]); j++ {
				e.lines = append(e.lines, lines[j])
			}
			have[k] = trustedHashOf(e)
			continue
		}
		if blockedAt == 0 && (rootScope && tomlHooksRootKey.MatchString(l) || inHooks && tomlStateKey.MatchString(l)) {
			blockedAt = i + 1
		}
		// A key of ours written some other way (a dotted key, an inline
		// table): say it is there, with no hash we can read.
		for k := range keys {
			if _, seen := have[k]; !seen && (strings.Contains(l, tomlQuote(k)) || strings.Contains(l, "'"+k+"'")) {
				have[k] = ""
			}
		}
	}
	return blockedAt, have
}

// codexTrustLines are the trust entries of memtray's block, with the
// extra lines Codex keeps in them.
func codexTrustLines(trust []codexTrust, extra map[string][]string) []string {
	if len(trust) == 0 {
		return nil
	}
	out := []string{"", "# Codex runs a hook only once it is trusted: these trust memtray's hooks above, as setup wrote them in hooks.json."}
	for i, t := range trust {
		if i > 0 {
			out = append(out, "")
		}
		out = append(out, "[hooks.state."+tomlQuote(t.key)+"]", "trusted_hash = "+tomlQuote(t.hash))
		out = append(out, extra[t.key]...)
	}
	return out
}

// codexTrustState reports, for a home's Codex config, which memtray hooks
// in hooks.json config.toml does not trust (by agent event, sorted):
// Codex skips them until they are reviewed. own are hook commands that
// count as memtray's beyond memtray-named binaries' (the record's).
func codexTrustState(hooksPath string, hooksJSON, configTOML []byte, own []string) ([]string, error) {
	root, err := parseJSONFile(hooksPath, hooksJSON)
	if err != nil {
		return nil, err
	}
	current, _ := root.get("hooks").(map[string]any)
	want := map[string]string{} // key → hash
	events := map[string]string{}
	for _, s := range codexHooks {
		groups, _ := current[s.agentEvent].([]any)
		for gi, g := range groups {
			gm, _ := g.(map[string]any)
			hs, _ := gm["hooks"].([]any)
			for hi, h := range hs {
				hm, _ := h.(map[string]any)
				cmd, _ := hm["command"].(string)
				if !isOwnHook(cmd, s.event, own...) {
					continue
				}
				k := codexTrustKey(hooksPath, s.agentEvent, gi, hi)
				events[k] = s.agentEvent
				t, _ := hm["timeout"].(float64)
				if len(gm) != 1 || !plainHookEntry(hm) || t != float64(int(t)) || t <= 0 {
					want[k] = "" // not a shape setup trusts: needs review
					continue
				}
				want[k] = codexHookHash(s.agentEvent, cmd, int(t))
			}
		}
	}
	have := map[string]string{}
	_, entries := splitTOMLEntries(splitLines(configTOML))
	for _, e := range entries {
		if k := trustKeyOf(e.header); k != "" {
			have[k] = trustedHashOf(e)
		}
	}
	var untrusted []string
	for k, h := range want {
		if h == "" || have[k] != h {
			untrusted = append(untrusted, events[k])
		}
	}
	sort.Strings(untrusted)
	return slices.Compact(untrusted), nil
}

// plainHookEntry reports whether a hook entry has only the fields setup
// writes (type command, command, timeout).
func plainHookEntry(hm map[string]any) bool {
	for k := range hm {
		if k != "type" && k != "command" && k != "timeout" {
			return false
		}
	}
	return hm["type"] == "command"
}

// splitTrustEntries takes the [hooks.state."…"] entries out of lines
// (whole tables, by lines).
func splitTrustEntries(lines []string) (rest, trust []string) {
	pre, entries := splitTOMLEntries(lines)
	rest = pre
	for _, e := range entries {
		body := e.lines
		for len(body) > 1 && strings.TrimSpace(body[len(body)-1]) == "" {
			body = body[:len(body)-1]
		}
		if trustKeyOf(e.header) != "" {
			if len(trust) > 0 {
				trust = append(trust, "")
			}
			trust = append(trust, body...)
			continue
		}
		rest = append(rest, e.lines...)
	}
	for len(rest) > 0 && strings.TrimSpace(rest[len(rest)-1]) == "" {
		rest = rest[:len(rest)-1]
	}
	return rest, trust
}
