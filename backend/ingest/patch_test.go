package ingest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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
	tests := []callPatchCase{
		{"a shell command running apply_patch", memory.ToolCall{Name: "shell", Input: string(argv)}, []string{"3 a.txt |  | "}},
		{"apply_patch's own input", memory.ToolCall{Name: "apply_patch", Input: string(direct)}, []string{"1 b.md |  | x"}},
		// An "*** Add File:" line outside a patch is no patch: the
		// command does not create c.txt.
		{"an Add File line without Begin Patch", memory.ToolCall{Name: "shell", Input: "grep -n '\n*** Add File: c.txt' log"}, nil},
		{"input that is not JSON", memory.ToolCall{Name: "apply_patch", Input: "*** Begin Patch\n*** Add File: d.md\n+y\n*** End Patch"}, []string{"1 d.md |  | y"}},
	}
	checkCallPatches(t, tests)
	// turnPatches places each call's patch at its step and call.
	turn := Turn{Steps: []Step{{Calls: []memory.ToolCall{{Name: "shell", Input: `{"command":"ls"}`}, tests[0].call}}, {}}}
	ps := turnPatches(turn)
	if patchAt(ps, 0, 0) != nil || patchAt(ps, 0, 1) == nil || patchAt(ps, 1, 0) != nil || patchAt(ps, 5, 5) != nil {
		t.Errorf("turnPatches = %v", ps)
	}
}

// editCall is a file-editing tool call of the named tool with input.
func editCall(name string, input map[string]any) memory.ToolCall {
	in, _ := json.Marshal(input)
	return memory.ToolCall{ID: "e", Name: name, Input: string(in)}
}

// TestEditPatch: every agent's file edit is read as a patch of its file,
// one representation for all the readers (instruction edits, moves and
// writes, removed settings).
func TestEditPatch(t *testing.T) {
	tests := []callPatchCase{
		{"Claude Code's Edit", editCall("Edit", map[string]any{"file_path": "/r/deploy.yml", "old_string": "a: 1\nb: 2", "new_string": "a: 1"}),
			[]string{"2 /r/deploy.yml | a: 1/b: 2 | a: 1"}},
		{"Claude Code's MultiEdit, an update per edit", editCall("MultiEdit", map[string]any{"file_path": "app.toml", "edits": []map[string]string{{"old_string": "x = 1", "new_string": "x = 2"}, {"old_string": "y = 1", "new_string": ""}}}),
			[]string{"2 app.toml | x = 1 | x = 2", "2 app.toml | y = 1 | "}},
		{"Claude Code's Write, an added file", editCall("Write", map[string]any{"file_path": " docs/a.md ", "content": "# A\nbody"}),
			[]string{"1 docs/a.md |  | # A/body"}},
		{"a Write kept with its path alone (movedCall)", editCall("Write", map[string]any{"file_path": "docs/a.md"}),
			[]string{"1 docs/a.md |  | "}},
		{"the text editor's str_replace", editCall("str_replace_based_edit_tool", map[string]any{"command": "str_replace", "path": "a.env", "old_str": "K=1", "new_str": "K=2"}),
			[]string{"2 a.env | K=1 | K=2"}},
		{"the text editor's insert", editCall("str_replace_editor", map[string]any{"command": "insert", "path": "a.env", "insert_line": 3, "new_str": "J=1"}),
			[]string{"2 a.env |  | J=1"}},
		{"the text editor's create", editCall("str_replace_based_edit_tool", map[string]any{"command": "create", "path": "b.md", "file_text": "hi"}),
			[]string{"1 b.md |  | hi"}},
		{"the text editor's view changes nothing", editCall("str_replace_based_edit_tool", map[string]any{"command": "view", "path": "b.md"}), nil},
		{"an Edit naming no file", editCall("Edit", map[string]any{"old_string": "a", "new_string": "b"}), nil},
		{"a path on two lines", editCall("Edit", map[string]any{"file_path": "a\n*** Delete File: b", "old_string": "a", "new_string": "b"}), nil},
		{"a Read with the same fields is no edit", editCall("Read", map[string]any{"file_path": "a.go", "content": "x"}), nil},
		// SpecStory's Edit (Cursor) carries the block's info, not JSON: its
		// fenced edit is read from its result (stepEdits).
		{"SpecStory's Edit", memory.ToolCall{Name: "Edit", Input: "markdown:AGENTS.md"}, nil},
		{"input that is not an object", memory.ToolCall{Name: "Edit", Input: `["a"]`}, nil},
	}
	checkCallPatches(t, tests)
}

// TestEditPatchReaders: the readers of a patch read a Claude Code edit as
// they read the same edit made by apply_patch.
func TestEditPatchReaders(t *testing.T) {
	tests := []struct {
		name          string
		claude, codex memory.ToolCall
	}{
		{"an Edit adding a convention to AGENTS.md",
			editCall("Edit", map[string]any{"file_path": "AGENTS.md", "old_string": "## Tests", "new_string": "## Tests\n- Run the race detector."}),
			patchCall("p", "*** Begin Patch\n*** Update File: AGENTS.md\n@@\n ## Tests\n+- Run the race detector.\n*** End Patch")},
		{"an Edit taking a convention out of AGENTS.md",
			editCall("Edit", map[string]any{"file_path": "AGENTS.md", "old_string": "## Tests\n- Use npm.", "new_string": "## Tests"}),
			patchCall("p", "*** Begin Patch\n*** Update File: AGENTS.md\n@@\n ## Tests\n-- Use npm.\n*** End Patch")},
		{"a Write of CLAUDE.md",
			editCall("Write", map[string]any{"file_path": "CLAUDE.md", "content": "- Use pnpm."}),
			patchCall("p", "*** Begin Patch\n*** Add File: CLAUDE.md\n+- Use pnpm.\n*** End Patch")},
		{"a MultiEdit removing a setting",
			editCall("MultiEdit", map[string]any{"file_path": "ci.yml", "edits": []map[string]string{{"old_string": "  lint:\n    allow_failure: true", "new_string": "  lint:"}}}),
			patchCall("p", "*** Begin Patch\n*** Update File: ci.yml\n@@\n   lint:\n-    allow_failure: true\n*** End Patch")},
	}
	read := func(c memory.ToolCall) string {
		p := callPatch(c)
		var b strings.Builder
		for _, e := range callEdits(p) {
			fmt.Fprintf(&b, "edit %s +%q -%q; ", e.file, e.after, e.removed())
		}
		for _, r := range cmp.Or(p, &patch{}).removedSettings() {
			fmt.Fprintf(&b, "removes %s %v; ", r.key, slices.Sorted(maps.Keys(r.subject)))
		}
		rs, w := callFiles(c, p)
		fmt.Fprintf(&b, "moves %v writes %q", rs, w)
		return b.String()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, want := read(tt.claude), read(tt.codex); got != want {
				t.Errorf("Claude Code's edit reads %s\napply_patch's reads  %s", got, want)
			}
		})
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

// FuzzEditPatch: any file-editing call parses without panicking; its
// patch names its file trimmed and on one line, every line it reads is a
// line of the strings the call gives, and the call a slimmed turn keeps
// of it for its removed settings (removalCall) reads as the same
// removals.
func FuzzEditPatch(f *testing.F) {
	f.Add("Edit", ".ci/pipeline.yml", "  lint:\n    allow_failure: true\n    script: make lint", "  lint:\n    script: make lint", "")
	f.Add("MultiEdit", "a.env", "A=1\nB=2\nC=3\nD=4", "A=1\nD=4", "A=1\nB=2")
	f.Add("Write", " x.md ", "", "", "# x\n- y")
	f.Add("Edit", "ci.yml", "  lint:\n    allow_failure: true\n    retry_count: 2\n    script: make lint\n  test:\n    allow_failure: true", "  lint:\n    script: make lint\n  test:", "")
	f.Add("str_replace_editor", "k.toml", "x = 1\r\ny = 2\n*** End Patch", "y = 3", "")
	f.Fuzz(func(t *testing.T, name, file, old, new, other string) {
		if !utf8.ValidString(file) || !utf8.ValidString(old) || !utf8.ValidString(new) || !utf8.ValidString(other) {
			t.Skip() // JSON holds none
		}
		input := map[string]any{"file_path": file, "old_string": old, "new_string": new}
		switch name {
		case "MultiEdit":
			input = map[string]any{"file_path": file, "edits": []map[string]string{{"old_string": old, "new_string": new}, {"old_string": other, "new_string": ""}}}
		case "Write":
			input = map[string]any{"file_path": file, "content": other}
		case "str_replace_editor":
			input = map[string]any{"command": "str_replace", "path": file, "old_str": old, "new_str": new}
		}
		in, err := json.Marshal(input)
		if err != nil {
			t.Skip()
		}
		c := memory.ToolCall{ID: "f", Name: name, Input: string(in)}
		if strings.Contains(c.Input, "*** Begin Patch") {
			t.Skip() // read as apply_patch (FuzzParsePatch)
		}
		p := editPatch(c)
		if p == nil {
			return
		}
		given := map[string]bool{}
		for _, s := range []string{old, new, other} {
			for _, l := range splitLines(s) {
				given[l] = true
			}
		}
		for _, fl := range p.files {
			if fl.path != strings.TrimSpace(fl.path) || fl.path == "" || strings.ContainsAny(fl.path, "\r\n") {
				t.Fatalf("path %q", fl.path)
			}
			for _, l := range append(slices.Clone(fl.before), fl.after...) {
				if !given[l] {
					t.Fatalf("line %q is not given", l)
				}
			}
		}
		render := func(p *patch) []string {
			var out []string
			for _, r := range p.removedSettings() {
				out = append(out, fmt.Sprintf("%s bare=%v %s", r.key, r.bare, strings.Join(slices.Sorted(maps.Keys(r.subject)), " ")))
			}
			return out
		}
		want := render(p)
		k, ok := removalCall(c, p)
		if ok != (len(want) > 0) {
			t.Fatalf("removalCall kept %v, removals %q", ok, want)
		}
		if ok {
			if got := render(callPatch(k)); !slices.Equal(got, want) {
				t.Fatalf("the slimmed call removes %q, the call %q", got, want)
			}
		}
	})
}

// callPatchCase is a tool call and the patch callPatch should read from
// it, rendered (render()); nil: no patch.
type callPatchCase struct {
	name string
	call memory.ToolCall
	want []string
}

// checkCallPatches runs callPatch on each case's call, as a subtest.
func checkCallPatches(t *testing.T, tests []callPatchCase) {
	t.Helper()
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
}
