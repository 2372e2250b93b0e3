package ingest

import (
	"strings"
	"testing"
)

// withAblated runs f with the rules of junk.go named in rules off.
func withAblated(t *testing.T, rules string, f func()) {
	t.Helper()
	old := ablate
	ablate = rules
	defer func() { ablate = old }()
	resetClassMemo()
	defer resetClassMemo()
	f()
}

// resetClassMemo empties the memo of sentence classes, which remembers
// answers given with the rules as they were.
func resetClassMemo() {
	classMemo.mu.Lock()
	classMemo.m, classMemo.bytes = nil, 0
	classMemo.mu.Unlock()
}

// TestJunkRules: each rule of junk.go takes out of what a turn keeps the
// piece it is about (gone is in no kept statement with the rule on, and in
// one with it off), and leaves the durable statement that looks like it
// (stays is kept either way). A final answer is the turn's last text; a
// tool-loop text is one followed by another.
func TestJunkRules(t *testing.T) {
	tests := []struct {
		name  string
		rule  string
		texts []string // the model's texts of the turn, in order
		gone  string
		stays string
	}{
		{
			name:  "a lead-in whose list went to another block",
			rule:  ruleLeadIn,
			texts: []string{"The ledger totals now match the invoices. To summarize what we've done in the working copy:\n\n1. Added `roundHalfEven` to `ledger/round.go` so totals match the bank's rounding."},
			gone:  "To summarize what we've done",
			stays: "`roundHalfEven`",
		},
		{
			name:  "a lead-in to a command the prose lost",
			rule:  ruleLeadIn,
			texts: []string{"The exporter writes one CSV per account into `out/ledger/`. Our nightly export is rerun by hand with the following command:\n\n```\nmake export\n```"},
			gone:  "rerun by hand with the following command:",
			stays: "The exporter writes one CSV per account into `out/ledger/`.",
		},
		{
			name:  "a lead-in that names where a thing is stays",
			rule:  ruleLeadIn,
			texts: []string{"To create an index of the schemas, which exports all of them, here is the new file `schemas/index.ts`:\n\n```ts\nexport * from './a.ts'\n```"},
			gone:  "",
			stays: "`schemas/index.ts`:",
		},
		{
			name:  "the items of a list of suggestions",
			rule:  ruleProposal,
			texts: []string{"This ledger library is fairly complete. Some potential additions could include:\n\n- **Currency conversion:** A `convert` helper that applies the day's rate to a `Money` value.\n- **Rounding modes:** Functions like `roundUp` and `roundDown` for each currency.\n\nThe `Money` type stores amounts as integer cents because floats drift."},
			gone:  "`convert` helper",
			stays: "integer cents because floats drift",
		},
		{
			name:  "the items of an offer after a condition",
			rule:  ruleProposal,
			texts: []string{"The ledger export reads `config/ledger.toml` for its account list.\n\nOnce you add these files to the chat, I can:\n\n- Check `ledger/export.go` for float arithmetic on amounts\n- Identify missing validation of account ids in `ledger/accounts.go`"},
			gone:  "float arithmetic",
			stays: "`config/ledger.toml`",
		},
		{
			name:  "a report of what was done is no proposal",
			rule:  ruleProposal,
			texts: []string{"I've made the following changes:\n\n- Added a `--since` flag to `cmd/export` that skips entries older than the given date"},
			gone:  "",
			stays: "`--since` flag",
		},
		{
			name:  "a suggestion of what might need changing",
			rule:  ruleSuggest,
			texts: []string{"The export job reads `config/ledger.toml` at start-up.", "`cmd/nightly/main.go` schedules the export job with a cron entry at 02:00 UTC. The `retry.go` helper in `cmd/nightly/` might need updates to back off longer between attempts."},
			gone:  "might need updates",
			stays: "`cmd/nightly/main.go`",
		},
		{
			name:  "talk about the agent's edit blocks",
			rule:  ruleEditTalk,
			texts: []string{"The \"TODO\" comment was already removed in a previous step, so the SEARCH block failed. The `Money` type keeps integer cents because float sums drift."},
			gone:  "SEARCH block failed",
			stays: "integer cents",
		},
		{
			name:  "the agent describing itself as the assistant",
			rule:  ruleEditTalk,
			texts: []string{"It's a set of rules that I (the AI assistant) must follow when my answers change code. The ledger's rounding rule lives in `ledger/round.go`."},
			gone:  "the AI assistant",
			stays: "`ledger/round.go`",
		},
		{
			name:  "edit talk that names a file of the project stays",
			rule:  ruleEditTalk,
			texts: []string{"The previous SEARCH block didn't match the start of `ledger/round.go`, which opens with a license header."},
			gone:  "",
			stays: "`ledger/round.go`",
		},
		{
			name:  "a participle narrating the agent's act",
			rule:  ruleParticiple,
			texts: []string{"Removing the task specification since we're handling this as a direct change.", "The invoice exporter writes `out/invoices.csv` once a day."},
			gone:  "Removing the task specification",
			stays: "`out/invoices.csv`",
		},
		{
			name:  "a participle that is a subject states what is",
			rule:  ruleParticiple,
			texts: []string{"Adding a column to `ledger_entries` requires a migration in `db/migrations/` because the table is replicated."},
			gone:  "",
			stays: "requires a migration",
		},
	}
	kept := func(texts []string) string {
		return strings.Join(keptTexts("fix the ledger export", texts, nil), "\n")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on := kept(tc.texts)
			var off string
			withAblated(t, tc.rule, func() { off = kept(tc.texts) })
			if tc.gone != "" {
				if strings.Contains(on, tc.gone) {
					t.Errorf("%s on: %q still kept in\n%s", tc.rule, tc.gone, on)
				}
				if !strings.Contains(off, tc.gone) {
					t.Errorf("%s off: %q not kept in\n%s\n(the case does not test the rule)", tc.rule, tc.gone, off)
				}
			}
			if !strings.Contains(on, tc.stays) || !strings.Contains(off, tc.stays) {
				t.Errorf("%q must stay either way; on:\n%s\noff:\n%s", tc.stays, on, off)
			}
		})
	}
}

// TestDurableLookalikes: statements in the shape of the junk the rules of
// junk.go take out, that say something a developer wants next week, keep
// their class.
func TestDurableLookalikes(t *testing.T) {
	tests := []struct {
		st     string
		origin string
	}{
		{"Created the PR description file at `process/tasks/002/pr.md`.", OriginFinal},
		{"The build failed because the cache under `~/.cache/ledger` was stale after the schema change.", OriginToolLoop},
		{"Rounding the totals in `ledger/round.go` fixes the one-cent drift in the monthly report.", OriginToolLoop},
		{"Using `bun` instead of npm keeps the lockfile in `bun.lockb` consistent with CI.", OriginFinal},
		{"`normalizeRepoName` in `src/domain/repo-utils.ts` turns file:// URLs into local/<basename>.", OriginToolLoop},
		{"The exporter might be slow on large ledgers because it loads every entry of `ledger_entries` at once.", OriginFinal},
	}
	for _, tc := range tests {
		ls := lower(tc.st)
		if participleAct(ls) || talksEdits(tc.st, ls) || suggestion(ls) {
			t.Errorf("%q read as junk (participle %v, edit talk %v, suggestion %v)", tc.st, participleAct(ls), talksEdits(tc.st, ls), suggestion(ls))
		}
		if c := classifySentence(tc.st, tc.origin == OriginToolLoop); c != ClassFinding && c != ClassChange {
			t.Errorf("%q classified %s, want a finding or a change", tc.st, c)
		}
	}
}

// TestLeadInCut: a kept sentence ending in a colon is cut when what it
// introduces is not the next statement kept, unless it names a thing.
func TestLeadInCut(t *testing.T) {
	tests := []struct {
		name        string
		kept, order []string
		want        []int
	}{
		{"last kept", []string{"The totals match.", "To summarize what we did:"}, []string{"The totals match.", "To summarize what we did:"}, []int{1}},
		{"next one dropped", []string{"Here is what changed:", "The flag is gone."}, []string{"Here is what changed:", "Let me check.", "The flag is gone."}, []int{0}},
		{"followed by what it introduces", []string{"The export does two things:", "It writes the CSV."}, []string{"The export does two things:", "It writes the CSV."}, nil},
		{"names a thing", []string{"The schema lives in `schemas/index.ts`:"}, []string{"The schema lives in `schemas/index.ts`:"}, nil},
		{"no colon", []string{"The totals match."}, []string{"The totals match."}, nil},
	}
	for _, tc := range tests {
		got := leadInCut(tc.kept, tc.order)
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("%s: leadInCut = %v, want %v", tc.name, got, tc.want)
		}
	}
}
