package search

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/embed"
	"github.com/memtray/memtray/backend/memory"
)

// TestSubjectNames: a prompt whose subject is a name written by its form
// gets only the memories holding the name, or nothing when none does,
// rather than the memories its other words match ("why does -a fail?"
// given the failing runs; "what does --firmware do?" given the firmware
// notes). A prompt whose other words are specific on their own keeps the
// memories lacking the name. With the switch off the prompts get the
// memories lacking the name, as before.
func TestSubjectNames(t *testing.T) {
	emb := embed.NewBuiltin()
	texts := []string{
		"Pass -a to the sync script to include archived printers as well as the active ones.",                                // m0
		"The nightly build fails when the cache volume is full; the run fails again until it is pruned.",                     // m1
		"The deploy job failed because the runner lost its network; rerunning the failed job fixed it.",                      // m2
		"Tests fail on a fresh checkout until the fixtures are generated; a failing test names the missing file.",            // m3
		"The firmware mapping turns each Marlin M-code into the firmware's own command; the firmware list is in the schema.", // m4
		"Klipper firmware needs the macros the mapping emits; older firmware versions ignore the unknown ones.",              // m5
		"The firmware field of a printer profile picks which firmware dialect the generator writes.",                         // m6
		"The slicer CLI takes “--export-gcode” and the profile path; the output folder must exist.",                          // m7
		"The Voron 2.4 example profile sets a 350 mm bed and two extruders.",                                                 // m8
	}
	cases := []struct {
		name   string
		texts  []int // the store's memories (indexes of texts)
		prompt string
		want   []string // the hits, in any order; none: nothing
		off    bool     // with the switch off, the hits are others than want
	}{
		{"the flag's memory only", []int{0, 1, 2, 3, 4, 5, 6}, "why does -a fail?", []string{"m0"}, true},
		{"a flag no memory holds", []int{1, 2, 3, 4, 5, 6}, "why does --firmware fail?", nil, true},
		{"a version's memory only", []int{1, 2, 3, 8}, "why does 2.4 fail?", []string{"m8"}, true},
		{"a flag written in typographic quotes", []int{1, 2, 3, 4, 5, 6, 7}, "what does --export-gcode do?", []string{"m7"}, false},
		{"a prompt writing the flag in typographic quotes", []int{0, 1, 2, 3, 4, 5, 6}, "why does “-a” fail?", []string{"m0"}, true},
		{"a prompt writing the flag in guillemets", []int{1, 2, 3, 4, 5, 6, 7}, "que fait «--export-gcode» ?", []string{"m7"}, false},
		{"a specific rest keeps the others", []int{1, 2, 3, 4, 5, 6}, "how does --firmware pick the Marlin M-code mapping of the Klipper macros?", []string{"m4", "m5", "m6"}, false},
	}
	ctx := context.Background()
	defer func(on bool) { subjectNames = on }(subjectNames)
	for _, c := range cases {
		var ts []string
		for _, i := range c.texts {
			ts = append(ts, texts[i])
		}
		st := smallStore(t, emb, ts)
		e := New(st, emb, config.Default().Search, memory.FixedClock{T: testNow})
		id := func(i int) string { return fmt.Sprintf("m%d", i) }
		for _, on := range []bool{true, false} {
			subjectNames = on
			r, err := e.Run(ctx, Query{Text: c.prompt, Prompt: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range r.Hits { // the store's ids back to texts' indexes
				var i int
				fmt.Sscanf(h.Memory.ID, "m%d", &i)
				got = append(got, id(c.texts[i]))
			}
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			switch {
			case on && !slices.Equal(got, want):
				t.Errorf("%s: %q got %v, want %v; evidence %+v, dropped %d", c.name, c.prompt, got, want, r.Evidence, r.LackName)
			case on && want == nil && !(r.Evidence.Generic && slices.Equal(r.Evidence.UnheldNames, []string{"--firmware"})):
				t.Errorf("%s: %q evidence %+v, want generic for lacking --firmware", c.name, c.prompt, r.Evidence)
			case !on && c.off && (slices.Equal(got, want) || len(got) == 0):
				t.Errorf("%s: off: %q got %v, want others than %v", c.name, c.prompt, got, want)
			}
		}
	}
}

// TestHoldsName: a memory holds a query's name when it writes it as a
// name of its own, a path with more of it before or after a '/', a call
// on a dotted name, or the same characters not joined to a longer name.
func TestHoldsName(t *testing.T) {
	for _, c := range []struct {
		names []string
		text  string
		lacks []string
	}{
		{[]string{"-a"}, "run it with -a", nil},
		{[]string{"-a"}, "a non-archived printer", []string{"-a"}},
		{[]string{"--firmware"}, "the firmware list", []string{"--firmware"}},
		{[]string{"--export-gcode"}, "supports “--export-gcode” and related flags", nil},
		{[]string{"opk/plugins/converters"}, "see opk/plugins/converters/prusa.py", nil},
		{[]string{"converters/prusa.py"}, "see opk/plugins/converters/prusa.py", nil},
		{[]string{"./out"}, "written to out/ by default", nil},
		{[]string{"./out"}, "written to ./output", []string{"./out"}},
		{[]string{"examples/"}, "examples/printers/a.json", nil},
		{[]string{"slice()"}, "calls np.slice(x, 2)", nil},
		{[]string{"slice()"}, "a slice of the list", []string{"slice()"}},
		{[]string{"-a", "--dest"}, "pass --dest DIR", []string{"-a"}},
		{[]string{"2.4"}, "the Voron 2.4 profile", nil},
		{[]string{"2.4"}, "the Voron 12.4 profile", []string{"2.4"}},
	} {
		if got := lackedNames(c.names, c.text); !slices.Equal(got, c.lacks) {
			t.Errorf("lackedNames(%v, %q) = %v, want %v", c.names, c.text, got, c.lacks)
		}
	}
}

// TestWithoutNames: the prompt's text without the names it lacks, whatever
// else it writes as a name.
func TestWithoutNames(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"why does -a fail?", "why does    fail?"},
		{"where is `--help=x` defined? see ./out", "where is `        ` defined? see ./out"},
		{"what does all() do with -a?", "what does       do with   ?"},
		{"why does --help fail in 2.4?", "why does        fail in    ?"},
		{"why does “-a” fail in «2.4»?", "why does “  ” fail in «   »?"},
	} {
		if got := withoutNames(c.text, []string{"-a", "--help", "all()", "2.4"}); got != c.want {
			t.Errorf("withoutNames(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}
