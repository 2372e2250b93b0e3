package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code != 0 || !strings.Contains(out, "changed 2 file(s). Undo with `memtray setup claude-code --undo`.") {
		t.Fatalf("setup: %d %s %s", code, out, errs)
	}
	settings, _ := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	for _, want := range []string{`"ANTHROPIC_BASE_URL": "http://127.0.0.1:7555"`, `"command": "/opt/memtray/bin/memtray hook user-prompt-submit"`, `"timeout": 4`} {
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
