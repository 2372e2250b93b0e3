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
