package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/agentsetup"
	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
)

// apiCall sends one request with the token and returns the status and
// body.
func apiCall(t *testing.T, addr, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, "http://"+addr+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

func decode[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	return v
}

// homeFiles is every regular file under home, by path relative to it.
func homeFiles(t *testing.T, home string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(home, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func hexSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestSetupThroughAPI: a real daemon with HOME at a temporary directory
// holding Claude Code's settings: list, preview (nothing written), a stale
// preview refused, apply exactly the preview, status, the undo's preview
// and undo back to the original bytes; wrong input answered 400, a
// malformed config 409, no token 401.
func TestSetupThroughAPI(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	settingsRel := filepath.Join(".claude", "settings.json")
	original := "{\n  \"model\": \"opus\",\n  \"env\": {\n    \"DISABLE_TELEMETRY\": \"1\"\n  }\n}\n"
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(home, settingsRel)
	if err := os.WriteFile(settings, []byte(original), 0o640); err != nil {
		t.Fatal(err)
	}
	// The test binary is not called memtray, and setup knows its hooks by
	// that name: the configs run an installed memtray instead.
	const bin = "/opt/memtray/bin/memtray"
	defaultBinary := setupBinary
	setupBinary = func() (string, []string, error) { return bin, nil, nil }
	t.Cleanup(func() { setupBinary = defaultBinary })
	cfg := testConfig(t)
	d, addr := serve(t, cfg)
	tok := d.Token()
	c := httpapi.NewClient(addr, tok)
	ctx := context.Background()
	start := homeFiles(t, home)

	list, err := c.SetupClients(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]httpapi.SetupClient{}
	for _, cl := range list.Clients {
		byName[cl.Name] = cl
	}
	if len(list.Clients) != 4 || list.Binary != bin || list.Proxy != "http://"+addr || list.Home != home {
		t.Fatalf("list %+v", list)
	}
	if cc := byName["claude-code"]; !cc.Detected || cc.Configured || cc.Label != "Claude Code" || !cc.Hooks || !cc.Proxy ||
		len(cc.Files) != 2 || cc.Files[1] != (httpapi.SetupFileStatus{Path: settings, Exists: true}) {
		t.Fatalf("claude-code %+v", cc)
	}
	if cx := byName["codex"]; cx.Detected || cx.Configured || byName["cursor"].Hooks {
		t.Fatalf("codex %+v, cursor %+v", cx, byName["cursor"])
	}

	// Preview: the exact change, nothing written.
	pv, err := c.SetupPreview(ctx, "claude-code", httpapi.SetupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(start, homeFiles(t, home)) {
		t.Fatal("a preview wrote files")
	}
	if pv.Undo || pv.Changes != 2 || len(pv.Files) != 2 || pv.Files[0].Existed || pv.Files[0].SHA256 != "" ||
		!pv.Files[1].Existed || pv.Files[1].SHA256 != hexSHA([]byte(original)) {
		t.Fatalf("preview %+v", pv)
	}
	diff := pv.Files[1].Diff
	for _, want := range []string{
		"--- " + settings + "\n+++ " + settings + "\n",
		"-    \"DISABLE_TELEMETRY\": \"1\"\n+    \"DISABLE_TELEMETRY\": \"1\",\n+    \"ANTHROPIC_BASE_URL\": \"http://" + addr + "\"\n",
		// The data dir is not the default: the hooks name it.
		"\"command\": \"" + bin + " hook user-prompt-submit --data-dir " + cfg.DataDir + "\"",
	} {
		if !strings.Contains(diff, want) {
			t.Fatalf("the diff lacks %q:\n%s", want, diff)
		}
	}
	if !slices.Contains(pv.Files[1].What, "set env ANTHROPIC_BASE_URL=http://"+addr+" (memtray's proxy)") {
		t.Fatalf("what %q", pv.Files[1].What)
	}

	// The file changes between preview and apply: refused, nothing written.
	edited := strings.Replace(original, "opus", "sonnet", 1)
	os.WriteFile(settings, []byte(edited), 0o640)
	_, err = c.SetupApply(ctx, "claude-code", httpapi.SetupApplyRequest{Files: pv.Hashes()})
	if !errors.Is(err, httpapi.ErrStalePreview) || !strings.Contains(err.Error(), settings+" changed") {
		t.Fatalf("apply of a stale preview: %v", err)
	}
	if got := homeFiles(t, home); len(got) != 1 || got[settingsRel] != edited {
		t.Fatalf("a refused apply wrote files: %v", got)
	}
	os.WriteFile(settings, []byte(original), 0o640)
	// Other options than the preview's: another change, refused too.
	code, body := apiCall(t, addr, tok, "POST", "/api/setup/claude-code/apply", httpapi.SetupApplyRequest{NoHooks: true, Files: pv.Hashes()})
	if eb := decode[httpapi.ErrorBody](t, body); code != http.StatusConflict || eb.Code != "stale_preview" || !strings.Contains(eb.Error, "would now be changed differently") {
		t.Fatalf("apply with other options: %d %s", code, body)
	}

	// Apply exactly the preview.
	res, err := c.SetupApply(ctx, "claude-code", httpapi.SetupApplyRequest{Files: pv.Hashes()})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Changed, []string{pv.Files[0].Path, settings}) || !reflect.DeepEqual(res.Backups, []string{settings + agentsetup.BackupSuffix}) ||
		!res.Status.Configured || res.Status.Updated.IsZero() || res.Status.Files[1].Backup != settings+agentsetup.BackupSuffix {
		t.Fatalf("result %+v", res)
	}
	for _, f := range pv.Files {
		b, err := os.ReadFile(f.Path)
		if err != nil || hexSHA(b) != f.AfterSHA256 {
			t.Fatalf("%s is not what the preview showed (%v):\n%s", f.Path, err, b)
		}
	}
	if b, _ := os.ReadFile(settings + agentsetup.BackupSuffix); string(b) != original {
		t.Fatalf("backup %q", b)
	}
	if info, _ := os.Stat(settings); info.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v", info.Mode())
	}
	// What the window wrote is what `memtray setup` writes: the CLI's
	// engine with the same inputs has nothing left to change.
	flags, err := agentsetup.Flags(d.cfg.DataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	cli := agentsetup.Env{Home: home, Binary: bin, Listen: addr, DataDir: d.cfg.DataDir, HookTimeout: agentsetup.HookTimeout(1500e6), Flags: flags}
	if again, err := cli.Plan("claude-code", agentsetup.Options{}); err != nil || again.Changes() != 0 {
		t.Fatalf("the CLI would change more: %v %+v", err, again)
	}
	list, _ = c.SetupClients(ctx)
	if cc := list.Clients[0]; cc.Name != "claude-code" || !cc.Configured || !cc.Files[0].Exists {
		t.Fatalf("status after apply %+v", cc)
	}
	if pv2, _ := c.SetupPreview(ctx, "claude-code", httpapi.SetupOptions{}); pv2.Changes != 0 || pv2.Files[1].State != "up to date" {
		t.Fatalf("a second preview %+v", pv2)
	}

	// Undo: its preview, a stale one refused, then back to the original bytes.
	up, err := c.SetupUndoPreview(ctx, "claude-code")
	if err != nil {
		t.Fatal(err)
	}
	if !up.Undo || up.Changes != 2 || !up.Files[0].Remove || !strings.Contains(up.Files[0].Diff, "+++ /dev/null") ||
		up.Files[1].State != "unchanged since setup: restore "+settings+agentsetup.BackupSuffix {
		t.Fatalf("undo preview %+v", up)
	}
	afterSetup := homeFiles(t, home)
	os.WriteFile(pv.Files[0].Path, []byte(`{"numStartups": 1}`), 0o600) // Claude Code rewrote it
	if _, err := c.SetupUndo(ctx, "claude-code", httpapi.SetupUndoRequest{Files: up.Hashes()}); !errors.Is(err, httpapi.ErrStalePreview) {
		t.Fatalf("undo of a stale preview: %v", err)
	}
	os.WriteFile(pv.Files[0].Path, []byte(afterSetup[".claude.json"]), 0o600)
	if !reflect.DeepEqual(afterSetup, homeFiles(t, home)) {
		t.Fatal("a refused undo wrote files")
	}
	ures, err := c.SetupUndo(ctx, "claude-code", httpapi.SetupUndoRequest{Files: up.Hashes()})
	if err != nil {
		t.Fatal(err)
	}
	if ures.Status.Configured || len(ures.Changed) != 2 || !strings.HasPrefix(ures.Message, "undone: 2 file(s) changed.") {
		t.Fatalf("undo result %+v", ures)
	}
	if got := homeFiles(t, home); !reflect.DeepEqual(got, start) {
		t.Fatalf("after undo %v, want %v", got, start)
	}
	if info, _ := os.Stat(settings); info.Mode().Perm() != 0o640 {
		t.Fatalf("mode after undo %v", info.Mode())
	}
	code, body = apiCall(t, addr, tok, "POST", "/api/setup/claude-code/undo/preview", nil)
	if eb := decode[httpapi.ErrorBody](t, body); code != http.StatusConflict || eb.Code != "setup_conflict" || !strings.Contains(eb.Error, "nothing to undo") {
		t.Fatalf("undo preview with nothing to undo: %d %s", code, body)
	}

	// Wrong input.
	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		want         string
	}{
		{"POST", "/api/setup/vim/preview", map[string]any{}, 400, `unknown client "vim": want one of claude-code, cursor, codex, windsurf`},
		{"POST", "/api/setup/vim/undo/preview", nil, 400, `unknown client "vim"`},
		{"POST", "/api/setup/vim/apply", httpapi.SetupApplyRequest{Files: pv.Hashes()}, 400, `unknown client "vim"`},
		{"POST", "/api/setup/claude-code/preview", map[string]any{"force": true}, 400, `unknown field "force"`},
		{"POST", "/api/setup/claude-code/apply", map[string]any{}, 400, "send the preview's files"},
		{"POST", "/api/setup/claude-code/apply", httpapi.SetupApplyRequest{Files: []httpapi.SetupFileHash{{Path: "rel", SHA256: "xyz"}}}, 400, "files[0].sha256: must be a hex SHA-256"},
		{"POST", "/api/setup/claude-code/undo", map[string]any{"files": []any{}}, 400, "send the preview's files"},
	} {
		code, body := apiCall(t, addr, tok, tc.method, tc.path, tc.body)
		if eb := decode[httpapi.ErrorBody](t, body); code != tc.status || !strings.Contains(eb.Error, tc.want) {
			t.Errorf("%s %s: %d %s, want %d with %q", tc.method, tc.path, code, body, tc.status, tc.want)
		}
	}
	if _, err := c.SetupPreview(ctx, "vim", httpapi.SetupOptions{}); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("the client's error for a wrong name: %v", err)
	}
	if code, _ := apiCall(t, addr, "", "GET", "/api/setup", nil); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d", code)
	}

	// A config setup cannot change: 409 naming the file and line.
	toml := filepath.Join(home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(toml), 0o700)
	os.WriteFile(toml, []byte("model = \"o3\"\n# >>> memtray >>>\n"), 0o600)
	code, body = apiCall(t, addr, tok, "POST", "/api/setup/codex/preview", httpapi.SetupOptions{NoHooks: true})
	if eb := decode[httpapi.ErrorBody](t, body); code != http.StatusConflict || eb.Code != "setup_conflict" || !strings.Contains(eb.Error, toml+":2:") {
		t.Fatalf("malformed config.toml: %d %s", code, body)
	}
}
