package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/httpapi"
	"github.com/memtray/memtray/backend/teamsync"
)

// TestPrintTeamStatusConflicts: memtray team status names a refused
// edit's conflict copy with the command that restores it, and lists what
// teammates' writes did to this machine's edits.
func TestPrintTeamStatusConflicts(t *testing.T) {
	at := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	st := httpapi.TeamStatus{Enabled: true, Connected: true, Role: "alice",
		Refused: []teamsync.Refusal{{ID: "m1", Op: "change", Outcome: "stale", At: at, Copy: "c1"}, {ID: "m2", Op: "delete", Outcome: "not yours", At: at}},
		Told:    []teamsync.Told{{ID: "m3", Member: "bob", What: "bob changed the importance of “x”", At: at}}}
	var out bytes.Buffer
	printTeamStatus(&Env{Stdout: &out}, st)
	for _, want := range []string{"refused:     change of m1", "your version: memtray trash restore c1", "met yours:   bob changed the importance of “x” (m3,"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("team status lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "trash restore"); n != 1 {
		t.Errorf("%d restore lines, want the copy's only:\n%s", n, out.String())
	}
}
