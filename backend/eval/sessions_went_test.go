package eval

import (
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestWent: an uncovered fact's "went:" line names what became of the
// statements that held its keys, from the session's decisions, or that no
// statement or no captured text held them all.
func TestWent(t *testing.T) {
	keys := [][]string{{"retry.go"}, {"webhook"}}
	long := "Let me check whether the backoff in `payments/retry.go` is what delays the handler, since the checkout test times out only when the webhook fires twice in a row."
	if len([]rune(long)) <= 160 {
		t.Fatal("the long statement must be longer than a preview")
	}
	previewOf := func(s string) string { return string([]rune(s)[:120]) + "…" }
	dropped := func(text, class, reason string) memory.CandidateVerdict {
		return memory.CandidateVerdict{Text: text, Origin: "tool-loop", Class: class, Reason: reason}
	}
	superseded := func(string) string { return "its memory superseded since" }
	liveHere := func(string) string { return "" }
	for _, tc := range []struct {
		name  string
		trail sessionTrail
		state wentState
		want  string
	}{
		{"dropped whole, its keys past the preview", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 4, Turn: 9, Candidates: []memory.CandidateVerdict{dropped(previewOf(long), "narration", "narration")}}},
			said:      []string{"something else", long},
		}, liveHere, "dropped: narration (turn 4)"},
		{"dropped with a reason that says more", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 3, Candidates: []memory.CandidateVerdict{dropped("The webhook retries in retry.go.", "finding", "revised later: it was the lock")}}},
		}, liveHere, "dropped: finding, revised later: it was the lock (turn 3)"},
		{"cut out of a kept statement", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 6, Candidates: []memory.CandidateVerdict{
				{Text: "The lock is held too long.", Kept: true, MemoryID: "m1"},
				{Text: "The webhook retries in retry.go.", Cut: true, Reason: "said in an earlier turn"}}}},
		}, liveHere, "cut: said in an earlier turn (turn 6)"},
		{"kept, superseded since", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 2, Candidates: []memory.CandidateVerdict{{Text: "The webhook retries in retry.go.", Kept: true, MemoryID: "m1"}}}},
		}, superseded, "kept (turn 2), its memory superseded since"},
		{"kept, its live memory changed", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 2, Candidates: []memory.CandidateVerdict{{Text: "The webhook retries in retry.go.", Kept: true, MemoryID: "m1"}}}},
		}, liveHere, "kept (turn 2), but its memory lacks a key now"},
		{"named by its exchange when prompts were not counted", sessionTrail{
			decisions: []memory.Decision{{Turn: 7, Candidates: []memory.CandidateVerdict{dropped("The webhook retries in retry.go?", "question", "question")}}},
		}, liveHere, "dropped: question (exchange 7)"},
		{"the first three fates, each once with how often, then how many more", sessionTrail{
			decisions: []memory.Decision{
				{UserTurn: 1, Candidates: []memory.CandidateVerdict{dropped("webhook retry.go", "narration", "narration"), dropped("webhook in retry.go", "narration", "narration")}},
				{UserTurn: 2, Candidates: []memory.CandidateVerdict{dropped("webhook retry.go", "narration", "narration")}},
				{UserTurn: 3, Candidates: []memory.CandidateVerdict{dropped("webhook retry.go", "plan", "plan")}},
				{UserTurn: 4, Candidates: []memory.CandidateVerdict{dropped("webhook retry.go", "status", "status")}},
				{UserTurn: 5, Candidates: []memory.CandidateVerdict{dropped("webhook retry.go", "status", "status")}},
			},
		}, liveHere, "dropped: narration (turn 1) x2; dropped: narration (turn 2); dropped: plan (turn 3); +2 more"},
		{"said, but no one statement held every key", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 1, Candidates: []memory.CandidateVerdict{
				dropped("Let me open retry.go.", "narration", "narration"), {Text: "The handler runs twice.", Kept: true, MemoryID: "m1"}}}},
			exs: []memory.Exchange{{Assistant: "Let me open retry.go. The handler runs twice when the webhook fires."}},
		}, liveHere, "no one statement held every key (closest, 1 of 2 key groups: dropped: narration (turn 1))"},
		{"the closest kept statement's memory is as it was", sessionTrail{
			decisions: []memory.Decision{{UserTurn: 1, Candidates: []memory.CandidateVerdict{{Text: "The webhook fires twice.", Kept: true, MemoryID: "m1"}}}},
			exs:       []memory.Exchange{{Assistant: "The webhook fires twice. The backoff in retry.go doubles."}},
		}, liveHere, "no one statement held every key (closest, 1 of 2 key groups: kept (turn 1))"},
		{"only in a tool's output", sessionTrail{
			exs: []memory.Exchange{{Assistant: "Reading it.", ToolResults: []memory.ToolResult{{Content: "retry.go:12 // webhook backoff"}}}},
		}, liveHere, "only in tool calls or their output"},
		{"in no captured text", sessionTrail{
			exs: []memory.Exchange{{User: "fix the checkout test", Assistant: "The retry.go backoff was the cause."}},
		}, liveHere, "not in any one captured text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.trail.went(Fact{ID: "F1", Keys: keys}, tc.state); got != tc.want {
				t.Fatalf("went %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWentReadsWholeStatements: note distils the exchanges again, so a
// statement the decision shows only the start of is read whole.
func TestWentReadsWholeStatements(t *testing.T) {
	text := "Let me look at the checkout code first and then read the payment module before deciding anything about it. " +
		"I will read the retry loop after that and check what the webhook sender does."
	exs := []memory.Exchange{{SessionID: "s", Turn: 1, UserTurns: 1, User: "why does checkout hang?", Assistant: text}}
	var tr sessionTrail
	tr.note(exs, nil)
	if !strings.Contains(strings.Join(tr.said, "\n"), "webhook sender") {
		t.Fatalf("said %q: no statement holds the text's end", tr.said)
	}
	tr.decisions = []memory.Decision{{UserTurn: 1, Candidates: []memory.CandidateVerdict{
		{Text: string([]rune(memory.NormalizeSpace(text))[:100]) + "…", Class: "narration", Reason: "narration"}}}}
	if got, want := tr.went(Fact{Keys: [][]string{{"checkout"}, {"webhook sender"}}}, func(string) string { return "" }), "dropped: narration (turn 1)"; got != want {
		t.Fatalf("went %q, want %q", got, want)
	}
}
