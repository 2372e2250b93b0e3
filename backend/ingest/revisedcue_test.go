package ingest

import (
	"strings"
	"testing"
)

// laterRevises reports whether later, said after finding in the same turn,
// revises the candidate holding marker (dropRevised).
func laterRevises(t *testing.T, finding, marker, later string) bool {
	t.Helper()
	turns := GroupTurns(sessionOf("s", "why does this happen?", "Let me read the code.", finding, later, "Done."))
	cands := Distill(turns[0], nil)
	for i := range cands {
		if strings.Contains(cands[i].Text, marker) {
			return strings.HasPrefix(cands[i].Reason, "revised later")
		}
	}
	t.Fatalf("no candidate holds %q: %+v", marker, cands)
	return false
}

// TestDropRevisedObject: a sentence whose only cue is "instead of X"
// revises a statement only when the statement says X.
func TestDropRevisedObject(t *testing.T) {
	finding := "The settings loader reads the config from `./app.toml` in the working directory, so a run started elsewhere finds no settings."
	tests := []struct {
		name    string
		later   string
		off     bool
		revised bool
	}{
		{"a correction with its own cue revises it", "Actually the settings loader reads the config from `~/.app.toml` instead of `./app.toml`.", false, true},
		{"what replaces what the finding says revises it", "The settings loader now reads the config from `~/.app.toml` instead of `./app.toml` in the working directory.", false, true},
		{"what replaces something else does not", "The settings loader now caches the parsed config in memory instead of re-reading the settings file on every request.", false, false},
		{"it did with any object revising", "The settings loader now caches the parsed config in memory instead of re-reading the settings file on every request.", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revisionOff["object"] = tt.off
			defer delete(revisionOff, "object")
			if got := laterRevises(t, finding, "finds no settings", tt.later); got != tt.revised {
				t.Fatalf("revised = %v, want %v", got, tt.revised)
			}
		})
	}
}

func TestSameWord(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"skips", "skipp", true},
		{"import", "import", true},
		{"modul", "module", true},
		{"cache", "cached", true},
		{"skip", "skim", false},
		{"array", "arrow", false},
		{"import", "importer", false},
	}
	for _, tt := range tests {
		if got := sameWord(tt.a, tt.b); got != tt.want {
			t.Errorf("sameWord(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestDropRevisedConditional: a cue inside a conditional clause is
// advice, not a correction; the same cue reported revises.
func TestDropRevisedConditional(t *testing.T) {
	finding := "The `deploy.yml` workflow publishes the docs site from the `gh-pages` branch, so the deploy job needs write access to it."
	tests := []struct {
		name    string
		later   string
		off     bool
		revised bool
	}{
		{"a failure reported revises it", "The `deploy.yml` workflow still fails to publish the docs site from the `gh-pages` branch.", false, true},
		{"a failure foreseen does not", "If the `deploy.yml` workflow still fails to publish the docs site, check the `gh-pages` branch protection.", false, false},
		{"nor one foreseen after the advice", "Check the `gh-pages` branch protection when the `deploy.yml` workflow still fails to publish the docs site.", false, false},
		{"it did with conditionals read as reports", "If the `deploy.yml` workflow still fails to publish the docs site, check the `gh-pages` branch protection.", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revisionOff["conditional"] = tt.off
			defer delete(revisionOff, "conditional")
			if got := laterRevises(t, finding, "needs write access", tt.later); got != tt.revised {
				t.Fatalf("revised = %v, want %v", got, tt.revised)
			}
		})
	}
}

// TestDropRevisedStillState: "still shows/happens/there" corrects only
// when what goes on is a problem.
func TestDropRevisedStillState(t *testing.T) {
	finding := "The `reports` page renders the monthly totals from the `totals_cache` table, so a cache refresh updates the page within a minute."
	tests := []struct {
		name    string
		later   string
		off     bool
		revised bool
	}{
		{"the old value going on revises it", "The `reports` page still shows the old monthly totals after the `totals_cache` refresh.", false, true},
		{"an error going on revises it", "The `reports` page still shows an error after the `totals_cache` refresh.", false, true},
		{"a failure reported revises it", "The `reports` page build still fails with ENOENT on the `totals_cache` table.", false, true},
		{"a feature going on does not", "The `reports` page still shows the monthly totals chart next to the `totals_cache` refresh button.", false, false},
		{"it did with every state read as a correction", "The `reports` page still shows the monthly totals chart next to the `totals_cache` refresh button.", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			revisionOff["state"] = tt.off
			defer delete(revisionOff, "state")
			if got := laterRevises(t, finding, "within a minute", tt.later); got != tt.revised {
				t.Fatalf("revised = %v, want %v", got, tt.revised)
			}
		})
	}
}

func TestCorrecting(t *testing.T) {
	tests := []struct {
		st   string
		want bool
	}{
		{"The build still fails with ENOENT.", true},
		{"It still shows the old value.", true},
		{"The warning is still there after the upgrade.", true},
		{"If deploy still fails, check the Pages settings.", false},
		{"Retry the job when it still fails after a rebase.", false},
		{"The sidebar still shows the recent files.", false},
		{"I pushed the fix, but the badge still shows failing.", true},
	}
	for _, tt := range tests {
		if got := correcting(lower(tt.st)); got != tt.want {
			t.Errorf("correcting(%q) = %v, want %v", tt.st, got, tt.want)
		}
	}
}
