package ingest

import (
	"strings"
	"testing"
)

// keptTexts returns the texts of the kept candidates of a turn whose
// model said texts (one step each) after the user's prompt.
func keptTexts(prompt string, texts, later []string) []string {
	t := Turn{SessionID: "s1", User: []string{prompt}}
	for _, tx := range texts {
		t.Steps = append(t.Steps, Step{Text: tx})
	}
	var out []string
	for _, c := range Distill(t, modelSaid(later...)) {
		if c.Keep {
			out = append(out, c.Text)
		}
	}
	return out
}

func anyHas(texts []string, sub string) bool {
	for _, t := range texts {
		if strings.Contains(t, sub) {
			return true
		}
	}
	return false
}

func TestDropUnsettled(t *testing.T) {
	tests := []struct {
		name   string
		mech   string // the mechanism the case is about
		texts  []string
		later  []string
		gone   string // a substring no kept statement has with mech on, and one has with it off
		stays  string // a substring a kept statement has either way
		reason string // the prefix of the reason the statement was dropped with, if it was dropped whole
	}{
		{
			name: "options put to the user in their own paragraph are not facts",
			mech: "offered",
			texts: []string{"The pre-commit hook fails on issues in `legacy_report.ex` only, which predate this branch.\n\n" +
				"I have two options:\n\n1. Fix the `legacy_report.ex` credo issues first\n2. Use `--no-verify` to skip the hook for this commit\n\n" +
				"Which do you prefer?"},
			gone:  "--no-verify",
			stays: "predate this branch",
		},
		{
			name: "a list after an intro that offers nothing stays",
			mech: "offered",
			texts: []string{"The importer reads two settings from `config/import.toml`:\n\n" +
				"- `batch_size` caps one insert at 500 rows because SQLite limits bound variables\n- `dry_run` skips the final commit"},
			stays: "batch_size",
		},
		{
			name:   "a user's later request to remove what a statement describes",
			mech:   "undone",
			texts:  []string{"Only a stub (`dagStubs`) is exported in `dist/index.js`, so consumers cannot import real DAG modules."},
			later:  []string{"Update dist/index.js:\n- Remove the current `dagStubs` placeholder export.\n- Add `export * from './dags/index.js';`"},
			gone:   "dagStubs",
			reason: "undone later: Remove the current `dagStubs`",
		},
		{
			name:  "the model's own plan to remove something, in the same turn, undoes nothing",
			mech:  "undone",
			texts: []string{"Only a stub (`dagStubs`) is exported in `dist/index.js`, so consumers cannot import real DAG modules.", "Remove `dagStubs` from `dist/index.js` later."},
			stays: "Only a stub",
		},
		{
			name:   "a later turn puts back what a change dropped",
			mech:   "undone",
			texts:  []string{"Dropped Python 3.13 from the CI test matrix; `ubuntu-latest` and `windows-latest` run 3.11 and 3.12 because PySide6 wheels are missing."},
			later:  []string{"Great — I reintroduced Python 3.13 on ubuntu-latest only and kept it excluded on Windows where PySide6 wheels are missing."},
			gone:   "Dropped Python 3.13",
			reason: "undone later: Great — I reintroduced Python 3.13",
		},
		{
			name:   "the user says they changed the file a statement describes",
			mech:   "undone",
			texts:  []string{"Your convention to name every function is contradicted by your Oxlint configuration, where `eslint/func-names` is set to \"off\"."},
			later:  []string{"I have updated my oxlint configuration. Update your response."},
			gone:   "func-names",
			reason: "undone later: I have updated my oxlint configuration.",
		},
		{
			name:   "the user's change to their file outdates every statement about it",
			mech:   "undone",
			texts:  []string{"Your rule to declare magic numbers as `const` is contradicted by `eslint/no-magic-numbers` being \"off\" in your Oxlint config."},
			later:  []string{"I've changed my oxlint configuration, check again."},
			gone:   "no-magic-numbers",
			reason: "undone later: I've changed my oxlint configuration",
		},
		{
			name:   "the model telling the removal it makes next, in the same turn",
			mech:   "undo-narrated",
			texts:  []string{"The `legacy.cfg` file must list every importer queue, or the importer refuses to start.", "All tests pass. Now let me also remove the `legacy.cfg` file since nothing reads it anymore:"},
			gone:   "legacy.cfg",
			reason: "undone later: Now let me also remove the `legacy.cfg` file",
		},
		{
			name:  "a removal of something else leaves the statement alone",
			mech:  "undone",
			texts: []string{"The `config_loader` module reads `config/app.toml` at startup and caches it because the file is large."},
			later: []string{"Removed the unused `fmt_helpers` import from `cmd/main.go`."},
			stays: "config_loader",
		},
		{
			name:  "a statement that itself reports the removal is not undone by its restatement",
			mech:  "undone",
			texts: []string{"The unused `legacy_cache` table was removed from `schema.sql` because nothing reads it."},
			later: []string{"I removed `legacy_cache` from `schema.sql` and its migration."},
			stays: "legacy_cache",
		},
		{
			name:  "moving an object names where it went, not what stays",
			mech:  "undone",
			texts: []string{"The wrapper script `priv/scripts/tail_wrapper.sh` is resolved with `Application.app_dir` at runtime."},
			later: []string{"Moved the `README` section to `docs/priv/scripts/tail_wrapper.md`."},
			stays: "tail_wrapper.sh",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			on := keptTexts("fix it", tc.texts, tc.later)
			if tc.gone != "" && anyHas(on, tc.gone) {
				t.Errorf("kept %q with %s on: %q", tc.gone, tc.mech, on)
			}
			if tc.stays != "" && !anyHas(on, tc.stays) {
				t.Errorf("dropped %q with %s on: %q", tc.stays, tc.mech, on)
			}
			if tc.reason != "" {
				found := false
				tn := Turn{SessionID: "s1", User: []string{"fix it"}}
				for _, tx := range tc.texts {
					tn.Steps = append(tn.Steps, Step{Text: tx})
				}
				for _, c := range Distill(tn, modelSaid(tc.later...)) {
					found = found || !c.Keep && strings.HasPrefix(c.Reason, tc.reason)
				}
				if !found {
					t.Errorf("no candidate dropped with reason %q", tc.reason)
				}
			}
			evidenceOff[tc.mech] = true
			defer delete(evidenceOff, tc.mech)
			off := keptTexts("fix it", tc.texts, tc.later)
			if tc.gone != "" && !anyHas(off, tc.gone) {
				t.Errorf("%q is not kept even with %s off (the case does not test it): %q", tc.gone, tc.mech, off)
			}
			if tc.stays != "" && !anyHas(off, tc.stays) {
				t.Errorf("%q is not kept with %s off: %q", tc.stays, tc.mech, off)
			}
		})
	}
}

func TestOfferedItems(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"Since the hook blocks, I have two options:\n\n1. Fix them first\n2. Skip the hook\n\nWhich one?", []string{"Fix them first", "Skip the hook"}},
		{"We could go either way:\n- keep `v1` (safe)\n- move to `v2`. It is faster.\nAfter that the list ends.\n- not an option", []string{"keep `v1` (safe)", "move to `v2`.", "It is faster."}},
		{"Changes made:\n- added `x`\n- removed `y`", nil},
		{"Tests pass.\n\nIf you'd like, I can:\n- Add a `--dry-run` flag.\n- Extend the tests to Windows.", []string{"Add a `--dry-run` flag.", "Extend the tests to Windows."}},
		{"- Changes\n  - Added `cache.go`.\n- Next steps\n  - Wait for CI to finish.\n  - Pin Python 3.12.\n- Status\n  - Pushed.", []string{"Wait for CI to finish.", "Pin Python 3.12."}},
		{"**Next steps:**\n1. Rotate the key\n\nThe cache lives in `~/.cache/x`.", []string{"Rotate the key"}},
		{"- Tests\n  - Added `test_gen.py`.", nil},
		{"", nil},
	}
	for _, tc := range tests {
		got := offeredItems(tc.text)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("offeredItems(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestUndoneTokens(t *testing.T) {
	tests := []struct {
		text string
		want []string // tokens that must be there
		not  []string // tokens that must not
	}{
		{"Moved `scripts/run.sh` to `priv/scripts/run.sh`.", []string{"scripts/run.sh"}, []string{"priv/scripts/run.sh"}},
		{"Replaced `OldClient` with `NewClient` in the handler.", []string{"oldclient"}, []string{"newclient"}},
		{"I removed the deploy `continue-on-error` and updated MkDocs metadata.", []string{"continue-on-error"}, []string{"mkdocs"}},
		{"I removed the deploy “continue-on-error” and updated MkDocs metadata.", []string{"continue-on-error"}, []string{"mkdocs"}},
		{`Removed the "retry-on-timeout" flag from the job.`, []string{"retry-on-timeout"}, nil},
		{"Removed the “flaky network tests” label.", nil, []string{"flaky", "network"}},
		{"I have updated my oxlint configuration.", []string{"oxlint", "configuration"}, nil},
		{"The build passes on CI.", nil, []string{"build"}},
	}
	for _, tc := range tests {
		got := undoneTokens(tc.text)
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("undoneTokens(%q) = %v, want %q in it", tc.text, got, w)
			}
		}
		for _, w := range tc.not {
			if got[w] {
				t.Errorf("undoneTokens(%q) = %v, want no %q", tc.text, got, w)
			}
		}
	}
}

// TestUndoneTokensQuotesOff: without reading a quoted one-word name as
// a name, an undo of it names nothing.
func TestUndoneTokensQuotesOff(t *testing.T) {
	evidenceOff["undo-quotes"] = true
	defer delete(evidenceOff, "undo-quotes")
	if got := undoneTokens("I removed the deploy “continue-on-error” and updated MkDocs metadata."); got["continue-on-error"] {
		t.Fatalf("undoneTokens with quotes off = %v, want no continue-on-error", got)
	}
}

// FuzzDropUnsettled runs Distill with its evidence checks over arbitrary
// model and later texts: it must not panic, a kept statement is never
// empty and a dropped one always says why.
func FuzzDropUnsettled(f *testing.F) {
	f.Add("I have two options:\n\n1. Fix `a.go`\n2. Use `--no-verify`\n\nWhich?", "Remove the current `dagStubs` export.")
	f.Add("Dropped 3.13 from the matrix; `ubuntu-latest` runs 3.12.", "I reintroduced 3.13 on ubuntu-latest.")
	f.Add("`eslint/func-names` is \"off\" in the Oxlint configuration.", "I have updated my oxlint configuration.")
	f.Add("options:\n- \n-  \n1.", "removed")
	f.Add("So `out/a.csv` is gitignored. It IS tracked.", "This is probably a known compiler bug in `mix`.")
	f.Add("It IS. It IS. It IS.", "That didn't work. I suspect `x.go`.")
	f.Fuzz(func(t *testing.T, text, later string) {
		tn := Turn{SessionID: "s", User: []string{"go"}, Steps: []Step{{Text: text}, {Text: later}}}
		for _, c := range Distill(tn, modelSaid(later, text)) {
			if c.Keep && strings.TrimSpace(c.Text) == "" {
				t.Fatalf("kept an empty statement from %q / %q", text, later)
			}
			if !c.Keep && c.Reason == "" {
				t.Fatalf("dropped %q without a reason", c.Text)
			}
		}
	})
}
