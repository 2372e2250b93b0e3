package cli

import (
	"context"
	"encoding/json"
	"maps"
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
// refuses anything else; with team memory off (this store's), a move to
// the team says it is recorded, pushed once team memory is on (at its
// first connection, exp-teamon; before it, only `memtray team push --all`
// did), and how to turn team memory on, and
// `memtray get` shows the scope, the default one explained.
func TestScopeCommand(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	code, out, errs := run(t, ctx, "", "add", dd, "--json", "--project", "shop", "The shop's invoices are numbered per calendar year.")
	var m memory.Memory
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	if code, out, errs := run(t, ctx, "", "get", dd, m.ID); code != 0 || !strings.Contains(out, "scope:       default: personal, as team memory is off\n") {
		t.Errorf("get of a new memory: exit %d, out %q, err %q; want its default scope explained", code, out, errs)
	}
	// --json says the scope of a default-scope memory too (it was left out,
	// omitempty, until exp-teamon).
	if code, out, errs := run(t, ctx, "", "get", dd, "--json", m.ID); code != 0 || !jsonHasKey(out, "scope") {
		t.Errorf("get --json of a new memory: exit %d, out %q, err %q; want its scope said", code, out, errs)
	}
	for _, tc := range []struct {
		args []string
		code int
		say  string
		want memory.Scope
	}{
		{[]string{"scope", dd, m.ID, "team"}, 0, "team: recorded for the team; team memory is off, so it is pushed once team memory is on, at its first connection to the team database. To share it, turn team memory on: set \"team\": {\"share\": true", memory.ScopeTeam},
		{[]string{"scope", dd, m.ID, "personal"}, 0, "personal: stays", memory.ScopePersonal},
		{[]string{"scope", dd, m.ID, "world"}, 2, "", memory.ScopePersonal},
		{[]string{"scope", dd, m.ID}, 2, "", memory.ScopePersonal},
		{[]string{"scope", dd, "nope", "team"}, 1, "", memory.ScopePersonal},
	} {
		code, out, errs := run(t, ctx, "", tc.args...)
		if code != tc.code || !strings.Contains(out, tc.say) {
			t.Errorf("%v: exit %d (want %d), out %q, err %q", tc.args[2:], code, tc.code, out, errs)
		}
		if code == 0 && tc.want == memory.ScopeTeam && (!strings.Contains(out, "`memtray team init`") || strings.Contains(out, "push --all")) {
			t.Errorf("%v: %q does not say how to turn team memory on, or still sends the user to push --all", tc.args[2:], out)
		}
		_, out, _ = run(t, ctx, "", "get", dd, "--json", m.ID)
		var got memory.Memory
		if json.Unmarshal([]byte(out), &got) != nil || got.Scope != tc.want {
			t.Errorf("%v: scope %q, want %q", tc.args[2:], got.Scope, tc.want)
		}
	}
}

// TestScopeSaid: what `memtray scope` and `memtray get` say of a scope,
// by team memory's state and team.projects: a move to the team pushed at
// the next sync, or recorded only while team memory is off; the default
// scope as what it means for this memory now.
func TestScopeSaid(t *testing.T) {
	off := httpapi.TeamStatus{}
	on := httpapi.TeamStatus{Enabled: true, Projects: []string{"shop"}}
	all := httpapi.TeamStatus{Enabled: true, Projects: []string{team.AllProjects}}
	shop := memory.Memory{Project: "shop", Type: memory.TypeProject}
	for _, tc := range []struct {
		name string
		got  string
		want string // its beginning
	}{
		{"move to team, team on", scopeSaid(memory.ScopeTeam, true), "team: shared with the team (pushed at the next sync)"},
		{"move to team, team off", scopeSaid(memory.ScopeTeam, false), "team: recorded for the team; team memory is off, so it is pushed once team memory is on"},
		{"move to personal, team on", scopeSaid(memory.ScopePersonal, true), "personal: stays on this machine"},
		{"move to personal, team off", scopeSaid(memory.ScopePersonal, false), "personal: stays on this machine; team memory is off, so if the team holds a copy, it is withdrawn once team memory is on"},
		{"default, team off", scopeShown(shop, off), "default: personal, as team memory is off"},
		{"default, project listed", scopeShown(shop, on), `default: team, as team.projects lists "shop"`},
		{"default, every project", scopeShown(shop, all), `default: team, as team.projects lists "shop"`},
		{"default, project not listed", scopeShown(memory.Memory{Project: "web"}, on), `default: personal, as team.projects does not list "web"`},
		{"default, a preference", scopeShown(memory.Memory{Project: "shop", Type: memory.TypeUser}, all), "default: personal, as a preference"},
		{"default, no project", scopeShown(memory.Memory{}, all), "default: personal, as it has no project"},
		{"team, team off", scopeShown(memory.Memory{Scope: memory.ScopeTeam}, off), "team (recorded for the team; team memory is off"},
		{"team, team on", scopeShown(memory.Memory{Scope: memory.ScopeTeam}, on), "team"},
		{"personal", scopeShown(memory.Memory{Scope: memory.ScopePersonal, Project: "shop"}, on), "personal"},
	} {
		if !strings.HasPrefix(tc.got, tc.want) || (tc.want == "team" || tc.want == "personal") && tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
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

// TestTeamMemberCommands: memtray team member add, remove and list change
// the team's members on a real PostgreSQL, for an admin only (the owner or
// an admin it made); a plain member is refused by the database, a role the
// server lacks and the caller's own role are refused with a reason, and a
// removed member's daemon can no longer connect.
func TestTeamMemberCommands(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	srv := pgtest.Start(t)
	const owner, alice, bob = "mowner", "malice", "mbob"
	db := srv.NewDB(t, owner)
	srv.Role(t, alice)
	srv.Role(t, bob)
	urlFile := filepath.Join(t.TempDir(), "team-url")
	as := func(role string) {
		if err := os.WriteFile(urlFile, []byte(srv.ConnString(role, db)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	as(owner)
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	cfg := `{"data_dir":` + jsonString(dir) + `,"team":{"url_env":"MEMTRAY_TEST_NO_SUCH_VAR","url_file":` + jsonString(urlFile) + `}}`
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MEMTRAY_CONFIG", cfgFile)
	if code, out, errs := run(t, ctx, "", "team", "init"); code != 0 {
		t.Fatalf("init: %d %q %q", code, out, errs)
	}
	members := func(t *testing.T) map[string]bool {
		t.Helper()
		code, out, errs := run(t, ctx, "", "team", "member", "list", "--json")
		var ms []teamsyncMember
		if code != 0 || json.Unmarshal([]byte(out), &ms) != nil {
			t.Fatalf("member list: %d %q %q", code, out, errs)
		}
		got := map[string]bool{}
		for _, m := range ms {
			got[m.Role] = m.Admin
		}
		return got
	}
	steps := []struct {
		name string
		as   string
		args []string
		code int
		say  string
		want map[string]bool // the members after, read as the owner
	}{
		{"the owner is the first admin", owner, []string{"list"}, 0, owner + " ", map[string]bool{owner: true}},
		{"add a member", owner, []string{"add", alice}, 0, alice + " is a member", map[string]bool{owner: true, alice: false}},
		{"add an admin", owner, []string{"add", "--admin", bob}, 0, bob + " is an admin", map[string]bool{owner: true, alice: false, bob: true}},
		{"a role the server lacks", owner, []string{"add", "nosuchrole"}, 1, "no such role", nil},
		{"oneself", owner, []string{"add", owner}, 1, "connects as", nil},
		{"an empty role", owner, []string{"add", ""}, 2, "the role is empty", nil},
		{"a role too long", owner, []string{"add", strings.Repeat("r", 64)}, 2, "longer than", nil},
		{"two roles", owner, []string{"add", alice, bob}, 2, "one role", nil},
		{"no subcommand", owner, nil, 2, "want member add", nil},
		{"an unknown subcommand", owner, []string{"grant", alice}, 2, "unknown team member command", nil},
		{"list takes no role", owner, []string{"list", alice}, 2, "no arguments", nil},
		{"a plain member may not list", alice, []string{"list"}, 1, "only a team admin", nil},
		{"a plain member may not add", alice, []string{"add", "--admin", alice}, 1, "connects as", nil},
		{"a plain member may not remove", alice, []string{"remove", bob}, 1, "only a team admin", nil},
		{"an admin who is not the owner lists", bob, []string{"list"}, 0, alice + " ", nil},
		{"an admin removes a member", bob, []string{"remove", alice}, 0, alice + " is no longer a member", map[string]bool{owner: true, bob: true}},
		{"removing a non-member", bob, []string{"remove", alice}, 0, "was not a member", map[string]bool{owner: true, bob: true}},
		{"an admin demotes another", owner, []string{"add", bob}, 0, bob + " is a member", map[string]bool{owner: true, bob: false}},
		{"a demoted admin may not add", bob, []string{"add", alice}, 1, "only a team admin", map[string]bool{owner: true, bob: false}},
	}
	for _, st := range steps {
		as(st.as)
		code, out, errs := run(t, ctx, "", append([]string{"team", "member"}, st.args...)...)
		if code != st.code || !strings.Contains(out+errs, st.say) {
			t.Errorf("%s: exit %d (want %d), out %q, err %q (want %q)", st.name, code, st.code, out, errs, st.say)
		}
		if st.want == nil {
			continue
		}
		as(owner)
		if got := members(t); !maps.Equal(got, st.want) {
			t.Errorf("%s: members %v, want %v", st.name, got, st.want)
		}
	}
	// The team's settings: read by any member, changed by an admin.
	for _, st := range []struct {
		name string
		as   string
		args []string
		code int
		say  string
	}{
		{"the default", owner, nil, 0, "conflict retention: 90 days (set by " + owner},
		{"an admin sets it", owner, []string{"--conflict-retention-days", "30"}, 0, "conflict retention: 30 days (set by " + owner},
		{"a plain member reads it", bob, []string{"--json"}, 0, `"conflict_retention_days": 30`},
		{"a plain member may not change it", bob, []string{"--conflict-retention-days", "10"}, 1, "only a team admin"},
		{"out of range", owner, []string{"--conflict-retention-days", "4000"}, 2, "1 to 3650"},
		{"an argument", owner, []string{"30"}, 2, "no arguments"},
	} {
		as(st.as)
		code, out, errs := run(t, ctx, "", append([]string{"team", "settings"}, st.args...)...)
		if code != st.code || !strings.Contains(out+errs, st.say) {
			t.Errorf("settings, %s: exit %d (want %d), out %q, err %q (want %q)", st.name, code, st.code, out, errs, st.say)
		}
	}
	// The removed member's daemon is refused by the database.
	if _, err := team.Open(ctx, srv.ConnString(alice, db)); err == nil {
		t.Error("a removed member still connects")
	}
}

// teamsyncMember is the JSON of memtray team member list.
type teamsyncMember struct {
	Role  string `json:"role"`
	Admin bool   `json:"admin"`
}

// jsonHasKey reports whether the JSON object js has key at its top level.
func jsonHasKey(js, key string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(js), &obj) != nil {
		return false
	}
	_, ok := obj[key]
	return ok
}
