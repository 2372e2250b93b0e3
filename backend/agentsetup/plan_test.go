package agentsetup

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/config"
)

func testEnv(t *testing.T) Env {
	t.Helper()
	return Env{Home: t.TempDir(), Binary: testBinary, Listen: "127.0.0.1:7432", DataDir: t.TempDir(),
		HookTimeout: HookTimeout(1500 * time.Millisecond)}
}

// TestPlanApplyStatus: the API the window uses, step by step: status,
// plan (files, diffs, hashes), apply, status, the undo's plan, apply,
// status; a plan writes nothing.
func TestPlanApplyStatus(t *testing.T) {
	e := testEnv(t)
	st, err := e.Status("claude-code")
	if err != nil || st.Detected || st.Configured || st.Label != "Claude Code" || !st.Hooks || !st.Proxy || len(st.Files) != 2 {
		t.Fatalf("status of nothing: %+v %v", st, err)
	}
	writeFiles(t, e.Home, map[string]string{".claude/settings.json": `{"model": "opus"}` + "\n"}, 0o600)
	if st, _ = e.Status("claude-code"); !st.Detected || st.Configured || st.Files[0].Exists || !st.Files[1].Exists {
		t.Fatalf("status with ~/.claude: %+v", st)
	}
	before := snapshot(t, e.Home)

	p, err := e.Plan("claude-code", Options{NoHooks: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, snapshot(t, e.Home)) {
		t.Fatal("a plan wrote files")
	}
	if p.Undo || p.Changes() != 2 || len(p.Files) != 2 || len(p.Notes) != 1 {
		t.Fatalf("plan %+v", p)
	}
	claudeJSON, settings := p.Files[0], p.Files[1]
	if claudeJSON.Existed || claudeJSON.SHA256 != "" || claudeJSON.AfterSHA256 == "" || claudeJSON.State != "to change" ||
		!strings.HasPrefix(claudeJSON.Diff, "--- /dev/null\n+++ "+filepath.Join(e.Home, ".claude.json")+"\n") {
		t.Fatalf(".claude.json: %+v", claudeJSON)
	}
	if !settings.Existed || settings.SHA256 != sha([]byte(`{"model": "opus"}`+"\n")) ||
		!reflect.DeepEqual(settings.What, []string{"set env ANTHROPIC_BASE_URL=http://127.0.0.1:7432 (memtray's proxy)"}) ||
		!strings.Contains(settings.Diff, "+  \"env\": {\n+    \"ANTHROPIC_BASE_URL\": \"http://127.0.0.1:7432\"\n+  }\n") {
		t.Fatalf("settings.json: %+v", settings)
	}
	if err := p.Verify(p.Hashes()); err != nil {
		t.Fatalf("Verify of its own hashes: %v", err)
	}
	res, err := p.Apply()
	if err != nil {
		t.Fatal(err)
	}
	settingsPath := filepath.Join(e.Home, ".claude", "settings.json")
	if !reflect.DeepEqual(res.Changed, []string{claudeJSON.Path, settingsPath}) ||
		!reflect.DeepEqual(res.Backups, []string{settingsPath + BackupSuffix}) || !strings.HasPrefix(res.Message, "changed 2 file(s).") {
		t.Fatalf("result %+v", res)
	}
	if b, _ := os.ReadFile(settingsPath); sha(b) != settings.AfterSHA256 {
		t.Fatalf("wrote something else than the plan's:\n%s", b)
	}
	st, _ = e.Status("claude-code")
	if !st.Configured || st.Updated.IsZero() || !st.Files[0].Exists || st.Files[0].Backup != "" || st.Files[1].Backup != settingsPath+BackupSuffix {
		t.Fatalf("status after setup: %+v", st)
	}
	if again, _ := e.Plan("claude-code", Options{NoHooks: true}); again.Changes() != 0 || again.Files[0].State != "up to date" || again.Files[0].Diff != "" {
		t.Fatalf("a second plan: %+v", again)
	}

	up, err := e.PlanUndo("claude-code", false)
	if err != nil || !up.Undo || up.Changes() != 2 || !up.Files[0].Remove || up.Files[0].AfterSHA256 != "" ||
		up.Files[1].State != "unchanged since setup: restore "+settingsPath+BackupSuffix {
		t.Fatalf("undo plan %+v %v", up, err)
	}
	if _, err := up.Apply(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, snapshot(t, e.Home)) {
		t.Fatal("undo did not restore the files")
	}
	if st, _ = e.Status("claude-code"); st.Configured {
		t.Fatalf("status after undo: %+v", st)
	}
	if _, err := e.PlanUndo("claude-code", false); !errors.Is(err, ErrNothingToUndo) {
		t.Fatalf("a second undo: %v", err)
	}
}

func TestVerify(t *testing.T) {
	e := testEnv(t)
	writeFiles(t, e.Home, map[string]string{".cursor/mcp.json": `{"mcpServers": {}}`}, 0o600)
	p, err := e.Plan("cursor", Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := p.Hashes()
	path := filepath.Join(e.Home, ".cursor", "mcp.json")
	stale := func(t *testing.T, seen []FileHash, want string) {
		t.Helper()
		now, err := e.Plan("cursor", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := now.Verify(seen); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), want) {
			t.Fatalf("Verify: %v, want ErrStale naming %q", err, want)
		}
	}
	t.Run("the file changed", func(t *testing.T) {
		os.WriteFile(path, []byte(`{"mcpServers": {"x": {"command": "y"}}}`), 0o600)
		defer os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o600)
		stale(t, seen, path+" changed")
	})
	t.Run("the change differs", func(t *testing.T) {
		other := append([]FileHash(nil), seen...)
		other[0].AfterSHA256 = strings.Repeat("0", 64)
		stale(t, other, path+" would now be changed differently")
	})
	t.Run("another file set", func(t *testing.T) {
		stale(t, nil, path+" was not in the preview")
		stale(t, append(append([]FileHash(nil), seen...), FileHash{Path: "/etc/passwd"}), "/etc/passwd is no longer part of the change")
	})
	if err := p.Verify(seen); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
}

func TestEnvChecks(t *testing.T) {
	good := testEnv(t)
	for name, change := range map[string]func(*Env){
		"relative home":   func(e *Env) { e.Home = "home" },
		"no data dir":     func(e *Env) { e.DataDir = "" },
		"no listen":       func(e *Env) { e.Listen = "" },
		"relative binary": func(e *Env) { e.Binary = "memtray" },
		"no hook timeout": func(e *Env) { e.HookTimeout = 0 },
	} {
		e := good
		change(&e)
		if _, err := e.Plan("cursor", Options{}); err == nil {
			t.Errorf("%s: planned", name)
		}
	}
	if _, err := good.Plan("vim", Options{}); !errors.Is(err, ErrUnknownClient) || !strings.Contains(err.Error(), `"vim": want one of claude-code, cursor, codex, windsurf`) {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := good.Status("vim"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("status of an unknown client: %v", err)
	}
	if _, err := good.PlanUndo("vim", false); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("undo of an unknown client: %v", err)
	}
}

// TestRenamedBinaryHooksNotDuplicated: a memtray whose file is not named
// memtray* (renamed, wrapped) writes its hooks once: a second setup finds
// its own entries (the same command) instead of adding them again, and
// the undo removes them.
func TestRenamedBinaryHooksNotDuplicated(t *testing.T) {
	e := testEnv(t)
	e.Binary = filepath.Join(t.TempDir(), "mt-agent-memory")
	writeFiles(t, e.Home, map[string]string{".claude/settings.json": "{}\n"}, 0o600)
	for i := range 2 {
		p, err := e.Plan("claude-code", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Apply(); err != nil {
			t.Fatal(err)
		}
		if i == 1 && p.Changes() != 0 {
			t.Errorf("second setup changes %d files: %+v", p.Changes(), p.Files)
		}
	}
	b, err := os.ReadFile(filepath.Join(e.Home, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "mt-agent-memory"); n == 0 || n != strings.Count(string(b), " hook ") {
		t.Fatalf("hooks after two setups (%d mentions):\n%s", n, b)
	}
	if c := strings.Count(string(b), "hook user-prompt-submit"); c != 1 {
		t.Fatalf("%d user-prompt-submit hooks after two setups:\n%s", c, b)
	}
}

// TestRenamedBinaryUndoOfEditedFile: the undo of a settings file edited
// since setup removes a renamed binary's hooks (found by the commands the
// record holds, or, for an older record without them, by the undoing
// binary's own commands) and keeps the user's edit.
func TestRenamedBinaryUndoOfEditedFile(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dropRecord bool   // the record has no hook commands (an older version's)
		undoAs     string // the binary the undo runs as ("" for none)
	}{
		{"recorded commands", false, ""},
		{"older record, same binary", true, "same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv(t)
			e.Binary = filepath.Join(t.TempDir(), "mt-agent-memory")
			settings := filepath.Join(e.Home, ".claude", "settings.json")
			writeFiles(t, e.Home, map[string]string{".claude/settings.json": "{}\n"}, 0o600)
			p, err := e.Plan("claude-code", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Apply(); err != nil {
				t.Fatal(err)
			}
			if tc.dropRecord {
				rp := e.RecordPath("claude-code")
				b, err := os.ReadFile(rp)
				if err != nil {
					t.Fatal(err)
				}
				var rec setupRecord
				if err := json.Unmarshal(b, &rec); err != nil {
					t.Fatal(err)
				}
				for i := range rec.Files {
					if len(rec.Files[i].Hooks) == 0 && strings.HasSuffix(rec.Files[i].Path, "settings.json") {
						t.Fatalf("setup recorded no hook commands: %+v", rec.Files[i])
					}
					rec.Files[i].Hooks = nil
				}
				if err := saveSetupRecord(rp, rec); err != nil {
					t.Fatal(err)
				}
			}
			b, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			edited := strings.Replace(string(b), "{", `{"theme": "dark",`, 1)
			if err := os.WriteFile(settings, []byte(edited), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.undoAs == "" {
				e.Binary = ""
			}
			up, err := e.PlanUndo("claude-code", false)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := up.Apply(); err != nil {
				t.Fatal(err)
			}
			after, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(after), "mt-agent-memory") || !strings.Contains(string(after), `"theme"`) {
				t.Errorf("after undo:\n%s", after)
			}
		})
	}
}

// TestFlags: memtray's flags go into what setup writes exactly when they
// name something memtray would not pick by itself.
func TestFlags(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	def := config.DefaultDataDir()
	other := filepath.Join(t.TempDir(), "data")
	withDataDir := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(withDataDir, []byte(`{"data_dir": "`+other+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(t.TempDir(), "plain.json") // need not exist
	for _, tc := range []struct {
		name, dataDir, config string
		want                  []string
	}{
		{"defaults", def, "", nil},
		{"the default config named", def, config.DefaultPath(), nil},
		{"another data dir", other, "", []string{"--data-dir", other}},
		{"another config", def, plain, []string{"--config", plain}},
		{"another config, its data dir", other, withDataDir, []string{"--config", withDataDir}},
		{"another config, another data dir", def, withDataDir, []string{"--config", withDataDir, "--data-dir", def}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Flags(tc.dataDir, tc.config)
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Flags = %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	for _, bad := range [][]string{{"--data-dir"}, {"--listen", "/x"}, {"--data-dir", "rel"}, {"--config", "/a\nb"}} {
		if err := checkFlags(bad); err == nil {
			t.Errorf("checkFlags(%q) passed", bad)
		}
	}
}

// TestOwnHookWithFlags: a hook command with memtray's flags after the
// event is memtray's (setup updates it, undo and status find it); a
// command that only mentions the event is not.
func TestOwnHookWithFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		own  []string
		want bool
	}{
		{"/opt/memtray/bin/memtray hook session-start", nil, true},
		{"/opt/memtray/bin/memtray hook session-start --data-dir /d", nil, true},
		{"'/opt/My Tools/memtray' hook session-start --config '/c d/x.json' --data-dir '/d'\\''x'", nil, true},
		{`"C:\Program Files\memtray\memtray.exe" hook session-start --data-dir "D:\m"`, nil, true},
		{"/usr/bin/mt hook session-start --data-dir /d", []string{"/usr/bin/mt hook session-start --data-dir /d"}, true},
		{"/usr/bin/mt hook session-start --data-dir /d", nil, false},
		{"/opt/memtray/bin/memtray hook session-start-x", nil, false},
		{"/opt/memtray/bin/memtray hook session-start; rm -rf /", nil, false},
		{"/opt/memtray/bin/memtray hook session-starts --data-dir /d", nil, false},
		{"~/bin/log.sh hook session-start", nil, false},
	} {
		if got := isOwnHook(tc.cmd, "session-start", tc.own...); got != tc.want {
			t.Errorf("isOwnHook(%q) = %v, want %v", tc.cmd, got, tc.want)
		}
	}
}

// TestSetupWithFlagsUpdatesInPlace: setting up again with other flags
// updates memtray's hooks and MCP server in place (no second hook), the
// undo hint names the flags, and undo by the hint's data dir finds it.
func TestSetupWithFlagsUpdatesInPlace(t *testing.T) {
	e := testEnv(t)
	for _, flags := range [][]string{nil, {"--data-dir", "/srv/memtray data"}} {
		e.Flags = flags
		p, err := e.Plan("claude-code", Options{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := p.Apply()
		if err != nil {
			t.Fatal(err)
		}
		if want := "Undo with `" + UndoCommand("claude-code", flags) + "`"; !strings.Contains(res.Message, want) {
			t.Fatalf("%q lacks %q", res.Message, want)
		}
	}
	if !strings.Contains(UndoCommand("claude-code", e.Flags), "--data-dir '/srv/memtray data'") {
		t.Fatalf("hint %q", UndoCommand("claude-code", e.Flags))
	}
	root := readJSON(t, filepath.Join(e.Home, ".claude", "settings.json"))
	groups, _ := dig(root, "hooks", "SessionStart").([]any)
	if len(groups) != 1 || dig(groups[0], "hooks").([]any)[0].(map[string]any)["command"] != testBinary+" hook session-start --data-dir '/srv/memtray data'" {
		t.Fatalf("SessionStart %v", groups)
	}
	if args := dig(readJSON(t, filepath.Join(e.Home, ".claude.json")), "mcpServers", "memtray", "args"); !reflect.DeepEqual(args, []any{"mcp", "--data-dir", "/srv/memtray data"}) {
		t.Fatalf("MCP args %v", args)
	}
	up, err := e.PlanUndo("claude-code", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Apply(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.Home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("undo left settings.json: %v", err)
	}
}
