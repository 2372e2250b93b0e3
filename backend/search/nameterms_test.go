package search

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/store"
)

// TestNameTerms: the BM25 leg's name terms are the prompt's names as
// written (store.Term.Name, weight 1), none for a prompt of words, and
// none with the switch off.
func TestNameTerms(t *testing.T) {
	for _, c := range []struct {
		prompt string
		want   []store.Term
	}{
		{"what does --firmware do?", []store.Term{{Text: "--firmware", Boost: 1, Name: true}}},
		{"where is `examples/` defined? see slice()", []store.Term{{Text: "examples/", Boost: 1, Name: true}, {Text: "slice()", Boost: 1, Name: true}}},
		{"how is the firmware mapped?", nil},
	} {
		if got := nameTerms(c.prompt); !slices.Equal(got, c.want) {
			t.Errorf("nameTerms(%q) = %v, want %v", c.prompt, got, c.want)
		}
	}
	defer func(on bool) { nameTermsOn = on }(nameTermsOn)
	nameTermsOn = false
	if got := nameTerms("what does --firmware do?"); got != nil {
		t.Errorf("off: %v", got)
	}
}

// TestStopWordNames: a prompt whose only word written as a name is a
// stop word ("-a", "./out", "all()") weighs the name as a term of its own:
// it is not generic, and it gets the one memory that writes the name; a
// name no memory writes is refused as unknown, and words with no name are
// still generic. With the switch off each is generic, as before.
func TestStopWordNames(t *testing.T) {
	emb := embed.NewBuiltin()
	st := smallStore(t, emb, []string{
		"The export command writes every generated profile to ./out unless --dest names another folder.",
		"Pass -a to the sync script to include archived printers as well as the active ones.",
		"The column check uses all() on the mask, so one missing value fails the whole row.",
		"Printers are listed alphabetically in the sidebar, archived ones greyed out.",
		"A profile is valid when every one of its fields has a value.",
	})
	ctx := context.Background()
	e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
	cases := []struct {
		prompt string
		want   string // the first hit; "" = none
		refuse string // why none: "generic" or "unknown"
	}{
		{"what does -a do?", "m1", ""},
		{"where is ./out written?", "m0", ""},
		{"why does all() fail?", "m2", ""},
		{"what does -i do?", "", "unknown"},
		{"what does it do?", "", "generic"},
	}
	for _, on := range []bool{true, false} {
		stopWordNames = on
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/on=%v", c.prompt, on), func(t *testing.T) {
				r, err := e.Run(ctx, Query{Text: c.prompt, Prompt: true})
				if err != nil {
					t.Fatal(err)
				}
				ids := hitIDs(r.Hits)
				want, refuse := c.want, c.refuse
				if !on {
					want, refuse = "", "generic"
				}
				switch {
				case want != "" && (len(ids) == 0 || ids[0] != want):
					t.Errorf("hits %v, want %s first; evidence %+v", ids, want, r.Evidence)
				case want == "" && len(ids) > 0:
					t.Errorf("hits %v, want none; evidence %+v", ids, r.Evidence)
				case refuse == "generic" && !r.Evidence.Generic, refuse == "unknown" && (r.Evidence.Generic || !r.Evidence.NamesUnknown):
					t.Errorf("evidence %+v, want refused as %s", r.Evidence, refuse)
				}
			})
		}
	}
	stopWordNames = true
}
