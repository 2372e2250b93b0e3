package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/team"
	"github.com/memtray/memtray/backend/team/pgtest"
)

// TestScopeCommand: memtray scope moves a memory between scopes and
// refuses anything else.
func TestScopeCommand(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	code, out, errs := run(t, ctx, "", "add", dd, "--json", "--project", "shop", "The shop's invoices are numbered per calendar year.")
	var m memory.Memory
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		say  string
		want memory.Scope
	}{
		{[]string{"scope", dd, m.ID, "team"}, 0, "team: shared", memory.ScopeTeam},
		{[]string{"scope", dd, m.ID, "personal"}, 0, "personal: stays", memory.ScopePersonal},
		{[]string{"scope", dd, m.ID, "world"}, 2, "", memory.ScopePersonal},
		{[]string{"scope", dd, m.ID}, 2, "", memory.ScopePersonal},
		{[]string{"scope", dd, "nope", "team"}, 1, "", memory.ScopePersonal},
	} {
		code, out, errs := run(t, ctx, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.say) {
			t.Errorf("%v: exit %d (want %d), out %q, err %q", tc.args[2:], code, tc.code, out, errs)
		}
		_, out, _ = run(t, ctx, "", "get", dd, "--json", m.ID)
		var got memory.Memory
		if json.Unmarshal([]byte(out), &got) != nil || got.Scope != tc.want {
			t.Errorf("%v: scope %q, want %q", tc.args[2:], got.Scope, tc.want)
		}
	}
}

// TestTeamCommandsOff: with team memory off, status says so and push
// and pull explain what to set.
func TestTeamCommandsOff(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	code, out, errs := run(t, ctx, "", "team", "status", dd, "--json")
	var st httpapi.TeamStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Enabled || st.Connected {
		t.Fatalf("team status: %d %q %q", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"team", "push", dd}, 1, "team memory is off"},
		{[]string{"team", "pull", dd}, 1, "team memory is off"},
		{[]string{"team", "status", dd}, 0, ""},
		{[]string{"team"}, 2, "want init"},
		{[]string{"team", "sync", dd}, 2, "unknown team command"},
		{[]string{"team", "status", dd, "extra"}, 2, "no arguments"},
		{[]string{"team", "init", dd}, 1, "MEMTRAY_TEAM_URL"},
	} {
		code, out, errs := run(t, ctx, "", tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.say) {
			t.Errorf("%v: exit %d (want %d), out %q, err %q", tc.args, code, tc.code, out, errs)
		}
	}
}

// TestTeamCommands: init connects and migrates, push sends a team memory
// (and not a personal one), status reports it, on a real PostgreSQL; the
// connection string comes from a 0600 file and a looser one is refused.
func TestTeamCommands(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	srv := pgtest.Start(t)
	db := srv.NewDB(t, "clowner")
	urlFile := filepath.Join(t.TempDir(), "team-url")
	if err := os.WriteFile(urlFile, []byte(srv.ConnString("clowner", db)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	cfg := `{"data_dir":` + jsonString(dir) + `,"team":{"share":true,"url_env":"MEMTRAY_TEST_NO_SUCH_VAR","url_file":` + jsonString(urlFile) + `,"projects":["shop"]}}`
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMTRAY_CONFIG", cfgFile)
	if code, out, errs := run(t, ctx, "", "team", "init"); code != 1 || !strings.Contains(errs, "chmod 600") {
		t.Fatalf("init with a 0644 file: %d %q %q", code, out, errs)
	}
	if err := os.Chmod(urlFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(t, ctx, "", "team", "init"); code != 0 || !strings.Contains(out, "connected as clowner") {
		t.Fatalf("init: %d %q %q", code, out, errs)
	}
	const shared, personal = "The shop ships orders from the Lyon warehouse on weekdays.", "I read diffs in split view."
	run(t, ctx, "", "add", "--project", "shop", shared)
	run(t, ctx, "", "add", "--project", "shop", "--type", "user", personal)
	code, out, errs := run(t, ctx, "", "team", "push", "--json")
	var pr httpapi.TeamPushReport
	if code != 0 || json.Unmarshal([]byte(out), &pr) != nil || pr.Pushed != 1 {
		t.Fatalf("push: %d %q %q", code, out, errs)
	}
	code, out, errs = run(t, ctx, "", "team", "status", "--json")
	var st httpapi.TeamStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || !st.Enabled || st.Outbox != 0 {
		t.Fatalf("status: %d %q %q", code, out, errs)
	}
	if code, out, errs := run(t, ctx, "", "team", "pull"); code != 0 || !strings.Contains(out, "changes") {
		t.Fatalf("pull: %d %q %q", code, out, errs)
	}
	ts, err := team.Open(ctx, srv.ConnString("clowner", db))
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	page, err := ts.Pull(ctx, team.Cursor{}, team.PullOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Changes) != 1 || page.Changes[0].Memory == nil || page.Changes[0].Memory.Text != shared {
		t.Fatalf("the team database holds %+v, want only the shared memory", page.Changes)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
