package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
	"github.com/memtray/memtray/backend/teamsync"
)

// teamPushEvery is how often the sync loop looks at the outbox between
// writes (a read transaction): what bounds a team write's propagation.
const teamPushEvery = 200 * time.Millisecond

// teamShared is the store's team policy: nil (no outbox) unless team
// memory is on.
func (d *Daemon) teamShared() func(*memory.Memory) bool {
	if !d.cfg.Team.Share {
		return nil
	}
	return teamsync.Shared(d.cfg.Team.Projects)
}

// openTeam builds the team sync loop when team memory is on; runTeam runs
// it while the daemon serves. The database is not touched here: the
// daemon starts, and works, with the team database down.
func (d *Daemon) openTeam() error {
	if !d.cfg.Team.Share {
		return nil
	}
	every := time.Duration(d.cfg.Team.PullInterval)
	sy, err := teamsync.New(teamsync.Options{Store: d.store, Embedder: d.emb, Logger: d.log,
		Connect:      teamsync.Connect(d.cfg.Team.URLEnv, d.cfg.Team.URLFile),
		PullInterval: every, PushInterval: min(teamPushEvery, every), MaxBackoff: every,
		Projects: d.cfg.Team.Projects,
		Applied: func(put, trashed []string) {
			d.publishMemory(httpapi.MemoryUpdated, put, nil)
			d.publishMemory(httpapi.MemoryTrashed, trashed, nil)
		}})
	if err != nil {
		return fmt.Errorf("team sync: %w", err)
	}
	d.team = sy
	d.closers.push(func() error { sy.Close(); return nil })
	return nil
}

// runTeam runs the sync loop until ctx ends (Serve's background).
func (d *Daemon) runTeam(ctx context.Context) {
	if d.team != nil {
		d.team.Run(ctx)
	}
}

// teamService is the daemon's httpapi.Team.
type teamService struct{ d *Daemon }

// TeamStatus reports the sync loop's state, or that team memory is off.
func (t teamService) TeamStatus(context.Context) (httpapi.TeamStatus, error) {
	if t.d.team == nil {
		return httpapi.TeamStatus{}, nil
	}
	return t.d.team.Status(), nil
}

// TeamPush pushes the outbox now (with all, every team memory first,
// refused edits included).
func (t teamService) TeamPush(ctx context.Context, all bool) (httpapi.TeamPushReport, error) {
	if t.d.team == nil {
		return httpapi.TeamPushReport{}, httpapi.ErrTeamOff
	}
	if all {
		return t.d.team.PushAll(ctx)
	}
	return t.d.team.PushNow(ctx)
}

// TeamPull pulls the team's changes now.
func (t teamService) TeamPull(ctx context.Context) (httpapi.TeamPullReport, error) {
	if t.d.team == nil {
		return httpapi.TeamPullReport{}, httpapi.ErrTeamOff
	}
	return t.d.team.PullNow(ctx)
}

// SetTeamSettings changes the team's settings through the sync loop's
// connection (httpapi.TeamSettingsUpdate is validated by the handler; the
// loop checks the bounds again and the database the admin).
func (t teamService) SetTeamSettings(ctx context.Context, u httpapi.TeamSettingsUpdate) (httpapi.TeamSettings, error) {
	if t.d.team == nil {
		return httpapi.TeamSettings{}, httpapi.ErrTeamOff
	}
	if u.ConflictRetentionDays == nil {
		return httpapi.TeamSettings{}, &httpapi.FieldErrors{Message: "nothing to change", Fields: map[string]string{"conflict_retention_days": "give the conflict retention in days"}}
	}
	return t.d.team.SetConflictRetention(ctx, *u.ConflictRetentionDays)
}

// SetScope moves a memory to scope; the store's outbox hook queues the
// push (or, leaving the team, the delete) in the same write.
func (t teamService) SetScope(ctx context.Context, id string, scope memory.Scope) (memory.Memory, error) {
	m, err := t.d.store.Update(ctx, id, func(m *memory.Memory) error {
		m.Scope = scope
		return nil
	})
	if err != nil {
		return memory.Memory{}, t.d.indexLag(err)
	}
	if t.d.team != nil {
		t.d.team.Kick()
	}
	m.Embedding = nil
	return m, nil
}

// teamSweepPlan is the plan a scheduled steward sweep may apply: all of
// pl unless team memory is on and another daemon is the team's steward
// (teamsync.Syncer.Steward), in which case the actions touching a team
// memory are left out, so one daemon at a time decays, prunes and merges
// the team's memories (their changes reach the others by the feed). With
// team memory off, the actions touching a copy of a team memory (one the
// store synced with a team: store.TeamCopies) are left out too: the team's
// steward tends it, and this daemon's change of it would reach the team
// when team memory is on again (store.EnqueueSinceBase), where a decay
// would meet the steward's own as a conflict.
func (d *Daemon) teamSweepPlan(ctx context.Context, pl *steward.Plan) *steward.Plan {
	if pl == nil {
		return pl
	}
	var teamID func(id string) bool
	switch {
	case d.team == nil:
		copies, err := d.store.TeamCopies(ctx)
		switch {
		case err != nil:
			d.log.Warn("steward sweep: could not read which memories are copies of team memories; the sweep applies nothing", "err", err)
			teamID = func(string) bool { return true }
		case len(copies) == 0:
			return pl // never synced with a team
		default:
			teamID = func(id string) bool { return copies[id] }
		}
	case d.team.Steward(ctx):
		return pl
	default:
		shared := d.teamShared()
		isTeam := map[string]bool{}
		teamID = func(id string) bool {
			v, ok := isTeam[id]
			if !ok {
				m, err := d.store.Get(ctx, id)
				v = err == nil && shared(&m)
				isTeam[id] = v
			}
			return v
		}
	}
	out := *pl
	out.Actions = nil
	out.Counts = map[string]int{}
	for _, a := range pl.Actions {
		touches := teamID(a.ID) || (a.Survivor != "" && teamID(a.Survivor))
		for _, id := range a.MergedIDs {
			touches = touches || teamID(id)
		}
		if touches {
			continue
		}
		out.Actions = append(out.Actions, a)
		out.Counts[a.Op]++
	}
	return &out
}
