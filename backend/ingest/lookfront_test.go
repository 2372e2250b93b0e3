package ingest

import "testing"

func TestLookFront(t *testing.T) {
	tests := []struct {
		s     string
		class string // classify's answer
	}{
		{"Looking at the search results, I found the widget spec in `docs/specs/002-widget.md`.", classContent},
		{"Looking at the template, when `@missing` is true, no panel is rendered, so its assigns aren't read.", classContent},
		{"After reviewing `ledger/round.go`, the totals use banker's rounding because the bank does.", classContent},
		{"Looking at your `spinner.js`, we need to track the flow of messages.", classProcedural},
		{"Looking at the code, let me check where the cache is built.", classProcedural},
		{"Looking at the test output now.", classProcedural},
		{"Checking the logs, I'll rerun the job.", classProcedural},
	}
	for _, tt := range tests {
		if got := classify(tt.s); got != tt.class {
			t.Errorf("classify(%q) = %q, want %q", tt.s, got, tt.class)
		}
	}
}
