package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// sessionOf builds a session's exchanges: a prompt, then the model's texts
// between tool calls (each but the last calls a tool).
func sessionOf(id, prompt string, texts ...string) []memory.Exchange {
	var out []memory.Exchange
	for i, tx := range texts {
		ex := memory.Exchange{SessionID: id, Turn: i + 1, UserTurns: 1, Project: "shop", Assistant: tx}
		if i == 0 {
			ex.User = prompt
		} else {
			ex.ToolLoop = true
			ex.ToolResults = []memory.ToolResult{{ToolUseID: "t", Content: "ok"}}
		}
		if i < len(texts)-1 {
			ex.ToolCalls = []memory.ToolCall{{ID: "t", Name: "Bash", Input: `{"command":"make test"}`}}
		}
		out = append(out, ex)
	}
	return out
}

func TestGroupTurns(t *testing.T) {
	a := sessionOf("s1", "fix the build", "Let me look.", "Done.")
	b := sessionOf("s1", "and the docs?", "Updated.")
	notify := memory.Exchange{SessionID: "s1", User: "<task-notification>\n<task-id>x</task-id>\n</task-notification>", Assistant: "That task is stale."}
	summary := memory.Exchange{SessionID: "s1", User: continuedPrefix + " that ran out of context.\nThe build needs Go 1.26 because of iterators.", Assistant: "Continuing."}
	other := sessionOf("s2", "hello there", "Hi.")
	exs := append(append(append(append(append([]memory.Exchange{}, a...), notify), summary), b...), other...)
	turns := GroupTurns(exs)
	if len(turns) != 3 {
		t.Fatalf("%d turns, want 3 (a harness notification and a compaction summary start none)", len(turns))
	}
	if got := turns[0]; len(got.User) != 1 || got.User[0] != "fix the build" || len(got.Steps) != 5 {
		t.Fatalf("turn 1: user %q, %d steps (want the prompt, 2 own steps, the notification's answer, the summary and its answer)", got.User, len(got.Steps))
	}
	if !strings.HasPrefix(turns[0].Steps[3].Text, continuedPrefix) {
		t.Fatalf("the compaction summary is not a step of the model: %q", turns[0].Steps[3].Text)
	}
	if turns[1].User[0] != "and the docs?" || turns[2].SessionID != "s2" {
		t.Fatalf("turns 2 and 3: %+v / %+v", turns[1].User, turns[2].SessionID)
	}
	if got := LaterTexts(turns[1:], "s1"); len(got) != 2 || got[0] != (LaterText{Text: "and the docs?", From: LaterUser}) {
		t.Fatalf("later texts of s1: %q", got)
	}
}

func TestDistill(t *testing.T) {
	tests := []struct {
		name   string
		user   string
		texts  []string
		later  []string
		keep   []string // substrings of kept statements
		drop   []string // substrings no kept statement has
		class  string   // the class of the first dropped candidate, if any
		prefer bool     // a kept statement is a user preference
	}{
		{
			name:  "narration between tool calls is dropped, the finding kept",
			user:  "why do the LiveView tests fail?",
			texts: []string{"Let me check the test helper first.", "The LiveView runs in a separate process that can't access the test sandbox, so the test needs `Sandbox.mode(Repo, {:shared, self()})`. Let me apply it.", "All 5 tests pass now."},
			keep:  []string{"separate process"},
			drop:  []string{"Let me", "tests pass"},
		},
		{
			name:  "a statement the turn corrects is not kept",
			user:  "add the CSS for the badge",
			texts: []string{"The stylesheet lives under `priv/static/assets/`, a gitignored folder.", "It's already tracked by git despite the gitignore, so the edit is committed with the rest.", "Done: the badge has its CSS."},
			drop:  []string{"a gitignored folder"},
		},
		{
			name:  "a later turn's correction counts too",
			user:  "where is the cache configured?",
			texts: []string{"The cache TTL is set in `config/cache.yaml` with `ttl_seconds: 300`."},
			later: []string{"Actually the cache TTL in config/cache.yaml is ignored; `CACHE_TTL` in the environment wins."},
			drop:  []string{"ttl_seconds"},
		},
		{
			name:   "a user's preference is a memory of type user",
			user:   "Never add the co-authored-by footer to commits in this repo. Now fix the lint errors.",
			texts:  []string{"Fixed the two lint errors."},
			keep:   []string{"co-authored-by"},
			prefer: true,
		},
		{
			name:  "pasted output and typed paths in the user's message are not statements",
			user:  ".codex/prompts/plan.md .arguments/plan-tech-stack.md\n\n/home/runner/work/_temp/ad16.sh: line 1: mkdocs: command not found\n\ntests/test_cli.py:12: in run_main raise ArgumentError for the workspace option\n\n(.venv) randy@dev~/projects/opk>echo $XDG_SESSION_TYPE\n\nWe always deploy the docs from the `pdl-spec` folder.",
			texts: []string{"Fixed."},
			keep:  []string{"always deploy the docs"},
			drop:  []string{"plan-tech-stack", "command not found", "run_main", "XDG_SESSION_TYPE"},
		},
		{
			name:  "a request for the turn is not a rule; a request that stands for every turn is",
			user:  "OK, add a sample `vars.json` in `pdl-spec/examples` for quick previews. I want a similar list with add/remove buttons on the peripherals tab. Make sure to always run `make lint` before committing. Use yarn for packages in this repo.",
			texts: []string{"Done."},
			keep:  []string{"always run `make lint`", "Use yarn"},
			drop:  []string{"vars.json", "add/remove buttons"},
		},
		{
			name:  "test runner marks, numbered source lines and code statements are output, not findings",
			user:  "run the tests",
			texts: []string{"\u2713 MarkdownTaskBackend > lists all real tasks, ignoring `code` blocks [3.63ms]\n\n21 |   const { stdout } = spawnSync('bun', ['run', CLI]);\n\nimport { GitService } from './git'; import { mkdtempSync } from 'fs';\n\nThe session database lives in `~/.local/state/minsky/session-db.json` because the CLI resolves `XDG_STATE_HOME` first."},
			keep:  []string{"session-db.json"},
			drop:  []string{"MarkdownTaskBackend", "spawnSync", "GitService"},
		},
		{
			name:  "typographic apostrophes read as ASCII ones",
			user:  "what is next?",
			texts: []string{"I’ll scan the `.specify` configs to see what the CLI expects.", "The `opk-gui` entry point is generated by `pip install -e .`, so it exists only inside the `.venv`."},
			keep:  []string{"entry point"},
			drop:  []string{"scan the"},
		},
		{
			name:  "a plain negation later is no correction",
			user:  "the gui does not start",
			texts: []string{"If `opk-gui` isn't found: run `pip install -e .` inside the `.venv` so the console entry points exist; Wayland sessions need `QT_QPA_PLATFORM=xcb`.", "Setting `QT_QPA_PLATFORM=xcb` fixes most Linux issues when Wayland isn't configured for Qt."},
			keep:  []string{"pip install -e"},
		},
		{
			name:  "offers and nested next steps are not memories",
			user:  "update the docs workflow",
			texts: []string{"- Changes\n  - The docs job pins Python 3.12 because `mkdocs-material` fails on 3.13.\n- Next steps\n  - Wait for the `gh-pages` run to finish.\n\nIf you\u2019d like, I can:\n- Add a `--strict` build to `pdl-spec/mkdocs.yml`."},
			keep:  []string{"pins Python 3.12"},
			drop:  []string{"gh-pages", "--strict"},
		},
		{
			name:  "a change log's lines say what the repository holds; the reasons in it stay",
			user:  "add line items to the cart",
			texts: []string{"Let me add the relation.", "Done.\n\n**`lib/shop/cart.ex`**\n- Added `lines/1` and `line_count/1`\n- Totals round half-even because the ledger rejects half cents\n\n**`lib/shop/line.ex`** — Added `quantity` and `unit_price` fields\n\nAdded tests for the cart totals and the empty cart."},
			keep:  []string{"round half-even"},
			drop:  []string{"line_count", "unit_price", "empty cart"},
		},
		{
			name:  "next steps, status and questions are not memories",
			user:  "is it done?",
			texts: []string{"## Next steps\n- Add the `retry_budget` setting to `config/app.toml`\n- Wire the metrics\n\nAll 87 tests pass and everything is pushed.\n\nShould I open the PR?"},
			drop:  []string{"retry_budget", "87 tests", "open the PR"},
			class: ClassPlan,
		},
		{
			name:  "options offered to the user are not facts",
			user:  "the pre-commit hook fails",
			texts: []string{"The hook fails on pre-existing credo issues in `waiting_summary.ex`. Options:\n- Fix the pre-existing `waiting_summary.ex` issues\n- Use `--no-verify` to skip the hook\n\nWhich do you prefer?"},
			keep:  []string{"pre-existing credo issues"},
			drop:  []string{"--no-verify"},
		},
		{
			name:  "a user's question without its mark and a pasted traceback are not memories",
			user:  "Does our config loader support YAML anchors. tests/test_cli.py:12: in run_main opk/cli/__main__.py:162: gh = sub.add_parser(\"gcode-hooks\", help=\"List hooks\"). We always run the CLI tests with `pytest -q` before committing.",
			texts: []string{"Noted."},
			keep:  []string{"pytest -q"},
			drop:  []string{"YAML anchors", "add_parser"},
		},
		{
			name:  "the change about to be made is a plan; a pasted command line is no memory",
			user:  "git add schemas/universal_signal_schema.ts validators/SignalScorer.ts tests/poi_validator.test.ts",
			texts: []string{"The helpers in `src/iter.ts` keep insertion order because callers diff the output.\n\nThese new functions will be named `unionIterablesGen` and `unionIterablesAsyncGen` in `src/iter.ts`."},
			keep:  []string{"insertion order"},
			drop:  []string{"will be named", "git add"},
		},
		{
			name:  "offers of more work are not memories",
			user:  "add the Prusa profile",
			texts: []string{"The Prusa MK4 profile lives in `examples/printers/Prusa_i3_MK4.json` and uses the Marlin flavour.\n\nIf you want, I can also add matching filament profiles for `examples/filaments/`."},
			keep:  []string{"Prusa_i3_MK4.json"},
			drop:  []string{"If you want"},
		},
		{
			name:  "an offer after a condition is no memory",
			user:  "add the Prusa profile",
			texts: []string{"The Prusa MK4 profile lives in `examples/printers/Prusa_i3_MK4.json` and uses the Marlin flavour.\n\nIf you later add a second extruder, we can generate the tool-change G-code in `examples/printers/`."},
			keep:  []string{"Prusa_i3_MK4.json"},
			drop:  []string{"tool-change"},
		},
		{
			name:  "a final answer's change list says what now exists",
			user:  "implement the review page",
			texts: []string{"Let me read the router.", "Implemented:\n- Added `ProjectReviewLive` at `/projects/:id/review`, listing open annotations across the project's sessions"},
			keep:  []string{"ProjectReviewLive"},
		},
		{
			name:  "an answer that only names files states nothing",
			user:  "which files define the schemas?",
			texts: []string{"schemas/ledger_entry_schema.ts\n\nschemas/ledger_index.d.ts"},
			drop:  []string{"ledger_entry_schema"},
		},
		{
			name:  "a request naming a file is not a fact",
			user:  "Tidy up my STYLEGUIDE.md",
			texts: []string{"Done."},
			drop:  []string{"STYLEGUIDE"},
		},
		{
			name:  "a terse finding with a constraint word stays, however few its words of prose",
			user:  "why does the migration test fail?",
			texts: []string{"`mix ecto.migrate` needs `MIX_ENV=test` under `test/support/`."},
			keep:  []string{"MIX_ENV=test"},
		},
		{
			name:  "a short preference of the user's stays",
			user:  "Use yarn in this repo.",
			texts: []string{"Noted."},
			keep:  []string{"Use yarn"},
		},
		{
			name:   "a how-to order with a named object is the user's rule; one pointing at the moment's thing is not",
			user:   "Use pnpm for installs, not npm. Keep the public API backwards compatible. Also keep going with the rest of it for now.",
			texts:  []string{"Done."},
			keep:   []string{"Use pnpm for installs", "Keep the public API"},
			drop:   []string{"keep going"},
			prefer: true,
		},
		{
			name:   "a sentence naming nothing on its own is the context of the user's rule after it; a request breaks it",
			user:   "I'm on Fedora 39 with a tiling desktop. Never assume a headless session when you suggest commands. Add the export button. We always deploy from the release branch.",
			texts:  []string{"Done."},
			keep:   []string{"Fedora 39 with a tiling desktop. Never assume", "always deploy"},
			drop:   []string{"export button"},
			prefer: true,
		},
		{
			name:  "only the sentence next to a kept one joins it as context",
			user:  "The first row of the table lists the colours. The second row lists the sizes. The shop's prices must always be shown in euros.",
			texts: []string{"Done."},
			keep:  []string{"second row lists the sizes. The shop's prices"},
			drop:  []string{"first row"},
		},
		{
			name:  "a section titled without markdown runs to the next title: suggestions and a walkthrough to try the change are plans",
			user:  "add the export dialog",
			texts: []string{"What I changed\n- The export dialog in `ui/export_dialog.py` writes CSV only, because the XLSX writer needs a licence.\n\nHow to try it\n- Reports → Export… → pick `reports/q3.csv` → the toast from `ExportService` shows 12 rows\n\nNext suggestions\n- An `--xlsx` flag for `cmd/report.py` through `openpyxl`\n\nNotes\n- The dialog keeps the last folder in `settings.ini` so exports land in one place."},
			keep:  []string{"needs a licence", "last folder"},
			drop:  []string{"ExportService", "--xlsx"},
		},
		{
			name:  "a quoted commit message is not a memory; what the change made exist is",
			user:  "round the invoice totals",
			texts: []string{"- Invoice totals in `billing/invoice.go` use banker's rounding, because the ledger service rounds that way.\n- Commit: billing: round invoice totals with banker's rounding in `billing/invoice.go` and `billing/ledger_test.go`"},
			keep:  []string{"ledger service rounds"},
			drop:  []string{"Commit:", "ledger_test.go"},
		},
		{
			name:  "a user's need for what the turn builds is a request; a need the project has is a fact",
			user:  "We will also need CSV and XLSX exporters for the `reports/` page. OK, I think we need a toggle for the compact layout in `ui/settings.tsx`. We need Node 20 for the build because `ui/fetch.ts` relies on the global `fetch`.",
			texts: []string{"Done."},
			keep:  []string{"Node 20"},
			drop:  []string{"XLSX exporters", "compact layout"},
		},
		{
			name:  "'instead of' in an order of work describes the change; in a how-to-work sentence it makes a rule",
			user:  "yes please add an export button to `ui/toolbar.tsx` and instead of a modal, rename the `ExportModal` as `ExportPanel`. Please use pnpm instead of npm for every install in this repo.",
			texts: []string{"Done."},
			keep:  []string{"use pnpm instead of npm"},
			drop:  []string{"ExportPanel"},
		},
		{
			name:  "'each of the' counts the turn's things; 'each' before a thing that recurs makes a rule",
			user:  "Then go through our `schemas/pdl.json` definitions and find settings that fit into each of the tab panels. Always commit after each feature once its tests pass.",
			texts: []string{"Done."},
			keep:  []string{"commit after each feature"},
			drop:  []string{"tab panels"},
		},
		{
			name:  "a count of tests run or added is the run's state, not a fact",
			user:  "round the invoice totals",
			texts: []string{"The invoice rounding in `billing/invoice.ex` follows the ledger, because `Ledger.post/2` rejects fractions of a cent.\n\n- `test/billing/invoice_test.exs` (14 tests)\n- Full suite: 212 passing locally with `mix test` and the `ledger` fixtures."},
			keep:  []string{"rejects fractions"},
			drop:  []string{"14 tests", "212 passing"},
		},
		{
			name:  "the agent's next act behind a fronted clause is narration; a rule behind one is kept",
			user:  "fix the rounding",
			texts: []string{"Now that we've confirmed the rounding test fails on `ledger/round.go`, let's update `CHANGELOG.md` to note the fix.", "Since `Ledger.Post` calls `Bank.settle`, which requires a live bank sandbox, I'll stub it in the test.", "Since the ledger posts whole cents, `Ledger.Post` must reject fractions of a cent."},
			keep:  []string{"must reject fractions", "requires a live bank sandbox"},
			drop:  []string{"CHANGELOG.md"},
		},
		{
			name:  "a report of the agent's act is narration behind an adverb too",
			user:  "push it",
			texts: []string{"Successfully pushed our changes to a new branch `ledger-rounding-fix` on `origin`.", "The ledger rejects fractions of a cent because `Ledger.Post` rounds before it writes."},
			keep:  []string{"rounds before it writes"},
			drop:  []string{"ledger-rounding-fix"},
		},
		{
			name:  "the agent's next step told with a first-person modal between tool calls is a plan; a source's rule is not",
			user:  "store the ledger per account",
			texts: []string{"We need to modify this to store the ledger files under per-account directories in `ledger/store.go`.", "According to the `ledger-workflow.md` rules, we should commit on the account's branch, not on main.", "Done: each account has its own ledger directory."},
			keep:  []string{"account's branch"},
			drop:  []string{"per-account directories"},
		},
		{
			name:  "the agent's report of its act told as we is narration; a change it reports in the final answer is kept",
			user:  "fix the rounding",
			texts: []string{"We ran `ledger check --strict` against `fixtures/ledger.json` and confirmed the totals.", "We fixed a bug in `ledger/round.go` that rounded half-cents down: it now rounds half to even."},
			keep:  []string{"rounds half to even"},
			drop:  []string{"fixtures/ledger.json"},
		},
		{
			name:  "where the agent's work stands at the moment is status",
			user:  "continue",
			texts: []string{"We're in the middle of a rebase of `feature/ledger-rounding` onto `main`.", "The ledger rejects fractions of a cent because `Ledger.Post` rounds before it writes."},
			keep:  []string{"rounds before it writes"},
			drop:  []string{"feature/ledger-rounding"},
		},
		{
			name:  "command lines with no full stop before an offer are sentences of their own: the offer goes, the commands stay",
			user:  "add the preview subcommands",
			texts: []string{"Preview the hooks with the new subcommands:\nledger hooks --file books.yaml\nledger preview --file books.yaml --hook close\nIf helpful, I can add a validate subcommand that checks the placeholders."},
			keep:  []string{"ledger hooks --file books.yaml", "ledger preview --file books.yaml --hook close"},
			drop:  []string{"validate subcommand"},
		},
		{
			name:  "'our' in the agent's report of its work is no reason to keep it; a cause is",
			user:  "continue",
			texts: []string{"We've verified that our fixtures in `fixtures/ledger.json` round correctly.", "We're in the middle of a rebase from our earlier attempt on `feature/ledger-rounding`.", "We switched `Ledger.Post` to integer cents because floats lost half-cents in `ledger/round.go`."},
			keep:  []string{"floats lost half-cents"},
			drop:  []string{"fixtures/ledger.json", "feature/ledger-rounding"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", tc.user, tc.texts...))
			if len(turns) != 1 {
				t.Fatalf("%d turns", len(turns))
			}
			cands := Distill(turns[0], modelSaid(tc.later...))
			var kept []Candidate
			var firstDropped *Candidate
			for i, c := range cands {
				if c.Keep {
					kept = append(kept, c)
				} else if firstDropped == nil {
					firstDropped = &cands[i]
				}
			}
			for _, want := range tc.keep {
				found := false
				for _, c := range kept {
					found = found || strings.Contains(c.Text, want)
				}
				if !found {
					t.Errorf("no kept statement has %q; candidates: %+v", want, cands)
				}
			}
			for _, bad := range tc.drop {
				for _, c := range kept {
					if strings.Contains(c.Text, bad) {
						t.Errorf("kept %q (has %q)", c.Text, bad)
					}
				}
			}
			if tc.class != "" && (firstDropped == nil || firstDropped.Class != tc.class) {
				t.Errorf("first dropped candidate %+v, want class %s", firstDropped, tc.class)
			}
			if tc.prefer {
				ok := false
				for _, c := range kept {
					ok = ok || (c.Origin == OriginUser && c.Class == ClassPreference)
				}
				if !ok {
					t.Errorf("no user preference kept: %+v", kept)
				}
			}
			for _, c := range kept {
				if n := runeLen(c.Text); n > maxCandidateRunes {
					t.Errorf("statement of %d characters (at most %d): %q", n, maxCandidateRunes, c.Text)
				}
			}
		})
	}
}

func TestProcessTurn(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	exs := sessionOf("s9", "why does checkout time out?",
		"Let me look at the gateway client.",
		"The payment gateway client in `payments/client.go` has no timeout, because `http.DefaultClient` is used; a slow provider blocks checkout for minutes.",
		"Let me rerun the tests.",
		"Fixed: `payments/client.go` now uses a client with a 10 s timeout. All tests pass.")
	turns := GroupTurns(exs)
	dec, held, err := f.p.ProcessTurn(ctx, turns[0], nil, SessionState{})
	if err != nil || held {
		t.Fatalf("process: %v (held %v)", err, held)
	}
	if dec.Verdict != memory.VerdictStored || len(dec.MemoryIDs) == 0 {
		t.Fatalf("decision %+v", dec)
	}
	var kept, dropped int
	for _, c := range dec.Candidates {
		if c.Kept {
			kept++
			if c.MemoryID == "" {
				t.Errorf("kept candidate without memory: %+v", c)
			}
		} else {
			dropped++
			if c.Reason == "" {
				t.Errorf("dropped candidate without reason: %+v", c)
			}
		}
	}
	if kept == 0 || dropped == 0 {
		t.Fatalf("kept %d, dropped %d: %+v", kept, dropped, dec.Candidates)
	}
	ms, err := f.st.GetMany(ctx, dec.MemoryIDs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if strings.Contains(m.Text, "Let me") || m.Project != "shop" {
			t.Errorf("memory %q (project %q)", m.Text, m.Project)
		}
	}

	// The same turn again (a transcript read twice) stores nothing new.
	again, _, err := f.p.ProcessTurn(ctx, turns[0], nil, SessionState{})
	if err != nil || again.Verdict == memory.VerdictStored {
		t.Fatalf("second time: %+v, %v", again, err)
	}

	// A turn of nothing but narration is rejected at the distill stage.
	noise := GroupTurns(sessionOf("s9", "go on", "Let me check the logs.", "Now I'll run the tests again."))
	dec, _, err = f.p.ProcessTurn(ctx, noise[0], nil, SessionState{})
	if err != nil || dec.Verdict != memory.VerdictRejected || dec.Stage != StageDistill {
		t.Fatalf("narration turn: %+v, %v", dec, err)
	}

	// A headless session under the count is held while it may grow.
	hl := sessionOf("s10", "summarise the retry policy", "Webhooks retry 5 times because the provider rate-limits us; keep `RETRY_MAX=5` in `payments/config.yaml`.")
	for i := range hl {
		hl[i].Headless = true
	}
	dec, held, err = f.p.ProcessTurn(ctx, GroupTurns(hl)[0], nil, SessionState{})
	if err != nil || !held || dec.Stage != StageHeadless {
		t.Fatalf("headless: held %v, %+v, %v", held, dec, err)
	}
	dec, held, err = f.p.ProcessTurn(ctx, GroupTurns(hl)[0], nil, SessionState{Ended: true})
	if err != nil || held || dec.Verdict != memory.VerdictRejected {
		t.Fatalf("headless ended: held %v, %+v, %v", held, dec, err)
	}
}

// TestMergeSteps: the kept statements of one response become one memory
// (up to maxCandidateRunes), and so do the findings of consecutive
// responses of the tool loop; the final answer stands apart.
func TestMergeSteps(t *testing.T) {
	turns := GroupTurns(sessionOf("s", "why is the build slow?",
		"The build compiles `assets/` with esbuild on every run.\n\nThe cache in `_build/cache` is keyed by the lockfile hash, so any `mix.lock` change rebuilds everything.",
		"The CI image pins Elixir 1.16 in `.tool-versions`, which the cache key ignores."))
	var kept []Candidate
	for _, c := range Distill(turns[0], nil) {
		if c.Keep {
			kept = append(kept, c)
		}
	}
	if len(kept) != 2 {
		t.Fatalf("%d memories, want 2 (the tool loop's, the final answer's): %+v", len(kept), kept)
	}
	if !strings.Contains(kept[0].Text, "esbuild") || !strings.Contains(kept[0].Text, "lockfile hash") {
		t.Fatalf("first response's statements not joined: %q", kept[0].Text)
	}
	if strings.Contains(kept[0].Text, "Elixir 1.16") || !strings.Contains(kept[1].Text, "Elixir 1.16") {
		t.Fatalf("the final answer joined the tool loop's findings: %q / %q", kept[0].Text, kept[1].Text)
	}
	// Three responses of the tool loop: their findings are one memory.
	turns = GroupTurns(sessionOf("s", "why is the build slow?",
		"The build compiles `assets/` with esbuild on every run.",
		"The cache in `_build/cache` is keyed by the lockfile hash, so any `mix.lock` change rebuilds everything.",
		"Let me look at CI.",
		"Done."))
	kept = kept[:0]
	for _, c := range Distill(turns[0], nil) {
		if c.Keep {
			kept = append(kept, c)
		}
	}
	if len(kept) != 1 || !strings.Contains(kept[0].Text, "esbuild") || !strings.Contains(kept[0].Text, "lockfile hash") {
		t.Fatalf("the tool loop's findings were not joined: %+v", kept)
	}
}

// benchTurn is a long tool-loop turn: 60 responses of narration, findings,
// status and a final summary, the shape real Claude Code turns have.
func benchTurn() Turn {
	texts := []string{}
	for i := 0; i < 20; i++ {
		texts = append(texts,
			fmt.Sprintf("Let me read `lib/app/module_%d.ex` and the tests around it.", i),
			fmt.Sprintf("The `Module%d` cache is keyed by the session id, because the worker restarts per session; `config/runtime.exs` sets its TTL to %d s.", i, 30+i),
			fmt.Sprintf("All %d tests pass. Now let me run credo.", 40+i))
	}
	texts = append(texts, "Done. Summary:\n- Added `Module20` with a per-session cache\n- `config/runtime.exs` sets the TTL\n\n## Next steps\n- wire metrics")
	return GroupTurns(sessionOf("bench", "speed up the module loading", texts...))[0]
}

// BenchmarkDistill measures distillation alone (no embedding, no store):
// turns per second on one core with -cpu 1.
func BenchmarkDistill(b *testing.B) {
	t := benchTurn()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Distill(t, nil)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkDistillCold is BenchmarkDistill with the memo of sentence
// classes (classMemo) emptied before each turn: BenchmarkDistill distils
// the same turn again and again, so from its second turn on every
// sentence's class is remembered; a turn distilled the first time is this.
func BenchmarkDistillCold(b *testing.B) {
	t := benchTurn()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		classMemo.mu.Lock()
		classMemo.m, classMemo.bytes = nil, 0
		classMemo.mu.Unlock()
		Distill(t, nil)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkProcessTurn measures a whole turn through the pipeline with the
// built-in embedder and a real store (the same turn again after the first
// time: dedup finds its memories).
func BenchmarkProcessTurn(b *testing.B) {
	f := newFixture(b, nil)
	t := benchTurn()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A session of its own each time: the same session's turn again
		// would be a replay, skipped by its turn marks (turnmark.go), so the
		// benchmark would measure the skip. Its statements are the first
		// run's, so after it each one is placed as a duplicate.
		t.SessionID = fmt.Sprintf("bench-%d", i)
		if _, _, err := f.p.ProcessTurn(ctx, t, nil, SessionState{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// TestGuessOrigin: only wording that states a kind outright makes it
// certain enough for recall's kind boost.
func TestGuessOrigin(t *testing.T) {
	tests := []struct {
		text string
		want memory.KindOrigin
	}{
		{"We decided to keep Postgres 16 because the extension lags.", memory.KindCued},
		{"All tests pass; the fix uses the cache instead of the API.", memory.KindGuessed},
		{"Never commit generated files; we always run make gen in CI.", memory.KindCued},
		{"The deploy runs at 6 pm.", memory.KindGuessed},
	}
	for _, tc := range tests {
		kind := GuessKind(tc.text)
		if got := GuessOrigin(kind, tc.text); got != tc.want {
			t.Errorf("%q (kind %s): origin %s, want %s", tc.text, kind, got, tc.want)
		}
	}
	// Through the pipeline: every stored memory says how its kind was decided.
	f := newFixture(t, nil)
	exs := sessionOf("k1", "Never add the co-authored-by footer to commits in this repo, please.",
		"The release workflow in `.github/workflows/release.yml` builds the .deb instead of the AppImage on tags.")
	dec, _, err := f.p.ProcessTurn(context.Background(), GroupTurns(exs)[0], nil, SessionState{})
	if err != nil || len(dec.MemoryIDs) != 2 {
		t.Fatalf("%+v, %v", dec, err)
	}
	ms, err := f.st.GetMany(context.Background(), dec.MemoryIDs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		want := memory.KindGuessed
		if m.Kind == memory.KindPreference {
			want = memory.KindCued
		}
		if m.KindOrigin != want {
			t.Errorf("%q: kind %s from %q, want from %q", m.Text, m.Kind, m.KindOrigin, want)
		}
	}
}

// TestProcessTurnKeepsSummaryOrigin: a compaction summary that does not
// start with Claude Code's words (Codex's) is still read as a summary once
// the turn is cleaned for the pipeline.
func TestProcessTurnKeepsSummaryOrigin(t *testing.T) {
	f := newFixture(t, nil)
	exs := sessionOf("sum1", "go on", "Continuing with the exporter.")
	exs[0].Summary = "The exporter in `export/csv.go` quotes every field because Excel splits unquoted fields at commas."
	dec, _, err := f.p.ProcessTurn(context.Background(), GroupTurns(exs)[0], nil, SessionState{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range dec.Candidates {
		found = found || (c.Kept && c.Origin == OriginSummary && strings.Contains(c.Text, "export/csv.go"))
	}
	if !found {
		t.Fatalf("no kept statement of origin %q: %+v", OriginSummary, dec.Candidates)
	}
}

// TestDescribeCandidates: the turn's summary counts every drop under its
// reason, the usual ones in their order and any other after them; an
// offer's drop ("offered or left to do") was once never counted.
func TestDescribeCandidates(t *testing.T) {
	for _, tc := range []struct {
		cands []Candidate
		want  string
	}{
		{[]Candidate{{Keep: true}, {Reason: "offered or left to do: x"}, {Reason: ClassStatus}}, "1 of 3 statements kept; dropped: status 1, offered or left to do 1"},
		{[]Candidate{{Reason: "not chosen by the judge"}, {Reason: "revised later: y"}, {Reason: "a reason of its own"}}, "0 of 3 statements kept; dropped: revised later 1, a reason of its own 1, not chosen by the judge 1"},
		{[]Candidate{{Keep: true}}, "1 of 1 statements kept"},
	} {
		if got := describeCandidates(tc.cands); got != tc.want {
			t.Errorf("describeCandidates = %q, want %q", got, tc.want)
		}
	}
}

// TestOfferConditional: a conditional clause followed by the writer
// offering to do something is an offer, as are "I'd be happy to" and
// "glad to"; a conditional fact, where no writer offers (or offers
// nothing, negated), is not.
func TestOfferConditional(t *testing.T) {
	tests := []struct {
		st   string
		want bool
	}{
		{"If you want faster builds, we can add a `GOCACHE` mount to `ci.yml`.", true},
		{"If helpful, I can add a `--verbose` flag to `sync.sh`.", true},
		{"If you later enable the wiki, we can link it from `README.md`.", true},
		{"If any shard fails, I'll narrow the test matrix in `ci.yml`.", true},
		{"Once you push the tag, I could cut the release with `goreleaser`.", true},
		{"If you\u2019d like, I can also pin `ruff` in `pyproject.toml`.", true},
		{"When the schema settles, we could generate the types from `schema.json`.", true},
		{"Happy to add a `--dry-run` flag to `prune.sh`.", true},
		{"I'd be happy to wire the metrics into `server.go`.", true},
		{"Want me to split `store.go` into two files?", true},
		{"If the cache is stale, the build fails with `ENOENT`.", false},
		{"If the lock is held, we retry after 5 seconds.", false},
		{"If `GOFLAGS` is set, we can't override `-mod` from `Makefile`.", false},
		{"If the lock is held, we will retry after 5 seconds.", false},
		{"When `PORT` is unset, the server listens on 8080.", false},
		{"If the token expired, I cannot read the job logs.", false},
		{"The importer can retry a failed batch if `RETRY=1`, I think.", false},
	}
	for _, tc := range tests {
		if got := offer.MatchString(lower(tc.st)); got != tc.want {
			t.Errorf("offer(%q) = %v, want %v", tc.st, got, tc.want)
		}
	}
}

// TestUserRuleSkipsContentGate: a rule the user states about how the
// agent is to work speaks of the acts a status report speaks of
// (committing, pushing, tests passing), and the content score gate, whose
// noise is learned from the agent's status reports, scores each of these
// under its threshold: the rule is stored, as the user's, all the same
// (userRule). An order for the moment is still no memory. Each rule case
// fails without userRule.
func TestUserRuleSkipsContentGate(t *testing.T) {
	ctx := context.Background()
	for i, tc := range []struct {
		prompt string
		stored bool
	}{
		{"Always commit and push once all tests pass.", true},
		{"Commit your changes as each step is finished and the tests pass.", true},
		{"Never say the task is done until the tests pass.", true},
		{"Commit and push it now.", false},
	} {
		t.Run(tc.prompt, func(t *testing.T) {
			f := newFixture(t, nil)
			if sc := f.p.Scorer(); tc.stored {
				vec, err := f.emb.Embed(ctx, []string{tc.prompt})
				if err != nil {
					t.Fatal(err)
				}
				if sc.ScoreVector(vec[0]).Pass {
					t.Fatalf("the fixture's scorer passes %q: the case tests nothing", tc.prompt)
				}
			}
			exs := sessionOf(fmt.Sprintf("s-gate-%d", i), tc.prompt, "Understood.", "Done.")
			dec, _, err := f.p.ProcessTurn(ctx, GroupTurns(exs)[0], nil, SessionState{})
			if err != nil {
				t.Fatal(err)
			}
			var id string
			for _, c := range dec.Candidates {
				if c.Origin == OriginUser && c.Kept {
					id = c.MemoryID
				}
			}
			if (id != "") != tc.stored {
				t.Fatalf("stored %v, want %v: %+v", id != "", tc.stored, dec.Candidates)
			}
			if id == "" {
				return
			}
			ms, err := f.st.GetMany(ctx, []string{id})
			if m := ms[id]; err != nil || m.Type != memory.TypeUser {
				t.Fatalf("memory %q type %s (%v), want user", m.Text, m.Type, err)
			}
		})
	}
}

// TestGuessedPreferenceType: a statement of the agent whose kind is
// guessed a preference ("you want ...", "you prefer ...") is typed by
// what it is about, as the user's own rule is (ruleType): what the user
// wants of the project's content is the project's convention, only what
// they want of the agent's way of working is theirs and travels. The
// project cases fail without it (every guessed preference was the
// user's).
func TestGuessedPreferenceType(t *testing.T) {
	for _, tc := range []struct {
		answer string
		kind   memory.Kind
		typ    memory.Type
	}{
		{"You want the invoice totals rounded to whole euros, so `formatTotal` now rounds before it formats the amount.", memory.KindConvention, memory.TypeProject},
		{"You want the export dialog to offer CSV and JSON, so the format menu on the export page lists both formats.", memory.KindConvention, memory.TypeProject},
		{"You prefer to review every diff yourself before anything is committed, and you want commit messages written in the imperative mood.", memory.KindPreference, memory.TypeUser},
	} {
		t.Run(tc.answer, func(t *testing.T) {
			turn := Turn{User: []string{"why did it change?"}, Steps: []Step{{Text: tc.answer}}}
			var got []Candidate
			for _, c := range Distill(turn, nil) {
				if c.Keep && c.Origin != OriginUser {
					got = append(got, c)
				}
			}
			if len(got) != 1 || got[0].Kind != tc.kind || got[0].Type != tc.typ {
				t.Fatalf("Distill kept %+v, want one %s/%s", got, tc.kind, tc.typ)
			}
		})
	}
}

// TestUserRule: only the user's own rule typed the user's (about the
// agent's way of working) skips the content gate; a rule of the
// project's content, the agent's restatement and a fact are judged.
func TestUserRule(t *testing.T) {
	for _, tc := range []struct {
		c    Candidate
		skip bool
	}{
		{Candidate{Origin: OriginUser, Class: ClassPreference, Type: memory.TypeUser}, true},
		{Candidate{Origin: OriginUser, Class: ClassPreference, Type: memory.TypeProject}, false},
		{Candidate{Origin: OriginUser, Class: ClassFact}, false},
		{Candidate{Origin: OriginToolLoop, Class: ClassPreference, Type: memory.TypeUser}, false},
	} {
		if got := userRule(tc.c); got != tc.skip {
			t.Errorf("userRule(%s/%s/%s) = %v, want %v", tc.c.Origin, tc.c.Class, tc.c.Type, got, tc.skip)
		}
	}
}
