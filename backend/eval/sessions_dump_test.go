package eval

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
	"github.com/memtray/memtray/backend/search"
)

func TestDumpMiss(t *testing.T) {
	f := Fact{ID: "F1", Keys: [][]string{{"pnpm"}}}
	covering := memory.Memory{ID: "m1", Text: "The project uses pnpm, never npm."}
	other := memory.Memory{ID: "m2", Text: "The API listens on port 8080."}
	all := map[string]memory.Memory{"m1": covering, "m2": other}
	hit := func(m memory.Memory) memory.Hit { return memory.Hit{Memory: m, Score: 0.5} }
	for _, tc := range []struct {
		name string
		got  search.Recalled
		want []string
	}{
		{"given past the first five", search.Recalled{Hits: []memory.Hit{hit(other), hit(other), hit(other), hit(other), hit(other), hit(covering)}},
			[]string{"6 given", "covering memory given at rank 6"}},
		{"withheld by a floor", search.Recalled{Hits: []memory.Hit{hit(other)}, Withheld: []search.Withheld{{ID: "m2", Reason: search.WithheldOverK}, {ID: "m1", Reason: search.WithheldMaxChars, Score: 0.4}}},
			[]string{"1 given", "covering memory withheld: max_chars (0.400)"}},
		{"nothing given", search.Recalled{Skipped: "no evidence", Withheld: []search.Withheld{{ID: "m1", Reason: search.WithheldNoEvidence}}},
			[]string{"0 given, skipped: no evidence", "withheld: no_evidence"}},
		{"not a candidate", search.Recalled{Hits: []memory.Hit{hit(other)}},
			[]string{"no covering memory among the candidates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			dumpMiss(&b, "D1", f, "Which package manager?", tc.got, all)
			out := b.String()
			if !strings.HasPrefix(out, `=== miss D1 F1 "Which package manager?": `) {
				t.Errorf("header: %q", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("dump lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
