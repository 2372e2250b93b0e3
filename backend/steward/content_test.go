package steward

import (
	"context"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestMergeKeepsEveryStatement: near-duplicates by their vectors that say
// different things after one opening (a conventions file read back item
// by item) are not merged, each refused for what the kept text would
// lose; a restatement of one of them in other words is merged.
func TestMergeKeepsEveryStatement(t *testing.T) {
	ctx := context.Background()
	const tpl = "CONVENTIONS.md: When writing code in TypeScript, try to: "
	items := []rec{
		{id: "await", text: tpl + "Avoid using await in loops."},
		{id: "early", text: tpl + "Throw and return early in functions."},
		{id: "ext", text: tpl + "Always include file extensions when importing files."},
		{id: "const", text: tpl + "Prefer const over let to prevent accidental reassignment."},
		{id: "lines", text: "CONVENTIONS.md: When writing Markdown files: Ensure each sentence or long phrase is on its own line."},
		{id: "lines2", text: "In Markdown files, put each sentence or long phrase on its own line (CONVENTIONS.md)."},
	}
	for i := range items {
		items[i].typ, items[i].created, items[i].accessed = memory.TypeProject, 10-i, -1
	}
	cfg := defaults()
	cfg.MergeSimilarity = BuiltinMergeSimilarity // the daemon's for the built-in embedder
	_, sw := fixture(t, cfg, items...)
	p, err := sw.Plan(ctx, PlanOptions{Ops: []string{OpMerge}, FullMerge: true})
	if err != nil {
		t.Fatal(err)
	}
	var merged []string
	for _, a := range p.Actions {
		merged = append(merged, a.ID+"<-"+strings.Join(a.MergedIDs, ","))
	}
	if len(p.Actions) != 1 || !strings.HasPrefix(p.Actions[0].ID, "lines") || !strings.HasPrefix(p.Actions[0].MergedIDs[0], "lines") {
		t.Fatalf("merges %v, want lines and lines2 only; refused:\n%s", merged, refusedReasons(p))
	}
	content := 0
	for _, r := range p.Refused {
		if RefusalKind(r.Reason) == RefusedContent {
			content++
		}
	}
	if content == 0 {
		t.Errorf("no refusal for content; refused:\n%s", refusedReasons(p))
	}
}

func refusedReasons(p *Plan) string {
	var b strings.Builder
	for _, r := range p.Refused {
		b.WriteString(r.ID + " + " + strings.Join(r.MergedIDs, ",") + ": " + r.Reason + "\n")
	}
	return b.String()
}
