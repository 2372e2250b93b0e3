package ingest

import (
	"strings"
	"testing"
)

// keptText joins the texts of the kept candidates.
func keptText(cands []Candidate) string {
	var out []string
	for _, c := range cands {
		if c.Keep {
			out = append(out, c.Text)
		}
	}
	return strings.Join(out, "\n")
}

// loopTurn is a turn whose model texts are said between tool calls (each
// step but the last calls a tool) and end with a short final answer.
func loopTurn(texts ...string) Turn {
	t := Turn{SessionID: "s", User: []string{"fix the invoice export"}}
	for _, tx := range texts {
		t.Steps = append(t.Steps, Step{Text: tx})
	}
	t.Steps = append(t.Steps, Step{Text: "Done."})
	return t
}

func TestDropSelfCorrected(t *testing.T) {
	tests := []struct {
		name       string
		turn       Turn
		gone, kept []string // sentences that must be gone, and kept
	}{
		{
			name: "an emphasised correction with a pronoun subject drops the sentence it corrects, across joined steps",
			turn: loopTurn(
				"The exporter writes `build/invoices.csv` through `csvout.Writer` with a header row.",
				"So `build/invoices.csv` is gitignored, which means it is regenerated on every run by `make export`.",
				"It IS tracked in git (added with `git add -f` by the release script).",
			),
			gone: []string{"regenerated on every run"},
			kept: []string{"`build/invoices.csv` IS tracked in git", "with a header row"},
		},
		{
			name: "a revision cue with a pronoun subject in one response",
			turn: loopTurn("The ledger importer reads `ledger.toml` from the working directory when `--config` is empty. " +
				"That doesn't work for the cron job, whose working directory is `/var/lib/ledger`, so `ledger_import.sh` passes `--config` explicitly."),
			gone: []string{"reads `ledger.toml` from the working directory"},
			kept: []string{"passes `--config` explicitly"},
		},
		{
			name: "a pronoun sentence without a cue corrects nothing",
			turn: loopTurn("The tax table lives in `rates/eu_vat.json` and is loaded at startup by `taxes.Load`. " +
				"It is keyed by ISO country code, so `taxes.Rate(\"DE\")` returns the German rate."),
			kept: []string{"loaded at startup by `taxes.Load`", "keyed by ISO country code"},
		},
		{
			name: "instead of with an object the sentence before does not say describes a design, it corrects nothing",
			turn: loopTurn("The batch helpers get a `Stream` suffix on their names (so `sumRowsBatch` becomes `sumRowsBatchStream`). " +
				"They hand each row to the `rowFn` callback instead of accumulating the rows into a slice."),
			kept: []string{"`Stream` suffix on their names", "instead of accumulating"},
		},
		{
			name: "instead of with the sentence before as its object corrects it",
			turn: loopTurn("The batch helpers accumulate the rows into a slice before returning them to `report.Build`. " +
				"They now hand each row to a callback instead of accumulating the rows into a slice, since `report.Build` streams."),
			gone: []string{"before returning them to `report.Build`"},
			kept: []string{"hand each row to a callback"},
		},
		{
			name: "a capitalised word that is not a correction keeps the sentence before it",
			turn: loopTurn("The migration `0042_split_totals.sql` adds `net_total` and `tax_total` columns to `invoices`. " +
				"The NOT NULL constraint on `tax_total` needs a default of 0 for old rows."),
			kept: []string{"adds `net_total`", "NOT NULL constraint"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := keptText(Distill(tc.turn, nil))
			for _, g := range tc.gone {
				if strings.Contains(got, g) {
					t.Errorf("%q still kept:\n%s", g, got)
				}
			}
			for _, k := range tc.kept {
				if !strings.Contains(got, k) {
					t.Errorf("%q lost:\n%s", k, got)
				}
			}
		})
	}
}

func TestSelfCorrection(t *testing.T) {
	const prev = "The poller reads `queue.db` every 5 seconds through `poll.Loop`."
	tests := []struct {
		prev, s string
		off     bool // selfCorrectOff["object"]
		want    bool
	}{
		{prev, "It IS tracked in git.", false, true},
		{prev, "So it does NOT run on Windows.", false, true},
		{prev, "That didn't work either.", false, true},
		{prev, "This actually comes from the proxy's cache.", false, true},
		{prev, "It is tracked in git.", false, false},                   // no cue
		{prev, "The file IS tracked in git.", false, false},             // its own subject: dropRevised's case
		{prev, "Actually the proxy caches the response.", false, false}, // names its own subject
		{prev, "It reads `ledger.toml` at startup.", false, false},
		// An object cue corrects the sentence before only when its
		// object is what that sentence says.
		{prev, "It listens on a Unix socket instead of polling `queue.db`.", false, true},
		{prev, "It uses inotify instead.", false, true},         // no object: the sentence before
		{prev, "It uses inotify instead of that.", false, true}, // an object naming nothing: the sentence before
		{prev, "They stream rows to the caller instead of buffering whole batches.", false, false},
		{prev, "They stream rows to the caller instead of buffering whole batches.", true, true}, // the rule off
		{prev, "It retries twice despite the backoff setting.", false, false},
		{prev, "It still fails despite the backoff setting.", false, true}, // a cue of its own
		{prev, "It stalls despite `poll.Loop` being restarted.", false, true},
		{prev, "They stream rows instead of buffering them, but that didn't help.", false, true},
	}
	for _, tc := range tests {
		selfCorrectOff["object"] = tc.off
		if got := selfCorrection(tc.prev, tc.s); got != tc.want {
			t.Errorf("selfCorrection(%q) off=%v = %v, want %v", tc.s, tc.off, got, tc.want)
		}
		delete(selfCorrectOff, "object")
	}
}
