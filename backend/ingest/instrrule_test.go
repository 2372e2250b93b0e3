package ingest

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestSameInstrRule: two texts are one rule of one instruction file when
// their rules read the same, one of them with the lead-in it sits under;
// not a rule of another file, another rule of the section, or a rule
// whose "lead-in" is a sentence.
func TestSameInstrRule(t *testing.T) {
	for _, tc := range []struct {
		a, b         string
		same, fuller bool
	}{
		{"CLAUDE.md: Quote every variable expansion.", "CLAUDE.md: Quote every variable expansion.", true, false},
		{"CLAUDE.md: When writing shell scripts: Quote every variable expansion.", "CLAUDE.md: Quote every variable expansion.", true, true},
		{"CLAUDE.md: Quote every variable expansion.", "claude.md: When writing shell scripts: quote every variable  expansion", true, false},
		{"AGENTS.md: When writing shell scripts: Quote every variable expansion.", "CLAUDE.md: Quote every variable expansion.", false, false},
		{"CLAUDE.md: When writing shell scripts: Quote every variable expansion.", "CLAUDE.md: When writing shell scripts: Start each script with `set -eu`.", false, false},
		{"CLAUDE.md: The deploy runs nightly. Then: Quote every variable expansion.", "CLAUDE.md: Quote every variable expansion.", false, false},
		{"CLAUDE.md: Shell: Use bash.", "CLAUDE.md: Use bash.", false, false}, // too short to be a rule of its own
		{"Quote every variable expansion.", "Quote every variable expansion.", false, false},
		{"notes.md: Quote every variable expansion.", "notes.md: Quote every variable expansion.", false, false},
	} {
		same, fuller := sameInstrRule(tc.a, tc.b)
		if same != tc.same || fuller != tc.fuller {
			t.Errorf("sameInstrRule(%q, %q) = %v, %v; want %v, %v", tc.a, tc.b, same, fuller, tc.same, tc.fuller)
		}
	}
}

const (
	ruleQuote = "- Quote every variable expansion."
	ruleSetEu = "- Start each script with `set -eu`."
	leadShell = "When writing shell scripts:\n\n"
)

// TestInstrRulesOfOneSection: short rules of one section, which share
// only the file's name and the lead-in every rule of it is prefixed
// with, do not restate one another: each is a statement.
func TestInstrRulesOfOneSection(t *testing.T) {
	exs := editTurn("s-sec", 1, "add the shell rules", "## Scripts", "## Scripts\n\n"+leadShell+ruleQuote+"\n"+ruleSetEu)
	kept, dropped := instrKept(t, exs)
	want := []string{
		"CLAUDE.md: When writing shell scripts: Quote every variable expansion.",
		"CLAUDE.md: When writing shell scripts: Start each script with `set -eu`.",
	}
	if !slices.Equal(kept, want) {
		t.Fatalf("kept %q, dropped %q; want %q", kept, dropped, want)
	}
}

// TestInstrRuleStoredOnce: the same rule of the same file stated with and
// without its lead-in (an edit of a few lines does not show the lead-in)
// stands once, across sessions of the project, in either order: the
// version with the lead-in stands.
func TestInstrRuleStoredOnce(t *testing.T) {
	bare := editTurn("s-bare", 1, "add the quoting rule", "- Use bash for scripts.", "- Use bash for scripts.\n"+ruleQuote)
	whole := editTurn("s-whole", 1, "add the set -eu rule", leadShell+ruleQuote, leadShell+ruleQuote+"\n"+ruleSetEu)
	const withLead = "CLAUDE.md: When writing shell scripts: Quote every variable expansion."
	for name, order := range map[string][][]Turn{
		"bare first":  {GroupTurns(bare), GroupTurns(whole)},
		"whole first": {GroupTurns(whole), GroupTurns(bare)},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, nil)
			for _, turns := range order {
				for _, tn := range turns {
					if _, _, err := f.p.ProcessTurn(context.Background(), tn, nil, SessionState{Ended: true}); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := liveTexts(t, f.st)
			n := 0
			for _, s := range got {
				if strings.Contains(s, "Quote every variable expansion") {
					n++
				}
			}
			if n != 1 || !slices.Contains(got, withLead) {
				t.Fatalf("store %q: want the quoting rule once, as %q", got, withLead)
			}
		})
	}
}

// TestInstrRuleOfItsProject: the same rule in a file of another project,
// or of a session of no project, is another memory.
func TestInstrRuleOfItsProject(t *testing.T) {
	for _, project := range []string{"kv", ""} {
		bare := editTurn("s-bare", 1, "add the quoting rule", "- Use bash for scripts.", "- Use bash for scripts.\n"+ruleQuote)
		whole := editTurn("s-whole", 1, "add the set -eu rule", leadShell+ruleQuote, leadShell+ruleQuote+"\n"+ruleSetEu)
		for i := range whole {
			whole[i].Project = project
		}
		f := newFixture(t, nil)
		for _, tn := range append(GroupTurns(bare), GroupTurns(whole)...) {
			if _, _, err := f.p.ProcessTurn(context.Background(), tn, nil, SessionState{Ended: true}); err != nil {
				t.Fatal(err)
			}
		}
		got := liveTexts(t, f.st)
		if !slices.Contains(got, "CLAUDE.md: Quote every variable expansion.") || !slices.Contains(got, "CLAUDE.md: When writing shell scripts: Quote every variable expansion.") {
			t.Errorf("project %q: store %q: want the rule of each project", project, got)
		}
	}
}

// TestRestatesRule: a later statement of the same instruction file
// restates an earlier one's rule when its own words do (the restatement
// test on the rules without the file's name and lead-in); not a rule of
// another file, another rule of the section, or one that leaves out a
// name the earlier one holds.
func TestRestatesRule(t *testing.T) {
	const vet = "CLAUDE.md: Run `go vet` and `staticcheck` on every package before pushing."
	for _, tc := range []struct {
		name, a, b string
		want       bool
	}{
		{"new version under its lead-in", vet, "CLAUDE.md: When writing Go: Run `go vet` and `staticcheck` on every changed package before pushing; CI runs both.", true},
		{"another file", vet, "AGENTS.md: When writing Go: Run `go vet` and `staticcheck` on every changed package before pushing; CI runs both.", false},
		{"a name left out", vet, "CLAUDE.md: When writing Go: Run `go vet` on every changed package before pushing.", false},
		{"another rule of the section", "CLAUDE.md: When writing Go: Wrap every returned error with context.", "CLAUDE.md: When writing Go: Name every exported function in its doc comment.", false},
		{"no instruction statement", "Run `go vet` and `staticcheck` on every package before pushing.", "Run `go vet` and `staticcheck` on every package before pushing, always.", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := restatesRule(tc.a, tc.b); got != tc.want {
				t.Fatalf("restatesRule(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestInstrRuleNewVersion: a later session's edit of the file that shows
// a rule in a new version (here, one the user rewrote outside the
// sessions, under its lead-in) supersedes the version an earlier session
// stored.
func TestInstrRuleNewVersion(t *testing.T) {
	const (
		oldRule = "- Run `go vet` and `staticcheck` on every package before pushing."
		newRule = "- Run `go vet` and `staticcheck` on every changed package before pushing; CI runs both."
	)
	turns := append(GroupTurns(editTurn("s-v1", 1, "add the vet rule", "- Use bash for scripts.", "- Use bash for scripts.\n"+oldRule)),
		GroupTurns(editTurn("s-v2", 1, "add the error rule", "When writing Go:\n\n"+newRule, "When writing Go:\n\n"+newRule+"\n- Wrap every returned error with context."))...)
	batch, live, _, got := replayBoth(t, turns)
	for _, f := range []*fixture{batch, live} {
		old := findMemory(t, f.st, "on every package", true)
		next := findMemory(t, f.st, "on every changed package", false)
		if old.ID == "" || next.ID == "" || old.SupersededBy != next.ID {
			t.Fatalf("store %q: the old vet rule %q superseded by %q, want by %q (%q)", got, old.Text, old.SupersededBy, next.ID, next.Text)
		}
	}
}
