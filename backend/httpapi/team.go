package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/teamsync"
)

// TeamStatus is the team sync's state (GET /api/team, and Stats.Team).
type TeamStatus = teamsync.Status

// TeamPushReport is what POST /api/team/push did.
type TeamPushReport = teamsync.PushReport

// TeamPullReport is what POST /api/team/pull applied.
type TeamPullReport = teamsync.PullReport

// TeamSettings are the team's settings and schema as the daemon last
// read them from the team database (TeamStatus.Settings), and what PATCH
// /api/team/settings answers.
type TeamSettings = teamsync.SettingsStatus

// TeamSettingsUpdate changes the team's settings (PATCH
// /api/team/settings, a team admin's); an absent field stays as it is.
type TeamSettingsUpdate struct {
	// ConflictRetentionDays is how long the team's conflict log keeps a
	// conflict, in whole days (1 to 3650), as memtray team settings
	// --conflict-retention-days sets it.
	ConflictRetentionDays *int `json:"conflict_retention_days,omitempty"`
}

// validate checks u as the command line's flag is checked: a field to
// change, within its bounds.
func (u TeamSettingsUpdate) validate() error {
	if u.ConflictRetentionDays == nil {
		return &FieldErrors{Message: "nothing to change", Fields: map[string]string{"conflict_retention_days": "give the conflict retention in days"}}
	}
	if d := *u.ConflictRetentionDays; d < teamsync.MinRetentionDays || d > teamsync.MaxRetentionDays {
		return &FieldErrors{Message: "invalid team settings", Fields: map[string]string{
			"conflict_retention_days": fmt.Sprintf("must be a whole number of days from %d to %d, not %d", teamsync.MinRetentionDays, teamsync.MaxRetentionDays, d)}}
	}
	return nil
}

// ScopeRequest moves a memory to a scope (POST /api/memories/{id}/scope).
type ScopeRequest struct {
	// Scope is "personal" or "team".
	Scope string `json:"scope"`
}

// ErrTeamOff is returned by a team push or pull when team memory is not
// configured (team.share is off).
var ErrTeamOff = fmt.Errorf("%w: team memory is off: set team.share, team.projects and the connection string (docs/team.md)", memory.ErrUnavailable)

// Team is the part of Services that shares memories with the team
// (issue 23): its state, a push or pull now, and a memory's scope.
type Team interface {
	// TeamStatus never waits on the network.
	TeamStatus(ctx context.Context) (TeamStatus, error)
	// TeamPush pushes the outbox now; with all, every team memory is
	// queued again first (after team.projects changed, or to seed a new
	// team database with what this machine holds).
	TeamPush(ctx context.Context, all bool) (TeamPushReport, error)
	TeamPull(ctx context.Context) (TeamPullReport, error)
	// SetTeamSettings changes the team's settings in the team database
	// (a team admin's) and returns them as the database then says.
	SetTeamSettings(ctx context.Context, u TeamSettingsUpdate) (TeamSettings, error)
	// SetScope moves memory id to scope (personal or team) and returns
	// it; a team memory moved to personal is deleted from the team.
	SetScope(ctx context.Context, id string, scope memory.Scope) (memory.Memory, error)
}

func (h *Handler) teamRoutes() {
	h.mux.HandleFunc("GET /api/team", withoutBody(func(r *http.Request) (TeamStatus, error) {
		return h.s.Team.TeamStatus(r.Context())
	}))
	h.mux.HandleFunc("POST /api/team/push", withoutBody(func(r *http.Request) (TeamPushReport, error) {
		all := false
		switch v := r.URL.Query().Get("all"); v {
		case "", "0", "false":
		case "1", "true":
			all = true
		default:
			return TeamPushReport{}, &FieldErrors{Message: "invalid push", Fields: map[string]string{"all": "must be true or false"}}
		}
		return h.s.Team.TeamPush(r.Context(), all)
	}))
	h.mux.HandleFunc("POST /api/team/pull", withoutBody(func(r *http.Request) (TeamPullReport, error) {
		return h.s.Team.TeamPull(r.Context())
	}))
	h.mux.HandleFunc("PATCH /api/team/settings", withJSON(func(r *http.Request, u TeamSettingsUpdate) (TeamSettings, error) {
		if err := u.validate(); err != nil {
			return TeamSettings{}, err
		}
		return h.s.Team.SetTeamSettings(r.Context(), u)
	}))
	h.mux.HandleFunc("POST /api/memories/{id}/scope", withJSON(func(r *http.Request, req ScopeRequest) (memory.Memory, error) {
		sc, err := memory.ParseScope(req.Scope)
		if err != nil {
			return memory.Memory{}, &FieldErrors{Message: "invalid scope", Fields: map[string]string{"scope": "must be personal or team"}}
		}
		m, err := h.s.Team.SetScope(r.Context(), r.PathValue("id"), sc)
		m.Embedding = nil
		return m, err
	}))
}

// TeamStatus asks GET /api/team.
func (c *Client) TeamStatus(ctx context.Context) (TeamStatus, error) {
	var s TeamStatus
	return s, c.do(ctx, http.MethodGet, "/api/team", nil, &s)
}

// TeamPush asks POST /api/team/push.
func (c *Client) TeamPush(ctx context.Context, all bool) (TeamPushReport, error) {
	var r TeamPushReport
	path := "/api/team/push"
	if all {
		path += "?all=true"
	}
	return r, c.do(ctx, http.MethodPost, path, nil, &r)
}

// TeamPull asks POST /api/team/pull.
func (c *Client) TeamPull(ctx context.Context) (TeamPullReport, error) {
	var r TeamPullReport
	return r, c.do(ctx, http.MethodPost, "/api/team/pull", nil, &r)
}

// SetTeamSettings asks PATCH /api/team/settings.
func (c *Client) SetTeamSettings(ctx context.Context, u TeamSettingsUpdate) (TeamSettings, error) {
	var s TeamSettings
	return s, c.do(ctx, http.MethodPatch, "/api/team/settings", u, &s)
}

// SetScope asks POST /api/memories/{id}/scope.
func (c *Client) SetScope(ctx context.Context, id string, scope memory.Scope) (memory.Memory, error) {
	var m memory.Memory
	return m, c.do(ctx, http.MethodPost, "/api/memories/"+url.PathEscape(id)+"/scope", ScopeRequest{Scope: string(scope)}, &m)
}
