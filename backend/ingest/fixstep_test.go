package ingest

import "testing"

func TestFixSteps(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a problem and the fix said next",
			"I see the issue. The `slug` is incorrectly set to `a/b` when it should be `local/b`. Let me fix this by updating the `normalizeSlug` function.",
			"I see the issue. The `slug` is incorrectly set to `a/b` when it should be `local/b` — fix: updating the `normalizeSlug` function."},
		{"a step that is no fix stays apart",
			"The `slug` is incorrectly set to `a/b` when it should be `local/b`. Let me check the tests.",
			"The `slug` is incorrectly set to `a/b` when it should be `local/b`. Let me check the tests."},
		{"a plan of a change without 'fix ... by' stays apart",
			"The sandbox can't be reached from the LiveView process. I need to use `:auto` mode.",
			"The sandbox can't be reached from the LiveView process. I need to use `:auto` mode."},
		{"the agent's own state is no problem of the project",
			"I don't see the config file here. Let me fix this by creating `config/app.toml`.",
			"I don't see the config file here. Let me fix this by creating `config/app.toml`."},
		{"a question is no problem",
			"Why doesn't the cache refresh? Let me fix it by clearing `tmp/cache`.",
			"Why doesn't the cache refresh? Let me fix it by clearing `tmp/cache`."},
		{"a list item is left as it is",
			"- The cache doesn't refresh on save. Let me fix it by clearing `tmp/cache`.",
			"- The cache doesn't refresh on save. Let me fix it by clearing `tmp/cache`."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fixSteps(tt.in); got != tt.want {
				t.Errorf("fixSteps(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestFixStepKept: the problem joined with its fix is kept whole; apart,
// the fix was narration and the memory lacked where the fix is.
func TestFixStepKept(t *testing.T) {
	text := "I see the issue. The `slug` is incorrectly set to `a/b` when it should be `local/b`. Let me fix this by updating the `normalizeSlug` function."
	for _, c := range Distill(Turn{User: []string{"go on"}, Steps: []Step{{Text: text}, {Text: "Done."}}}, nil) {
		if c.Keep && c.Text == "The `slug` is incorrectly set to `a/b` when it should be `local/b` — fix: updating the `normalizeSlug` function." {
			return
		}
	}
	t.Error("the problem with its fix was not kept")
}
