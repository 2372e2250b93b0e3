package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// twoTurns is a session of two turns, each a prompt followed by the
// model's texts.
func twoTurns(id string, first, second []string) []Turn {
	var exs []memory.Exchange
	for i, tt := range [][]string{first, second} {
		for _, ex := range sessionOf(id, tt[0], tt[1:]...) {
			ex.UserTurns = i + 1
			exs = append(exs, ex)
		}
	}
	return GroupTurns(exs)
}

// allMemories returns every memory of the store, superseded ones too.
func allMemories(t *testing.T, st *store.Store) []memory.Memory {
	t.Helper()
	var out []memory.Memory
	if err := st.Iterate(context.Background(), store.Filter{IncludeSuperseded: true}, func(m memory.Memory) error {
		out = append(out, m)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSupersedeRestatedAcrossTurns: a memory turn 1 stored that turn 2
// says again (names every load-bearing token of it, about the same
// subject) is superseded by turn 2's memory, in batch ingest and live
// capture alike; one turn 2 says with a name left out stands.
func TestSupersedeRestatedAcrossTurns(t *testing.T) {
	ctx := context.Background()
	first := []string{"why does the nightly export fail?", "Let me look at the job.",
		"The nightly export fails because `export/job.go` opens `reports.db` without `busy_timeout`, so its writes collide with the `vacuum` cron entry."}
	for _, tc := range []struct {
		name     string
		second   string
		restated bool
	}{
		{"restated", "Confirmed with the lock trace from the staging host: `export/job.go` opens `reports.db` without `busy_timeout`, and the `vacuum` cron entry holds the write lock for minutes, so the nightly export fails; `busy_timeout=5000` in the DSN fixes it.", true},
		{"a name left out", "Confirmed with the lock trace from the staging host: `export/job.go` opens `reports.db` without `busy_timeout`, and another cron entry holds the write lock for minutes, so the nightly export fails; `busy_timeout=5000` in the DSN fixes it.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := twoTurns("s-"+strings.ReplaceAll(tc.name, " ", "-"), first,
				[]string{"does the export still fail?", "Let me read the lock trace.", tc.second})
			if len(turns) != 2 {
				t.Fatalf("%d turns", len(turns))
			}
			batch, live := newFixture(t, nil), newFixture(t, nil)
			for i, tn := range turns {
				if _, _, err := batch.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{Ended: true}); err != nil {
					t.Fatal(err)
				}
				if _, _, err := live.p.ProcessTurn(ctx, tn, nil, SessionState{}); err != nil {
					t.Fatal(err)
				}
			}
			for name, f := range map[string]*fixture{"batch": batch, "live": live} {
				ms := allMemories(t, f.st)
				i1 := slices.IndexFunc(ms, func(m memory.Memory) bool { return strings.Contains(m.Text, "its writes collide") })
				i2 := slices.IndexFunc(ms, func(m memory.Memory) bool { return strings.Contains(m.Text, "lock trace") })
				if i1 < 0 || i2 < 0 {
					t.Fatalf("%s: turn 1 or turn 2 stored no memory of its own: %+v", name, ms)
				}
				m1, m2 := ms[i1], ms[i2]
				if m2.Superseded() {
					t.Fatalf("%s: turn 2's memory is superseded by %s", name, m2.SupersededBy)
				}
				switch {
				case tc.restated && (m1.SupersededBy != m2.ID || m2.Supersedes != m1.ID):
					t.Fatalf("%s: turn 1's memory superseded by %q (want %s), turn 2's supersedes %q", name, m1.SupersededBy, m2.ID, m2.Supersedes)
				case !tc.restated && m1.Superseded():
					t.Fatalf("%s: turn 1's memory superseded by %s, but turn 2 left a name of it out", name, m1.SupersededBy)
				}
			}
			if want, got := liveTexts(t, batch.st), liveTexts(t, live.st); !slices.Equal(want, got) {
				t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
			}
		})
	}
}

// TestUnrestate: when a memory that superseded an earlier one as its
// restatement is revised itself, the earlier one stands again.
func TestUnrestate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	ids := map[string]string{}
	for _, text := range []string{"The `sync/v2` importer batches 500 rows per request.", "The `sync/v2` importer batches 500 rows per request and retries twice."} {
		d, err := f.p.Write(ctx, WriteRequest{Memory: memory.Memory{Text: text, Project: "shop"}})
		if err != nil {
			t.Fatal(err)
		}
		ids[text[len(text)-8:]] = d.Memory.ID
	}
	old, next := ids["request."], ids["s twice."]
	if ok, err := f.p.supersede(ctx, old, next); err != nil || !ok {
		t.Fatalf("supersede: %v %v", ok, err)
	}
	restated := map[string][]string{next: {old}}
	if err := f.p.unrestate(ctx, next, restated); err != nil {
		t.Fatal(err)
	}
	ms, err := f.st.GetMany(ctx, []string{old, next})
	if err != nil {
		t.Fatal(err)
	}
	if mo, mn := ms[old], ms[next]; mo.Superseded() || mn.Supersedes != "" || len(restated) != 0 {
		t.Fatalf("old superseded by %q, next supersedes %q, restated %v", mo.SupersededBy, mn.Supersedes, restated)
	}
}
