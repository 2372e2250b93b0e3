package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/steward"
)

func TestFeedbackCommands(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	code, out, errs := run(t, ctx, "", "add", dd, "--json", "The billing worker retries Stripe webhooks 5 times with exponential backoff capped at 10 minutes.")
	var m memory.Memory
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil {
		t.Fatalf("add: %d %s %s", code, out, errs)
	}
	get := func() memory.Memory {
		t.Helper()
		code, out, errs := run(t, ctx, "", "get", dd, "--json", m.ID)
		var got memory.Memory
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
			t.Fatalf("get: %d %s %s", code, out, errs)
		}
		return got
	}
	for _, tc := range []struct {
		args  []string
		code  int
		say   string
		check func(memory.Memory) bool
	}{
		{[]string{"pin", m.ID}, 0, "pinned", func(m memory.Memory) bool { return m.Pinned }},
		{[]string{"unpin", m.ID}, 0, "unpinned", func(m memory.Memory) bool { return !m.Pinned }},
		{[]string{"reinforce", m.ID}, 0, "reinforced (1 times", func(m memory.Memory) bool { return m.ReinforcedCount == 1 }},
		{[]string{"rate", "--reason", "helped", "+1", m.ID}, 0, "feedback +1.00 over 1", func(m memory.Memory) bool { return m.FeedbackN == 1 && m.FeedbackSum == 1 }},
		{[]string{"rate", "-1", m.ID}, 0, "feedback +0.00 over 2", func(m memory.Memory) bool { return m.FeedbackN == 2 && m.FeedbackSum == 0 }},
		{[]string{"snooze", m.ID, "3"}, 0, "snoozed until", func(m memory.Memory) bool { return !m.CooldownUntil.IsZero() }},
		{[]string{"unsnooze", m.ID}, 0, "awake", func(m memory.Memory) bool { return m.CooldownUntil.IsZero() }},
		{[]string{"snooze", m.ID, "soon"}, 2, "", nil},
		{[]string{"snooze", m.ID, "-1"}, 1, "", nil}, // read as an unknown flag
		{[]string{"rate", "+2", m.ID}, 2, "", nil},
		{[]string{"rate", "+1"}, 2, "", nil},
		{[]string{"pin", "nope"}, 1, "", nil},
		{[]string{"pin"}, 2, "", nil},
	} {
		code, out, errs := run(t, ctx, "", append([]string{tc.args[0], dd}, tc.args[1:]...)...)
		if code != tc.code || !strings.Contains(out, tc.say) {
			t.Errorf("%v: exit %d (want %d), out %q, err %q", tc.args, code, tc.code, out, errs)
			continue
		}
		// The ID it says is one the next command takes: the whole ID,
		// not a prefix that `get` or `pin` answers with "not found".
		if tc.code == 0 && !strings.Contains(out, m.ID) {
			t.Errorf("%v: out %q does not name the memory by its ID %s", tc.args, out, m.ID)
		}
		if tc.check != nil && !tc.check(get()) {
			t.Errorf("%v: the memory did not change as expected: %+v", tc.args, get())
		}
	}
}

func TestDreamAndTrashCommands(t *testing.T) {
	dir := isolate(t)
	ctx := context.Background()
	dd := "--data-dir=" + dir
	run(t, ctx, "", "add", dd, "The CI cache key includes the go.sum hash and the Go version.")
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"dream"}, 0, "memories scanned"},
		{[]string{"dream", "--apply"}, 0, "nothing to do"},
		{[]string{"dream", "--undo"}, 1, ""},
		{[]string{"dream", "--ops", "merge,prune", "--json"}, 0, `"ops"`},
		{[]string{"dream", "--ops", "polish"}, 1, ""},
		{[]string{"dream", "--all", "--project", "p"}, 1, ""},
		{[]string{"dream", "--undo", "--apply"}, 2, ""},
		{[]string{"dream", "--runs"}, 0, "no applied steward run can be undone"},
		{[]string{"dream", "--runs", "--json"}, 0, "[]"},
		{[]string{"dream", "--runs", "--apply"}, 2, ""},
		{[]string{"dream", "--run", "x"}, 2, ""},
		{[]string{"dream", "--undo", "--run", "20250101T000000Z-00000000"}, 1, ""},
		{[]string{"trash"}, 0, "0 in the trash"},
		{[]string{"trash", "restore"}, 2, ""},
		{[]string{"trash", "restore", "nope"}, 1, ""},
	} {
		code, out, errs := run(t, ctx, "", append([]string{tc.args[0], dd}, tc.args[1:]...)...)
		if code != tc.code || !strings.Contains(out, tc.say) {
			t.Errorf("%v: exit %d (want %d), out %q, err %q", tc.args, code, tc.code, out, errs)
		}
	}
}

func TestPrintRuns(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		runs []steward.Run
		want []string
	}{
		{nil, []string{"no applied steward run can be undone"}},
		{[]steward.Run{
			{RunID: "20260601T120000Z-aaaaaaaa", At: at, Memories: 3, Counts: map[string]int{steward.OpDecayStale: 3}, Scheduled: true},
			{RunID: "20260601T110000Z-bbbbbbbb", At: at.Add(-time.Hour), Memories: 2, Counts: map[string]int{steward.OpMerge: 1}},
		}, []string{"20260601T120000Z-aaaaaaaa", "20260601T110000Z-bbbbbbbb", "decay_stale 3", "merge 1", "schedule", "you", "--undo --run RUN"}},
	} {
		var b strings.Builder
		printRuns(&b, tc.runs)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("printRuns(%d runs) misses %q:\n%s", len(tc.runs), w, b.String())
			}
		}
		if len(tc.runs) == 2 && strings.Index(b.String(), "aaaaaaaa") > strings.Index(b.String(), "bbbbbbbb") {
			t.Errorf("runs out of order:\n%s", b.String())
		}
	}
}
