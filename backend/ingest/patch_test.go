package ingest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// render writes a parsed patch's files one line each, for comparison:
// "op path [-> moveTo] | before | after".
func (p *patch) render() []string {
	var out []string
	for _, f := range p.files {
		s := fmt.Sprintf("%d %s", f.op, f.path)
		if f.moveTo != "" {
			s += " -> " + f.moveTo
		}
		out = append(out, s+" | "+strings.Join(f.before, "/")+" | "+strings.Join(f.after, "/"))
	}
	return out
}

func TestParsePatch(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"add, update with hunks, delete",
			"*** Begin Patch\n*** Add File: docs/new.md\n+# New\n+Use make.\n*** Update File: AGENTS.md\n@@ ## Build\n ## Build\n-- Use npm.\n+- Use yarn.\n*** Delete File: old/x.txt\n*** End Patch",
			[]string{"1 docs/new.md |  | # New/Use make.", "2 AGENTS.md | ## Build/- Use npm. | ## Build/- Use yarn.", "3 old/x.txt |  | "}},
		{"a move keeps the update's hunks",
			"*** Begin Patch\n*** Update File: lib/a.ex\n*** Move to: lib/b/a.ex\n@@\n-x\n+y\n*** End Patch",
			[]string{"2 lib/a.ex -> lib/b/a.ex | x | y"}},
		{"a context line reading like a header is a line",
			"*** Begin Patch\n*** Update File: notes.md\n@@\n *** Move to: elsewhere\n+z\n*** End Patch",
			[]string{"2 notes.md | *** Move to: elsewhere | *** Move to: elsewhere/z"}},
		{"an indented header outside a file's lines",
			"apply_patch <<'EOF'\n  *** Begin Patch\n  *** Update File: a.go\n*** End Patch\nEOF",
			[]string{"2 a.go |  | "}},
		{"End of File ends the file's lines",
			"*** Begin Patch\n*** Update File: a.md\n@@\n+one\n*** End of File\n+two\n*** End Patch",
			[]string{"2 a.md |  | one"}},
		{"a Move to: without an update is nothing",
			"*** Begin Patch\n*** Move to: b.go\n*** Delete File: c.go\n*** Move to: d.go\n*** End Patch",
			[]string{"3 c.go |  | "}},
		{"CRLF line ends", "*** Begin Patch\r\n*** Add File: x.md\r\n+a\r\n*** End Patch\r\n",
			[]string{"1 x.md |  | a"}},
		{"a header without the space after its colon",
			"*** Begin Patch\n*** Update File:a.md\n+b\n*** End Patch",
			[]string{"2 a.md |  | b"}},
		{"lines outside a file are skipped", "+a\n-b\n c\n@@\ntext", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parsePatch(tt.text).render(); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPatchReaders(t *testing.T) {
	tests := []struct {
		name, text   string
		edits        []string // file: after lines
		relocs       []string // from -> to
		added        string
		wantNoRelocs bool
	}{
		{"an instruction file updated, a plain file added",
			"*** Begin Patch\n*** Add File: ./src/app.go\n+package app\n*** Update File: CLAUDE.md\n@@\n-old\n+- Run `make check` before committing.\n*** End Patch",
			[]string{"CLAUDE.md: - Run `make check` before committing."}, nil, "src/app.go", true},
		{"an instruction file moved and edited is edited under its new name",
			"*** Begin Patch\n*** Update File: notes/AGENTS.md\n*** Move to: AGENTS.md\n@@\n+- Use pnpm.\n*** End Patch",
			[]string{"AGENTS.md: - Use pnpm."}, []string{"notes/AGENTS.md -> AGENTS.md"}, "", false},
		{"an update that only removes lines is no edit",
			"*** Begin Patch\n*** Update File: AGENTS.md\n@@\n-- Use npm.\n*** End Patch",
			nil, nil, "", true},
		{"a deleted file, not one named by a glob or a variable",
			"*** Begin Patch\n*** Delete File: config/legacy.toml\n*** Delete File: build/*.o\n*** Delete File: $OUT/x\n*** Delete File:\n*** Delete File: .\n*** Update File: a.go\n*** Move to: ./\n*** End Patch",
			nil, []string{"config/legacy.toml -> "}, "", false},
		{"a context line reading like a Move to: is no move",
			"*** Begin Patch\n*** Update File: notes.md\n@@\n *** Move to: elsewhere.md\n+z\n*** End Patch",
			nil, nil, "", true},
		{"the first added file",
			"*** Begin Patch\n*** Add File: a/one.txt\n+1\n*** Add File: a/two.txt\n+2\n*** End Patch",
			nil, nil, "a/one.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parsePatch(tt.text)
			var edits []string
			for _, e := range p.instrEdits() {
				edits = append(edits, e.file+": "+strings.Join(e.after, "/"))
			}
			var relocs []string
			for _, r := range p.relocations() {
				relocs = append(relocs, r.from+" -> "+r.to)
			}
			if !slices.Equal(edits, tt.edits) || !slices.Equal(relocs, tt.relocs) || p.added() != tt.added {
				t.Errorf("edits %q relocations %q added %q\nwant  %q %q %q", edits, relocs, p.added(), tt.edits, tt.relocs, tt.added)
			}
		})
	}
}

func TestCallPatch(t *testing.T) {
	argv, _ := json.Marshal(map[string]any{"command": []string{"bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: a.txt\n*** End Patch\nEOF"}})
	direct, _ := json.Marshal(map[string]any{"input": "*** Begin Patch\n*** Add File: b.md\n+x\n*** End Patch"})
	tests := []struct {
		name string
		call memory.ToolCall
		want []string // nil: no patch
	}{
		{"a shell command running apply_patch", memory.ToolCall{Name: "shell", Input: string(argv)}, []string{"3 a.txt |  | "}},
		{"apply_patch's own input", memory.ToolCall{Name: "apply_patch", Input: string(direct)}, []string{"1 b.md |  | x"}},
		// An "*** Add File:" line outside a patch is no patch: the
		// command does not create c.txt.
		{"an Add File line without Begin Patch", memory.ToolCall{Name: "shell", Input: "grep -n '\n*** Add File: c.txt' log"}, nil},
		{"input that is not JSON", memory.ToolCall{Name: "apply_patch", Input: "*** Begin Patch\n*** Add File: d.md\n+y\n*** End Patch"}, []string{"1 d.md |  | y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := callPatch(tt.call)
			if (p == nil) != (tt.want == nil) {
				t.Fatalf("callPatch = %v, want a patch: %v", p, tt.want != nil)
			}
			if p != nil && !slices.Equal(p.render(), tt.want) {
				t.Errorf("got %q, want %q", p.render(), tt.want)
			}
		})
	}
	// turnPatches places each call's patch at its step and call.
	turn := Turn{Steps: []Step{{Calls: []memory.ToolCall{{Name: "shell", Input: `{"command":"ls"}`}, tests[0].call}}, {}}}
	ps := turnPatches(turn)
	if patchAt(ps, 0, 0) != nil || patchAt(ps, 0, 1) == nil || patchAt(ps, 1, 0) != nil || patchAt(ps, 5, 5) != nil {
		t.Errorf("turnPatches = %v", ps)
	}
}

// FuzzParsePatch: any text parses without panicking; every file's path is
// trimmed and on one line, every line it reads is a line of the text
// without its first character, and the readers hold to the same.
func FuzzParsePatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Update File: AGENTS.md\n*** Move to: docs/AGENTS.md\n@@\n ctx\n-old\n+new\n*** Delete File: x\n*** End Patch")
	f.Add("*** Update File:\n*** Move to:\n+\n-\n \n*** End of File")
	f.Add("  *** Delete File: {a,b}\r\n*** Add File: \t\r\n+x\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		lines := map[string]bool{}
		for _, l := range splitLines(s) {
			if l != "" {
				lines[l[1:]] = true
			}
		}
		p := parsePatch(s)
		for _, fl := range p.files {
			for _, x := range []string{fl.path, fl.moveTo} {
				if x != strings.TrimSpace(x) || strings.Contains(x, "\n") {
					t.Fatalf("path %q of %q", x, s)
				}
			}
			for _, l := range append(slices.Clone(fl.before), fl.after...) {
				if !lines[l] {
					t.Fatalf("line %q is not in %q", l, s)
				}
			}
		}
		for _, e := range p.instrEdits() {
			if !InstructionFile(e.file) || len(e.after) == 0 {
				t.Fatalf("edit of %q with %d lines", e.file, len(e.after))
			}
		}
		for _, r := range p.relocations() {
			if r.from == "" && r.to == "" {
				t.Fatalf("relocation %+v of %q", r, s)
			}
		}
	})
}
