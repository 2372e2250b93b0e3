package teamsync

import (
	"context"

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
	// Schema is the team schema's version (migrated to it if older).
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
	return InitReport{Role: ts.Role(), Schema: team.SchemaVersion}, nil
}
