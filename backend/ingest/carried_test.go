package ingest

import "testing"

// TestUndoCarriesOut checks that a later undo does not take out a
// sentence that proposes that undo, nor one saying what a thing it only
// moves is or does (carried.go), and still takes out one that describes
// what it removes, one that says where a moved thing was, one naming a
// renamed thing by its old name, one that finds fault with what it
// removes,
// one that proposes the opposite change, and one whose proposal it takes
// back.
func TestUndoCarriesOut(t *testing.T) {
	cases := []struct {
		name      string
		stmt      string
		undo      string
		fromLater bool
		undone    bool
	}{
		{"a suggestion to remove, carried out by the removal",
			"If the Reconciliation table doesn't require XBRL tagging, you can simplify this method by removing the `xbrl_tag` logic:",
			"Removed XBRL tag checking (`xbrl_tag = row.get(\"XBRL Element\", None)`)", false, false},
		{"a proposed move, carried out by a later move of the same name",
			"Move `resolveRepoPath` (and its types) to a new file, e.g., `src/domain/repo-utils.ts`, and update imports accordingly.",
			"Move the `describe('resolveRepoPath', ...)` block to `repo-utils.test.ts`.", true, false},
		{"what a moved thing is stays",
			"`resolveRepoPath` is a **utility for resolving a repository path** based on CLI options, session DB, or git context.",
			"Move the `describe('resolveRepoPath', ...)` block to `repo-utils.test.ts`.", true, false},
		{"what a moved thing does stays",
			"Refactor `resolveRepoPath` to use a local `promisify(exec)` so the test can mock `exec` after import.",
			"Moved `resolveRepoPath` (and its types) to a new file and updated the imports.", false, false},
		// Controls: the undo still undoes.
		{"where a moved thing was is undone",
			"The `tail_wrapper` script lives in the repo-root `scripts/` directory and wraps `tail -F`.",
			"Moved the `tail_wrapper` script to `priv/scripts/`.", false, true},
		{"what a renamed thing does, said by its old name, is undone",
			"`fooBarHeader` parses the header and returns its fields.",
			"Renamed `fooBarHeader` to `parseHeader` everywhere.", false, true},
		{"a description of what is removed is undone",
			"Reconciliation: Uses `row.get(\"XBRL Element\", None)` with fallback for `xbrl_tag`.",
			"Removed XBRL tag checking (`xbrl_tag = row.get(\"XBRL Element\", None)`)", false, true},
		{"a change the removal takes back is undone",
			"Made deploy step non-blocking if Pages isn't enabled (`continue-on-error: true`) so the build doesn't fail.",
			"I removed the deploy `continue-on-error` and updated MkDocs metadata.", false, true},
		{"a proposal to remove, taken back by a restore, is undone",
			"You can drop the `legacy_cache` module now that the store is in.",
			"Restored the `legacy_cache` module: the importer still reads it.", false, true},
		{"a proposal of another kind (a move) is undone by a removal",
			"Move the `legacy_cache` module into `internal/`.",
			"Deleted the `legacy_cache` module.", false, true},
		{"a fault found is undone by the removal (a diagnosis, not a proposal)",
			"Windows shell issue: The CI step used a POSIX-style command `dir dist || ls -l dist`, which fails on Windows PowerShell and can break the job.",
			"Removed the cross-shell `dir dist || ls -l dist` line.", false, true},
		{"a negated proposal is undone",
			"We should not remove the `legacy_cache` module yet: the importer reads it.",
			"Deleted the `legacy_cache` module.", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, ok := undoOf(posSentence{text: tc.undo, pos: 5}, tc.fromLater)
			if !ok {
				t.Fatalf("undoOf(%q) is no undo", tc.undo)
			}
			cut, _ := undoneIn(tc.stmt, []string{tc.stmt}, 0, []undo{u})
			if got := len(cut) > 0; got != tc.undone {
				t.Errorf("undone = %v, want %v\nstatement: %s\nundo: %s", got, tc.undone, tc.stmt, tc.undo)
			}
		})
	}
}

// TestDistillKeepsCarriedOut distils a turn whose answer proposes an
// undo, with a later turn carrying it out, and one whose answer describes
// what a later turn removes: the proposal is kept, the description is
// not (carried.go through Distill, as batch ingest and live capture run
// it).
func TestDistillKeepsCarriedOut(t *testing.T) {
	const proposal = "If the report table doesn't need XBRL tags, you can simplify `process_cells` by removing the `xbrl_tag` lookup and its `XBRL Element` column."
	const described = "The `process_cells` method reads the `xbrl_tag` from the `XBRL Element` column and falls back to `None`."
	later := []string{"Removed the `xbrl_tag` lookup from `process_cells` (the `XBRL Element` column is gone)."}
	kept := keptTexts("Why does the report table have no tags?", []string{proposal}, later)
	if !anyHas(kept, "you can simplify") {
		t.Errorf("the proposal the later removal carries out is not kept: %q", kept)
	}
	kept = keptTexts("How does process_cells tag cells?", []string{described}, later)
	if anyHas(kept, "falls back to") {
		t.Errorf("what the later removal undoes is kept: %q", kept)
	}
}
