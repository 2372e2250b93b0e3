package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
				if hm["command"] == testBinary+" hook "+s.event {
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
		check: func(t *testing.T, home string) {
			data, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			for _, want := range []string{
				codexBlockBegin + "\n# Added by `memtray setup codex`; `memtray setup codex --undo` removes it.\n[mcp_servers.memtray]\ncommand = \"" + testBinary + "\"\nargs = [\"mcp\"]\n" + codexBlockEnd + "\n",
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
	all := append([]string{"setup"}, args...)
	all = append(all, "--home", home, "--binary", testBinary, "--data-dir", dataDir)
	return run(t, context.Background(), "", all...)
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
	isolate(t)
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
					if b, err := os.ReadFile(p + SetupBackupSuffix); err != nil || string(b) != content {
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

			t.Run("undo refuses a file changed since setup", func(t *testing.T) {
				home, data := t.TempDir(), t.TempDir()
				writeFiles(t, home, tc.existing, 0o600)
				before := snapshot(t, home)
				if code, _, errs := runSetupCmd(t, data, home, tc.client); code != 0 {
					t.Fatal(errs)
				}
				p := filepath.Join(home, tc.files[0])
				f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				f.WriteString("\n")
				f.Close()
				edited := snapshot(t, home)
				code, _, errs := runSetupCmd(t, data, home, tc.client, "--undo")
				if code != 1 || !strings.Contains(errs, "changed since setup") || !reflect.DeepEqual(edited, snapshot(t, home)) {
					t.Fatalf("undo of an edited file: %d %s", code, errs)
				}
				if code, _, errs = runSetupCmd(t, data, home, tc.client, "--undo", "--force"); code != 0 || !reflect.DeepEqual(before, snapshot(t, home)) {
					t.Fatalf("undo --force: %d %s", code, errs)
				}
			})

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
	isolate(t)
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
		if code, _, errs := run(t, context.Background(), "", "setup", "claude-code", "--home", home, "--data-dir", data, "--binary", "/old/place/memtray"); code != 0 {
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
		if code, _, errs := run(t, context.Background(), "", "setup", "claude-code", "--home", home, "--data-dir", data, "--binary", "/Applications/mem tray/memtray"); code != 0 {
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
	t.Run("usage", func(t *testing.T) {
		home, data := t.TempDir(), t.TempDir()
		if code, _, errs := runSetupCmd(t, data, home, "vim"); code != 2 || !strings.Contains(errs, "unknown client") {
			t.Fatalf("%d %s", code, errs)
		}
		if code, _, errs := runSetupCmd(t, data, home); code != 2 {
			t.Fatalf("%d %s", code, errs)
		}
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
