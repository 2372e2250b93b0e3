package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/teamsync"
)

// runTeam is `memtray team init|status|push|pull|member` (issue 23).
func runTeam(env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("want init, status, push, pull, member or settings")
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "member":
		return runTeamMember(env, rest)
	case "settings":
		return runTeamSettings(env, rest)
	}
	var c common
	fs := newFlags("team "+sub, env, &c, true)
	all := false
	if sub == "push" {
		fs.BoolVar(&all, "all", false, "queue every team memory again first, edits the team refused included (after team.projects changed, for a new team database, or to retry refused edits)")
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
	return usagef("unknown team command %q: want init, status, push, pull, member or settings", sub)
}

// runTeamMember is `memtray team member add|remove|list`: the team's
// members, changed by an admin straight in the team database (no daemon
// needed), connecting as this machine's member.
func runTeamMember(env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("want member add ROLE [--admin], member remove ROLE or member list")
	}
	sub, rest := args[0], args[1:]
	var c common
	fs := newFlags("team member "+sub, env, &c, true)
	admin := false
	if sub == "add" {
		fs.BoolVar(&admin, "admin", false, "make the member an admin (may change and delete every team memory and change the members); without it, an admin becomes a plain member")
	}
	pos, err := parse(fs, rest)
	if err != nil {
		return err
	}
	switch sub {
	case "add", "remove":
		if len(pos) != 1 {
			return usagef("team member %s takes one role", sub)
		}
	case "list":
		if len(pos) != 0 {
			return usagef("team member list takes no arguments")
		}
	default:
		return usagef("unknown team member command %q: want add, remove or list", sub)
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	urlEnv, urlFile := cfg.Team.URLEnv, cfg.Team.URLFile
	switch sub {
	case "add":
		role := pos[0]
		if err := teamsync.ValidRole(role); err != nil {
			return usagef("team member add: %v", err)
		}
		if err := teamsync.SetMember(env.Ctx, urlEnv, urlFile, role, admin); err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, teamsync.Member{Role: role, Admin: admin})
		}
		what := "a member"
		if admin {
			what = "an admin"
		}
		fmt.Fprintf(env.Stdout, "%s is %s of the team\n", role, what)
		return nil
	case "remove":
		role := pos[0]
		if err := teamsync.ValidRole(role); err != nil {
			return usagef("team member remove: %v", err)
		}
		was, err := teamsync.RemoveMember(env.Ctx, urlEnv, urlFile, role)
		if err != nil {
			return err
		}
		if c.json {
			return printJSON(env.Stdout, map[string]bool{"removed": was})
		}
		if !was {
			fmt.Fprintf(env.Stdout, "%s was not a member of the team\n", role)
			return nil
		}
		fmt.Fprintf(env.Stdout, "%s is no longer a member; the memories it pushed stay in the team\n", role)
		return nil
	}
	ms, err := teamsync.Members(env.Ctx, urlEnv, urlFile)
	if err != nil {
		return err
	}
	if c.json {
		if ms == nil {
			ms = []teamsync.Member{}
		}
		return printJSON(env.Stdout, ms)
	}
	for _, m := range ms {
		what := "member"
		if m.Admin {
			what = "admin"
		}
		fmt.Fprintf(env.Stdout, "%-24s %-6s added %s\n", m.Role, what, m.AddedAt.Local().Format("2006-01-02 15:04"))
	}
	return nil
}

// runTeamSettings is `memtray team settings [--conflict-retention-days N]`:
// the team's settings, held in the team database for the whole team and
// changed by an admin straight there (no daemon needed), connecting as
// this machine's member.
func runTeamSettings(env *Env, args []string) error {
	var c common
	fs := newFlags("team settings", env, &c, true)
	days := 0
	fs.IntVar(&days, "conflict-retention-days", 0, "set how many days the team's conflict log keeps a conflict for the machine whose version it met (admins; 1 to 3650, the team's default 90; 0 or unset: show the settings only)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("team settings takes no arguments")
	}
	if days < 0 || days > 3650 {
		return usagef("--conflict-retention-days must be 1 to 3650, not %d", days)
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	st, err := teamsync.TeamSettings(env.Ctx, cfg.Team.URLEnv, cfg.Team.URLFile, time.Duration(days)*24*time.Hour)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(env.Stdout, st)
	}
	fmt.Fprintf(env.Stdout, "conflict retention: %d days", int(st.ConflictRetention/(24*time.Hour)))
	if st.ChangedBy != "" {
		fmt.Fprintf(env.Stdout, " (set by %s, %s)", st.ChangedBy, st.ChangedAt.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintln(env.Stdout)
	return nil
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
		fmt.Fprintln(w, "team memory: off (team.share was false when the daemon started; a change of team.* takes effect after a restart)")
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
	if len(st.Projects) > 0 {
		fmt.Fprintf(w, "projects:    %s (read at start: a change of team.* takes effect after a restart)\n", strings.Join(st.Projects, ", "))
	}
	if set := st.Settings; set != nil {
		fmt.Fprintf(w, "settings:    %s\n", settingsLine(*set))
	}
	for _, r := range st.Refused {
		fmt.Fprintf(w, "refused:     %s of %s at %s: %s\n", r.Op, r.ID, r.At.Format("15:04:05"), r.Outcome)
		if r.Copy != "" {
			fmt.Fprintf(w, "             your version: memtray trash restore %s\n", r.Copy)
		}
	}
	for _, t := range st.Told {
		label := "met yours:  "
		if t.Withdrawn { // their refused edit merged after all: nothing of theirs is kept aside
			label = "resolved:   "
		}
		fmt.Fprintf(w, "%s %s (%s, at %s)\n", label, t.What, t.ID, t.At.Local().Format("2006-01-02 15:04:05"))
	}
}

// settingsLine is the team's settings and schema as the status prints
// them: "conflict retention 90 days (set by team_owner, 2026-11-28
// 20:10); schema 7, which memtray of schema 3 or later syncs with".
func settingsLine(set httpapi.TeamSettings) string {
	var b strings.Builder
	fmt.Fprintf(&b, "conflict retention %d days", set.ConflictRetentionDays)
	switch {
	case !set.Settable:
		b.WriteString(" (fixed until the owner runs memtray team init: team settings need schema 6)")
	case set.ChangedBy != "":
		fmt.Fprintf(&b, " (set by %s, %s)", set.ChangedBy, set.ChangedAt.Local().Format("2006-01-02 15:04"))
	}
	fmt.Fprintf(&b, "; schema %d, which memtray of schema %d or later syncs with", set.Schema, set.Floor)
	if set.Used != set.Known {
		fmt.Fprintf(&b, "; this memtray knows %d and uses %d", set.Known, set.Used)
	}
	if set.Admin {
		b.WriteString("; you are an admin (memtray team settings --conflict-retention-days N)")
	}
	return b.String()
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
	teamOn := false
	return memoryChange(env, c, id, func(svc httpapi.Services) (memory.Memory, error) {
		m, err := svc.Team.SetScope(env.Ctx, id, sc)
		if err != nil {
			return m, err
		}
		st, err := svc.Team.TeamStatus(env.Ctx)
		if err != nil {
			return m, fmt.Errorf("the scope is set; team status: %w", err)
		}
		teamOn = st.Enabled
		return m, nil
	}, func(m memory.Memory) string { return scopeSaid(m.Scope, teamOn) })
}

// scopeSaid is what `memtray scope` says of a memory moved to scope sc,
// teamOn whether team memory is on (the daemon's team status). With it
// off, a move to the team is recorded in the memory and nothing is queued
// then: it is pushed at the first connection once team memory is on
// (teamsync's queueScoped), so it says so and how to turn team memory on;
// a move to personal is sent then too (store.EnqueueSinceBase: the team's
// copy, if it holds one, is withdrawn), so it says that.
func scopeSaid(sc memory.Scope, teamOn bool) string {
	switch {
	case sc != memory.ScopeTeam && teamOn:
		return "personal: stays on this machine"
	case sc != memory.ScopeTeam:
		return "personal: stays on this machine; team memory is off, so if the team holds a copy, it is withdrawn once team memory is on, at its first connection to the team database"
	case teamOn:
		return "team: shared with the team (pushed at the next sync)"
	}
	return "team: recorded for the team; team memory is off, so it is pushed once team memory is on, at its first connection to the team database. To share it, " + teamOnHow
}

// teamOnHow says how to turn team memory on (README, Team memory).
const teamOnHow = "turn team memory on: set \"team\": {\"share\": true, \"projects\": [...]} in the config and the connection string " +
	"(docs/team.md), run `memtray team init` and restart memtray"

// scopeNote is `memtray scope -h`'s explanation of
// the scopes, the default one above all.
const scopeNote = "A memory's scope is team (pushed to the team database and shared with every member), personal (never leaves this machine) " +
	"or, until one is set, default: team when team memory is on, team.projects lists the memory's project and it is not a preference " +
	"(type user), else personal. `memtray get ID` shows which, and why."

// scopeShown is `memtray get`'s scope line of m, st the daemon's team
// status: the scope set, or what the default means for m now.
func scopeShown(m memory.Memory, st httpapi.TeamStatus) string {
	switch {
	case m.Scope == memory.ScopeDefault:
		return defaultScopeSaid(m, st)
	case m.Scope == memory.ScopeTeam && !st.Enabled:
		return "team (recorded for the team; team memory is off, so it is pushed once team memory is on)"
	}
	return string(m.Scope)
}

// defaultScopeSaid says what default scope means for m now: team or
// personal, and why, with st the daemon's team status.
func defaultScopeSaid(m memory.Memory, st httpapi.TeamStatus) string {
	switch {
	case !st.Enabled:
		return "default: personal, as team memory is off"
	case m.Type == memory.TypeUser:
		return "default: personal, as a preference (type user) is never shared by default"
	case m.Project == "":
		return "default: personal, as it has no project"
	case teamsync.Shared(st.Projects)(&m):
		return fmt.Sprintf("default: team, as team.projects lists %q", m.Project)
	}
	return fmt.Sprintf("default: personal, as team.projects does not list %q", m.Project)
}
