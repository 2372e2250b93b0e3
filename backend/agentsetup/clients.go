package agentsetup

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
)

// Client is an agent setup knows.
type Client struct {
	// Name is the client's name on the command line and in the API.
	Name string
	// Label is its name for people.
	Label string
	// Hooks and Proxy say whether setup installs recall hooks and routes
	// the agent's API traffic through memtray's proxy for it (else it
	// gives only the MCP server; NoHooks and NoProxy change nothing).
	Hooks, Proxy bool
	// files are the config files setup may change, relative to the home
	// directory; markers are paths whose existence shows the agent is
	// installed.
	files, markers []string
}

// clients lists the agents setup knows, in usage order.
var clients = []Client{
	{Name: "claude-code", Label: "Claude Code", Hooks: true, Proxy: true,
		files: []string{".claude.json", ".claude/settings.json"}, markers: []string{".claude", ".claude.json"}},
	{Name: "cursor", Label: "Cursor", files: []string{".cursor/mcp.json"}, markers: []string{".cursor"}},
	{Name: "codex", Label: "Codex", Hooks: true, Proxy: true,
		files: []string{".codex/config.toml", ".codex/hooks.json"}, markers: []string{".codex"}},
	{Name: "windsurf", Label: "Windsurf", files: []string{".codeium/windsurf/mcp_config.json"},
		markers: []string{".codeium/windsurf"}},
}

// Clients lists the agents setup knows, in usage order.
func Clients() []Client {
	return append([]Client(nil), clients...)
}

// Names lists the clients' names, in usage order.
func Names() []string {
	out := make([]string, len(clients))
	for i, c := range clients {
		out[i] = c.Name
	}
	return out
}

// Lookup finds a client by name; an unknown name is ErrUnknownClient.
func Lookup(name string) (Client, error) {
	for _, c := range clients {
		if c.Name == name {
			return c, nil
		}
	}
	return Client{}, unknownClient(name)
}

// mcpEntry is an MCP server entry of a JSON config ("mcpServers").
type mcpEntry struct {
	Type    string   `json:"type,omitempty"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// hookEntry and hookGroup are Claude Code's hook configuration (Codex
// reads the same shape).
type hookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

type hookGroup struct {
	Hooks []hookEntry `json:"hooks"`
}

// hookSpec pairs an agent's hook event with memtray's event argument and
// any arguments the event needs for that agent (before the flags).
type hookSpec struct {
	agentEvent, event string
	args              []string
}

// command is the hook command setup writes for s.
func (s hookSpec) command(binary string, flags []string) string {
	return hookCommand(binary, s.event, append(slices.Clone(s.args), flags...))
}

// claudeHooks: recall at each prompt and session start; capture from the
// session's own file (the transcript path these hooks hand the daemon) when
// the agent stops answering, before compaction and at the session's end.
var claudeHooks = []hookSpec{
	{"UserPromptSubmit", "user-prompt-submit", nil},
	{"SessionStart", "session-start", nil},
	{"PreCompact", "pre-compact", nil},
	{"SessionEnd", "session-end", nil},
	{"Stop", "stop", nil},
}

// codexHooks: the recall hooks, PreCompact, and Stop, which hands the
// daemon the session's rollout (--agent codex: the daemon reads Codex
// rollouts) when the agent stops answering. Codex 0.171 runs Stop hooks
// with the same stdin as the others (transcript_path included).
var codexHooks = []hookSpec{
	claudeHooks[0], claudeHooks[1], claudeHooks[2],
	{"Stop", "stop", []string{"--agent", "codex"}},
}

// planClaudeCode: the MCP server in ~/.claude.json (user scope), hooks and
// the proxy base URL in ~/.claude/settings.json.
func planClaudeCode(o setupOptions) (setupPlan, error) {
	var plan setupPlan
	mcp, err := planJSON(o, filepath.Join(o.home, ".claude.json"), func(root *jsonObject, fc *fileChange) error {
		return mergeMCP(root, fc, o, mcpEntry{Type: "stdio", Command: o.binary, Args: o.mcpArgs()})
	})
	if err != nil {
		return plan, err
	}
	plan.files = append(plan.files, mcp)
	if o.noHooks && o.noProxy {
		return plan, nil
	}
	settings, err := planJSON(o, filepath.Join(o.home, ".claude", "settings.json"), func(root *jsonObject, fc *fileChange) error {
		if !o.noHooks {
			if err := mergeHooks(root, fc, claudeHooks, o); err != nil {
				return err
			}
		}
		if !o.noProxy {
			note, err := mergeEnv(root, fc, "ANTHROPIC_BASE_URL", "http://"+o.listen, o.force)
			if err != nil {
				return err
			}
			if note != "" {
				plan.notes = append(plan.notes, note)
			}
		}
		return nil
	})
	if err != nil {
		return plan, err
	}
	plan.files = append(plan.files, settings)
	if !o.noProxy {
		plan.notes = append(plan.notes, fmt.Sprintf("Claude Code's API traffic goes through memtray's proxy at http://%s: keep memtray running (tray app or `memtray serve`), or Claude Code cannot reach the API; `--no-proxy` leaves the base URL alone", o.listen))
	}
	return plan, nil
}

// planCursor: the MCP server in ~/.cursor/mcp.json.
func planCursor(o setupOptions) (setupPlan, error) {
	plan := setupPlan{notes: []string{
		"hooks: not installed; Cursor's beforeSubmitPrompt hook can only allow or block a prompt, it cannot add context; Cursor's agent recalls through the memtray MCP tools (memory_search)",
		"proxy: not set; Cursor's \"Override OpenAI Base URL\" is an in-app setting and Cursor sends model requests from its own servers, which cannot reach a loopback address",
	}}
	f, err := planJSON(o, filepath.Join(o.home, ".cursor", "mcp.json"), func(root *jsonObject, fc *fileChange) error {
		return mergeMCP(root, fc, o, mcpEntry{Command: o.binary, Args: o.mcpArgs()})
	})
	plan.files = append(plan.files, f)
	return plan, err
}

// planWindsurf: the MCP server in ~/.codeium/windsurf/mcp_config.json.
func planWindsurf(o setupOptions) (setupPlan, error) {
	plan := setupPlan{notes: []string{
		"hooks: not installed; Windsurf's Cascade hooks can observe or block an action but cannot add context to a prompt; Cascade recalls through the memtray MCP tools (memory_search)",
		"proxy: not set; Windsurf has no setting for the model API's base URL",
		"refresh the MCP servers in Windsurf (Cascade → MCP servers) to start memtray's",
	}}
	f, err := planJSON(o, filepath.Join(o.home, ".codeium", "windsurf", "mcp_config.json"), func(root *jsonObject, fc *fileChange) error {
		return mergeMCP(root, fc, o, mcpEntry{Command: o.binary, Args: o.mcpArgs()})
	})
	plan.files = append(plan.files, f)
	return plan, err
}

// planJSON reads a JSON config file, lets merge change its tree and
// renders the result (the file's bytes unchanged when merge changed
// nothing).
func planJSON(o setupOptions, path string, merge func(*jsonObject, *fileChange) error) (fileChange, error) {
	fc, err := readConfigFile(path)
	if err != nil {
		return fc, err
	}
	root, err := parseJSONFile(path, fc.before)
	if err != nil {
		return fc, err
	}
	if err := merge(root, &fc); err != nil {
		return fc, fmt.Errorf("%s: %w (the file was not changed)", path, err)
	}
	if len(fc.what) == 0 && fc.existed {
		return fc, nil
	}
	if fc.after, err = renderJSONFile(root, fc.before); err != nil {
		return fc, fmt.Errorf("%s: %w", path, err)
	}
	return fc, nil
}

// mergeMCP sets mcpServers.memtray, unless it already runs the same
// command.
func mergeMCP(root *jsonObject, fc *fileChange, o setupOptions, want mcpEntry) error {
	servers, _ := root.get("mcpServers").(map[string]any)
	if have, ok := servers["memtray"].(map[string]any); ok {
		same := have["command"] == want.Command && sameJSON(have["args"], want.Args)
		if want.Type != "" && have["type"] != nil && have["type"] != want.Type {
			same = false
		}
		if same {
			return nil
		}
		fc.what = append(fc.what, fmt.Sprintf("update MCP server \"memtray\": %s", o.mcpCommand()))
	} else {
		fc.what = append(fc.what, fmt.Sprintf("add MCP server \"memtray\": %s (stdio)", o.mcpCommand()))
	}
	obj, err := root.object("mcpServers", "mcpServers")
	if err != nil {
		return err
	}
	obj.set("memtray", want)
	return nil
}

// mergeHooks adds a command hook running `memtray hook <event>` to each
// agent event's list, keeping every other hook; a memtray hook already
// there (any binary path) is updated in place instead.
func mergeHooks(root *jsonObject, fc *fileChange, specs []hookSpec, o setupOptions) error {
	current, _ := root.get("hooks").(map[string]any)
	if root.vals["hooks"] != nil && current == nil && root.get("hooks") != nil {
		return fmt.Errorf("hooks is not a JSON object")
	}
	for _, s := range specs {
		want := hookEntry{Type: "command", Command: s.command(o.binary, o.flags), Timeout: o.hookTimeout}
		fc.hooks = append(fc.hooks, want.Command)
		groups, _ := current[s.agentEvent].([]any)
		gi, hi, found := -1, -1, false
		var at codexHookPos
		for i, g := range groups {
			gm, _ := g.(map[string]any)
			hs, _ := gm["hooks"].([]any)
			for j, h := range hs {
				hm, _ := h.(map[string]any)
				cmd, _ := hm["command"].(string)
				// Ours: a memtray hook by its binary's name, or exactly
				// the command this setup writes (a renamed binary).
				if !isOwnHook(cmd, s.event, want.Command) {
					continue
				}
				if cmd == want.Command && hm["type"] == "command" && sameJSON(hm["timeout"], want.Timeout) {
					if !found {
						at = codexHookPos{group: i, handler: j, plain: len(gm) == 1 && plainHookEntry(hm)}
					}
					found = true
				} else if gi < 0 {
					gi, hi = i, j
				}
			}
		}
		if found {
			fc.setHookPos(s.agentEvent, at, want)
			continue
		}
		hooks, err := root.object("hooks", "hooks")
		if err != nil {
			return err
		}
		arr, err := hooks.array(s.agentEvent, "hooks."+s.agentEvent)
		if err != nil {
			return err
		}
		if gi >= 0 {
			group, err := arr.objectAt(gi, fmt.Sprintf("hooks.%s[%d]", s.agentEvent, gi))
			if err != nil {
				return err
			}
			inner, err := group.array("hooks", fmt.Sprintf("hooks.%s[%d].hooks", s.agentEvent, gi))
			if err != nil {
				return err
			}
			inner.elems[hi] = want
			fc.what = append(fc.what, fmt.Sprintf("update hook %s: %s (timeout %ds)", s.agentEvent, want.Command, want.Timeout))
			gm, _ := groups[gi].(map[string]any)
			fc.setHookPos(s.agentEvent, codexHookPos{group: gi, handler: hi, plain: len(gm) == 1}, want)
			continue
		}
		arr.elems = append(arr.elems, hookGroup{Hooks: []hookEntry{want}})
		fc.setHookPos(s.agentEvent, codexHookPos{group: len(arr.elems) - 1, handler: 0, plain: true}, want)
		fc.what = append(fc.what, fmt.Sprintf("add hook %s: %s (timeout %ds)", s.agentEvent, want.Command, want.Timeout))
	}
	return nil
}

// mergeEnv sets env[key] = value. A value already pointing elsewhere is
// kept (and explained in the returned note) unless force.
func mergeEnv(root *jsonObject, fc *fileChange, key, value string, force bool) (string, error) {
	env, _ := root.get("env").(map[string]any)
	if root.vals["env"] != nil && env == nil && root.get("env") != nil {
		return "", fmt.Errorf("env is not a JSON object")
	}
	have, present := env[key]
	if present && have == value {
		return "", nil
	}
	if s, isString := have.(string); present && !force {
		if !isString {
			s = fmt.Sprint(have)
		}
		return fmt.Sprintf("proxy: env.%s is already %q: left as it is; make that memtray's upstream and re-run with --force to route through memtray", key, s), nil
	}
	obj, err := root.object("env", "env")
	if err != nil {
		return "", err
	}
	obj.set(key, value)
	if fc.setEnv == nil {
		fc.setEnv = map[string]string{}
	}
	fc.setEnv[key] = value
	fc.what = append(fc.what, fmt.Sprintf("set env %s=%s (memtray's proxy)", key, value))
	return "", nil
}

// jsonPrior tells undo which containers (mcpServers, hooks, an event's
// list, env) a JSON file held before setup first changed it, read from the
// backup: a container that memtray's removal leaves empty is dropped only
// when setup created it.
type jsonPrior struct {
	created bool // setup created the file: every container is setup's
	unknown bool // the backup is gone: every container counts as the user's
	backup  any  // the backup's parsed content
}

// has reports whether the backup held a non-null value under keys.
func (p jsonPrior) has(keys ...string) bool {
	switch {
	case p.created:
		return false
	case p.unknown:
		return true
	}
	v := p.backup
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v != nil
}

// stripJSON removes memtray's entries from a JSON config changed since
// setup, keeping everything else as it is now: mcpServers.memtray, the
// memtray hooks of specs (a memtray-named binary's, or a command in own),
// and each env key that still holds the value setup set. fc.after is fc.before when none of them is there; fc.remove
// is set when setup created the file and nothing else is left in it.
func stripJSON(fc fileChange, specs []hookSpec, own []string, env map[string]string, prior jsonPrior) (fileChange, []string, error) {
	root, err := parseJSONFile(fc.path, fc.before)
	if err != nil {
		return fc, nil, err
	}
	var notes []string
	err = stripMCP(root, &fc, prior)
	if err == nil {
		err = stripHooks(root, &fc, specs, own, prior)
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err != nil {
			break
		}
		var note string
		if note, err = stripEnv(root, &fc, k, env[k], prior); note != "" {
			notes = append(notes, fc.path+": "+note)
		}
	}
	if err != nil {
		return fc, nil, fmt.Errorf("%s: %w (the file was not changed)", fc.path, err)
	}
	if len(fc.what) == 0 {
		return fc, notes, nil
	}
	if prior.created && len(root.keys) == 0 {
		fc.after, fc.remove = nil, true
		fc.what = append(fc.what, "remove the file (setup created it and nothing else is left in it)")
		return fc, notes, nil
	}
	if fc.after, err = renderJSONFile(root, fc.before); err != nil {
		return fc, nil, fmt.Errorf("%s: %w", fc.path, err)
	}
	return fc, notes, nil
}

// stripMCP removes mcpServers.memtray (the undo of mergeMCP), and
// mcpServers itself when that empties it and setup created it.
func stripMCP(root *jsonObject, fc *fileChange, prior jsonPrior) error {
	servers, _ := root.get("mcpServers").(map[string]any)
	if _, ok := servers["memtray"]; !ok {
		return nil
	}
	obj, err := root.object("mcpServers", "mcpServers")
	if err != nil {
		return err
	}
	obj.remove("memtray")
	fc.what = append(fc.what, `remove MCP server "memtray"`)
	if len(obj.keys) == 0 && !prior.has("mcpServers") {
		root.remove("mcpServers")
	}
	return nil
}

// stripHooks removes each hook entry running memtray's `hook <event>`
// command (a memtray-named binary at any path, or a command in own, which
// setup wrote) from its agent event's list (the undo of
// mergeHooks); every other hook stays, in order. A group left with no
// hooks is dropped when it has nothing else either (setup's groups hold
// only "hooks"; a user's matcher group stays); an event's list and the
// hooks object, when left empty, only if setup created them.
func stripHooks(root *jsonObject, fc *fileChange, specs []hookSpec, own []string, prior jsonPrior) error {
	current, _ := root.get("hooks").(map[string]any)
	var hooks *jsonObject
	for _, s := range specs {
		groups, _ := current[s.agentEvent].([]any)
		type hit struct {
			group int
			hooks []int
		}
		var hits []hit
		for i, g := range groups {
			gm, _ := g.(map[string]any)
			hs, _ := gm["hooks"].([]any)
			h := hit{group: i}
			for j, e := range hs {
				em, _ := e.(map[string]any)
				cmd, _ := em["command"].(string)
				if isOwnHook(cmd, s.event, own...) {
					h.hooks = append(h.hooks, j)
					fc.what = append(fc.what, fmt.Sprintf("remove hook %s: %s", s.agentEvent, cmd))
				}
			}
			if h.hooks != nil {
				hits = append(hits, h)
			}
		}
		if hits == nil {
			continue
		}
		var err error
		if hooks == nil {
			if hooks, err = root.object("hooks", "hooks"); err != nil {
				return err
			}
		}
		arr, err := hooks.array(s.agentEvent, "hooks."+s.agentEvent)
		if err != nil {
			return err
		}
		for k := len(hits) - 1; k >= 0; k-- {
			h := hits[k]
			what := fmt.Sprintf("hooks.%s[%d]", s.agentEvent, h.group)
			group, err := arr.objectAt(h.group, what)
			if err != nil {
				return err
			}
			inner, err := group.array("hooks", what+".hooks")
			if err != nil {
				return err
			}
			for x := len(h.hooks) - 1; x >= 0; x-- {
				inner.removeAt(h.hooks[x])
			}
			if len(inner.elems) == 0 && len(group.keys) == 1 {
				arr.removeAt(h.group)
			}
		}
		if len(arr.elems) == 0 && !prior.has("hooks", s.agentEvent) {
			hooks.remove(s.agentEvent)
		}
	}
	if hooks != nil && len(hooks.keys) == 0 && !prior.has("hooks") {
		root.remove("hooks")
	}
	return nil
}

// stripEnv removes env[key] while it still holds value, the value setup
// set (the undo of mergeEnv), and env itself when that empties it and
// setup created it. A value changed since is kept, and explained in the
// returned note.
func stripEnv(root *jsonObject, fc *fileChange, key, value string, prior jsonPrior) (string, error) {
	env, _ := root.get("env").(map[string]any)
	have, ok := env[key]
	if !ok {
		return "", nil
	}
	if have != value {
		return fmt.Sprintf("env.%s is now %s, not the %q setup set: left as it is", key, jsonText(have), value), nil
	}
	obj, err := root.object("env", "env")
	if err != nil {
		return "", err
	}
	obj.remove(key)
	fc.what = append(fc.what, fmt.Sprintf("remove env %s=%s (memtray's proxy)", key, value))
	if len(obj.keys) == 0 && !prior.has("env") {
		root.remove("env")
	}
	return "", nil
}

func jsonText(v any) string {
	b, err := marshalNoEscape(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
