package agentsetup

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Codex's config.toml is not parsed (memtray has no TOML dependency): setup
// owns two delimited blocks and leaves every other line alone. Top-level
// keys must come before the first [table], so openai_base_url lives in a
// block at the top of the file and the [mcp_servers.memtray] table in a
// block at the end.
const (
	codexBlockBegin    = "# >>> memtray >>>"
	codexBlockEnd      = "# <<< memtray <<<"
	codexTopBlockBegin = "# >>> memtray top-level keys >>>"
	codexTopBlockEnd   = "# <<< memtray top-level keys <<<"
)

var (
	tomlMemtrayTable = regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*("memtray"|'memtray'|memtray)\s*\]`)
	tomlMemtrayKey   = regexp.MustCompile(`^\s*mcp_servers\s*\.\s*("memtray"|'memtray'|memtray)\s*[.=]`)
	tomlTableHeader  = regexp.MustCompile(`^\s*\[`)
	tomlRootKey      = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=\s*(.*)$`)
)

// planCodex: the MCP server, the proxy base URL and the trust of
// memtray's hooks in ~/.codex/config.toml, the hooks in ~/.codex/hooks.json.
func planCodex(o setupOptions) (setupPlan, error) {
	plan := setupPlan{}
	hooksPath := filepath.Join(o.home, ".codex", "hooks.json")
	var hooksFile fileChange
	if !o.noHooks {
		var err error
		hooksFile, err = planJSON(o, hooksPath, func(root *jsonObject, fc *fileChange) error {
			return mergeHooks(root, fc, codexHooks, o)
		})
		if err != nil {
			return plan, err
		}
	}

	path := filepath.Join(o.home, ".codex", "config.toml")
	fc, err := readConfigFile(path)
	if err != nil {
		return plan, err
	}
	lines := splitLines(fc.before)
	top, err := findBlock(path, lines, codexTopBlockBegin, codexTopBlockEnd)
	if err != nil {
		return plan, err
	}
	table, err := findBlock(path, lines, codexBlockBegin, codexBlockEnd)
	if err != nil {
		return plan, err
	}
	inBlock := func(i int) bool {
		return top.has && i >= top.begin && i <= top.end || table.has && i >= table.begin && i <= table.end
	}
	proxy := !o.noProxy
	rootScope := true
	for i, l := range lines {
		if inBlock(i) {
			continue
		}
		if tomlMemtrayTable.MatchString(l) || tomlMemtrayKey.MatchString(l) {
			return plan, fmt.Errorf("%s:%d: defines mcp_servers.memtray outside memtray's block (%q); remove it or move it between %q and %q, then run setup again (nothing was changed)",
				path, i+1, strings.TrimSpace(l), codexBlockBegin, codexBlockEnd)
		}
		if tomlTableHeader.MatchString(l) {
			rootScope = false
		}
		m := tomlRootKey.FindStringSubmatch(l)
		if !rootScope || m == nil || !proxy {
			continue
		}
		switch m[1] {
		case "openai_base_url":
			proxy = false
			plan.notes = append(plan.notes, fmt.Sprintf("proxy: %s:%d already sets openai_base_url: left as it is; make it memtray's upstream and set openai_base_url = \"http://%s/openai/v1\" by hand", path, i+1, o.listen))
		case "model_provider":
			if v := tomlString(m[2]); v != "openai" {
				proxy = false
				plan.notes = append(plan.notes, fmt.Sprintf("proxy: Codex uses model_provider %q (%s:%d); openai_base_url only changes the built-in openai provider, so it was not set: point that provider's base_url at http://%s/openai/v1 by hand", v, path, i+1, o.listen))
			}
		}
	}

	trust, trustNotes := planCodexTrust(o, hooksPath, hooksFile, lines, inBlock)
	plan.notes = append(plan.notes, trustNotes...)
	own, ownHash := map[string]bool{}, map[string]bool{}
	for _, t := range trust {
		own[t.key] = true
		ownHash[t.hash] = true
	}
	var foreign, keptTrust []string
	extra := map[string][]string{}
	if table.has {
		foreign, extra = codexBlockParts(lines[table.begin+1:table.end], own, ownHash)
		if o.noHooks {
			// --no-hooks leaves the hooks (and so their trust) as they
			// are: the trust entries stay in the block, for undo.
			foreign, keptTrust = splitTrustEntries(foreign)
		}
	}

	want := []string{codexBlockBegin,
		"# Added by `memtray setup codex`; `" + UndoCommand("codex", o.flags) + "` removes it.",
		"[mcp_servers.memtray]",
		"command = " + tomlQuote(o.binary),
		"args = " + tomlArray(o.mcpArgs())}
	want = append(want, codexTrustLines(trust, extra)...)
	if len(keptTrust) > 0 {
		want = append(append(want, ""), keptTrust...)
	}
	want = append(want, codexBlockEnd)
	var wantTop []string
	if proxy {
		wantTop = []string{codexTopBlockBegin,
			"# Codex's OpenAI traffic through memtray's proxy (`memtray setup codex --no-proxy` leaves it out).",
			"openai_base_url = " + tomlQuote("http://"+o.listen+"/openai/v1"),
			codexTopBlockEnd}
	}
	out := make([]string, 0, len(lines)+len(want)+len(wantTop)+1)
	if wantTop != nil && !top.has {
		out = append(out, wantTop...)
		fc.what = append(fc.what, "set openai_base_url = http://"+o.listen+"/openai/v1 (memtray's proxy)")
	}
	tableDone := false
	for i := 0; i < len(lines); i++ {
		switch {
		case top.has && i == top.begin:
			if wantTop != nil {
				if !equalLines(lines[top.begin:top.end+1], wantTop) {
					fc.what = append(fc.what, "update openai_base_url (memtray's proxy)")
				}
				out = append(out, wantTop...)
			} else {
				fc.what = append(fc.what, "remove openai_base_url (--no-proxy)")
			}
			i = top.end
		case table.has && i == table.begin:
			if !equalLines(lines[table.begin:table.end+1], want) {
				fc.what = append(fc.what, "update MCP server [mcp_servers.memtray]: "+o.mcpCommand())
			}
			out = append(out, want...)
			if len(foreign) > 0 {
				fc.what = append(fc.what, fmt.Sprintf("move %d line(s) another program (Codex) added inside memtray's block to just after it, unchanged", len(foreign)))
				out = append(append(out, ""), foreign...)
			}
			tableDone = true
			i = table.end
		default:
			out = append(out, lines[i])
		}
	}
	if !tableDone {
		if len(out) > 0 && strings.TrimSpace(out[len(out)-1]) != "" {
			out = append(out, "")
		}
		out = append(out, want...)
		fc.what = append(fc.what, "add MCP server [mcp_servers.memtray]: "+o.mcpCommand()+" (stdio)")
	}
	for _, t := range trust {
		fc.trust = append(fc.trust, t.key)
	}
	if len(trust) > 0 && (!table.has || !equalLines(lines[table.begin:table.end+1], want)) {
		events := make([]string, len(trust))
		for i, t := range trust {
			events[i] = t.agentEvent
		}
		fc.what = append(fc.what, fmt.Sprintf("trust memtray's hooks in Codex (%s): [hooks.state] entries with the hash Codex's own review records, so Codex runs them", strings.Join(events, ", ")))
	}
	if len(fc.what) > 0 || !fc.existed {
		fc.after = []byte(strings.Join(out, "\n") + "\n")
	}
	plan.files = append(plan.files, fc)
	if !o.noHooks {
		plan.files = append(plan.files, hooksFile)
		plan.notes = append(plan.notes, "hooks: Codex runs ~/.codex/hooks.json ("+hookEvents(codexHooks)+"; Codex has no SessionEnd hook). Codex releases whose `codex features list` shows hooks as experimental also need `[features] hooks = true` (older: codex_hooks) in config.toml; 0.171 has them on")
	}
	return plan, nil
}

// planCodexTrust decides the trust entries setup writes for memtray's
// hooks (hooksFile after the change, at hooksPath), and the notes for the
// hooks it cannot trust: Codex skips those until the user reviews them.
func planCodexTrust(o setupOptions, hooksPath string, hooksFile fileChange, lines []string, inBlock func(int) bool) ([]codexTrust, []string) {
	if o.noHooks {
		return nil, nil
	}
	review := "trust them in Codex: run `codex` and answer its \"Hooks need review\" prompt with \"Trust all and continue\" (or trust them in /hooks); until then Codex skips them (silently in `codex exec`)"
	var trust []codexTrust
	var notes []string
	keys := map[string]bool{}
	for _, s := range codexHooks {
		at, ok := hooksFile.hookPos[s.agentEvent]
		if !ok {
			continue
		}
		if !at.plain {
			notes = append(notes, fmt.Sprintf("hooks: memtray's %s hook in %s sits in a group with a matcher or has fields setup does not write: setup does not record Codex's trust for it; %s", s.agentEvent, hooksPath, review))
			continue
		}
		t := codexTrust{agentEvent: s.agentEvent, key: codexTrustKey(hooksPath, s.agentEvent, at.group, at.handler),
			hash: codexHookHash(s.agentEvent, at.command, at.timeout)}
		trust = append(trust, t)
		keys[t.key] = true
	}
	blockedAt, have := codexTrustOutside(lines, inBlock, keys)
	if blockedAt > 0 {
		return nil, append(notes, fmt.Sprintf("hooks: %s:%d defines hooks or hooks.state as a value, so setup cannot add Codex's trust entries for memtray's hooks next to it: %s", filepath.Join(o.home, ".codex", "config.toml"), blockedAt, review))
	}
	kept := trust[:0]
	for _, t := range trust {
		h, there := have[t.key]
		switch {
		case !there:
			kept = append(kept, t)
		case h != t.hash:
			notes = append(notes, fmt.Sprintf("hooks: config.toml already holds Codex's trust entry %q outside memtray's block, for another command: left as it is; Codex will ask to review memtray's %s hook: %s", t.key, t.agentEvent, review))
		}
	}
	return kept, notes
}

type tomlBlock struct {
	has        bool
	begin, end int // line indices of the markers
}

// findBlock locates a delimited block; a begin marker without its end, or
// a second block, is an error naming the line.
func findBlock(path string, lines []string, begin, end string) (tomlBlock, error) {
	b := tomlBlock{begin: -1, end: -1}
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case begin:
			if b.begin >= 0 {
				return b, fmt.Errorf("%s:%d: a second %q: fix the file by hand (nothing was changed)", path, i+1, begin)
			}
			b.begin = i
		case end:
			if b.begin < 0 || b.end >= 0 {
				return b, fmt.Errorf("%s:%d: %q without its %q: fix the file by hand (nothing was changed)", path, i+1, end, begin)
			}
			b.end = i
		}
	}
	if b.begin >= 0 && b.end < 0 {
		return b, fmt.Errorf("%s:%d: %q is never closed by %q: fix the file by hand (nothing was changed)", path, b.begin+1, begin, end)
	}
	b.has = b.begin >= 0
	return b, nil
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.TrimRight(a[i], "\r") != b[i] {
			return false
		}
	}
	return true
}

// tomlQuote writes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// tomlArray writes ss as a TOML array of basic strings.
func tomlArray(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tomlQuote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlString reads a simple quoted TOML value ("x" or 'x', a trailing
// comment allowed); anything else comes back as written.
func tomlString(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
		if end := strings.IndexByte(v[1:], v[0]); end >= 0 {
			return v[1 : end+1]
		}
	}
	if i := strings.IndexByte(v, '#'); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v)
}

// stripCodexTOML removes memtray's delimited blocks from a config.toml
// changed since setup (the undo of planCodex), leaving every other line as
// it is now; a table another program (Codex) added inside memtray's block
// stays where it is (codexBlockParts), and so does a trust entry not in
// trust (the keys of the entries setup wrote). Where a block leaves two
// blank lines together, or a blank line at the end, one goes with it (setup
// set the table block off with one). fc.after is fc.before when no block is
// there; fc.remove is set when setup created the file and nothing but blank
// lines is left.
func stripCodexTOML(fc fileChange, created bool, trust []string) (fileChange, error) {
	lines := splitLines(fc.before)
	top, err := findBlock(fc.path, lines, codexTopBlockBegin, codexTopBlockEnd)
	if err != nil {
		return fc, err
	}
	table, err := findBlock(fc.path, lines, codexBlockBegin, codexBlockEnd)
	if err != nil {
		return fc, err
	}
	if !top.has && !table.has {
		return fc, nil
	}
	own := map[string]bool{}
	for _, k := range trust {
		own[k] = true
	}
	blank := func(l string) bool { return strings.TrimSpace(l) == "" }
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		var foreign []string
		switch {
		case top.has && i == top.begin:
			fc.what = append(fc.what, "remove openai_base_url (memtray's proxy)")
			i = top.end
		case table.has && i == table.begin:
			fc.what = append(fc.what, "remove MCP server [mcp_servers.memtray]")
			if len(trust) > 0 {
				fc.what = append(fc.what, "remove Codex's trust of memtray's hooks ([hooks.state] entries setup wrote)")
			}
			foreign, _ = codexBlockParts(lines[table.begin+1:table.end], own, nil)
			if len(foreign) > 0 {
				fc.what = append(fc.what, fmt.Sprintf("keep %d line(s) another program (Codex) added inside memtray's block", len(foreign)))
			}
			i = table.end
		default:
			out = append(out, lines[i])
			continue
		}
		if len(foreign) > 0 {
			out = append(out, foreign...)
			continue
		}
		if n := len(out); n > 0 && blank(out[n-1]) && (i+1 == len(lines) || blank(lines[i+1])) {
			out = out[:n-1]
		}
	}
	empty := true
	for _, l := range out {
		empty = empty && blank(l)
	}
	switch {
	case created && empty:
		fc.after, fc.remove = nil, true
		fc.what = append(fc.what, "remove the file (setup created it and nothing else is left in it)")
	case len(out) == 0:
		fc.after = []byte{}
	default:
		fc.after = []byte(strings.Join(out, "\n") + "\n")
	}
	return fc, nil
}

// hookEvents lists the agent events of specs, in order ("UserPromptSubmit,
// SessionStart, ..."): what a note says setup installs is what it installs.
func hookEvents(specs []hookSpec) string {
	events := make([]string, len(specs))
	for i, s := range specs {
		events[i] = s.agentEvent
	}
	return strings.Join(events, ", ")
}
