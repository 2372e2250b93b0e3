package ingest

import (
	"strings"
	"testing"
)

func TestFenceTails(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a path block ends its sentence",
			"Store the cache under:\n```\n$XDG_CACHE_HOME/widget/<repo>/blobs\n```\n\nThen more.",
			"Store the cache under: `$XDG_CACHE_HOME/widget/<repo>/blobs`\n\nThen more."},
		{"a blank line between them",
			"The config lives at:\n\n```text\n~/.config/widget/config.toml\n```",
			"The config lives at: `~/.config/widget/config.toml`"},
		{"a command stays code",
			"Please run:\n```bash\ngrep -n foo src/a.go\n```",
			"Please run:\n```bash\ngrep -n foo src/a.go\n```"},
		{"a call stays code",
			"The error is on:\n```\nexpect(done[0].id).toBe('#2');\n```",
			"The error is on:\n```\nexpect(done[0].id).toBe('#2');\n```"},
		{"two lines stay code",
			"Set these:\n```\nA=1\nB=2\n```",
			"Set these:\n```\nA=1\nB=2\n```"},
		{"no sentence introduces it",
			"The cache moved.\n```\n/var/cache/widget\n```",
			"The cache moved.\n```\n/var/cache/widget\n```"},
		{"an edit's block names its file",
			"Update it:\n```go:internal/a.go\nx\n```",
			"Update it:\n```go:internal/a.go\nx\n```"},
		{"a block inside a block is its code",
			"Example:\n````markdown\nStore it under:\n```\n/var/lib/widget\n```\n````",
			"Example:\n````markdown\nStore it under:\n```\n/var/lib/widget\n```\n````"},
		{"a heading introduces nothing",
			"## Paths:\n```\n/var/lib/widget\n```",
			"## Paths:\n```\n/var/lib/widget\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fenceTails(tt.in); got != tt.want {
				t.Errorf("fenceTails(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestFenceTailKept: the sentence a one-token block ends is kept with
// what it says; before fenceTails it was a lead-in without it.
func TestFenceTailKept(t *testing.T) {
	text := "According to the spec, we need to:\n\n1. Store session repos under:\n```\n$XDG_STATE_HOME/widget/git/<repoName>/sessions/<session>\n```\n\n2. The earlier layout lacked the `sessions` folder, so every existing repo must move under it.\n\nLet me check the stash:"
	cands := Distill(Turn{User: []string{"go on"}, Steps: []Step{{Text: text}, {Text: "Done."}}}, nil)
	for _, c := range cands {
		if c.Keep && strings.Contains(c.Text, "Store session repos under: `$XDG_STATE_HOME/widget/git/<repoName>/sessions/<session>`") {
			return
		}
	}
	t.Errorf("the path's sentence was not kept: %+v", cands)
}

func TestFrontedOffer(t *testing.T) {
	tests := []struct {
		s    string
		want bool
	}{
		{"To make the scripts executable, you can use the following command: `chmod +x a.sh`", true},
		{"After creating these files, you can make them executable with `chmod +x a.sh b.sh`", true},
		{"From here, we can start analyzing potential issues.", true},
		{"You can use the following command: `chmod +x a.sh`", false}, // no fronted clause: offer reads it
		{"Looking at the code, I can see that the server binds port 8080.", false},
		{"Since the cache is per user, the daemon writes to `~/.cache/widget`.", false},
	}
	for _, tt := range tests {
		if got := frontedOffer(lower(tt.s)); got != tt.want {
			t.Errorf("frontedOffer(%q) = %v, want %v", tt.s, got, tt.want)
		}
	}
}
