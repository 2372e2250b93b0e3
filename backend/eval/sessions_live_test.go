package eval

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunSessionsLiveTestdata: the set's two Claude Code sessions,
// captured live from their files written a turn at a time with a Stop
// hook after each, leave the memories `memtray ingest` leaves; ingesting
// the file again, into either store, replays every turn and changes no
// memory.
func TestRunSessionsLiveTestdata(t *testing.T) {
	var dump strings.Builder
	rep, err := RunSessionsLive(context.Background(), filepath.Join("testdata", "sessions", "set.json"),
		SessionsOptions{TempDir: t.TempDir(), Dump: &dump})
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	if rep.Skipped != "" || len(rep.Sessions) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	for _, s := range rep.Sessions {
		if s.Skipped != "" || s.Hooks < 2 || s.Ingest == 0 || s.TailErrors != 0 {
			t.Errorf("session %s: %+v", s.ID, s)
		}
		if s.Equal != s.Ingest || s.Live != s.Ingest {
			t.Errorf("session %s: live capture differs from ingest:\n%s", s.ID, dump.String())
		}
		if s.Again != (Rerun{}) || s.AfterLive != (Rerun{}) {
			t.Errorf("session %s: ingested again, it changed memories/decided turns again: %s after ingest, %s after live capture", s.ID, s.Again, s.AfterLive)
		}
	}
	if rep.Differing != 0 || rep.Equal == 0 {
		t.Errorf("overall: %d equal, %d differing", rep.Equal, rep.Differing)
	}
}

func TestRunSessionsLiveSkips(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	absent := filepath.Join(dir, "nope.json")
	rep, err := RunSessionsLive(ctx, absent, SessionsOptions{TempDir: dir})
	if err != nil || rep.Skipped != "skipped: "+absent+" not found" {
		t.Fatalf("absent set: %v, %+v", err, rep)
	}
	set := filepath.Join(dir, "set.json")
	writeFile(t, set, `{"sessions":[{"id":"A","agent":"claude-code","file":"gone/a.jsonl","user_turns":1,
		"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}]},
		{"id":"B","agent":"aider","file":"b.md","user_turns":1,
		"facts":[{"id":"F1","where":"user","keys":[["x"]],"queries":["q"]}]}]}`)
	rep, err = RunSessionsLive(ctx, set, SessionsOptions{TempDir: dir})
	if err != nil || !strings.HasPrefix(rep.Skipped, "skipped: ") || len(rep.Sessions) != 2 ||
		!strings.HasPrefix(rep.Sessions[0].Skipped, "file not found") || !strings.HasPrefix(rep.Sessions[1].Skipped, "not captured live") {
		t.Fatalf("set with no session to capture live: %v, %+v", err, rep)
	}
}

func TestDiffTexts(t *testing.T) {
	tests := []struct {
		a, b         []string
		equal        int
		onlyA, onlyB []string
	}{
		{nil, nil, 0, nil, nil},
		{[]string{"x"}, []string{"x"}, 1, nil, nil},
		{[]string{"a", "b", "b"}, []string{"b", "c"}, 1, []string{"a", "b"}, []string{"c"}},
		{[]string{"a"}, nil, 0, []string{"a"}, nil},
	}
	for _, tt := range tests {
		eq, a, b := diffTexts(tt.a, tt.b)
		if eq != tt.equal || !slices.Equal(a, tt.onlyA) || !slices.Equal(b, tt.onlyB) {
			t.Errorf("diffTexts(%q, %q) = %d %q %q", tt.a, tt.b, eq, a, b)
		}
	}
}
