package agentsetup

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const codexFixtures = "testdata/codex-0.171"

// The home the fixtures were recorded in (README.md there).
const (
	fixtureHome       = "/tmp/memtray-codex-fixture"
	fixtureReviewHome = "/tmp/cxh2"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(codexFixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCodexHookHashMatchesCodex: the trust keys and hashes setup computes
// are the ones real Codex 0.171 computed for the same hooks.json (its
// hooks/list answer), quoting, spaces and <&>ü included; and the ones its
// own review wrote for plain commands.
func TestCodexHookHashMatchesCodex(t *testing.T) {
	var list struct {
		Data []struct {
			Hooks []struct {
				Key, EventName, Command, CurrentHash, TrustStatus, SourcePath string
				TimeoutSec                                                    int
			}
		}
	}
	if err := json.Unmarshal(readFixture(t, "hooks-list.json"), &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Data) != 1 || len(list.Data[0].Hooks) != 3 {
		t.Fatalf("fixture: %+v", list)
	}
	for _, h := range list.Data[0].Hooks {
		agentEvent := strings.ToUpper(h.EventName[:1]) + h.EventName[1:]
		if got := codexTrustKey(h.SourcePath, agentEvent, 0, 0); got != h.Key {
			t.Errorf("key %q, Codex's %q", got, h.Key)
		}
		if got := codexHookHash(agentEvent, h.Command, h.TimeoutSec); got != h.CurrentHash {
			t.Errorf("%s %q: hash %s, Codex's %s", agentEvent, h.Command, got, h.CurrentHash)
		}
		if h.TrustStatus != "trusted" {
			t.Errorf("Codex does not trust %s (%s) as setup wrote it", h.Key, h.TrustStatus)
		}
	}
	// Codex's own review of `/opt/memtray/bin/memtray hook EVENT`
	// (timeout 3).
	review := string(readFixture(t, "config-codex-review.toml"))
	for _, s := range codexHooks[:3] { // the hooks of the recording (Stop came later)
		key := codexTrustKey(fixtureReviewHome+"/.codex/hooks.json", s.agentEvent, 0, 0)
		entry := "[hooks.state." + tomlQuote(key) + "]\ntrusted_hash = " + tomlQuote(codexHookHash(s.agentEvent, testBinary+" hook "+s.event, 3)) + "\n"
		if !strings.Contains(review, entry) {
			t.Errorf("Codex's review wrote no %q:\n%s", entry, review)
		}
	}
}

// TestCodexTrustState: memtray's hooks in the recorded files are trusted;
// without the entries, or with a hook changed since, they need review.
func TestCodexTrustState(t *testing.T) {
	hooksPath := fixtureHome + "/.codex/hooks.json"
	hooks, cfg := readFixture(t, "hooks.json"), string(readFixture(t, "config.toml"))
	untrusted := strings.Join(slices.DeleteFunc(strings.Split(cfg, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "[hooks.state.") || strings.HasPrefix(l, "trusted_hash")
	}), "\n")
	all := []string{"PreCompact", "SessionStart", "UserPromptSubmit"}
	for _, tc := range []struct {
		name        string
		hooks, conf string
		want        []string
	}{
		{"as setup wrote them", string(hooks), cfg, nil},
		{"no trust entries", string(hooks), untrusted, all},
		{"no config", string(hooks), "", all},
		{"a timeout changed", strings.Replace(string(hooks), `"timeout": 3`, `"timeout": 9`, 1), cfg, []string{"UserPromptSubmit"}},
		{"no memtray hooks", `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}`, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := codexTrustState(hooksPath, []byte(tc.hooks), []byte(tc.conf), nil)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("need review %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// fixtureIn is a recorded file with the home it was recorded in replaced
// by home.
func fixtureIn(t *testing.T, name, recorded, home string) string {
	t.Helper()
	return strings.ReplaceAll(string(readFixture(t, name)), recorded, home)
}

// TestSetupCodexTrust (issue 24, item 4): Codex 0.171 runs a hook only
// once trusted, so setup records the trust of memtray's hooks in
// config.toml as Codex's review would, shown in the plan; status says
// whether they need review; undo takes the entries out.
func TestSetupCodexTrust(t *testing.T) {
	e := testEnv(t)
	cfgPath := filepath.Join(e.Home, ".codex", "config.toml")
	writeFiles(t, e.Home, map[string]string{".codex/config.toml": "model = \"o3\"\n"}, 0o600)
	st, err := e.Status("codex")
	if err != nil || len(st.NeedReview) != 0 {
		t.Fatalf("status before setup: %+v %v", st, err)
	}
	p, err := e.Plan("codex", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Files[0].What, func(w string) bool {
		return strings.HasPrefix(w, "trust memtray's hooks in Codex (UserPromptSubmit, SessionStart, PreCompact, Stop)")
	}) {
		t.Fatalf("the plan does not show the trust: %q", p.Files[0].What)
	}
	for _, n := range p.Notes {
		if strings.Contains(n, "[features] hooks = true") && !strings.Contains(n, "experimental") {
			t.Errorf("stale note: %s", n)
		}
	}
	if _, err := p.Apply(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(cfgPath)
	hooksPath := filepath.Join(e.Home, ".codex", "hooks.json")
	for _, s := range codexHooks {
		entry := "[hooks.state." + tomlQuote(codexTrustKey(hooksPath, s.agentEvent, 0, 0)) + "]\ntrusted_hash = " +
			tomlQuote(codexHookHash(s.agentEvent, s.command(testBinary, nil), 3)) + "\n"
		if !strings.Contains(string(data), entry) {
			t.Fatalf("config.toml lacks %q:\n%s", entry, data)
		}
	}
	if st, _ := e.Status("codex"); len(st.NeedReview) != 0 || st.ReviewHint != "" {
		t.Fatalf("status after setup: need review %q", st.NeedReview)
	}

	// The user edits memtray's SessionStart hook: Codex would ask again,
	// and status says so, with the step.
	hooksJSON, _ := os.ReadFile(hooksPath)
	edited := strings.Replace(string(hooksJSON), "hook session-start", "hook session-start --config /etc/memtray.json", 1)
	if err := os.WriteFile(hooksPath, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.Status("codex"); !slices.Equal(st.NeedReview, []string{"SessionStart"}) || !strings.Contains(st.ReviewHint, "Trust all and continue") {
		t.Fatalf("status after an edit: %q %q", st.NeedReview, st.ReviewHint)
	}
	if err := os.WriteFile(hooksPath, hooksJSON, 0o600); err != nil {
		t.Fatal(err)
	}

	// Undo takes the entries out with the rest.
	up, err := e.PlanUndo("codex", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Apply(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(cfgPath); string(data) != "model = \"o3\"\n" {
		t.Fatalf("after undo:\n%s", data)
	}
}

// TestSetupCodexOverCodexReview: over a config.toml where Codex's own
// review wrote trust entries for memtray's hooks inside memtray's block
// (recorded), and added a table of its own there, setup keeps one entry
// per hook (a second table of the same name would break config.toml) and
// moves Codex's table out of the block; undo of the file changed since
// keeps that table too.
func TestSetupCodexOverCodexReview(t *testing.T) {
	e := testEnv(t)
	cfg := fixtureIn(t, "config-codex-review.toml", fixtureReviewHome, e.Home)
	cfg = strings.Replace(cfg, codexBlockEnd, "\n[mcp_servers.context7]\ncommand = \"npx\"\n"+codexBlockEnd, 1)
	writeFiles(t, e.Home, map[string]string{
		".codex/config.toml": cfg,
		".codex/hooks.json":  fixtureIn(t, "hooks-codex-review.json", fixtureReviewHome, e.Home),
	}, 0o600)
	if _, err := e.Plan("codex", Options{}); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runSetupCmd(t, e.DataDir, e.Home, "codex"); code != 0 {
		t.Fatalf("setup: %s %s", out, errs)
	}
	data, _ := os.ReadFile(filepath.Join(e.Home, ".codex", "config.toml"))
	s := string(data)
	for _, sp := range codexHooks {
		header := "[hooks.state." + tomlQuote(codexTrustKey(filepath.Join(e.Home, ".codex", "hooks.json"), sp.agentEvent, 0, 0)) + "]"
		if n := strings.Count(s, header); n != 1 {
			t.Fatalf("%d × %s:\n%s", n, header, s)
		}
	}
	end := strings.Index(s, codexBlockEnd)
	if i := strings.Index(s, "[mcp_servers.context7]"); i < end || !strings.Contains(s[end:], "command = \"npx\"") {
		t.Fatalf("Codex's table is not kept after memtray's block:\n%s", s)
	}
	if st, _ := e.Status("codex"); len(st.NeedReview) != 0 {
		t.Fatalf("need review %q", st.NeedReview)
	}
	// Codex rewrites the file (a new table inside the block again), then
	// undo: only memtray's entries go.
	s = strings.Replace(s, codexBlockEnd, "\n[projects.\"/src/api\"]\ntrust_level = \"trusted\"\n"+codexBlockEnd, 1)
	writeFiles(t, e.Home, map[string]string{".codex/config.toml": s}, 0o600)
	if code, out, errs := runSetupCmd(t, e.DataDir, e.Home, "codex", "--undo"); code != 0 {
		t.Fatalf("undo: %s %s", out, errs)
	}
	data, _ = os.ReadFile(filepath.Join(e.Home, ".codex", "config.toml"))
	for _, want := range []string{"[mcp_servers.context7]", "[projects.\"/src/api\"]\ntrust_level = \"trusted\""} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("undo lost %q:\n%s", want, data)
		}
	}
	for _, gone := range []string{"hooks.state", "memtray"} {
		if strings.Contains(string(data), gone) {
			t.Fatalf("undo left %q:\n%s", gone, data)
		}
	}
}

// TestSetupCodexTrustBlocked: where setup cannot add trust entries safely,
// it adds none and says how to trust the hooks in Codex.
func TestSetupCodexTrustBlocked(t *testing.T) {
	for _, tc := range []struct {
		name, config, note string
		trusted            bool
	}{
		{"hooks as an inline table", "hooks = { state = {} }\n", "defines hooks or hooks.state as a value", false},
		{"hooks.state as a value", "[hooks]\nstate = {}\n", "defines hooks or hooks.state as a value", false},
		{"another trust entry outside the block", "[hooks.state.\"HOOKS:user_prompt_submit:0:0\"]\ntrusted_hash = \"sha256:00\"\n", "for another command", false},
		{"Codex's own trust outside the block", "[hooks.state.\"HOOKS:user_prompt_submit:0:0\"]\ntrusted_hash = \"HASH\"\n", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv(t)
			hooksPath := filepath.Join(e.Home, ".codex", "hooks.json")
			cfg := strings.ReplaceAll(tc.config, "HOOKS", hooksPath)
			cfg = strings.ReplaceAll(cfg, "HASH", codexHookHash("UserPromptSubmit", testBinary+" hook user-prompt-submit", 3))
			writeFiles(t, e.Home, map[string]string{".codex/config.toml": cfg}, 0o600)
			p, err := e.Plan("codex", Options{})
			if err != nil {
				t.Fatal(err)
			}
			noted := slices.ContainsFunc(p.Notes, func(n string) bool {
				return tc.note != "" && strings.Contains(n, tc.note) && strings.Contains(n, "Trust all and continue")
			})
			if tc.note != "" && !noted {
				t.Fatalf("no note %q: %q", tc.note, p.Notes)
			}
			if _, err := p.Apply(); err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(filepath.Join(e.Home, ".codex", "config.toml"))
			if n := strings.Count(string(data), "user_prompt_submit:0:0"); n > 1 {
				t.Fatalf("a second trust entry for the same hook:\n%s", data)
			}
			st, _ := e.Status("codex")
			if got := !slices.Contains(st.NeedReview, "UserPromptSubmit"); got != tc.trusted {
				t.Fatalf("UserPromptSubmit trusted %v, want %v (%q)", got, tc.trusted, st.NeedReview)
			}
		})
	}
}

// FuzzCodexTOMLBlock: setup and undo never fail on (or panic over) a
// config.toml with memtray's block in it, and what setup writes, set up
// again, is up to date.
func FuzzCodexTOMLBlock(f *testing.F) {
	f.Add("model = \"o3\"\n")
	f.Add(codexBlockBegin + "\n[mcp_servers.memtray]\ncommand = \"x\"\n\n[hooks.state.\"k\"]\ntrusted_hash = \"h\"\nenabled = false\n\n[projects.'/a']\ntrust_level = \"trusted\"\n" + codexBlockEnd + "\n")
	f.Add("[hooks]\nstate = 1\n" + codexBlockBegin + "\n" + codexBlockEnd + "\n")
	f.Fuzz(func(t *testing.T, cfg string) {
		for _, l := range splitLines([]byte(cfg)) {
			if tomlMemtrayKey.MatchString(l) || tomlMemtrayTable.MatchString(l) {
				return // an error by design when outside the block
			}
		}
		home := t.TempDir()
		o := setupOptions{home: home, binary: testBinary, listen: "127.0.0.1:7432", hookTimeout: 3}
		if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		plan, err := planCodex(o)
		if err != nil {
			return // a malformed block: reported, nothing written
		}
		after := plan.files[0].after
		if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), after, 0o600); err != nil {
			t.Fatal(err)
		}
		hooks := plan.files[1].after
		if err := os.WriteFile(filepath.Join(home, ".codex", "hooks.json"), hooks, 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := planCodex(o)
		if err != nil {
			t.Fatalf("setup's own output is refused: %v\n%s", err, after)
		}
		if again.files[0].changed() {
			t.Fatalf("not up to date after setup:\n%s\nthen:\n%s", after, again.files[0].after)
		}
		fc, err := readConfigFile(filepath.Join(home, ".codex", "config.toml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stripCodexTOML(fc, false, plan.files[0].trust); err != nil {
			t.Fatalf("undo: %v", err)
		}
	})
}

// TestSetupCodexNoHooksKeepsTrust: setting up again with --no-hooks
// leaves the hooks and keeps their trust entries in memtray's block (where
// undo finds them), not outside it.
func TestSetupCodexNoHooksKeepsTrust(t *testing.T) {
	e := testEnv(t)
	for _, args := range [][]string{{"codex"}, {"codex", "--no-hooks"}} {
		if code, out, errs := runSetupCmd(t, e.DataDir, e.Home, args...); code != 0 {
			t.Fatalf("%q: %s %s", args, out, errs)
		}
	}
	data, _ := os.ReadFile(filepath.Join(e.Home, ".codex", "config.toml"))
	s := string(data)
	if n := strings.Count(s, "[hooks.state."); n != len(codexHooks) || strings.LastIndex(s, "[hooks.state.") > strings.Index(s, codexBlockEnd) {
		t.Fatalf("trust entries not kept in the block:\n%s", s)
	}
	if st, _ := e.Status("codex"); len(st.NeedReview) != 0 {
		t.Fatalf("need review %q", st.NeedReview)
	}
	if code, out, errs := runSetupCmd(t, e.DataDir, e.Home, "codex", "--undo"); code != 0 {
		t.Fatalf("undo: %s %s", out, errs)
	}
	if _, err := os.Stat(filepath.Join(e.Home, ".codex", "config.toml")); !os.IsNotExist(err) {
		t.Fatalf("undo left config.toml: %v", err)
	}
}

// TestCodexHooksNoteNamesEveryHook: the note on Codex's hooks names
// every hook setup installs, the Stop hook that captures too.
func TestCodexHooksNoteNamesEveryHook(t *testing.T) {
	e := testEnv(t)
	p, err := e.Plan("codex", Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Notes, func(n string) bool { return strings.HasPrefix(n, "hooks: ") })
	if i < 0 {
		t.Fatalf("no note on the hooks: %q", p.Notes)
	}
	for _, s := range codexHooks {
		if !strings.Contains(p.Notes[i], s.agentEvent) {
			t.Errorf("the note on the hooks does not name %s: %s", s.agentEvent, p.Notes[i])
		}
	}
}

// TestCodexStopHook: Codex's Stop hook hands the daemon the rollout as a
// Codex session file (--agent codex, before memtray's flags), and is
// recognised as memtray's own.
func TestCodexStopHook(t *testing.T) {
	var stop *hookSpec
	for i, s := range codexHooks {
		if s.agentEvent == "Stop" {
			stop = &codexHooks[i]
		}
	}
	if stop == nil {
		t.Fatal("Codex gets no Stop hook")
	}
	cmd := stop.command("/opt/My Tools/memtray", []string{"--data-dir", "/tmp/d"})
	if want := "'/opt/My Tools/memtray' hook stop --agent codex --data-dir /tmp/d"; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
	if !isOwnHook(cmd, "stop") {
		t.Errorf("%q is not recognised as memtray's", cmd)
	}
	for _, s := range claudeHooks {
		if len(s.args) != 0 {
			t.Errorf("Claude Code's %s hook has arguments %q", s.agentEvent, s.args)
		}
	}
}
