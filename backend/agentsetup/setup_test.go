package agentsetup

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

const testBinary = "/opt/memtray/bin/memtray"

// setupCase is one client: the files it owns (relative to home), an
// existing config for the merge case, and what must hold after setup.
type setupCase struct {
	client string
	files  []string
	// existing holds unrelated settings (and hooks) already there.
	existing map[string]string
	// malformed is a broken version of one file, and the line the error
	// must name.
	malformed     map[string]string
	malformedLine string
	check         func(t *testing.T, home string)
	// edits simulate the agent (or the user) rewriting each file after
	// setup: unrelated changes, some next to memtray's entries. Applied to
	// the file before setup, an edit gives what undo must leave.
	edits map[string]func(string) string
}

// editJSON rewrites a JSON file the way an agent does: parse it, change
// it, write it all back (keys sorted, two-space indent).
func editJSON(change func(m map[string]any)) func(string) string {
	return func(s string) string {
		m := map[string]any{}
		if strings.TrimSpace(s) != "" {
			if err := json.Unmarshal([]byte(s), &m); err != nil {
				panic(err)
			}
		}
		change(m)
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			panic(err)
		}
		return string(b) + "\n"
	}
}

// objAt returns m[key] as an object, creating it.
func objAt(m map[string]any, key string) map[string]any {
	o, ok := m[key].(map[string]any)
	if !ok {
		o = map[string]any{}
		m[key] = o
	}
	return o
}

// appendGroup appends a hook group to hooks[event], creating both.
func appendGroup(m map[string]any, event string, group map[string]any) {
	hooks := objAt(m, "hooks")
	list, _ := hooks[event].([]any)
	hooks[event] = append(list, group)
}

func userHook(command string) map[string]any {
	return map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command}}}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return m
}

// dig follows keys through nested objects.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func checkMCP(t *testing.T, path, typ string) {
	t.Helper()
	s := dig(readJSON(t, path), "mcpServers", "memtray")
	m, _ := s.(map[string]any)
	if m["command"] != testBinary || !reflect.DeepEqual(m["args"], []any{"mcp"}) || (typ != "" && m["type"] != typ) {
		t.Fatalf("%s: mcpServers.memtray = %v", path, s)
	}
}

// checkHooks: each event's list holds exactly one memtray hook.
func checkHooks(t *testing.T, path string, specs []hookSpec) {
	t.Helper()
	root := readJSON(t, path)
	for _, s := range specs {
		groups, _ := dig(root, "hooks", s.agentEvent).([]any)
		n := 0
		for _, g := range groups {
			hs, _ := dig(g, "hooks").([]any)
			for _, h := range hs {
				hm, _ := h.(map[string]any)
				if hm["command"] == s.command(testBinary, nil) {
					if hm["type"] != "command" || hm["timeout"] != 3.0 {
						t.Fatalf("%s %s: %v", path, s.agentEvent, hm)
					}
					n++
				}
			}
		}
		if n != 1 {
			t.Fatalf("%s: %d memtray hooks for %s, want 1", path, n, s.agentEvent)
		}
	}
}

var setupCases = []setupCase{
	{
		client: "claude-code",
		files:  []string{".claude.json", ".claude/settings.json"},
		existing: map[string]string{
			".claude.json": `{
  "numStartups": 42,
  "theme": "dark",
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "x"}
    }
  },
  "projects": {"/home/me/src/webapp": {"allowedTools": [], "history": [{"display": "fix <the> build & test"}]}}
}
`,
			".claude/settings.json": `{
    "model": "opus",
    "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
    "env": {"DISABLE_TELEMETRY": "1"},
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "~/bin/prompt-guard.sh", "timeout": 10}]}
        ],
        "PostToolUse": [
            {"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "gofmt -w ."}]}
        ]
    }
}
`,
		},
		malformed:     map[string]string{".claude/settings.json": "{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"UserPromptSubmit\": [,]\n  }\n}\n"},
		malformedLine: "settings.json:4:",
		edits: map[string]func(string) string{
			".claude.json": editJSON(func(m map[string]any) {
				m["numStartups"] = 43
				m["tipsHistory"] = map[string]any{"memory-command": 12}
				objAt(m, "projects")["/home/me/src/api"] = map[string]any{"allowedTools": []any{}, "hasTrustDialogAccepted": true}
				objAt(m, "mcpServers")["sentry"] = map[string]any{"type": "http", "url": "https://mcp.sentry.dev/mcp"}
			}),
			".claude/settings.json": editJSON(func(m map[string]any) {
				m["model"] = "sonnet"
				objAt(m, "permissions")["allow"] = []any{"Bash(go test:*)", "Bash(make:*)"}
				// after memtray's hook in a list that was there, and in
				// one setup created
				appendGroup(m, "UserPromptSubmit", userHook("~/bin/log-prompt.sh"))
				appendGroup(m, "SessionStart", map[string]any{"matcher": "startup", "hooks": []any{map[string]any{"type": "command", "command": "direnv export json"}}})
			}),
		},
		check: func(t *testing.T, home string) {
			checkMCP(t, filepath.Join(home, ".claude.json"), "stdio")
			settings := filepath.Join(home, ".claude", "settings.json")
			checkHooks(t, settings, claudeHooks)
			if u := dig(readJSON(t, settings), "env", "ANTHROPIC_BASE_URL"); u != "http://127.0.0.1:7432" {
				t.Fatalf("ANTHROPIC_BASE_URL = %v", u)
			}
		},
	},
	{
		client: "cursor",
		files:  []string{".cursor/mcp.json"},
		existing: map[string]string{".cursor/mcp.json": `{"mcpServers":{"linear":{"url":"https://mcp.linear.app/sse"}},"other":[1,2.50,true,null]}
`},
		malformed:     map[string]string{".cursor/mcp.json": "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"}\n\t}\n\t\"oops\": 1\n}\n"},
		malformedLine: "mcp.json:5:",
		edits: map[string]func(string) string{
			".cursor/mcp.json": editJSON(func(m map[string]any) {
				objAt(m, "mcpServers")["zapier"] = map[string]any{"url": "https://mcp.zapier.com/api/mcp/s/x/sse"}
				m["other"] = "changed"
			}),
		},
		check: func(t *testing.T, home string) {
			checkMCP(t, filepath.Join(home, ".cursor", "mcp.json"), "")
		},
	},
	{
		client: "windsurf",
		files:  []string{".codeium/windsurf/mcp_config.json"},
		existing: map[string]string{".codeium/windsurf/mcp_config.json": `{
	"mcpServers": {
		"figma": {"serverUrl": "https://mcp.figma.com/mcp", "headers": {"Authorization": "Bearer ${env:FIGMA}"}}
	}
}
`},
		malformed:     map[string]string{".codeium/windsurf/mcp_config.json": "{\"mcpServers\": {\"a\": 1}"},
		malformedLine: "mcp_config.json:1:",
		edits: map[string]func(string) string{
			".codeium/windsurf/mcp_config.json": editJSON(func(m map[string]any) {
				servers := objAt(m, "mcpServers")
				if figma, ok := servers["figma"].(map[string]any); ok {
					figma["disabled"] = true
				}
				servers["github"] = map[string]any{"command": "docker", "args": []any{"run", "-i", "ghcr.io/github/github-mcp-server"}}
			}),
		},
		check: func(t *testing.T, home string) {
			checkMCP(t, filepath.Join(home, ".codeium", "windsurf", "mcp_config.json"), "")
		},
	},
	{
		client: "codex",
		files:  []string{".codex/config.toml", ".codex/hooks.json"},
		existing: map[string]string{
			".codex/config.toml": `# my codex config
model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.context7]
command = "npx"
args = ["-y", "@upstash/context7-mcp"]

[profiles.deep]
model_reasoning_effort = "high"
`,
			".codex/hooks.json": `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]}}`,
		},
		malformed:     map[string]string{".codex/config.toml": "model = \"o3\"\n# >>> memtray >>>\n[mcp_servers.memtray]\ncommand = \"x\"\n"},
		malformedLine: "config.toml:2:",
		edits: map[string]func(string) string{
			// Codex trusts a project (a table appended at the end of the
			// document: before the trailing comment that ends memtray's
			// block, as Codex 0.171 writes it) and the user changes the
			// model.
			".codex/config.toml": func(s string) string {
				s = strings.Replace(s, `model = "gpt-5-codex"`, `model = "gpt-5"`, 1)
				project := "\n[projects.\"/home/me/src/api\"]\ntrust_level = \"trusted\"\n"
				if strings.HasSuffix(s, codexBlockEnd+"\n") {
					return strings.TrimSuffix(s, codexBlockEnd+"\n") + project + codexBlockEnd + "\n"
				}
				return s + project
			},
			".codex/hooks.json": editJSON(func(m map[string]any) {
				appendGroup(m, "UserPromptSubmit", userHook("~/bin/log-prompt.sh"))
				appendGroup(m, "Stop", userHook("say done"))
			}),
		},
		check: func(t *testing.T, home string) {
			data, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			for _, want := range []string{
				codexBlockBegin + "\n# Added by `memtray setup codex`; `memtray setup codex --undo` removes it.\n[mcp_servers.memtray]\ncommand = \"" + testBinary + "\"\nargs = [\"mcp\"]\n",
				// Codex's trust of memtray's hooks, in the block (hashes
				// as real Codex 0.171 computed them for these commands).
				"[hooks.state." + tomlQuote(filepath.Join(home, ".codex", "hooks.json")+":user_prompt_submit:0:0") + "]\ntrusted_hash = \"sha256:d37ac8d37877184515b9476e430eed22083960842b6a6a7259ad08faafd6b3c8\"\n",
				"[hooks.state." + tomlQuote(filepath.Join(home, ".codex", "hooks.json")+":session_start:0:0") + "]\ntrusted_hash = \"sha256:a58b4f73fe7e9ac974887b9dd2833ac442a35848ae36aaf2012158e7fce050fd\"\n",
				"[hooks.state." + tomlQuote(filepath.Join(home, ".codex", "hooks.json")+":pre_compact:0:0") + "]\ntrusted_hash = \"sha256:9f56bc9a1118378c35b19c81c5145e907f5d29350b4e0549187c8fd9f00d14c6\"\n",
				// Stop, not in the recording: its hash by the same rule.
				"trusted_hash = " + tomlQuote(codexHookHash("Stop", testBinary+" hook stop --agent codex", 3)) + "\n" + codexBlockEnd + "\n",
				codexTopBlockBegin + "\n",
				"openai_base_url = \"http://127.0.0.1:7432/openai/v1\"\n" + codexTopBlockEnd + "\n",
			} {
				if !strings.Contains(s, want) {
					t.Fatalf("config.toml lacks %q:\n%s", want, s)
				}
			}
			// The top-level key comes before any table; the table block last.
			if strings.Index(s, "openai_base_url") > strings.Index(s, "[") || !strings.HasSuffix(s, codexBlockEnd+"\n") {
				t.Fatalf("blocks misplaced:\n%s", s)
			}
			checkHooks(t, filepath.Join(home, ".codex", "hooks.json"), codexHooks)
		},
	},
}

// runSetupCmd runs `memtray setup` with a temp data dir shared by a test.
func runSetupCmd(t *testing.T, dataDir, home string, args ...string) (int, string, string) {
	t.Helper()
	all := append([]string{}, args...)
	all = append(all, "--home", home, "--binary", testBinary, "--data-dir", dataDir)
	return run(t, all...)
}

// run is `memtray setup ARGS` with the default config (the proxy at
// 127.0.0.1:7432, a 1.5 s hook deadline): Run with the command's flags.
// It returns the exit code (1 for an error), the output and the error.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	printOnly := fs.Bool("print", false, "")
	undo := fs.Bool("undo", false, "")
	force := fs.Bool("force", false, "")
	noProxy := fs.Bool("no-proxy", false, "")
	noHooks := fs.Bool("no-hooks", false, "")
	home := fs.String("home", "", "")
	binary := fs.String("binary", "", "")
	dataDir := fs.String("data-dir", "", "")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		t.Fatalf("name the client first: %q", args)
	}
	if err := fs.Parse(args[1:]); err != nil || fs.NArg() != 0 {
		t.Fatalf("flags %q: %v", args, err)
	}
	e := Env{Home: *home, Binary: *binary, Listen: "127.0.0.1:7432", DataDir: *dataDir, HookTimeout: HookTimeout(1500 * time.Millisecond)}
	var out bytes.Buffer
	if err := Run(&out, e, args[0], Options{NoProxy: *noProxy, NoHooks: *noHooks, Force: *force}, *undo, *printOnly); err != nil {
		return 1, out.String(), err.Error()
	}
	return 0, out.String(), ""
}

func snapshot(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(home, p)
		info, _ := d.Info()
		out[rel] = info.Mode().String() + "\n" + string(data)
		return nil
	})
	return out
}

func writeFiles(t *testing.T, home string, files map[string]string, mode os.FileMode) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// containsJSON reports whether now keeps everything of orig: the same
// scalars, every key of each object, and each array as a prefix (setup
// only appends to lists).
func containsJSON(orig, now any) bool {
	switch o := orig.(type) {
	case map[string]any:
		n, ok := now.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range o {
			if !containsJSON(v, n[k]) {
				return false
			}
		}
		return true
	case []any:
		n, ok := now.([]any)
		if !ok || len(n) < len(o) {
			return false
		}
		for i := range o {
			if !reflect.DeepEqual(o[i], n[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(orig, now)
	}
}

func TestSetupClients(t *testing.T) {
	for _, tc := range setupCases {
		t.Run(tc.client, func(t *testing.T) {
			t.Run("fresh install, idempotent, undo", func(t *testing.T) {
				home, data := t.TempDir(), t.TempDir()
				code, out, errs := runSetupCmd(t, data, home, tc.client, "--print")
				if code != 0 || !strings.Contains(out, "+++ ") || !strings.Contains(out, "nothing was changed") {
					t.Fatalf("--print: %d %s %s", code, out, errs)
				}
				if s := snapshot(t, home); len(s) != 0 {
					t.Fatalf("--print wrote %v", s)
				}
				if _, err := os.Stat(filepath.Join(data, "setup")); !os.IsNotExist(err) {
					t.Fatalf("--print recorded a setup: %v", err)
				}
				code, out, errs = runSetupCmd(t, data, home, tc.client)
				if code != 0 || !strings.Contains(out, "--- /dev/null") {
					t.Fatalf("setup: %d %s %s", code, out, errs)
				}
				tc.check(t, home)
				for _, f := range tc.files {
					info, err := os.Stat(filepath.Join(home, f))
					if err != nil || info.Mode().Perm() != 0o600 {
						t.Fatalf("%s: %v %v", f, info, err)
					}
				}
				after := snapshot(t, home)
				code, out, _ = runSetupCmd(t, data, home, tc.client)
				if code != 0 || !strings.Contains(out, "already set up: nothing to change") {
					t.Fatalf("second run: %d %s", code, out)
				}
				if !reflect.DeepEqual(after, snapshot(t, home)) {
					t.Fatal("the second run changed files")
				}
				code, out, errs = runSetupCmd(t, data, home, tc.client, "--undo", "--print")
				if code != 0 || !strings.Contains(out, "+++ /dev/null") || !reflect.DeepEqual(after, snapshot(t, home)) {
					t.Fatalf("undo --print: %d %s %s", code, out, errs)
				}
				if code, out, errs = runSetupCmd(t, data, home, tc.client, "--undo"); code != 0 {
					t.Fatalf("undo: %d %s %s", code, out, errs)
				}
				if s := snapshot(t, home); len(s) != 0 {
					t.Fatalf("undo of a fresh install left %v", s)
				}
				if code, _, errs = runSetupCmd(t, data, home, tc.client, "--undo"); code != 1 || !strings.Contains(errs, "nothing to undo") {
					t.Fatalf("second undo: %d %s", code, errs)
				}
			})

			t.Run("merge with existing settings, undo byte-identical", func(t *testing.T) {
				home, data := t.TempDir(), t.TempDir()
				writeFiles(t, home, tc.existing, 0o640)
				before := snapshot(t, home)
				code, out, errs := runSetupCmd(t, data, home, tc.client)
				if code != 0 {
					t.Fatalf("setup: %d %s %s", code, out, errs)
				}
				tc.check(t, home)
				for rel, content := range tc.existing {
					p := filepath.Join(home, rel)
					info, err := os.Stat(p)
					if err != nil || info.Mode().Perm() != 0o640 {
						t.Fatalf("%s lost its mode: %v %v", rel, info, err)
					}
					if b, err := os.ReadFile(p + BackupSuffix); err != nil || string(b) != content {
						t.Fatalf("%s: backup %q %v", rel, b, err)
					}
					if strings.HasSuffix(rel, ".json") {
						var orig any
						json.Unmarshal([]byte(content), &orig)
						now := readJSON(t, p)
						if !containsJSON(orig, now) {
							t.Fatalf("%s lost settings:\nbefore %s\nafter %v", rel, content, now)
						}
					} else if !keepsLines(content, p) {
						t.Fatalf("%s lost lines", rel)
					}
				}
				after := snapshot(t, home)
				if code, out, _ = runSetupCmd(t, data, home, tc.client); code != 0 || !strings.Contains(out, "nothing to change") || !reflect.DeepEqual(after, snapshot(t, home)) {
					t.Fatalf("second run: %d %s", code, out)
				}
				if code, out, errs = runSetupCmd(t, data, home, tc.client, "--undo"); code != 0 {
					t.Fatalf("undo: %d %s %s", code, out, errs)
				}
				restored := snapshot(t, home)
				for rel := range tc.existing {
					if restored[rel] != before[rel] {
						t.Fatalf("%s after undo:\n%s\nwant\n%s", rel, restored[rel], before[rel])
					}
				}
				if !reflect.DeepEqual(restored, before) {
					t.Fatalf("undo left other files: %v", keys(restored))
				}
			})

			t.Run("undo --force restores the backups even of files changed since setup", func(t *testing.T) {
				home, data := t.TempDir(), t.TempDir()
				writeFiles(t, home, tc.existing, 0o600)
				before := snapshot(t, home)
				if code, _, errs := runSetupCmd(t, data, home, tc.client); code != 0 {
					t.Fatal(errs)
				}
				agentRewrites(t, home, tc)
				if code, _, errs := runSetupCmd(t, data, home, tc.client, "--undo", "--force"); code != 0 || !reflect.DeepEqual(before, snapshot(t, home)) {
					t.Fatalf("undo --force: %d %s", code, errs)
				}
			})

			for _, start := range []string{"existing", "fresh"} {
				t.Run("agent rewrote the files after setup ("+start+" config): undo removes only memtray's entries", func(t *testing.T) {
					testUndoRewritten(t, tc, start == "existing")
				})
			}

			t.Run("memtray's entries already gone: undo says so and changes nothing", func(t *testing.T) {
				home, data := t.TempDir(), t.TempDir()
				writeFiles(t, home, tc.existing, 0o600)
				if code, _, errs := runSetupCmd(t, data, home, tc.client); code != 0 {
					t.Fatal(errs)
				}
				// The user took memtray out by hand, and changed other things.
				for rel, edit := range tc.edits {
					if err := os.WriteFile(filepath.Join(home, rel), []byte(edit(tc.existing[rel])), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				before := snapshot(t, home)
				code, out, errs := runSetupCmd(t, data, home, tc.client, "--undo")
				if code != 0 || !strings.Contains(out, "memtray's entries are already gone") || strings.Contains(out, "+++ ") {
					t.Fatalf("undo: %d %s %s", code, out, errs)
				}
				if !reflect.DeepEqual(before, snapshot(t, home)) {
					t.Fatal("undo changed files without memtray's entries")
				}
				for _, rel := range tc.files {
					if !strings.Contains(out, filepath.Join(home, rel)+BackupSuffix) {
						t.Fatalf("the kept backup of %s is not named:\n%s", rel, out)
					}
				}
				if _, err := os.Stat(filepath.Join(data, "setup", tc.client+".json")); !os.IsNotExist(err) {
					t.Fatalf("the record is still there: %v", err)
				}
				if code, _, errs = runSetupCmd(t, data, home, tc.client, "--undo"); code != 1 || !strings.Contains(errs, "nothing to undo") || !reflect.DeepEqual(before, snapshot(t, home)) {
					t.Fatalf("second undo: %d %s", code, errs)
				}
			})

			for _, rel := range tc.files {
				t.Run("a file malformed after setup: undo names it, writes nothing ("+rel+")", func(t *testing.T) {
					home, data := t.TempDir(), t.TempDir()
					writeFiles(t, home, tc.existing, 0o600)
					if code, _, errs := runSetupCmd(t, data, home, tc.client); code != 0 {
						t.Fatal(errs)
					}
					agentRewrites(t, home, tc)
					p := filepath.Join(home, rel)
					b, _ := os.ReadFile(p)
					broken := string(b[:len(b)/2]) // a torn write
					if strings.HasSuffix(rel, ".toml") {
						broken = strings.Replace(string(b), codexBlockEnd+"\n", "", 1)
					}
					os.WriteFile(p, []byte(broken), 0o600)
					before := snapshot(t, home)
					record, _ := os.ReadFile(filepath.Join(data, "setup", tc.client+".json"))
					for _, args := range [][]string{{"--undo", "--print"}, {"--undo"}} {
						code, out, errs := runSetupCmd(t, data, home, append([]string{tc.client}, args...)...)
						if code != 1 || !strings.Contains(errs, p+":") || strings.Contains(out, "+++ ") {
							t.Fatalf("%v: %d %q %q", args, code, out, errs)
						}
					}
					if !reflect.DeepEqual(before, snapshot(t, home)) {
						t.Fatal("undo wrote files")
					}
					if now, _ := os.ReadFile(filepath.Join(data, "setup", tc.client+".json")); string(now) != string(record) {
						t.Fatal("undo changed the record")
					}
				})
			}

			t.Run("malformed file: error naming it, nothing changed", func(t *testing.T) {
				home, data := t.TempDir(), t.TempDir()
				writeFiles(t, home, tc.malformed, 0o600)
				before := snapshot(t, home)
				code, out, errs := runSetupCmd(t, data, home, tc.client)
				if code != 1 || !strings.Contains(errs, tc.malformedLine) || !strings.Contains(errs, home) {
					t.Fatalf("malformed: %d %q %q", code, out, errs)
				}
				if !reflect.DeepEqual(before, snapshot(t, home)) {
					t.Fatal("a malformed file was changed")
				}
			})
		})
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// agentRewrites applies tc.edits to the files as they are now.
func agentRewrites(t *testing.T, home string, tc setupCase) map[string]string {
	t.Helper()
	out := map[string]string{}
	for rel, edit := range tc.edits {
		p := filepath.Join(home, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = edit(string(b))
		if err := os.WriteFile(p, []byte(out[rel]), 0o600); err != nil { // an existing file keeps its mode
			t.Fatal(err)
		}
	}
	return out
}

// memtrayOwned names the entries setup adds inside a JSON container.
var memtrayOwned = map[string]bool{"memtray": true, "ANTHROPIC_BASE_URL": true,
	"UserPromptSubmit": true, "SessionStart": true, "PreCompact": true, "SessionEnd": true, "Stop": true}

// rawMembers is each member of a JSON object as its bytes in the file.
func rawMembers(t *testing.T, data []byte) map[string]string {
	t.Helper()
	o, err := parseObject(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	out := map[string]string{}
	for _, k := range o.keys {
		out[k] = string(o.vals[k].(json.RawMessage))
	}
	return out
}

// testUndoRewritten: setup (over tc.existing or on no files), the agent
// rewrites every file, undo: memtray's entries are gone, each of the
// agent's changes is still there (the parsed JSON equals the edit applied
// to the file before setup; what memtray never touched keeps its bytes),
// modes kept, the backups kept, the record gone; --print first changes
// nothing, a second undo is refused and changes nothing.
func testUndoRewritten(t *testing.T, tc setupCase, existing bool) {
	home, data := t.TempDir(), t.TempDir()
	orig, mode := map[string]string{}, os.FileMode(0o600)
	if existing {
		orig, mode = tc.existing, 0o640
		writeFiles(t, home, tc.existing, mode)
	}
	if code, _, errs := runSetupCmd(t, data, home, tc.client); code != 0 {
		t.Fatal(errs)
	}
	edited := agentRewrites(t, home, tc)
	for rel, content := range edited {
		if !strings.Contains(content, testBinary) {
			t.Fatalf("the rewrite of %s lost memtray's entries:\n%s", rel, content)
		}
	}
	rewritten := snapshot(t, home)

	code, out, errs := runSetupCmd(t, data, home, tc.client, "--undo", "--print")
	if code != 0 || !strings.Contains(out, "changed since setup: remove only memtray's entries") || !strings.Contains(out, "\n-") || !strings.Contains(out, "--print: nothing was changed") {
		t.Fatalf("undo --print: %d %s %s", code, out, errs)
	}
	if !reflect.DeepEqual(rewritten, snapshot(t, home)) {
		t.Fatal("undo --print wrote files")
	}

	code, out, errs = runSetupCmd(t, data, home, tc.client, "--undo")
	if code != 0 || !strings.Contains(out, "undone:") {
		t.Fatalf("undo: %d %s %s", code, out, errs)
	}
	for _, rel := range tc.files {
		p := filepath.Join(home, rel)
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(got), "memtray") {
			t.Fatalf("%s still holds memtray's entries:\n%s", rel, got)
		}
		want := tc.edits[rel](orig[rel])
		if strings.HasSuffix(rel, ".json") {
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal([]byte(want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("%s after undo:\n%s\nwant (as JSON)\n%s", rel, got, want)
			}
			// What memtray never touched keeps the agent's bytes: the
			// top-level members, and the others' members in memtray's
			// containers.
			gotRaw, agentRaw := rawMembers(t, got), rawMembers(t, []byte(edited[rel]))
			for k, v := range agentRaw {
				switch k {
				case "mcpServers", "hooks", "env":
					if _, ok := gotRaw[k]; !ok {
						continue
					}
					inGot, inAgent := rawMembers(t, []byte(gotRaw[k])), rawMembers(t, []byte(v))
					for k2, v2 := range inAgent {
						if !memtrayOwned[k2] && inGot[k2] != v2 {
							t.Fatalf("%s: %s.%s changed bytes:\n%s\nwas\n%s", rel, k, k2, inGot[k2], v2)
						}
					}
				default:
					if gotRaw[k] != v {
						t.Fatalf("%s: %s changed bytes:\n%s\nwas\n%s", rel, k, gotRaw[k], v)
					}
				}
			}
		} else if string(got) != want {
			t.Fatalf("%s after undo:\n%s\nwant\n%s", rel, got, want)
		}
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != mode {
			t.Fatalf("%s: mode %v %v", rel, info, err)
		}
		backup, err := os.ReadFile(p + BackupSuffix)
		switch {
		case existing && (err != nil || string(backup) != orig[rel]):
			t.Fatalf("%s: backup %q %v", rel, backup, err)
		case existing && !strings.Contains(out, p+BackupSuffix):
			t.Fatalf("the kept backup of %s is not named:\n%s", rel, out)
		case !existing && !os.IsNotExist(err):
			t.Fatalf("%s: a backup of a file setup created: %v", rel, err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "setup", tc.client+".json")); !os.IsNotExist(err) {
		t.Fatalf("the record is still there: %v", err)
	}
	after := snapshot(t, home)
	if code, _, errs = runSetupCmd(t, data, home, tc.client, "--undo"); code != 1 || !strings.Contains(errs, "nothing to undo") || !strings.Contains(errs, "undone already") {
		t.Fatalf("second undo: %d %s", code, errs)
	}
	if !reflect.DeepEqual(after, snapshot(t, home)) {
		t.Fatal("the second undo changed files")
	}
}

// keepsLines: every line of orig is still in path's file, in order.
func keepsLines(orig, path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	now := splitLines(data)
	j := 0
	for _, l := range splitLines([]byte(orig)) {
		for j < len(now) && now[j] != l {
			j++
		}
		if j == len(now) {
			return false
		}
		j++
	}
	return true
}

func TestSetupOptions(t *testing.T) {
	t.Run("no proxy, no hooks: only the MCP server", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		if code, _, errs := runSetupCmd(t, data, home, "claude-code", "--no-proxy", "--no-hooks"); code != 0 {
			t.Fatal(errs)
		}
		if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
			t.Fatalf("settings.json written: %v", err)
		}
		checkMCP(t, filepath.Join(home, ".claude.json"), "stdio")
		if code, _, errs := runSetupCmd(t, data, home, "codex", "--no-proxy", "--no-hooks"); code != 0 {
			t.Fatal(errs)
		}
		b, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
		if strings.Contains(string(b), "openai_base_url") {
			t.Fatalf("--no-proxy set the base URL:\n%s", b)
		}
	})
	t.Run("a base URL pointing elsewhere is kept", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		writeFiles(t, home, map[string]string{".claude/settings.json": `{"env": {"ANTHROPIC_BASE_URL": "https://gateway.corp/anthropic"}}`}, 0o600)
		code, out, errs := runSetupCmd(t, data, home, "claude-code")
		if code != 0 || !strings.Contains(out, "left as it is") {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		if u := dig(readJSON(t, filepath.Join(home, ".claude", "settings.json")), "env", "ANTHROPIC_BASE_URL"); u != "https://gateway.corp/anthropic" {
			t.Fatalf("base URL replaced: %v", u)
		}
	})
	t.Run("a moved binary updates memtray's entries instead of adding", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		if code, _, errs := run(t, "claude-code", "--home", home, "--data-dir", data, "--binary", "/old/place/memtray"); code != 0 {
			t.Fatal(errs)
		}
		code, out, errs := runSetupCmd(t, data, home, "claude-code")
		if code != 0 || !strings.Contains(out, "update hook UserPromptSubmit") || !strings.Contains(out, "update MCP server") {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		checkHooks(t, filepath.Join(home, ".claude", "settings.json"), claudeHooks)
		checkMCP(t, filepath.Join(home, ".claude.json"), "stdio")
		// Undo still goes back to before the first setup: no files.
		if code, _, errs := runSetupCmd(t, data, home, "claude-code", "--undo"); code != 0 || len(snapshot(t, home)) != 0 {
			t.Fatalf("undo: %d %s %v", code, errs, keys(snapshot(t, home)))
		}
	})
	t.Run("codex: mcp_servers.memtray outside the block is refused", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		writeFiles(t, home, map[string]string{".codex/config.toml": "model = \"o3\"\n\n[mcp_servers.memtray]\ncommand = \"memtray\"\nargs = [\"mcp\"]\n"}, 0o600)
		before := snapshot(t, home)
		code, _, errs := runSetupCmd(t, data, home, "codex")
		if code != 1 || !strings.Contains(errs, "config.toml:3: defines mcp_servers.memtray outside memtray's block") || !reflect.DeepEqual(before, snapshot(t, home)) {
			t.Fatalf("%d %s", code, errs)
		}
	})
	t.Run("codex: a custom model provider keeps its base URL", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		writeFiles(t, home, map[string]string{".codex/config.toml": "model_provider = \"azure\" # work\n[model_providers.azure]\nname = \"Azure\"\n"}, 0o600)
		code, out, errs := runSetupCmd(t, data, home, "codex", "--no-hooks")
		b, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
		if code != 0 || strings.Contains(string(b), "openai_base_url") || !strings.Contains(out, `model_provider "azure"`) {
			t.Fatalf("%d %s %s\n%s", code, out, errs, b)
		}
	})
	t.Run("a binary path with a space is quoted for the shell", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		if code, _, errs := run(t, "claude-code", "--home", home, "--data-dir", data, "--binary", "/Applications/mem tray/memtray"); code != 0 {
			t.Fatal(errs)
		}
		groups, _ := dig(readJSON(t, filepath.Join(home, ".claude", "settings.json")), "hooks", "SessionStart").([]any)
		cmd := dig(dig(groups[0], "hooks").([]any)[0], "command")
		if cmd != "'/Applications/mem tray/memtray' hook session-start" {
			t.Fatalf("command %v", cmd)
		}
	})
	t.Run("symlinked config: the target changes, the link stays", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		dotfiles := filepath.Join(t.TempDir(), "mcp.json")
		os.WriteFile(dotfiles, []byte(`{"mcpServers": {}}`), 0o600)
		os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
		link := filepath.Join(home, ".cursor", "mcp.json")
		if err := os.Symlink(dotfiles, link); err != nil {
			t.Skip(err)
		}
		if code, _, errs := runSetupCmd(t, data, home, "cursor"); code != 0 {
			t.Fatal(errs)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v", err)
		}
		checkMCP(t, dotfiles, "")
	})
}

func TestUnifiedDiff(t *testing.T) {
	before := []byte("a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n")
	after := []byte("a\nb\nc\nX\nd\ne\nf\ng\nh\ni\nj\nk\nl\nY\n")
	got := unifiedDiff("f", true, before, after)
	want := "--- f\n+++ f\n@@ -1,6 +1,7 @@\n a\n b\n c\n+X\n d\n e\n f\n@@ -10,4 +11,4 @@\n j\n k\n l\n-m\n+Y\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if unifiedDiff("f", true, before, before) != "" {
		t.Fatal("diff of equal files")
	}
}

func TestSetupUndoChangedFile(t *testing.T) {
	settingsOf := func(home string) string { return filepath.Join(home, ".claude", "settings.json") }
	rewrite := func(t *testing.T, path string, change func(m map[string]any)) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(editJSON(change)(string(b))), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	wantJSON := func(t *testing.T, path, want string) {
		t.Helper()
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		if got := readJSON(t, path); !reflect.DeepEqual(any(got), w) {
			b, _ := os.ReadFile(path)
			t.Fatalf("%s:\n%s\nwant\n%s", path, b, want)
		}
	}

	t.Run("a user's hook in memtray's group and a base URL changed since are kept", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		if code, _, errs := runSetupCmd(t, data, home, "claude-code"); code != 0 {
			t.Fatal(errs)
		}
		rewrite(t, settingsOf(home), func(m map[string]any) {
			group := dig(m, "hooks", "SessionStart").([]any)[0].(map[string]any)
			group["hooks"] = append(group["hooks"].([]any), map[string]any{"type": "command", "command": "mine"})
			objAt(m, "env")["ANTHROPIC_BASE_URL"] = "https://gateway.corp/anthropic"
		})
		code, out, errs := runSetupCmd(t, data, home, "claude-code", "--undo")
		if code != 0 || !strings.Contains(out, `env.ANTHROPIC_BASE_URL is now "https://gateway.corp/anthropic", not the "http://127.0.0.1:7432" setup set: left as it is`) {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		wantJSON(t, settingsOf(home), `{"env": {"ANTHROPIC_BASE_URL": "https://gateway.corp/anthropic"},
			"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`)
		// ~/.claude.json was not touched since setup, which created it.
		if _, err := os.Stat(filepath.Join(home, ".claude.json")); !os.IsNotExist(err) {
			t.Fatalf(".claude.json: %v", err)
		}
	})

	t.Run("containers there before setup stay, even empty; a user's matcher group stays", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		writeFiles(t, home, map[string]string{
			".claude.json": `{"mcpServers": {}}`,
			// an older memtray hook in a matcher group: setup updates it in place
			".claude/settings.json": `{"env": {}, "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "/old/memtray hook session-start"}]}]}}`,
		}, 0o600)
		if code, out, errs := runSetupCmd(t, data, home, "claude-code"); code != 0 || !strings.Contains(out, "update hook SessionStart") {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		rewrite(t, filepath.Join(home, ".claude.json"), func(m map[string]any) { m["numStartups"] = 1 })
		rewrite(t, settingsOf(home), func(m map[string]any) { m["model"] = "opus" })
		if code, out, errs := runSetupCmd(t, data, home, "claude-code", "--undo"); code != 0 {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		wantJSON(t, filepath.Join(home, ".claude.json"), `{"mcpServers": {}, "numStartups": 1}`)
		wantJSON(t, settingsOf(home), `{"env": {}, "model": "opus", "hooks": {"SessionStart": [{"matcher": "startup", "hooks": []}]}}`)
	})

	t.Run("a record from before env values were recorded: the proxy base URL still goes", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		writeFiles(t, home, map[string]string{".claude/settings.json": `{"env": {"X": "1"}}`}, 0o600)
		if code, _, errs := runSetupCmd(t, data, home, "claude-code", "--no-hooks"); code != 0 {
			t.Fatal(errs)
		}
		recordPath := filepath.Join(data, "setup", "claude-code.json")
		rec, _, err := loadSetupRecord(recordPath)
		if err != nil || rec.Version != setupRecordVersion || len(rec.Files) != 2 || rec.Files[1].Env["ANTHROPIC_BASE_URL"] != "http://127.0.0.1:7432" {
			t.Fatalf("record %+v %v", rec, err)
		}
		rec.Version, rec.Files[1].Env = 0, nil
		if err := saveSetupRecord(recordPath, rec); err != nil {
			t.Fatal(err)
		}
		rewrite(t, settingsOf(home), func(m map[string]any) { m["model"] = "opus" })
		if code, out, errs := runSetupCmd(t, data, home, "claude-code", "--undo"); code != 0 || !strings.Contains(out, "remove env ANTHROPIC_BASE_URL") {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		wantJSON(t, settingsOf(home), `{"env": {"X": "1"}, "model": "opus"}`)
	})

	t.Run("a file setup created and the agent only reformatted is removed", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		if code, _, errs := runSetupCmd(t, data, home, "claude-code"); code != 0 {
			t.Fatal(errs)
		}
		if code, _, errs := runSetupCmd(t, data, home, "codex", "--no-hooks"); code != 0 {
			t.Fatal(errs)
		}
		rewrite(t, settingsOf(home), func(map[string]any) {})
		toml := filepath.Join(home, ".codex", "config.toml")
		f, _ := os.OpenFile(toml, os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString("\n\n")
		f.Close()
		for _, client := range []string{"claude-code", "codex"} {
			code, out, errs := runSetupCmd(t, data, home, client, "--undo")
			if code != 0 || !strings.Contains(out, "remove the file (setup created it and nothing else is left in it)") || !strings.Contains(out, "+++ /dev/null") {
				t.Fatalf("%s: %d %s %s", client, code, out, errs)
			}
		}
		if s := snapshot(t, home); len(s) != 0 {
			t.Fatalf("left %v", keys(s))
		}
	})

	t.Run("codex: the blocks go, Codex's own edits around them stay byte for byte", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		orig := "model = \"o3\"\n[tui]\nnotifications = true\n"
		writeFiles(t, home, map[string]string{".codex/config.toml": orig}, 0o644)
		if code, _, errs := runSetupCmd(t, data, home, "codex", "--no-hooks"); code != 0 {
			t.Fatal(errs)
		}
		p := filepath.Join(home, ".codex", "config.toml")
		b, _ := os.ReadFile(p)
		// Codex adds a key inside the top-level section (after memtray's
		// block) and a table after memtray's table block, with CRLF.
		edited := strings.Replace(string(b), "model = \"o3\"\n", "model = \"o3\"\nmodel_reasoning_effort = \"high\"\n", 1) + "[projects.'C:\\src']\r\ntrust_level = \"trusted\"\r\n"
		os.WriteFile(p, []byte(edited), 0o644)
		if code, out, errs := runSetupCmd(t, data, home, "codex", "--undo"); code != 0 {
			t.Fatalf("%d %s %s", code, out, errs)
		}
		got, _ := os.ReadFile(p)
		want := "model = \"o3\"\nmodel_reasoning_effort = \"high\"\n[tui]\nnotifications = true\n\n[projects.'C:\\src']\r\ntrust_level = \"trusted\"\r\n"
		if string(got) != want {
			t.Fatalf("got\n%q\nwant\n%q", got, want)
		}
		if info, _ := os.Stat(p); info.Mode().Perm() != 0o644 {
			t.Fatalf("mode %v", info.Mode())
		}
	})
}
