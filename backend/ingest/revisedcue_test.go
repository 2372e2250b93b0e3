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
