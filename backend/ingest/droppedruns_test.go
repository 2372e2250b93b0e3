package ingest

import (
	"slices"
	"testing"
)

// TestDroppedBlockClassEachRun: a block dropped whole shows each run of
// its sentences of one class with that class, not the block's most common
// class for all of it; a block of one class stays one statement, whole.
func TestDroppedBlockClassEachRun(t *testing.T) {
	type shown struct{ class, text string }
	for _, tc := range []struct {
		name  string
		reply string
		want  []shown
	}{
		{"narration, then status", "Let me check the config loader next. All 12 tests pass.", []shown{
			{ClassNarration, "Let me check the config loader next."},
			{ClassStatus, "All 12 tests pass."},
		}},
		{"one class: the block whole", "Let me check the config loader next. Now let me look at the tests.", []shown{
			{ClassNarration, "Let me check the config loader next. Now let me look at the tests."},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "what does the loader do?", "Looking.", tc.reply))
			var got []shown
			for _, c := range Distill(turns[0], nil) {
				if !c.Keep && c.step == 1 {
					got = append(got, shown{c.Class, c.Text})
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("dropped %q, want %q", got, tc.want)
			}
		})
	}
}
