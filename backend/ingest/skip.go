package ingest

import (
	"fmt"
	"strings"

	"github.com/memtray/memtray/backend/memory"
)

// Skipped is an exchange of an input that failed Validate and was left
// out while the rest of the input was processed.
type Skipped struct {
	// Exchange is its place in the input, from 1.
	Exchange int `json:"exchange"`
	// Turn is the exchange's own Turn (0 when it has none).
	Turn int `json:"turn,omitempty"`
	// Error says what is wrong with it (Validate's problems).
	Error string `json:"error"`
}

// String is "exchange N: what is wrong".
func (s Skipped) String() string { return fmt.Sprintf("exchange %d: %s", s.Exchange, s.Error) }

// SkippedLine is "skipped N exchanges: exchange 12: ...; exchange 40: ...",
// the way `memtray ingest` and the daemon report them; "" for none.
func SkippedLine(skipped []Skipped) string {
	if len(skipped) == 0 {
		return ""
	}
	parts := make([]string, len(skipped))
	for i, s := range skipped {
		parts[i] = s.String()
	}
	noun := "exchanges"
	if len(skipped) == 1 {
		noun = "exchange"
	}
	return fmt.Sprintf("skipped %d %s: %s", len(skipped), noun, strings.Join(parts, "; "))
}

// SkipInvalid leaves out of exs, in order, the exchanges that fail
// Validate, and returns the rest as runs to process one after the other,
// with what was skipped. A new run starts after a skipped exchange that
// began a user turn: the tool-loop exchanges of that turn form a turn of
// their own (GroupTurns) instead of joining the turn before it. With
// nothing skipped, the one run is exs itself.
func SkipInvalid(exs []memory.Exchange) (runs [][]memory.Exchange, skipped []Skipped) {
	var cur []memory.Exchange
	split := false
	for i, ex := range exs {
		if err := Validate(ex); err != nil {
			skipped = append(skipped, Skipped{Exchange: i + 1, Turn: ex.Turn, Error: err.Error()})
			if StartsTurn(ex) {
				split = true
			}
			continue
		}
		if split && len(cur) > 0 {
			runs, cur = append(runs, cur), nil
		}
		split = false
		cur = append(cur, ex)
	}
	if len(skipped) == 0 {
		if len(exs) == 0 {
			return nil, nil
		}
		return [][]memory.Exchange{exs}, nil
	}
	if len(cur) > 0 {
		runs = append(runs, cur)
	}
	return runs, skipped
}
