package ingest

import (
	"context"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// askedSession is a turn in which the model states what it found, asks
// the user a question about it and goes on with the answer.
func askedSession(id string, a memory.Answer) []memory.Exchange {
	exs := sessionOf(id, "Release the invoice service.",
		"The release script `scripts/release.sh` refuses to tag: the changelog check fails on entries from the previous release, which were never merged into `CHANGELOG.md`.",
		"Updating `CHANGELOG.md` with the missing entries before tagging.",
		"Tagged v2.3.0 after adding the missing changelog entries.")
	exs[0].ToolCalls = []memory.ToolCall{{ID: "q1", Name: "AskUserQuestion", Input: `{"questions":[]}`}}
	exs[1].ToolResults = []memory.ToolResult{{ToolUseID: "q1", Name: "AskUserQuestion", Content: "User has answered your questions."}}
	exs[1].Answers = []memory.Answer{a}
	return exs
}

// The question repeats what the model found (the release script, the
// changelog check): it must neither drop that finding as restated nor be
// dropped by it.
var changelogAnswer = memory.Answer{
	Question: "The changelog check of scripts/release.sh fails on entries from the previous release in CHANGELOG.md. How should we release?",
	Answer:   "Add the missing entries to CHANGELOG.md (keep the check on)",
}

func TestAnswerCandidate(t *testing.T) {
	tests := []struct {
		name string
		in   memory.Answer
		keep bool
		kind memory.Kind
		typ  memory.Type
		text string
	}{
		{"a choice is the project's decision", memory.Answer{Question: "Which queue should the importer use?", Answer: "Redis streams (already deployed for the cache)"},
			true, memory.KindDecision, "", "Q: Which queue should the importer use? A: Redis streams (already deployed for the cache)"},
		{"worded as a preference: the user's", memory.Answer{Question: "How should failing hooks be handled?", Answer: "never bypass them, fix what they report"},
			true, memory.KindPreference, memory.TypeUser, ""},
		{"a how-to order: the user's", memory.Answer{Question: "Which package manager?", Answer: "Use pnpm, not npm"},
			true, memory.KindPreference, memory.TypeUser, ""},
		{"worded as a preference of the project's content: its convention", memory.Answer{Question: "Where should the API handlers live?", Answer: "Always in `internal/api`, one file per resource"},
			true, memory.KindConvention, memory.TypeProject, ""},
		{"a choice about how to work, asked as leave: a decision", memory.Answer{Question: "Should we keep the existing package layout?", Answer: "Yes (keep cmd/ and internal/ as they are)"},
			true, memory.KindDecision, "", ""},
		{"a refusal of leave to act is kept", memory.Answer{Question: "Should I add a Co-Authored-By footer to the commit?", Answer: "No (leave the footer out)"},
			true, memory.KindDecision, "", ""},
		{"a go-ahead said to stand is kept", memory.Answer{Question: "The build passes. Should I push the branch?", Answer: "Yes, and push after every green build from now on"},
			true, memory.KindPreference, memory.TypeUser, ""},
		{"no answer", memory.Answer{Question: "Which queue?", Answer: "  "}, false, "", "", ""},
		{"no question", memory.Answer{Answer: "Redis"}, false, "", "", ""},
		{"injected blocks are no words of the user", memory.Answer{Question: "Which queue?", Answer: "<system-reminder>ignore</system-reminder>"}, false, "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := answerCandidate(tc.in)
			if ok != tc.keep {
				t.Fatalf("kept %v, want %v", ok, tc.keep)
			}
			if !ok {
				return
			}
			if !c.Keep {
				t.Fatalf("dropped: %q", c.Reason)
			}
			if c.Origin != OriginUser || c.Class != ClassAnswer || c.Kind != tc.kind || c.Type != tc.typ {
				t.Fatalf("candidate %+v", c)
			}
			if tc.text != "" && c.Text != tc.text {
				t.Fatalf("text %q, want %q", c.Text, tc.text)
			}
			if len([]rune(c.Text)) > maxCandidateRunes+1 {
				t.Fatalf("text of %d runes", len([]rune(c.Text)))
			}
		})
	}
	for _, q := range []string{"Should I commit and push these changes now?", "The suite is slow. Do you want me to run only the affected package?", "Shall we also add a test for the empty cart?"} {
		c, ok := answerCandidate(memory.Answer{Question: q, Answer: "Yes (go ahead)"})
		if !ok || c.Keep || c.Reason != reasonGoAhead {
			t.Errorf("go-ahead %q: kept %v, reason %q", q, c.Keep, c.Reason)
		}
	}
	long := memory.Answer{Question: strings.Repeat("Which of these many options? ", 40), Answer: "the second"}
	if c, _ := answerCandidate(long); len([]rune(c.Text)) > maxCandidateRunes+1 {
		t.Fatalf("long question: %d runes", len([]rune(c.Text)))
	}
}

// TestDistillAnswers: the answer given in the tool loop is one statement
// of the user's, kept whole, beside the model's finding its question
// repeats; it stays in the turn (no new turn starts) and in the texts
// later turns are checked against.
func TestDistillAnswers(t *testing.T) {
	turns := GroupTurns(askedSession("s-ask", changelogAnswer))
	if len(turns) != 1 || len(turns[0].Answers) != 1 || len(turns[0].User) != 1 {
		t.Fatalf("%d turns, %+v", len(turns), turns)
	}
	var answer, finding *Candidate
	cands := Distill(turns[0], nil)
	for i, c := range cands {
		switch {
		case c.Class == ClassAnswer:
			answer = &cands[i]
		case strings.Contains(c.Text, "refuses to tag"):
			finding = &cands[i]
		}
	}
	if answer == nil || !answer.Keep || answer.Text != changelogAnswer.Text() {
		t.Fatalf("answer: %+v\nall: %s", answer, describeAll(cands))
	}
	if finding == nil || !finding.Keep {
		t.Fatalf("the model's finding: %+v\nall: %s", finding, describeAll(cands))
	}
	if got := LaterTexts(turns, "s-ask"); len(got) < 2 || got[1] != (LaterText{Text: changelogAnswer.Text(), From: LaterUser}) {
		t.Fatalf("later texts: %q", got)
	}
	if in := turnInput(turns[0], cands); len(in.User) != 2 || in.User[1] != changelogAnswer.Text() {
		t.Fatalf("the judge's user words: %q", in.User)
	}
	if ex := turns[0].Exchange(); len(ex.Answers) != 1 {
		t.Fatalf("the turn's exchange: %+v", ex.Answers)
	}
}

func describeAll(cs []Candidate) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("\n  " + c.Class + " " + c.Reason + " | " + c.Text)
	}
	return b.String()
}

// TestProcessTurnAnswer: the answer is stored as a memory of its own, the
// user's secret in it masked.
func TestProcessTurnAnswer(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	a := changelogAnswer
	a.Answer += "; the deploy token is ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
	dec, _, err := f.p.ProcessTurn(ctx, GroupTurns(askedSession("s-ask2", a))[0], nil, SessionState{})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, c := range dec.Candidates {
		if c.Class == ClassAnswer && c.Kept {
			id = c.MemoryID
		}
	}
	if id == "" {
		t.Fatalf("no answer stored: %+v", dec.Candidates)
	}
	ms, err := f.st.GetMany(ctx, []string{id})
	m, found := ms[id]
	if err != nil || !found {
		t.Fatalf("get: %v %d", err, len(ms))
	}
	if !strings.HasPrefix(m.Text, "Q: The changelog check") || strings.Contains(m.Text, "u8jzPde0") || m.Kind != memory.KindDecision || m.KindCertain() {
		t.Fatalf("memory %q kind %s (%s)", m.Text, m.Kind, m.KindOrigin)
	}
}

// TestDistillRefusals: the words the user typed when refusing a tool call
// are read as the user's prompt is: a rule or preference is kept as the
// user's, an order for the moment and chat are not, and the words stay in
// the turn (no new turn starts), in the texts later turns are checked
// against and in what the judge is given.
func TestDistillRefusals(t *testing.T) {
	tests := []struct {
		name  string
		words string
		kept  string // the text of the user's kept candidate, "" for none
		kind  memory.Kind
	}{
		{"a rule with its reason", "This repository uses pnpm, never npm: the lockfile is pnpm-lock.yaml.",
			"This repository uses pnpm, never npm: the lockfile is pnpm-lock.yaml.", memory.KindConvention}, // the project's stack (ruleType)
		{"a preference", "Always sign commits with the team's GPG key, never with a personal one.",
			"Always sign commits with the team's GPG key, never with a personal one.", memory.KindConvention}, // names the team's key (ruleType)
		{"a preference of the user", "Never add the co-authored-by footer to commits.",
			"Never add the co-authored-by footer to commits.", memory.KindPreference},
		{"an order for the moment", "Run the unit tests first.", "", ""},
		{"chat", "wait", "", ""},
		{"injected blocks only", "<system-reminder>be brief</system-reminder>", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			refusal := memory.Answer{Answer: tt.words, Refused: true}
			exs := askedSession("s-refused", refusal)
			exs[0].ToolCalls = []memory.ToolCall{{ID: "r1", Name: "Bash", Input: `{"command":"./scripts/release.sh"}`}}
			exs[1].ToolResults = []memory.ToolResult{{ToolUseID: "r1", Name: "Bash", IsError: true, Content: "The user doesn't want to proceed with this tool use."}}
			turns := GroupTurns(exs)
			if len(turns) != 1 || len(turns[0].Answers) != 1 || len(turns[0].User) != 1 {
				t.Fatalf("%d turns, %+v", len(turns), turns)
			}
			cands := Distill(turns[0], nil)
			var kept []Candidate
			for _, c := range cands {
				if c.Origin == OriginUser && c.Keep && c.step == -2 {
					kept = append(kept, c)
				}
			}
			switch {
			case tt.kept == "" && len(kept) > 0:
				t.Fatalf("kept %+v\nall: %s", kept, describeAll(cands))
			case tt.kept != "" && (len(kept) != 1 || kept[0].Text != tt.kept || kept[0].Kind != tt.kind || kept[0].Class == ClassAnswer):
				t.Fatalf("kept %+v, want %q (%s)\nall: %s", kept, tt.kept, tt.kind, describeAll(cands))
			}
			if got := LaterTexts(turns, "s-refused"); len(got) < 2 || got[1] != (LaterText{Text: tt.words, From: LaterUser}) {
				t.Fatalf("later texts: %q", got)
			}
			if in := turnInput(turns[0], cands); len(in.User) != 2 || in.User[1] != tt.words {
				t.Fatalf("the judge's user words: %q", in.User)
			}
		})
	}
}

// TestProcessTurnRefusal: a refusal's words go through the turn pipeline
// (cleanTurn keeps them a refusal) and are stored as the user's, the
// secret in them masked.
func TestProcessTurnRefusal(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, nil)
	words := "Never print the deploy token ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d in the CI logs; mask it with ::add-mask:: first."
	dec, _, err := f.p.ProcessTurn(ctx, GroupTurns(askedSession("s-refused2", memory.Answer{Answer: words, Refused: true}))[0], nil, SessionState{})
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, c := range dec.Candidates {
		if c.Origin == OriginUser && c.Kept && strings.HasPrefix(c.Text, "Never print the deploy token") {
			id = c.MemoryID
		}
	}
	if id == "" {
		t.Fatalf("the refusal's words not stored: %+v", dec.Candidates)
	}
	ms, err := f.st.GetMany(ctx, []string{id})
	m, found := ms[id]
	if err != nil || !found {
		t.Fatalf("get: %v %d", err, len(ms))
	}
	if strings.Contains(m.Text, "u8jzPde0") || m.Type != memory.TypeProject { // a rule of the project's CI (ruleType)
		t.Fatalf("memory %q type %s", m.Text, m.Type)
	}
}

// TestRejectedPlanIsNoPrompt: an exchange posted with Claude Code's
// message about a rejected plan as its user text (as a client that reads
// session files itself may send it) starts no turn and gives no
// statement of the user's: the plan in it is the agent's.
func TestRejectedPlanIsNoPrompt(t *testing.T) {
	exs := sessionOf("s-plan", "Plan the rename of the billing package.", "The billing package is imported by 14 services.", "Kept planning.")
	exs[1].ToolLoop = false
	exs[1].User = "The agent proposed a plan that was rejected by the user. The user chose to stay in plan mode rather than proceed with implementation.\n\nRejected plan:\n1. Always use the new name invoicing in every service"
	turns := GroupTurns(exs)
	if len(turns) != 1 || len(turns[0].User) != 1 {
		t.Fatalf("%d turns, user words %q", len(turns), turns[0].User)
	}
	for _, c := range Distill(turns[0], nil) {
		if c.Origin == OriginUser && strings.Contains(c.Text, "invoicing") {
			t.Fatalf("the agent's plan read as the user's: %+v", c)
		}
	}
}
