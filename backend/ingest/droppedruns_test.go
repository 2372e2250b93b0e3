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

// TestPartKeptBlockShowsDrops: a block distillation keeps in part shows
// the sentences it dropped, after its kept statement, each run of one
// class with that class as its reason, as a block dropped whole does; a
// sentence a kept statement holds as its context is not shown dropped.
func TestPartKeptBlockShowsDrops(t *testing.T) {
	type shown struct {
		kept        bool
		class, text string
	}
	finding := "The loader reads `config.toml` from the home directory because `XDG_CONFIG_HOME` is unset in the service unit."
	for _, tc := range []struct {
		name  string
		reply string
		want  []shown
	}{
		{"narration, finding, status", "Let me look at the loader. " + finding + " All 12 tests pass now.", []shown{
			{true, ClassFinding, finding},
			{false, ClassNarration, "Let me look at the loader."},
			{false, ClassStatus, "All 12 tests pass now."},
		}},
		{"a run of one class joined", finding + " All 12 tests pass now. The build is green.", []shown{
			{true, ClassFinding, finding},
			{false, ClassStatus, "All 12 tests pass now. The build is green."},
		}},
		{"the context of a pronoun is kept, not dropped", "Let me check whether `loadConfig` reads `config.toml`. It reads it only when `XDG_CONFIG_HOME` is unset, because the service unit clears the environment. All 12 tests pass now.", []shown{
			{true, ClassFinding, "Let me check whether `loadConfig` reads `config.toml`. It reads it only when `XDG_CONFIG_HOME` is unset, because the service unit clears the environment."},
			{false, ClassStatus, "All 12 tests pass now."},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turns := GroupTurns(sessionOf("s", "how does the loader find its config?", "Looking.", tc.reply))
			var got []shown
			for _, c := range Distill(turns[0], nil) {
				if c.step == 1 {
					got = append(got, shown{c.Keep, c.Class, c.Text})
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
