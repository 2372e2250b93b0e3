package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestDropUnconfirmed(t *testing.T) {
	tests := []struct {
		name       string
		turn       Turn
		later      []string
		gone, kept []string
	}{
		{
			name: "a hedged cause nothing confirms is not kept",
			turn: loopTurn("The rounding test fails on `invoice_total`; this is probably a float precision problem in `money.Round`."),
			gone: []string{"probably a float precision problem"},
		},
		{
			name: "a cause blamed on a known tool bug is a guess too",
			turn: loopTurn("This is a known Go vet bug — `vet` reports the `sync.Mutex` copy in `ledger.Snapshot` wrongly."),
			gone: []string{"known Go vet bug"},
		},
		{
			name: "a later plain statement of the same subject confirms the guess",
			turn: loopTurn(
				"The rounding test fails; I suspect `money.Round` uses banker's rounding for half cents.",
				"Confirmed: `money.Round` uses banker's rounding for half cents, so 0.125 becomes 0.12.",
			),
			kept: []string{"Confirmed: `money.Round`"}, // the guess goes as restated later
		},
		{
			// The window is the turn: a live capture decides the turn
			// before the later one exists (TestGuessSameLiveAndBatch).
			name:  "a later turn's statement does not confirm",
			turn:  loopTurn("The importer might be skipping rows with an empty `customer_id` column in `import.go`."),
			later: []string{"The importer skips rows with an empty `customer_id` column: `import.go` returns early on them."},
			gone:  []string{"might be skipping rows"},
		},
		{
			name: "narration about the same subject confirms nothing",
			turn: loopTurn(
				"The timeout is likely caused by `pgbouncer` closing idle connections in `db/pool.go` after 60 s.",
				"Let me raise the idle timeout of `pgbouncer` in `db/pool.go`.",
			),
			gone: []string{"likely caused by `pgbouncer`"},
		},
		{
			name: "a compaction summary restating the guess confirms nothing",
			turn: Turn{SessionID: "s", User: []string{"continue"}, Steps: []Step{
				{Text: "The nightly export of the billing service takes forty minutes on the staging database, probably because `report.Build` queries the invoices of each customer one by one instead of loading them in a single batch."},
				{Text: continuedPrefix + ".\n\n`report.Build` queries invoices per customer in `report/build.go`.", Summary: true},
				{Text: "Done."},
			}},
			gone: []string{"probably because"},
		},
		{
			name: "what a change should do, untested, is a guess",
			turn: loopTurn("I added a numeric check to `Cell.show_value` in `app/models/cell.py`. This modification should ensure that string values are converted before `round()` runs."),
			gone: []string{"should ensure"},
			kept: []string{"numeric check to `Cell.show_value`"},
		},
		{
			name: "advice hedged on what the user will do is not a guess",
			turn: loopTurn("To change the schedule you will likely need to edit `deploy/cron.yaml` in the ops repository."),
			kept: []string{"you will likely need to edit `deploy/cron.yaml`"},
		},
		{
			name: "a plain finding is untouched",
			turn: loopTurn("`money.Round` uses banker's rounding for half cents, so 0.125 becomes 0.12 in `invoice_total`."),
			kept: []string{"banker's rounding"},
		},
		{
			// Over maxGuessWords the sentence is a list run together: the
			// list stays, its guessing aside goes.
			name: "a guessing aside of a long list goes, the list stays",
			turn: loopTurn("`lib/ledger/reconciler.ex` (CREATED) GenServer with an ETS table tracking each account's reconciliation state (pending/matched/failed) Public API: `start/2`, `match/2`, `fail/2`, `state/1` Sweeps stale entries every 30s with a 5 minute TTL Uses `credo:disable-for-next-line` for the Repo call in the rescue block (compiler bug workaround)"),
			gone: []string{"compiler bug workaround"},
			kept: []string{"`credo:disable-for-next-line` for the Repo call in the rescue block", "Sweeps stale entries every 30s"},
		},
		{
			name: "an aside that guesses nothing stays",
			turn: loopTurn("`lib/ledger/reconciler.ex` (CREATED) GenServer with an ETS table tracking each account's reconciliation state (pending/matched/failed) Public API: `start/2`, `match/2`, `fail/2`, `state/1` Sweeps stale entries every 30s with a 5 minute TTL Uses `credo:disable-for-next-line` for the Repo call in the rescue block (credo flags the alias)"),
			kept: []string{"(credo flags the alias)", "(pending/matched/failed)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cands := Distill(tc.turn, modelSaid(tc.later...))
			got := keptText(cands)
			for _, g := range tc.gone {
				if strings.Contains(got, g) {
					t.Errorf("%q still kept:\n%s", g, got)
				}
			}
			for _, k := range tc.kept {
				if !strings.Contains(got, k) {
					t.Errorf("%q lost:\n%s\n%+v", k, got, cands)
				}
			}
		})
	}
}

func TestHedged(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"this is probably a caching issue in the proxy.", true},
		{"it seems like the fixture is stale.", true},
		{"i suspect the cron job runs as root.", true},
		{"this is likely a race in the worker pool.", true},
		{"this looks like a known elixir compiler bug.", true},
		{"the warning is a dialyzer false positive.", true},
		{"you will likely need to edit the script.", false},
		{"the proxy caches responses for 60 s.", false},
		{"the likelihood table is in stats.go.", false},
		{"this modification should ensure that the cell objects get their context.", true},
		{"these changes should allow reshape_data to handle both layouts.", true},
		{"it converts strings to numbers, which should help prevent type errors later.", true},
		{"the session is in a detached head state, which we should fix by checking out the branch.", false},
		{"you should always run make lint before pushing.", false},
		{"the config should set retries to 3 for the worker.", false},
	}
	for _, tc := range tests {
		if got := hedged(tc.s); got != tc.want {
			t.Errorf("hedged(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// TestGuessSameLiveAndBatch: one session run through the pipeline as
// `memtray ingest` does (each turn knowing what the session said after
// it, the session ended) and as the daemon captures it live (each turn
// when it ends, nothing after it known) forms the same memories: a guess
// the turn confirms is kept both ways, one only a later turn confirms is
// dropped both ways (the later turn's finding is stored), and one nothing
// confirms is dropped.
func TestGuessSameLiveAndBatch(t *testing.T) {
	ctx := context.Background()
	var exs []memory.Exchange
	for i, tt := range [][]string{
		{"why do the invoice totals drift?",
			"I suspect `money.Round` uses banker's rounding for half cents in `invoice_total`.",
			"Confirmed: `money.Round` uses banker's rounding for half cents, so 0.125 becomes 0.12 in `invoice_total`.",
			"The nightly `export_invoices` job is probably slow because `report.Build` loads each customer's invoices one by one.",
			"The CSV importer might be skipping rows with an empty `customer_id` column in `import/rows.go`.",
			"Done."},
		{"and the importer?",
			"Let me read the importer.",
			"The CSV importer skips rows with an empty `customer_id` column: `import/rows.go` returns early on them before validation.",
			"Done."},
	} {
		for _, ex := range sessionOf("s-guess", tt[0], tt[1:]...) {
			ex.Turn, ex.UserTurns = len(exs)+1, i+1 // a session counts its exchanges from 1 (memory.Exchange.Turn)
			exs = append(exs, ex)
		}
	}
	turns := GroupTurns(exs)
	if len(turns) != 2 {
		t.Fatalf("%d turns", len(turns))
	}
	batch, live := newFixture(t, nil), newFixture(t, nil)
	for i, tn := range turns {
		if _, _, err := batch.p.ProcessTurn(ctx, tn, LaterTexts(turns[i+1:], tn.SessionID), SessionState{UserTurns: 2, Ended: true}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := live.p.ProcessTurn(ctx, tn, nil, SessionState{UserTurns: tn.UserTurns}); err != nil {
			t.Fatal(err)
		}
	}
	want, got := liveTexts(t, batch.st), liveTexts(t, live.st)
	if !slices.Equal(want, got) {
		t.Fatalf("live store differs from batch:\nbatch %q\nlive  %q", want, got)
	}
	all := strings.Join(got, "\n")
	for _, k := range []string{"banker's rounding", "returns early on them"} {
		if !strings.Contains(all, k) {
			t.Errorf("%q not stored: %q", k, got)
		}
	}
	for _, g := range []string{"probably slow", "might be skipping rows"} {
		if strings.Contains(all, g) {
			t.Errorf("guess %q stored: %q", g, got)
		}
	}
}
