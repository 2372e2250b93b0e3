package teamsync

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/memtray/memtray/backend/team"
)

// Connect returns the Options.Connect of a daemon: the connection string
// from the environment variable urlEnv (team.DefaultURLEnv when empty) or
// the 0600 file urlFile, validated (TLS unless loopback), then team.Open
// (which migrates the schema and checks membership). The string is read
// at each call, so fixing the variable's file needs no restart.
func Connect(urlEnv, urlFile string) func(ctx context.Context) (*team.Store, error) {
	return func(ctx context.Context) (*team.Store, error) {
		url, err := team.ReadURL(urlEnv, urlFile)
		if err != nil {
			return nil, err
		}
		return team.Open(ctx, url)
	}
}

// InitReport is what `memtray team init` found.
type InitReport struct {
	// Role is the member this machine connects as.
	Role string `json:"role"`
	// Schema is the team database's schema version (migrated to
	// team.SchemaVersion if older and the role may; newer when a newer
	// memtray migrated it compatibly).
	Schema int `json:"schema"`
}

// Init connects once (creating or migrating the team schema when the role
// may) and reports who this machine is in the team.
func Init(ctx context.Context, urlEnv, urlFile string) (InitReport, error) {
	ts, err := Connect(urlEnv, urlFile)(ctx)
	if err != nil {
		return InitReport{}, err
	}
	defer ts.Close()
	db, _ := ts.Schema()
	return InitReport{Role: ts.Role(), Schema: db}, nil
}

// Members connects once and lists the team's members (admins only:
// team.ErrNotAdmin otherwise), for memtray team member list.
func Members(ctx context.Context, urlEnv, urlFile string) ([]team.Member, error) {
	ts, err := Connect(urlEnv, urlFile)(ctx)
	if err != nil {
		return nil, err
	}
	defer ts.Close()
	return ts.Members(ctx)
}

// ErrSelf is returned by SetMember and RemoveMember for the role this
// machine connects as: an admin demoting or removing themself could leave
// the team without one; another admin does it.
var ErrSelf = errors.New("that is the role this machine connects as: another admin must change it")

// SetMember connects once and adds role to the team, or changes whether
// it is an admin (admins only), for memtray team member add.
func SetMember(ctx context.Context, urlEnv, urlFile, role string, admin bool) error {
	if err := team.ValidRole(role); err != nil {
		return err
	}
	ts, err := Connect(urlEnv, urlFile)(ctx)
	if err != nil {
		return err
	}
	defer ts.Close()
	if role == ts.Role() {
		return fmt.Errorf("team member %q: %w", role, ErrSelf)
	}
	return ts.SetMember(ctx, role, admin)
}

// RemoveMember connects once and takes role out of the team (admins
// only), for memtray team member remove; it reports whether role was a
// member. The role's memories stay in the team.
func RemoveMember(ctx context.Context, urlEnv, urlFile, role string) (bool, error) {
	if err := team.ValidRole(role); err != nil {
		return false, err
	}
	ts, err := Connect(urlEnv, urlFile)(ctx)
	if err != nil {
		return false, err
	}
	defer ts.Close()
	if role == ts.Role() {
		return false, fmt.Errorf("team member %q: %w", role, ErrSelf)
	}
	return ts.RemoveMember(ctx, role)
}

// Member is a member of the team (team.Member), for the command line.
type Member = team.Member

// ValidRole checks a role name given from outside (team.ValidRole).
func ValidRole(role string) error { return team.ValidRole(role) }

// Settings are the team's settings (team.Settings), for the command line.
type Settings = team.Settings

// TeamSettings connects once and returns the team's settings, for memtray
// team settings; with retention above zero it first sets how long the
// conflict log keeps a row (admins only: team.ErrNotAdmin otherwise; the
// schema must be at 6: team.ErrNeedsOwner otherwise).
func TeamSettings(ctx context.Context, urlEnv, urlFile string, retention time.Duration) (Settings, error) {
	ts, err := Connect(urlEnv, urlFile)(ctx)
	if err != nil {
		return Settings{}, err
	}
	defer ts.Close()
	if retention > 0 {
		if err := ts.SetConflictRetention(ctx, retention); err != nil {
			return Settings{}, err
		}
	}
	return ts.Settings(ctx)
}
