package ingest

import (
	"strings"
	"testing"
)

// TestCannotReviseByForm: a guess and a question revise nothing, whatever
// cue word they hold; a statement with the same cue does. With each rule
// off the guess and the question revise again (the test can fail).
func TestCannotReviseByForm(t *testing.T) {
	finding := "The `reports/pdf.go` renderer embeds every font file in each page, so a long statement grows to forty megabytes."
	tests := []struct {
		name    string
		later   string
		rule    string // the rule that spares the finding, "" when none
		revised bool
	}{
		{"a correction revises it", "Actually the `reports/pdf.go` renderer embeds each font file once per document; the size comes from the page images.", "", true},
		{"a prediction of a change does not", "This should resolve the size by embedding only the font files the `reports/pdf.go` renderer actually uses in each page.", ruleReviserGuess, false},
		{"a hedged cause does not", "The real cause might be that the `reports/pdf.go` renderer embeds the page images twice, not the font files.", ruleReviserGuess, false},
		{"a question does not", "Does the `reports/pdf.go` renderer actually embed every font file in each page, or only the ones a page uses?", ruleReviserQuestion, false},
		{"a plan of what to try does not", "**Fix the statement size next.** One approach not yet tried: make the `reports/pdf.go` renderer subset the font files instead of embedding them in each page.", ruleReviserPlan, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "why are the statements so large?", "Let me read the renderer.", finding, tt.later, "Done."))
			checkRevised(t, turns[0], "forty megabytes", tt.revised)
			if tt.rule != "" {
				withAblated(t, tt.rule, func() { checkRevised(t, turns[0], "forty megabytes", true) })
			}
		})
	}
}

// TestEmbeddedActually: "actually" restricting a clause a wh-word opens
// corrects nothing; "actually" as the sentence's own adverb, or in a
// pseudo-cleft, does.
func TestEmbeddedActually(t *testing.T) {
	tests := []struct {
		sentence   string
		correcting bool
	}{
		{"Counts how many rows actually exist in the sheet before renaming them.", false},
		{"The loader checks whether the migration actually ran before seeding.", false},
		{"It keeps the columns which actually hold values.", false},
		{"The sheet actually has five columns, not four.", true},
		{"What actually broke was the cache key, not the loader.", true},
		{"Actually, the migration never ran.", true},
	}
	for _, tt := range tests {
		t.Run(tt.sentence, func(t *testing.T) {
			if got := correcting(lower(tt.sentence)); got != tt.correcting {
				t.Fatalf("correcting = %v, want %v", got, tt.correcting)
			}
			if !tt.correcting {
				withAblated(t, ruleEmbeddedActual, func() {
					if !correcting(lower(tt.sentence)) {
						t.Fatal("with the rule off it should read as a correction")
					}
				})
			}
		})
	}
}

// TestConfirmsStatement: a lone cue's affirmative clause confirms a
// statement naming all it names with the same polarity; its negated
// clause is what it corrects.
func TestConfirmsStatement(t *testing.T) {
	reviser := "Instead, we only added the `--limit` flag but didn't split `parser.go` into packages."
	affirmed := affirmedClauses(reviser)
	tests := []struct {
		stmt      string
		confirmed bool
	}{
		{"Added a `--limit` flag to the list command.", true},
		{"The list command has no `--limit` flag yet.", false},
		{"Split `parser.go` into a lexer package and a grammar package.", false},
		{"The cache lives in `cache.go`.", false},
	}
	for _, tt := range tests {
		t.Run(tt.stmt, func(t *testing.T) {
			if got := confirmsStatement(affirmed, tt.stmt); got != tt.confirmed {
				t.Fatalf("confirms = %v, want %v (affirmed %q)", got, tt.confirmed, affirmed)
			}
		})
	}
	if got := affirmedClauses("The parser actually keeps comments."); got != nil {
		t.Fatalf("a cue inside its own clause affirms no other: %q", got)
	}
}

// TestReviseConfirmAndCut: "Instead, we only added X but didn't do Y"
// keeps a statement that X was added, revises one that Y was done, and
// cuts only Y's sentence out of a plan packing both.
func TestReviseConfirmAndCut(t *testing.T) {
	const (
		added   = "The `list` command of `cmd/export.go` now takes a `--limit` flag with a default of 100 rows."
		split   = "The `parser.go` file was split into a lexer package and a grammar package for the export command."
		packed  = "Add a `--limit` flag to the `list` command of `cmd/export.go`.\nSplit `parser.go` into a lexer package and a grammar package for the export command."
		reviser = "Instead, we only added the `--limit` flag of `cmd/export.go` but didn't split `parser.go` into packages for the export command."
	)
	run := func(stmt string) []Candidate {
		turns := GroupTurns(sessionOf("s", "add a limit flag and split the parser", "Let me look.", stmt, "Let me check the diff.", reviser))
		return Distill(turns[0], nil)
	}
	holding := func(cands []Candidate, s string) *Candidate {
		for i := range cands {
			if strings.Contains(cands[i].Text, s) {
				return &cands[i]
			}
		}
		return nil
	}
	t.Run("confirmed", func(t *testing.T) {
		if c := holding(run(added), "default of 100 rows"); c == nil || strings.HasPrefix(c.Reason, "revised later") {
			t.Fatalf("the statement the correction confirms was revised: %+v", c)
		}
		withAblated(t, ruleConfirms, func() {
			if c := holding(run(added), "default of 100 rows"); c == nil || !strings.HasPrefix(c.Reason, "revised later") {
				t.Fatalf("with the rule off it was revised before: %+v", c)
			}
		})
	})
	t.Run("corrected", func(t *testing.T) {
		if c := holding(run(split), "grammar package"); c == nil || !strings.HasPrefix(c.Reason, "revised later") {
			t.Fatalf("the statement the correction negates was kept: %+v", c)
		}
	})
	t.Run("cut", func(t *testing.T) {
		c := holding(run(packed), "Add a `--limit` flag")
		if c == nil || !c.Keep || strings.Contains(c.Text, "grammar package") {
			t.Fatalf("want the flag's sentence kept and the split's cut: %+v", c)
		}
		// with both rules off the whole statement was revised (at
		// e6cd3fa); with the cut off alone the confirmed sentence keeps
		// it whole, the corrected one with it
		withAblated(t, ruleReviseCut+","+ruleConfirms, func() {
			if c := holding(run(packed), "Add a `--limit` flag"); c == nil || c.Keep {
				t.Fatalf("with the rules off the whole statement was revised: %+v", c)
			}
		})
		withAblated(t, ruleReviseCut, func() {
			if c := holding(run(packed), "Add a `--limit` flag"); c == nil || !c.Keep || !strings.Contains(c.Text, "grammar package") {
				t.Fatalf("with the cut off the confirmed sentence keeps the statement whole: %+v", c)
			}
		})
	})
}

// TestAsCertain: the model's plan, question or guess never supersedes its
// finding; a finding supersedes a guess; the user's words are not weighed.
func TestAsCertain(t *testing.T) {
	const (
		finding = "The `export` worker retries each upload three times with a `backoff` of two seconds."
		guess   = "The issue might be in how the `export` worker retries each upload with its `backoff`."
		plan    = "Document the `export` worker's three retries and its `backoff` in the README."
		ask     = "Should the `export` worker retry each upload three times with a `backoff`?"
	)
	model := func(s string) Candidate { return Candidate{Text: s, Origin: OriginFinal} }
	tests := []struct {
		name string
		a, b Candidate
		want bool
	}{
		{"a finding said again", model(finding), model(finding), true},
		{"a guess after a finding", model(finding), model(guess), false},
		{"a plan after a finding", model(finding), model(plan), false},
		{"a question after a finding", model(finding), model(ask), false},
		{"a finding after a guess", model(guess), model(finding), true},
		{"the user's order", Candidate{Text: finding, Origin: OriginUser}, Candidate{Text: plan, Origin: OriginUser}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := asCertain(tt.a, tt.b); got != tt.want {
				t.Fatalf("asCertain = %v, want %v", got, tt.want)
			}
			if !tt.want {
				withAblated(t, ruleAsCertain, func() {
					if !asCertain(tt.a, tt.b) {
						t.Fatal("with the rule off every pair may supersede")
					}
				})
			}
		})
	}
}

// TestOffersSeeAhead: "I can see that ..." says what the writer finds;
// "I can add ..." offers.
func TestOffersSeeAhead(t *testing.T) {
	tests := []struct {
		sentence string
		offer    bool
	}{
		{"I can see that the `retry` loop never resets its counter.", false},
		{"We can tell from the trace that the lock is held twice.", false},
		{"I can add a test for the `retry` loop.", true},
		{"We can also move the counter into the struct.", true},
	}
	for _, tt := range tests {
		t.Run(tt.sentence, func(t *testing.T) {
			if got := offers(lower(tt.sentence)); got != tt.offer {
				t.Fatalf("offers = %v, want %v", got, tt.offer)
			}
			if got := sentenceClass(tt.sentence, OriginFinal); !tt.offer && got == ClassPlan {
				t.Fatalf("class = %v, want no plan", got)
			}
			if !tt.offer {
				withAblated(t, ruleSeeAhead, func() {
					if !offers(lower(tt.sentence)) {
						t.Fatal("with the rule off it read as an offer")
					}
				})
			}
		})
	}
}

// TestShownReport: a user showing what they got reports the turn's state.
func TestShownReport(t *testing.T) {
	tests := []struct {
		sentence string
		report   bool
	}{
		{"This is what I got: npm ERR! missing script: lint", true},
		{"Here's the error I see when the page loads.", true},
		{"That's the output we get from the nightly job.", true},
		{"This is what the config file should hold for staging.", false},
		{"Here is the schema of the orders table.", false},
	}
	for _, tt := range tests {
		t.Run(tt.sentence, func(t *testing.T) {
			if got := reportsShown(lower(tt.sentence)); got != tt.report {
				t.Fatalf("reportsShown = %v, want %v", got, tt.report)
			}
			if tt.report && !userReport.MatchString(lower(tt.sentence)) {
				withAblated(t, ruleShownReport, func() {
					if reportsShown(lower(tt.sentence)) {
						t.Fatal("with the rule off it was no report")
					}
				})
			}
		})
	}
}

// TestConfirmedByForm: a concession ("despite X"), a negated "actually",
// a problem going on ("still failing") and an "instead of X" fix each
// confirm, not revise, a statement saying what they say is so, and still
// revise one saying the opposite. With the rule off the confirmed
// statement is revised again (the test can fail).
func TestConfirmedByForm(t *testing.T) {
	tests := []struct {
		name    string
		finding string
		key     string // a piece of the finding, to find its candidate
		later   string
		rule    string // the rule that spares the finding, "" when none
		revised bool
	}{
		{"a concession grants what it concedes",
			"Two `GitService` tests fail on the clone path of the session store.", "clone path of the session store",
			"Despite the remaining failures in the `GitService` tests, the session store works for the `tasks list` command.", ruleConcede, false},
		{"a concession grants what it names as written",
			"Two GitService tests fail on the clone path of the session store.", "clone path of the session store",
			"Despite some remaining failures in the GitService tests, the session store works for the tasks list command.", ruleConcede, false},
		{"a negated actually confirms the negation",
			"No `agent_id` field at the top level of the fixture records.", "top level of the fixture",
			"The subagent fixture records don't actually contain any `agent_id` fields.", ruleNegated, false},
		{"a negated actually corrects the affirmation",
			"The fixture records carry an `agent_id` field at the top level, but the parser might not expose it.", "carry an `agent_id`",
			"The subagent fixture records don't actually contain any `agent_id` fields.", "", true},
		{"a problem going on confirms its report",
			"There's an issue with the `GitService` tests: the clone path is wrong.", "clone path is wrong",
			"The `GitService` tests are still failing because of the clone path layout.", rulePersist, false},
		{"a problem going on corrects its fix",
			"The `GitService` clone path tests have been fixed.", "have been fixed",
			"The `GitService` tests are still failing because of the clone path layout.", "", true},
		{"an instead-of fix revises only what says its object's words",
			"Importing the UI modules on a headless runner raised `libEGL` errors in the dialogs.", "headless runner raised",
			"Made `main_window` import its dialogs lazily inside the handlers instead of at module import time.", ruleObjWords, false},
		{"an instead-of fix revises what says its object",
			"The `main_window` dialogs load at module import time, which needs Qt on the runner.", "load at module import time",
			"Made `main_window` import its dialogs lazily inside the handlers instead of at module import time.", "", true},
		{"the same replacement is confirmed",
			"Make sure the report template renders `cell.formatted_value()` instead of separate calls to `prefix()` and `suffix()`.", "report template renders",
			"The main change to the report template is the use of `cell.formatted_value()` instead of separate calls to `prefix()` and `suffix()`.", ruleSameFix, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "why do the tests fail?", "Let me look.", tt.finding, "Let me check again.", tt.later, "Done."))
			checkRevised(t, turns[0], tt.key, tt.revised)
			if tt.rule != "" {
				withAblated(t, tt.rule, func() { checkRevised(t, turns[0], tt.key, true) })
			}
		})
	}
}

// TestAgrees: a clause's polarity is read on the statement's clause
// naming its token, not on the whole sentence.
func TestAgrees(t *testing.T) {
	clause := "the fixture doesn't actually contain any `agent_id` fields"
	tests := []struct {
		stmt string
		want bool
	}{
		{"No agent_id at top level.", true},
		{"The fixture test failed — the fixture may not contain agent_id references.", true},
		{"The fixture contains `agent_id` in the JSON, but the parser might not expose it.", false},
		{"The parser does not read the fixture.", false},
	}
	for _, tt := range tests {
		if got := agrees(clause, tt.stmt); got != tt.want {
			t.Errorf("agrees(%q) = %v, want %v", tt.stmt, got, tt.want)
		}
	}
}

// TestSaysObjectAsWritten: an object of common words is said by its
// words in their order; one with a load-bearing token by that token.
func TestSaysObjectAsWritten(t *testing.T) {
	tests := []struct {
		stmt, obj string
		want      bool
	}{
		{"The dialogs load at module import time.", "at module import time", true},
		{"Import errors when importing UI modules at start time.", "at module import time", false},
		{"The show_value() method uses `abs(self._value)`.", "`type(self._value) is str` for better type checking", false},
		{"It checks `type(self._value) is str` first.", "`type(self._value) is str` for better type checking", true},
		{"The GitService tests are still failing.", "some remaining failures in the GitService tests", true},
	}
	for _, tt := range tests {
		if got := saysObjectAsWritten(tt.stmt, []string{tt.obj}); got != tt.want {
			t.Errorf("saysObjectAsWritten(%q, %q) = %v, want %v", tt.stmt, tt.obj, got, tt.want)
		}
	}
}
