package ingest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

func TestSkipInvalid(t *testing.T) {
	bad := []memory.Answer{{Answer: "yes"}} // an answer without a question
	user := func(turn int, u string) memory.Exchange {
		return memory.Exchange{SessionID: "s", Turn: turn, User: u, Assistant: "a"}
	}
	loop := func(turn int) memory.Exchange {
		return memory.Exchange{SessionID: "s", Turn: turn, ToolLoop: true, Assistant: "b"}
	}
	badOf := func(ex memory.Exchange) memory.Exchange { ex.Answers = bad; return ex }
	turns := func(runs [][]memory.Exchange) (out [][]int) {
		for _, r := range runs {
			var ts []int
			for _, ex := range r {
				ts = append(ts, ex.Turn)
			}
			out = append(out, ts)
		}
		return out
	}
	cases := []struct {
		name    string
		in      []memory.Exchange
		runs    string // turns of each run
		skipped string
	}{
		{"none", nil, "[]", ""},
		{"all valid: one run", []memory.Exchange{user(1, "q"), loop(2), user(3, "r")}, "[[1 2 3]]", ""},
		{"a tool-loop exchange: one run", []memory.Exchange{user(1, "q"), badOf(loop(2)), loop(3)}, "[[1 3]]", "skipped 1 exchange: exchange 2: invalid: answers[0] has no question"},
		{"a turn's first: its tool loop is cut from the turn before", []memory.Exchange{user(1, "q"), loop(2), badOf(user(3, "r")), loop(4), user(5, "s")}, "[[1 2] [4 5]]", "exchange 3:"},
		{"all invalid", []memory.Exchange{badOf(user(1, "q")), badOf(loop(2))}, "[]", "skipped 2 exchanges: exchange 1: invalid: answers[0] has no question"},
		{"too large", []memory.Exchange{{Assistant: strings.Repeat("x", MaxTextBytes+1)}, user(2, "q")}, "[[2]]", "assistant text is longer than 1 MiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runs, skipped := SkipInvalid(tc.in)
			if got := fmt.Sprint(turns(runs)); got != tc.runs {
				t.Errorf("runs %s, want %s", got, tc.runs)
			}
			line := SkippedLine(skipped)
			if tc.skipped == "" && line != "" || !strings.Contains(line, tc.skipped) {
				t.Errorf("skipped %q, want %q", line, tc.skipped)
			}
		})
	}
}
