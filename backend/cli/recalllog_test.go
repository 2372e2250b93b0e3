package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/store"
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

// TestHookRecallLogsAgent: a prompt hook says which agent asked, and the
// recall log (read through the running daemon) keeps it.
func TestHookRecallLogsAgent(t *testing.T) {
	isolate(t)
	dir := startHookDaemon(t)
	ctx := context.Background()
	for i, agent := range []string{"claude-code", "codex"} {
		stdin := hookStdin(t, map[string]any{"session_id": agent + "-session", "cwd": "/home/me/src/webapp",
			"prompt": fmt.Sprint("which port does the staging database listen on? ", i)})
		if code, _, errs := run(t, ctx, stdin, "hook", "user-prompt-submit", "--agent", agent, "--data-dir", dir, "--timeout", "20s"); code != 0 {
			t.Fatalf("%s hook: exit %d %s", agent, code, errs)
		}
	}
	code, out, errs := run(t, ctx, "", "recall-log", "--data-dir", dir, "--json")
	var log []store.RecallEntry
	if code != 0 || json.Unmarshal([]byte(out), &log) != nil {
		t.Fatalf("recall-log: exit %d %q %s", code, out, errs)
	}
	got := map[string]string{}
	for _, e := range log {
		got[e.SessionID] = e.Agent
	}
	want := map[string]string{"claude-code-session": "claude-code", "codex-session": "codex"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("agents by session %v, want %v", got, want)
	}
}
