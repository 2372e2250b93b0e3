package ingest

import (
	"slices"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestCountPrompts: a session sent without its prompts counted is counted
// when the exchanges hold its start, a prompt at exchange 1; a session
// counted by its caller, a later part of a session, unnumbered exchanges
// and exchanges of no session are left as they came.
func TestCountPrompts(t *testing.T) {
	ex := func(session string, turn int, user string, userTurns int) memory.Exchange {
		return memory.Exchange{SessionID: session, Turn: turn, User: user, UserTurns: userTurns, ToolLoop: user == "", Assistant: "ok"}
	}
	summary := continuedPrefix + ". The summary below covers the earlier portion."
	for _, tc := range []struct {
		name string
		exs  []memory.Exchange
		want []int
	}{
		{"a session from its start: prompts counted, tool loop and summary not", []memory.Exchange{
			ex("a", 1, "fix the loader", 0), ex("a", 2, "", 0), ex("a", 3, summary, 0), ex("a", 4, "now the tests", 0), ex("a", 5, "", 0), ex("a", 6, "thanks", 0),
		}, []int{1, 1, 1, 2, 2, 3}},
		{"two sessions interleaved, each counted on its own", []memory.Exchange{
			ex("a", 1, "fix the loader", 0), ex("b", 1, "why is CI red", 0), ex("a", 2, "now the tests", 0), ex("b", 2, "", 0), ex("b", 3, "and lint", 0),
		}, []int{1, 1, 2, 1, 2}},
		{"counted by the caller: left alone", []memory.Exchange{
			ex("a", 1, "fix the loader", 5), ex("a", 2, "now the tests", 0),
		}, []int{5, 0}},
		{"a negative count: the caller's, for Validate to refuse", []memory.Exchange{
			ex("a", 1, "fix the loader", 0), ex("a", 2, "now the tests", -1),
		}, []int{0, -1}},
		{"a later part of a session: the prompts before are unknown", []memory.Exchange{
			ex("a", 7, "now the tests", 0), ex("a", 8, "and lint", 0),
		}, []int{0, 0}},
		{"unnumbered exchanges: where they start is unknown", []memory.Exchange{
			ex("a", 0, "fix the loader", 0), ex("a", 0, "now the tests", 0),
		}, []int{0, 0}},
		{"starting mid-turn: the prompt before is unknown", []memory.Exchange{
			ex("a", 1, "", 0), ex("a", 2, "now the tests", 0),
		}, []int{0, 0}},
		{"no session", []memory.Exchange{
			ex("", 1, "fix the loader", 0), ex("", 2, "now the tests", 0),
		}, []int{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.exs)
			var got []int
			for _, e := range CountPrompts(in) {
				got = append(got, e.UserTurns)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("user turns %v, want %v", got, tc.want)
			}
			for i := range in {
				if in[i].UserTurns != tc.exs[i].UserTurns {
					t.Fatalf("the caller's exchange %d changed: %d", i, in[i].UserTurns)
				}
			}
		})
	}
}
