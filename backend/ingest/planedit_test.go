package ingest

import (
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/transcript"
)

// planVerdict distills every turn of exs and returns the candidate holding
// phrase: whether it is kept, its text and its kind.
func planVerdict(t *testing.T, exs []memory.Exchange, phrase string) (kept bool, text string, kind memory.Kind) {
	t.Helper()
	turns := GroupTurns(exs)
	for i, tu := range turns {
		for _, c := range Distill(tu, LaterTexts(turns[i+1:], tu.SessionID)) {
			if strings.Contains(c.Text, phrase) {
				return c.Keep, c.Text, c.Kind
			}
		}
	}
	t.Fatalf("no candidate holds %q", phrase)
	return false, "", ""
}

// TestCarriedPlans: a future-tense statement about the code that an edit
// of the same response carries out (the edit's new text holds every name
// it gives) is a decision, prefixed with the edited file; a plan naming
// what the edit removes, a plan naming nothing, the agent's own "I will",
// an edit Aider did not apply or a call that failed leave it a plan.
func TestCarriedPlans(t *testing.T) {
	const plan = "The exports will be grouped by their prefix (e.g., `any`, `array`), and each group will be sorted alphabetically."
	aider := func(say, replace, outcome string) string {
		return "# aider chat started at 2026-01-05 10:00:00\n\n#### reorganize the exports  \n\n" + say + "\n\n```typescript\nsrc/index.ts\n<<<<<<< SEARCH\n// AI! Reorganize this!\nexport * from './array.of.ts';\nexport * from './any.echo.ts';\n=======\n" +
			replace + "\n>>>>>>> REPLACE\n```\n\n> Tokens: 1k sent, 100 received.  \n> " + outcome + "  \n"
	}
	sorted := "export * from './any.echo.ts';\n\nexport * from './array.of.ts';"
	retry := map[string]any{"file_path": "/home/dev/src/kv/internal/retry.go", "old_string": "delay := time.Second", "new_string": "delay := time.Duration(env.Int(\"RETRY_MS\")) * time.Millisecond"}
	claude := func(isErr bool) string {
		return strings.Replace(claudeSession(t, "Edit", retry, isErr), "I'll record it.", "Then, `RETRY_MS` will be used to compute the delay.", 1)
	}
	for _, tc := range []struct {
		name   string
		format transcript.Format
		text   string
		phrase string
		want   string // the decision's text; "" when it stays a plan
	}{
		{"aider-carried", transcript.FormatAider, aider(plan, sorted, "Applied edit to src/index.ts"), "grouped by their prefix", "src/index.ts: " + plan},
		{"aider-declined", transcript.FormatAider, aider(plan, sorted, "Skipping edits to src/index.ts"), "grouped by their prefix", ""},
		{"names-what-it-removes", transcript.FormatAider, aider("The comment `// AI! Reorganize this!` will be removed.", sorted, "Applied edit to src/index.ts"), "will be removed", ""},
		{"names-nothing", transcript.FormatAider, aider("Each group will be sorted alphabetically by the name of its module.", sorted, "Applied edit to src/index.ts"), "sorted alphabetically", ""},
		{"names-what-the-edit-lacks", transcript.FormatAider, aider("The exports will be grouped under `barrel.ts` by their prefix.", sorted, "Applied edit to src/index.ts"), "grouped under", ""},
		{"the-agent-will", transcript.FormatAider, aider("I will group the exports by their prefix (`any`, `array`) and sort each group alphabetically.", sorted, "Applied edit to src/index.ts"), "group the exports", ""},
		{"claude-edit", transcript.FormatClaudeCode, claude(false), "RETRY_MS", "/home/dev/src/kv/internal/retry.go: Then, `RETRY_MS` will be used to compute the delay."},
		{"claude-edit-failed", transcript.FormatClaudeCode, claude(true), "RETRY_MS", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exs := parse(t, tc.format, tc.text)
			kept, text, kind := planVerdict(t, exs, tc.phrase)
			if tc.want == "" {
				if kept {
					t.Fatalf("kept %q, want it a plan", text)
				}
				return
			}
			if !kept || text != tc.want || kind != memory.KindDecision {
				t.Fatalf("kept %v %q (%s), want the decision %q", kept, text, kind, tc.want)
			}
			withAblated(t, rulePlanEdit, func() {
				if kept, text, _ := planVerdict(t, exs, tc.phrase); kept {
					t.Fatalf("planedit off: kept %q", text)
				}
			})
		})
	}
}
