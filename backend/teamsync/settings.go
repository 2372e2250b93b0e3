package teamsync

import (
	"context"
	"fmt"
	"time"

	"github.com/memtray/memtray/backend/team"
)

// The team's settings where a user sees them: the daemon reads them from
// the team database when it connects and at each pull, keeps them in its
// status (GET /api/team, the Overview's team panel), and changes the
// conflict retention for an admin (PATCH /api/team/settings), as
// `memtray team settings --conflict-retention-days` does without a daemon.

// The bounds of the conflict retention in days (team.MinConflictRetention
// and team.MaxConflictRetention, the database's check).
const (
	MinRetentionDays = int(team.MinConflictRetention / day)
	MaxRetentionDays = int(team.MaxConflictRetention / day)
)

const day = 24 * time.Hour

// ErrNotAdmin is returned (wrapped) when a member who is not a team admin
// changes the team's settings (team.ErrNotAdmin).
var ErrNotAdmin = team.ErrNotAdmin

// ErrNeedsOwner is returned (wrapped) when what is asked needs a schema
// the owner has not migrated the database to (team.ErrNeedsOwner).
var ErrNeedsOwner = team.ErrNeedsOwner

// ErrRetentionRange is returned (wrapped) for a conflict retention outside
// MinRetentionDays to MaxRetentionDays.
var ErrRetentionRange = fmt.Errorf("the conflict retention must be %d to %d days", MinRetentionDays, MaxRetentionDays)

// SettingsStatus is what the team database says of the team, as this
// daemon last read it: its settings (schema 6), who may change them, and
// its schema's versions.
type SettingsStatus struct {
	// ConflictRetentionDays is how long the team's conflict log keeps a
	// conflict for the machine whose version it met (90 by default).
	ConflictRetentionDays int `json:"conflict_retention_days"`
	// ChangedBy and ChangedAt say who last changed the settings, and when
	// (the migration's role and time until an admin does; empty before
	// schema 6).
	ChangedBy string    `json:"changed_by,omitempty"`
	ChangedAt time.Time `json:"changed_at,omitzero"`
	// MinDays and MaxDays bound the retention an admin may set.
	MinDays int `json:"min_days"`
	MaxDays int `json:"max_days"`
	// Settable: the database holds the team's settings (schema 6 or
	// later): an admin may change them. Before, the retention is the
	// fixed 90 days until the owner runs memtray team init.
	Settable bool `json:"settable"`
	// Admin: this daemon's role is a team admin.
	Admin bool `json:"admin"`
	// Schema is the database's schema version; Floor the oldest memtray
	// schema version that may sync with it; Known the version this
	// memtray speaks; Used the one this daemon reads and writes (older
	// than Known until the owner migrates the database).
	Schema int `json:"schema"`
	Floor  int `json:"floor"`
	Known  int `json:"known"`
	Used   int `json:"used"`
	// ReadAt is when this daemon read them (its clock).
	ReadAt time.Time `json:"read_at"`
}

// readSettings reads the team's settings and schema into the status
// (s.cycle held, connected). A failure leaves the last ones read: the
// settings are the status's, and sync goes on without them.
func (s *Syncer) readSettings(ctx context.Context) {
	st, err := s.settingsOf(ctx, s.ts)
	if err != nil {
		s.log.Debug("team sync: read the team's settings", "err", err)
		return
	}
	s.update(func(status *Status) { status.Settings = &st })
}

// settingsOf reads what ts says of the team's settings and schema.
func (s *Syncer) settingsOf(ctx context.Context, ts *team.Store) (SettingsStatus, error) {
	set, err := ts.Settings(ctx)
	if err != nil {
		return SettingsStatus{}, err
	}
	admin, err := ts.IsAdmin(ctx)
	if err != nil {
		return SettingsStatus{}, err
	}
	db, used := ts.Schema()
	return SettingsStatus{
		ConflictRetentionDays: int(set.ConflictRetention / day),
		ChangedBy:             set.ChangedBy,
		ChangedAt:             set.ChangedAt,
		MinDays:               MinRetentionDays,
		MaxDays:               MaxRetentionDays,
		Settable:              used >= team.SettingsSchema,
		Admin:                 admin,
		Schema:                db,
		Floor:                 ts.Floor(),
		Known:                 ts.Known(),
		Used:                  used,
		ReadAt:                s.o.Now(),
	}, nil
}

// SetConflictRetention sets how long the team's conflict log keeps a
// conflict, in days (an admin's: ErrNotAdmin otherwise; ErrRetentionRange
// outside the bounds; ErrNeedsOwner before schema 6), and returns the
// settings as the database then says. Only the retention changes.
func (s *Syncer) SetConflictRetention(ctx context.Context, days int) (SettingsStatus, error) {
	if days < MinRetentionDays || days > MaxRetentionDays {
		return SettingsStatus{}, fmt.Errorf("team sync: %w, not %d", ErrRetentionRange, days)
	}
	s.cycle.Lock()
	defer s.cycle.Unlock()
	if err := s.connect(ctx); err != nil {
		s.fail(err)
		return SettingsStatus{}, err
	}
	if err := s.ts.SetConflictRetention(ctx, time.Duration(days)*day); err != nil {
		return SettingsStatus{}, err
	}
	st, err := s.settingsOf(ctx, s.ts)
	if err != nil {
		return SettingsStatus{}, err
	}
	s.update(func(status *Status) { status.Settings = &st })
	return st, nil
}
