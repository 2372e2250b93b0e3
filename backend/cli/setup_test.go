package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/daemon"
)

// TestSetupCommand: the command's flags, config and usage around
// agentsetup (whose tests cover what setup writes): the proxy address and
// hook timeout come from the config, the record goes to --data-dir, and
// undo takes it all out.
func TestSetupCommand(t *testing.T) {
	isolate(t)
	home, data := t.TempDir(), t.TempDir()
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"listen": "127.0.0.1:7555", "recall": {"hook_timeout": "2500ms"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"setup", "claude-code", "--home", home, "--data-dir", data, "--config", cfg, "--binary", "/opt/memtray/bin/memtray"}
	code, out, errs := run(t, context.Background(), "", append(args, "--print")...)
	if code != 0 || !strings.Contains(out, "--print: nothing was changed.") {
		t.Fatalf("--print: %d %s %s", code, out, errs)
	}
	code, out, errs = run(t, context.Background(), "", args...)
	if code != 0 || !strings.Contains(out, "changed 2 file(s). Undo with `memtray setup claude-code --undo --config "+cfg+" --data-dir "+data+"`.") {
		t.Fatalf("setup: %d %s %s", code, out, errs)
	}
	settings, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	for _, want := range []string{`"ANTHROPIC_BASE_URL": "http://127.0.0.1:7555"`, `"command": "/opt/memtray/bin/memtray hook user-prompt-submit --config ` + cfg + ` --data-dir ` + data + `"`, `"timeout": 4`} {
		if !strings.Contains(string(settings), want) {
			t.Fatalf("settings.json lacks %q:\n%s", want, settings)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "setup", "claude-code.json")); err != nil {
		t.Fatalf("no record in --data-dir: %v", err)
	}
	if code, out, errs = run(t, context.Background(), "", "setup", "claude-code", "--undo", "--home", home, "--data-dir", data, "--config", cfg); code != 0 || !strings.Contains(out, "undone: 2 file(s) changed.") {
		t.Fatalf("undo: %d %s %s", code, out, errs)
	}
	for _, f := range []string{".claude.json", ".claude/settings.json"} {
		if _, err := os.Stat(filepath.Join(home, f)); !os.IsNotExist(err) {
			t.Fatalf("undo left %s: %v", f, err)
		}
	}
}

func TestSetupUsage(t *testing.T) {
	isolate(t)
	home, data := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vim"}, `unknown client "vim": want one of claude-code, cursor, codex, windsurf`},
		{nil, "name one client: claude-code, cursor, codex, windsurf"},
		{[]string{"cursor", "codex"}, "name one client"},
	} {
		args := append(append([]string{"setup"}, tc.args...), "--home", home, "--data-dir", data)
		if code, _, errs := run(t, context.Background(), "", args...); code != 2 || !strings.Contains(errs, tc.want) || !strings.Contains(errs, "usage: memtray setup") {
			t.Errorf("%v: %d %s", tc.args, code, errs)
		}
	}
}

// TestSetupCarriesDataDirAndConfig (issue 24, item 1): every command
// setup writes (hooks, MCP servers) names the data dir and config setup
// was given, when they are not what memtray picks by itself, so the hooks
// and the MCP server reach that daemon; the printed undo hint repeats them
// and, run as printed, restores the files.
func TestSetupCarriesDataDirAndConfig(t *testing.T) {
	isolate(t)
	t.Setenv("MEMTRAY_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the default config: none
	odd := filepath.Join(t.TempDir(), "my data 'dir'")
	cfg := filepath.Join(t.TempDir(), "cfg dir", "config.json")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"listen": "127.0.0.1:7555"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		args  []string
		flags []string // what each written command must end with
	}{
		{"defaults", nil, nil},
		{"data dir", []string{"--data-dir", odd}, []string{"--data-dir", odd}},
		{"config and data dir", []string{"--config", cfg, "--data-dir", odd}, []string{"--config", cfg, "--data-dir", odd}},
	} {
		for _, client := range []string{"claude-code", "codex"} {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				home := t.TempDir()
				// An existing config each, so undo restores rather than removes.
				existing := map[string]string{
					".claude.json": `{"theme": "dark"}` + "\n", ".claude/settings.json": `{"model": "opus"}` + "\n",
					".codex/config.toml": "model = \"o3\"\n", ".codex/hooks.json": `{"hooks": {}}` + "\n",
				}
				for rel, content := range existing {
					p := filepath.Join(home, rel)
					if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				args := append([]string{"setup", client, "--home", home, "--binary", "/opt/memtray/bin/memtray"}, tc.args...)
				code, out, errs := run(t, context.Background(), "", args...)
				if code != 0 {
					t.Fatalf("setup: %d %s %s", code, out, errs)
				}
				wantArgs := append([]string{"mcp"}, tc.flags...)
				var hooks []string
				switch client {
				case "claude-code":
					var cj struct {
						MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
					}
					readJSONFile(t, filepath.Join(home, ".claude.json"), &cj)
					if got := cj.MCPServers["memtray"].Args; !reflect.DeepEqual(got, wantArgs) {
						t.Errorf(".claude.json: MCP args %q, want %q", got, wantArgs)
					}
					hooks = hookCommands(t, filepath.Join(home, ".claude", "settings.json"))
				case "codex":
					toml, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
					m := regexp.MustCompile(`(?m)^args = (\[.*\])$`).FindSubmatch(toml)
					var got []string
					if m == nil || json.Unmarshal(m[1], &got) != nil || !reflect.DeepEqual(got, wantArgs) {
						t.Errorf("config.toml: MCP args %q, want %q:\n%s", m, wantArgs, toml)
					}
					hooks = hookCommands(t, filepath.Join(home, ".codex", "hooks.json"))
				}
				if len(hooks) == 0 {
					t.Fatal("no hooks written")
				}
				for _, h := range hooks {
					words := shellWords(t, h)
					if len(words) >= 5 && words[3] == "--agent" {
						words = append(words[:3:3], words[5:]...) // memtray hook stop --agent codex
					}
					if len(words) != 3+len(tc.flags) || words[0] != "/opt/memtray/bin/memtray" || words[1] != "hook" || !reflect.DeepEqual(words[3:], append([]string{}, tc.flags...)) {
						t.Errorf("hook %q: words %q, want memtray hook EVENT %q", h, words, tc.flags)
					}
				}
				hint := regexp.MustCompile("Undo with `([^`]*)`").FindStringSubmatch(out)
				if hint == nil {
					t.Fatalf("no undo hint in:\n%s", out)
				}
				undo := shellWords(t, hint[1])
				if undo[0] != "memtray" {
					t.Fatalf("undo hint %q", hint[1])
				}
				code, out, errs = run(t, context.Background(), "", append(undo[1:], "--home", home)...)
				if code != 0 || !strings.Contains(out, "undone") {
					t.Fatalf("the undo hint %q: %d %s %s", hint[1], code, out, errs)
				}
				for rel, content := range existing {
					if got, _ := os.ReadFile(filepath.Join(home, rel)); string(got) != content {
						t.Errorf("after undo %s = %q, want %q", rel, got, content)
					}
				}
			})
		}
	}
}

func readJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// hookCommands lists every hook command of a Claude Code or Codex hooks
// file.
func hookCommands(t *testing.T, path string) []string {
	t.Helper()
	var f struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	readJSONFile(t, path, &f)
	var out []string
	for _, groups := range f.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				out = append(out, h.Command)
			}
		}
	}
	return out
}

// shellWords splits a POSIX shell command line of plain words,
// single-quoted strings and backslash escapes (what setup writes), as sh
// would.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, inQuote, escaped := false, false, false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case !inQuote && r == '\\':
			escaped, in = true, true
		case inQuote && r == '\'':
			inQuote = false
		case inQuote:
			cur.WriteRune(r)
		case r == '\'':
			inQuote, in = true, true
		case r == ' ':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case r == '"' || r == '$' || r == '`':
			t.Fatalf("%q: unexpected %q outside single quotes", s, r)
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if inQuote {
		t.Fatalf("%q: unterminated quote", s)
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// TestSetupPointsAtRunningDaemon: with the daemon of the data dir serving
// elsewhere than the configured address (`serve --listen`), setup points
// the agent's proxy base URL at where it runs, and says so; it once wrote
// the configured 127.0.0.1:7432, where nothing listened, so the agent
// could not reach its API.
func TestSetupPointsAtRunningDaemon(t *testing.T) {
	dir := isolate(t)
	serveUntilEnd(t, dir)
	rt, err := daemon.ReadRuntime(dir)
	if err != nil || rt.Listen == "" || rt.Listen == config.Default().Listen {
		t.Fatalf("runtime: %+v %v", rt, err)
	}
	home := t.TempDir()
	for _, tc := range []struct {
		client, file, want string
	}{
		{"claude-code", ".claude/settings.json", `"ANTHROPIC_BASE_URL": "http://` + rt.Listen + `"`},
		{"codex", ".codex/config.toml", `openai_base_url = "http://` + rt.Listen + `/openai/v1"`},
	} {
		code, out, errs := run(t, context.Background(), "", "setup", tc.client, "--home", home, "--data-dir", dir, "--binary", "/opt/memtray/bin/memtray")
		if code != 0 {
			t.Fatalf("%s: exit %d %s %s", tc.client, code, out, errs)
		}
		if !strings.Contains(out, "memtray runs on "+rt.Listen+", not on the configured "+config.Default().Listen) {
			t.Errorf("%s: no note of the address:\n%s", tc.client, out)
		}
		data, _ := os.ReadFile(filepath.Join(home, tc.file))
		if !strings.Contains(string(data), tc.want) {
			t.Errorf("%s: %s lacks %s:\n%s", tc.client, tc.file, tc.want, data)
		}
	}
}
