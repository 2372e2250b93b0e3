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
	tests := []struct {
		s    string
		want bool
	}{
		{"It IS tracked in git.", true},
		{"So it does NOT run on Windows.", true},
		{"That didn't work either.", true},
		{"This actually comes from the proxy's cache.", true},
		{"It is tracked in git.", false},                   // no cue
		{"The file IS tracked in git.", false},             // its own subject: dropRevised's case
		{"Actually the proxy caches the response.", false}, // names its own subject
		{"It reads `ledger.toml` at startup.", false},
	}
	for _, tc := range tests {
		if got := selfCorrection(tc.s); got != tc.want {
			t.Errorf("selfCorrection(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
