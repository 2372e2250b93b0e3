package ingest

import "testing"

func TestSentences(t *testing.T) {
	tests := []struct {
		prose string
		want  int
	}{
		{"Framer Motion (a.k.a. Motion) drives page transitions. It runs at 60 fps.", 2},
		{"Use a short TTL, e.g. 5 minutes, for the cache.", 1},
		{"- one item\n- two items", 2},
		{"Version v1.2 is out. See main.go for details!", 2},
		// Each line is read on its own: command lines with no full stop
		// between them, and the offer after them, are three.
		{"ledger hooks --file books.yaml\nledger preview --file books.yaml --hook close\nIf helpful, I can add a validate subcommand", 3},
	}
	for _, tc := range tests {
		if got := sentences(tc.prose); len(got) != tc.want {
			t.Errorf("sentences(%q) = %d %+v, want %d", tc.prose, len(got), got, tc.want)
		}
	}
}

// TestSplitFences: fences inside a fenced block (a rule's examples, a
// markdown file's blocks) end neither it nor let its code out as prose.
func TestSplitFences(t *testing.T) {
	tests := []struct {
		name, text, prose string
	}{
		{"plain", "Run it:\n```bash\nmake check\n```\nIt passes.", "Run it:\n\n\nIt passes."},
		{"unterminated", "Look:\n```go\nx := 1", "Look:\n\n"},
		{"indented fences inside", "Rule:\n```markdown\n- run:\n     ```bash\n     make check\n     ```\n     ```bash\n     tasks show 12\n```\nThe cache keeps expired entries.",
			"Rule:\n\n\nThe cache keeps expired entries."},
		{"balanced fences inside", "Output:\n```\n# Tasks\n```markdown\n- [ ] Task Title\n```\n## Tasks\n- [ ] Fix tests\n```\nThe file is a checklist.",
			"Output:\n\n\nThe file is a checklist."},
		{"longer fence", "Example:\n````\n```go\nx\n```\n````\nDone.", "Example:\n\n\nDone."},
		{"inline code is no fence", "```x``` is inline.\nMore.", "```x``` is inline.\nMore."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := splitFences(tc.text); got != tc.prose {
				t.Errorf("prose %q, want %q", got, tc.prose)
			}
		})
	}
}
