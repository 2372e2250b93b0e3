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
		Told: []teamsync.Told{{ID: "m3", Member: "bob", What: "bob changed the importance of “x”", At: at},
			{ID: "m4", Member: "bob", What: "bob also changed the text of “y”… resolved by merge", At: at, Seq: 7, Withdrawn: true}}}
	var out bytes.Buffer
	printTeamStatus(&Env{Stdout: &out}, st)
	for _, want := range []string{"refused:     change of m1", "your version: memtray trash restore c1", "met yours:   bob changed the importance of “x” (m3,"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("team status lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(out.String(), "resolved:    bob also changed the text of “y”… resolved by merge (m4,") || strings.Contains(out.String(), "met yours:   bob also changed the text") {
		t.Errorf("a withdrawn refusal is not listed as resolved, or still as met yours:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "trash restore"); n != 1 {
		t.Errorf("%d restore lines, want the copy's only:\n%s", n, out.String())
	}
}

// TestPrintTeamStatusSettings: memtray team status prints the team's
// settings and schema as the daemon last read them from the team database.
func TestPrintTeamStatusSettings(t *testing.T) {
	at := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		set   *teamsync.SettingsStatus
		wants []string
		not   []string
	}{
		{"not read yet", nil, nil, []string{"settings:"}},
		{"a member", &teamsync.SettingsStatus{ConflictRetentionDays: 90, ChangedBy: "owner", ChangedAt: at, Settable: true, Schema: 7, Floor: 3, Known: 7, Used: 7},
			[]string{"settings:    conflict retention 90 days (set by owner, ", "schema 7, which memtray of schema 3 or later syncs with"}, []string{"admin", "knows"}},
		{"an admin", &teamsync.SettingsStatus{ConflictRetentionDays: 30, ChangedBy: "bob", ChangedAt: at, Settable: true, Admin: true, Schema: 7, Floor: 3, Known: 7, Used: 7},
			[]string{"conflict retention 30 days (set by bob", "you are an admin (memtray team settings --conflict-retention-days N)"}, nil},
		{"before the owner migrated to 6", &teamsync.SettingsStatus{ConflictRetentionDays: 90, Schema: 5, Floor: 3, Known: 7, Used: 5},
			[]string{"90 days (fixed until the owner runs memtray team init", "this memtray knows 7 and uses 5"}, []string{"set by"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			printTeamStatus(&Env{Stdout: &out}, httpapi.TeamStatus{Enabled: true, Connected: true, Role: "alice", Settings: tc.set})
			for _, w := range tc.wants {
				if !strings.Contains(out.String(), w) {
					t.Errorf("team status lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out.String(), w) {
					t.Errorf("team status says %q:\n%s", w, out.String())
				}
			}
		})
	}
}
