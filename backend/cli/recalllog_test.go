package cli

import (
	"context"
	"strings"
	"testing"
)

// TestRecallLogCommand: recall-log lists the recalls the local daemon
// logged (in-process, written at its close), clear empties the log, and
// bad arguments are usage errors.
func TestRecallLogCommand(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	if code, _, errs := run(t, ctx, "", "add", dd, "The ledger integration tests use the Postgres database ledger_test on port 5433."); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	if code, _, errs := run(t, ctx, "", "recall", dd, "--session", "s1", "which database do the ledger integration tests use?"); code != 0 {
		t.Fatalf("recall: %d %s", code, errs)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"list", []string{"recall-log", dd}, 0, "1 recalls"},
		{"json", []string{"recall-log", dd, "--json", "--session", "s1"}, 0, `"session_id": "s1"`},
		{"clear", []string{"recall-log", dd, "clear"}, 0, "cleared 1 recalls"},
		{"empty after clear", []string{"recall-log", dd}, 0, "0 recalls"},
		{"unknown argument", []string{"recall-log", dd, "wipe"}, 2, ""},
		{"bad limit", []string{"recall-log", dd, "--limit", "0"}, 2, ""},
	}
	for _, tt := range tests {
		code, out, errs := run(t, ctx, "", tt.args...)
		if code != tt.code || !strings.Contains(out, tt.contains) {
			t.Errorf("%s: exit %d (want %d), out %q, err %q", tt.name, code, tt.code, out, errs)
		}
	}
}
