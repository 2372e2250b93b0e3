package ingest

import (
	"strings"
	"testing"
)

// TestSummaryDraft: a line of a compaction summary's analysis that the
// summary after it restates is dropped with reasonDraft; one the summary
// left out stays, and so does everything when no line ends the analysis
// or the text is no compaction summary.
func TestSummaryDraft(t *testing.T) {
	const analysis = "Analysis:\nLet me chronologically analyze the conversation:\n\n" +
		"1. The exporter in `reports/export.py` writes UTF-8 with a BOM so that Excel opens the file.\n" +
		"2. The nightly job needs `TZ=UTC` because `reports/schedule.py` stamps local dates.\n\n"
	const summary = "Summary:\n1. Key Technical Concepts:\n" +
		"- The exporter in `reports/export.py` writes UTF-8 with a BOM so that Excel opens the file in one click.\n"
	tests := []struct {
		name       string
		text       string
		summary    bool
		dropped    []string // dropped with reasonDraft
		notDropped []string // never dropped with reasonDraft
	}{
		{"the summary restates the draft's line", continuedPrefix + ".\n\n" + analysis + summary, true, []string{"writes UTF-8 with a BOM so that Excel opens the file."}, []string{"TZ=UTC", "in one click"}},
		{"no line ends the analysis", continuedPrefix + ".\n\n" + analysis, true, nil, []string{"Excel opens the file.", "TZ=UTC"}},
		{"an answer is no compaction summary", analysis + summary, false, nil, []string{"Excel opens the file.", "TZ=UTC"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			turn := Turn{User: []string{"go on"}, Steps: []Step{{Text: tc.text, Summary: tc.summary}, {Text: "Done."}}}
			cands := Distill(turn, nil)
			for _, want := range tc.dropped {
				found := false
				for _, c := range cands {
					found = found || (!c.Keep && c.Reason == reasonDraft && strings.Contains(c.Text, want))
				}
				if !found {
					t.Errorf("%q not dropped with %q; candidates: %+v", want, reasonDraft, cands)
				}
			}
			for _, bad := range tc.notDropped {
				for _, c := range cands {
					if c.Reason == reasonDraft && strings.Contains(c.Text, bad) {
						t.Errorf("%q dropped as the draft: %q", bad, c.Text)
					}
				}
			}
		})
	}
}

// TestSummaryDraftLines: the analysis runs from the line that opens it to
// the line that ends it.
func TestSummaryDraftLines(t *testing.T) {
	lines := []struct {
		line string
		want bool
	}{
		{"Analysis:", true},
		{"1. The exporter writes CSV.", true},
		{"Summary:", false},
		{"1. Key Technical Concepts:", false},
		{"<analysis>", true},
		{"</analysis>", false},
	}
	in := false
	for _, l := range lines {
		if in = summaryDraft(l.line, in); in != l.want {
			t.Errorf("after %q: in the analysis %v, want %v", l.line, in, l.want)
		}
	}
}
