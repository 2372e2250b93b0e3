package cli

import (
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/teamsync"
)

// runTeam is `memtray team init|status|push|pull` (issue 23).
func runTeam(env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("want init, status, push or pull")
	}
	sub, rest := args[0], args[1:]
	var c common
	fs := newFlags("team "+sub, env, &c, true)
	all := false
	if sub == "push" {
		fs.BoolVar(&all, "all", false, "queue every team memory again first (after team.projects changed, or for a new team database)")
	}
	pos, err := parse(fs, rest)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("team %s takes no arguments", sub)
	}
	switch sub {
	case "init":
		return teamInit(env, c)
	case "status":
		return c.with(env, func(svc httpapi.Services) error {
			st, err := svc.Team.TeamStatus(env.Ctx)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(env.Stdout, st)
			}
			printTeamStatus(env, st)
			return nil
		})
	case "push":
		return c.with(env, func(svc httpapi.Services) error {
			r, err := svc.Team.TeamPush(env.Ctx, all)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(env.Stdout, r)
			}
			fmt.Fprintf(env.Stdout, "pushed %d, deleted %d, relinked %d, refused %d, counter deltas %d\n", r.Pushed, r.Deleted, r.Relinked, r.Refused, r.Deltas)
			return nil
		})
	case "pull":
		return c.with(env, func(svc httpapi.Services) error {
			r, err := svc.Team.TeamPull(env.Ctx)
			if err != nil {
				return err
			}
			if c.json {
				return printJSON(env.Stdout, r)
			}
			fmt.Fprintf(env.Stdout, "%d changes: %d applied, %d deleted, %d kept for a local push, %d already held\n", r.Changes, r.Put, r.Deleted, r.Kept, r.Skipped)
			return nil
		})
	}
	return usagef("unknown team command %q: want init, status, push or pull", sub)
}

// teamInit connects to the team database directly (no daemon needed),
// creating or migrating its schema when the role may.
func teamInit(env *Env, c common) error {
	cfg, err := c.load()
	if err != nil {
		return err
	}
	r, err := teamsync.Init(env.Ctx, cfg.Team.URLEnv, cfg.Team.URLFile)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, r)
	}
	fmt.Fprintf(env.Stdout, "connected as %s; team schema version %d\n", r.Role, r.Schema)
	if !cfg.Team.Share {
		fmt.Fprintln(env.Stdout, "team memory is off in the config: set team.share to true (and team.projects) to start sharing")
	}
	return nil
}

func printTeamStatus(env *Env, st httpapi.TeamStatus) {
	w := env.Stdout
	if !st.Enabled {
		fmt.Fprintln(w, "team memory: off (team.share is false)")
		return
	}
	state := "not connected"
	if st.Connected {
		state = "connected as " + st.Role
	}
	fmt.Fprintf(w, "team memory: %s\noutbox:      %d waiting\nlag:         %.1f s\n", state, st.Outbox, st.LagSeconds)
	if !st.LastPush.IsZero() {
		fmt.Fprintf(w, "last push:   %s\n", st.LastPush.Format("2006-01-02 15:04:05"))
	}
	if !st.LastPull.IsZero() {
		fmt.Fprintf(w, "last pull:   %s\n", st.LastPull.Format("2006-01-02 15:04:05"))
	}
	if st.LastError != "" {
		fmt.Fprintf(w, "last error:  %s\n", st.LastError)
	}
}

// runScope is `memtray scope ID team|personal`.
func runScope(env *Env, args []string) error {
	var c common
	fs := newFlags("scope", env, &c, true)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want ID and team or personal")
	}
	id := pos[0]
	sc, err := memory.ParseScope(pos[1])
	if err != nil {
		return usagef("the scope must be team or personal, not %q", pos[1])
	}
	return memoryChange(env, c, id, func(svc httpapi.Services) (memory.Memory, error) { return svc.Team.SetScope(env.Ctx, id, sc) },
		func(m memory.Memory) string {
			if m.Scope == memory.ScopeTeam {
				return "team: shared with the team (pushed when team memory is on)"
			}
			return "personal: stays on this machine"
		})
}
