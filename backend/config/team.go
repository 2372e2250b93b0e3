package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Team configures team memory (issue 23): the daemon pushes the team
// memories of this machine to one PostgreSQL database shared by the team
// and pulls the others' from it. The connection string (it holds the
// member's password) is never in this file: it is read from the
// environment variable URLEnv or from the file URLFile.
type Team struct {
	// Share turns team memory on: the daemon connects to the team
	// database, pushes team memories and pulls the team's. Off (the
	// default), every memory stays on this machine.
	Share bool `json:"share"`
	// URLEnv names the environment variable holding the connection string
	// (postgres://member@host/db?sslmode=verify-full, or key=value pairs);
	// empty means MEMTRAY_TEAM_URL. TLS is required unless the host is
	// loopback or a unix socket.
	URLEnv string `json:"url_env"`
	// URLFile is a file holding the connection string, read when the
	// environment variable is unset; it must be mode 0600 (readable by
	// you alone). An absolute path; empty means none.
	URLFile string `json:"url_file"`
	// Projects lists the projects whose memories are team memories by
	// default (a memory's scope, set in the UI or with `memtray scope`,
	// overrides it); "*" lists every project. Preferences (type user) and
	// memories of no project stay personal by default.
	Projects []string `json:"projects"`
	// PullInterval is how often the daemon pulls the team's changes when
	// no notification came (it also pulls at start and whenever the
	// database notifies a commit).
	PullInterval Duration `json:"pull_interval"`
}

// envName is a portable environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// validate checks the team section (team.*).
func (t *Team) validate() Errors {
	var p problems
	if t.URLEnv != "" && !envName.MatchString(t.URLEnv) {
		p.bad("team.url_env", "%q is not an environment variable name (letters, digits and _, not starting with a digit)", t.URLEnv)
	}
	if t.URLFile != "" && !filepath.IsAbs(t.URLFile) {
		p.bad("team.url_file", "%q must be an absolute path", t.URLFile)
	}
	for i, pr := range t.Projects {
		if strings.TrimSpace(pr) == "" || len(pr) > 256 {
			p.bad(fmt.Sprintf("team.projects[%d]", i), "must be a project name (1-256 bytes) or \"*\"")
		}
	}
	if d := time.Duration(t.PullInterval); d < 100*time.Millisecond || d > 24*time.Hour {
		p.bad("team.pull_interval", "must be within 100ms..24h, not %v", d)
	}
	return Errors(p)
}
