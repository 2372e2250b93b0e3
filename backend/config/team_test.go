package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTeamValidate: every bad team field is named, and the defaults
// (team memory off) are valid.
func TestTeamValidate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(*Team)
		field string // "" = valid
	}{
		{"defaults", func(*Team) {}, ""},
		{"on with everything", func(tm *Team) {
			tm.Share, tm.URLEnv, tm.URLFile, tm.Projects = true, "TEAM_DB", "/home/me/.config/memtray/team-url", []string{"*", "api"}
		}, ""},
		{"env name", func(tm *Team) { tm.URLEnv = "TEAM-DB" }, "team.url_env"},
		{"env digit", func(tm *Team) { tm.URLEnv = "1TEAM" }, "team.url_env"},
		{"relative file", func(tm *Team) { tm.URLFile = "team-url" }, "team.url_file"},
		{"empty project", func(tm *Team) { tm.Projects = []string{"api", " "} }, "team.projects[1]"},
		{"pull too often", func(tm *Team) { tm.PullInterval = Duration(time.Millisecond) }, "team.pull_interval"},
		{"pull never", func(tm *Team) { tm.PullInterval = 0 }, "team.pull_interval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			tc.edit(&c.Team)
			err := c.Validate()
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var fe Errors
			if !errors.As(err, &fe) || len(fe) != 1 || fe[0].Field != tc.field {
				t.Fatalf("Validate = %v, want exactly one error on %s", err, tc.field)
			}
		})
	}
}

// TestTeamURLNotInFile: a connection string written into the config file
// is refused (an unknown field), so a password never sits there unnoticed.
func TestTeamURLNotInFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(`{"team":{"share":true,"url":"postgres://me:secret@db/team"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "team.url: unknown field") || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Load = %v, want the unknown field refused", err)
	}
}
