package eval

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestIdentifierCandidates: the tokens a memory writes as identifiers,
// whole (a hash starting with a digit too), a path cut to its file name;
// not plain words, URLs or short tokens.
func TestIdentifierCandidates(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"Run `opk install --dry-run` then check backend/search/evidence.go.", []string{"--dry-run", "evidence.go"}},
		{"commit 3bb8701 fixed TranscriptRenderer and spawn_blocking", []string{"3bb8701", "TranscriptRenderer", "spawn_blocking"}},
		{"see https://example.com/a_b/c.html for E1234 and pkg::Fn", []string{"E1234", "pkg::Fn"}},
		{"The service is fast. It has a cache, 2024 and v1.", nil},
		{"the gcode.end hook, gcode.end again, and 3-in-1 mixing", []string{"gcode.end", "3-in-1"}},
	}
	for _, c := range cases {
		if got := identifierCandidates(c.text); !slices.Equal(got, c.want) {
			t.Errorf("identifierCandidates(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestRareIdentifiers: a memory's identifiers that no other memory holds
// and general language does not use, the first IdentifiersPerMemory of
// them; a hyphenated compound of general words is not one.
func TestRareIdentifiers(t *testing.T) {
	ms := []memory.Memory{
		{ID: "a", Text: "The zq_loader flag --one-off and frob_x7 and q9_widget live in cmd/zq_tool.go; see also shared_helper_z3."},
		{ID: "b", Text: "shared_helper_z3 is used by both; built-in and one-off are English."},
	}
	got, err := rareIdentifiers(ms)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"zq_loader", "frob_x7"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rareIdentifiers = %q, want %q", got, want)
	}
}

// TestRunSessionsProbeIdentifiers: the identifier probe asks every prompt
// of every rare identifier, counts each answer once, and leaves every
// other figure of the report as the run without it.
func TestRunSessionsProbeIdentifiers(t *testing.T) {
	set := filepath.Join("testdata", "sessions", "set.json")
	plain, err := RunSessions(context.Background(), set, SessionsOptions{TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunSessions(context.Background(), set, SessionsOptions{TempDir: t.TempDir(), ProbeIdentifiers: true})
	if err != nil {
		t.Fatal(err)
	}
	logTable(t, rep)
	p := rep.Identifiers
	if p == nil || p.Memories == 0 || p.Prompts != p.Identifiers*len(IdentifierPrompts) || p.Identifiers > p.Memories*IdentifiersPerMemory {
		t.Fatalf("identifier probe %+v: want memories with identifiers, %d prompts each", p, len(IdentifierPrompts))
	}
	if p.Hits+p.Other+p.Empty != p.Prompts || p.EmptyLexicalFar+p.EmptyGeneric+p.EmptyNamesUnknown+p.EmptyNoEvidence+p.EmptyFloors != p.Empty {
		t.Errorf("identifier probe %+v: every prompt counted once, every empty one with one reason", p)
	}
	rep.Identifiers, rep.Seconds, plain.Seconds = nil, 0, 0
	if !reflect.DeepEqual(rep, plain) {
		t.Errorf("the probe changed the report:\n%+v\nwant\n%+v", rep.Overall, plain.Overall)
	}
}

// TestFormTokens: the tokens a memory writes in each name form, as the
// probe names them, in text order: a flag without its value, a variable
// without '$', a path (not two words joined by a slash, not a URL's), a
// called name with "()" (not a plural mark), a number written as an
// identifier (not a count).
func TestFormTokens(t *testing.T) {
	const text = "Run `tiler cut --firmware=gps -n` with TILER_BUCKET=x and $HOME; tiles go to assets/ and cmd/tiler/main.go, " +
		"and/or https://example.com/a/b; it uses abs(self._value) per file(s); since v2.4.1 on :8471 (#12, ABC-7), 10 tiles."
	cases := []struct {
		form string
		want []string
	}{
		{"flag", []string{"--firmware", "-n"}},
		{"env", []string{"TILER_BUCKET", "HOME"}},
		{"path", []string{"assets/", "cmd/tiler/main.go"}},
		{"call", []string{"abs()"}},
		{"number", []string{"v2.4.1", ":8471", "#12", "ABC-7"}},
	}
	for _, c := range cases {
		if got := formTokens(text, c.form); !slices.Equal(got, c.want) {
			t.Errorf("formTokens(%s) = %q, want %q", c.form, got, c.want)
		}
	}
}

// TestNameFormTokens: a memory's tokens of a form that no other memory
// writes in it and that the identifier probe does not ask already.
func TestNameFormTokens(t *testing.T) {
	ms := []memory.Memory{
		{ID: "a", Text: "Use --firmware and --force; the key is zq_key, set with --zq_key."},
		{ID: "b", Text: "Never pass --force here."},
	}
	got := nameFormTokens(ms, map[string][]string{"a": {"--zq_key"}})
	if want := map[string][]string{"a": {"--firmware"}}; !reflect.DeepEqual(got["flag"], want) {
		t.Errorf("flag tokens = %q, want %q", got["flag"], want)
	}
}
