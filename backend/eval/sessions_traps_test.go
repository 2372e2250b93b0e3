package eval

import (
	"strings"
	"testing"
)

func TestTrapCovers(t *testing.T) {
	tests := []struct {
		name string
		text string
		keys [][]string
		want bool // the labels' meaning
		sub  bool // the substring test's answer, kept as the old ruler
	}{
		{"the trap's path said", "The wrapper is in `scripts/run_tail.sh` at the repo root.",
			[][]string{{"run_tail"}, {"scripts/run_tail.sh"}}, true, true},
		{"a longer path holding the trap's path", "Created `priv/scripts/run_tail.sh` for the tail worker.",
			[][]string{{"run_tail"}, {"scripts/run_tail.sh"}}, false, true},
		{"a file name key matches the end of a path", "Edits to `priv/static/app.css` must be force-added.",
			[][]string{{"app.css"}, {"force-added"}}, true, true},
		{"a path followed by more path", "See scripts/run_tail.sh/backup for the old copy.",
			[][]string{{"scripts/run_tail.sh"}}, false, true},
		{"a negated mention with no", "The desktop build should use no redis, mongo or kafka in offline mode.",
			[][]string{{"redis"}, {"offline"}}, false, true},
		{"a negated mention two words on", "The settings tab now saves a structured section (no direct config injection).",
			[][]string{{"settings tab"}, {"inject"}}, false, true},
		{"without", "The worker starts without redis when offline mode is set.",
			[][]string{{"redis"}, {"offline"}}, false, true},
		{"said not to exist", "`cache.set_many_keys/2` doesn't exist, so keys are set one by one.",
			[][]string{{"set_many_keys"}, {"keys"}}, false, true},
		{"an asserted mention next to a negated one", "No kafka here; redis is used in offline mode.",
			[][]string{{"redis"}, {"offline"}}, true, true},
		{"a negation in another clause does not reach", "There is no cache, and redis runs in offline mode.",
			[][]string{{"redis"}, {"offline"}}, true, true},
		{"a whole number", "Titles are limited to 120 characters.",
			[][]string{{"120"}, {"title"}}, true, true},
		{"inside a longer number", "Titles are limited to 1200 characters.",
			[][]string{{"120"}, {"title"}}, false, true},
		{"stems still match words", "Propagators are set through the app environment with set_text_map_propagators.",
			[][]string{{"set_text_map_propagators"}, {"propagator"}}, true, true},
		{"no keys", "anything", nil, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lower := strings.ToLower(tc.text)
			if got := trapCoversLower(lower, tc.keys); got != tc.want {
				t.Errorf("trapCoversLower = %v, want %v", got, tc.want)
			}
			if got := coversLower(lower, tc.keys); got != tc.sub {
				t.Errorf("coversLower = %v, want %v", got, tc.sub)
			}
		})
	}
}

func TestTrapsKeptBothRulers(t *testing.T) {
	traps := []Trap{
		{Statement: "run_tail.sh lives in the repo-root scripts/ directory.", Keys: [][]string{{"run_tail"}, {"scripts/run_tail.sh"}}},
		{Statement: "The desktop app uses redis offline.", Keys: [][]string{{"redis"}, {"offline"}}},
	}
	texts := []string{
		"Created `priv/scripts/run_tail.sh` (moved from the repo root).",
		"Offline mode must use no redis.",
		"The desktop app starts redis in offline mode.",
	}
	kept, memories := trapsKept(traps, texts)
	if kept != 1 || memories != 1 {
		t.Errorf("trapsKept = %d traps, %d memories; want 1, 1", kept, memories)
	}
	if got := trapsKeptSubstring(traps, texts); got != 2 {
		t.Errorf("trapsKeptSubstring = %d, want 2", got)
	}
}

func FuzzTrapMention(f *testing.F) {
	for _, s := range []string{"no redis", "priv/scripts/x.sh", "1200", "x doesn't exist", ""} {
		f.Add(s, "redis")
	}
	f.Fuzz(func(t *testing.T, text, alt string) {
		lower, la := strings.ToLower(text), strings.ToLower(alt)
		if trapMention(lower, la) && !strings.Contains(lower, la) {
			t.Fatalf("trapMention(%q, %q) without the substring", lower, la)
		}
	})
}
