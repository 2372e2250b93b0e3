package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on an Exchange the write pipeline accepts (ingest.Validate): a
// larger exchange is an error there. Readers of outside records (the
// session readers, the capture proxy) cut what they read to them first
// (BoundExchange).
const (
	// MaxExchangeTextBytes bounds the user's, the assistant's and the
	// summary's text of an exchange, and its answers together.
	MaxExchangeTextBytes = 1 << 20
	// MaxExchangeToolBytes bounds all tool calls and results together.
	MaxExchangeToolBytes = 4 << 20
	// MaxExchangeToolEntries bounds the number of tool calls and results.
	MaxExchangeToolEntries = 1000
	// MaxExchangeNameBytes bounds an exchange's session id, project,
	// source and model.
	MaxExchangeNameBytes = 256
	// MaxToolResultBytes bounds the content kept of one tool result: the
	// pipeline reads results as context only (the turn judge sees 300
	// characters of each), so the capture proxy and the session readers
	// keep this much of each, its start and its end.
	MaxToolResultBytes = 8 << 10
)

// cutMarker stands where CutMiddle removed n bytes.
func cutMarker(n int) string { return fmt.Sprintf("\n[… %d bytes cut by memtray …]\n", n) }

// CutMiddle returns s if it is at most max bytes; else its start (three
// quarters of what fits) and its end, at rune boundaries, around a marker
// saying how many bytes were cut, the whole at most max bytes (a max too
// small for the marker gives the start alone).
func CutMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	room := max - len(cutMarker(len(s)))
	if room <= 0 {
		return CutRunes(s, max)
	}
	head := CutRunes(s, room*3/4)
	tailStart := len(s) - (room - len(head))
	for tailStart < len(s) && !utf8.RuneStart(s[tailStart]) {
		tailStart++
	}
	return head + cutMarker(tailStart-len(head)) + s[tailStart:]
}

// CutRunes is the start of s of at most n bytes, ending at a rune
// boundary.
func CutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// BoundExchange cuts what of ex is over the sizes the write pipeline
// accepts, the way the pipeline bounds it anyway, and reports whether it
// cut anything:
//
//   - each tool result to MaxToolResultBytes (results are context only);
//   - the user's, the assistant's and the summary's text to
//     MaxExchangeTextBytes;
//   - when the tool calls and results are still over MaxExchangeToolBytes,
//     the longest tool call inputs, largest first: each string in the
//     input's JSON to MaxToolResultBytes (the input stays JSON), or the
//     whole input when it is not JSON; then, if still over, every result
//     and input to an equal share of the bound;
//   - the session id, project, source and model to MaxExchangeNameBytes
//     (their start, at a rune boundary, without a marker).
//
// Each cut keeps the text's start and end around a marker (CutMiddle).
// What fits is left as it is; invalid UTF-8, too many tool entries or a
// malformed answer are not fixed here (ingest.Validate reports them).
func BoundExchange(ex *Exchange) bool {
	cut := false
	for _, p := range []*string{&ex.SessionID, &ex.Project, &ex.Source, &ex.Model} {
		if len(*p) > MaxExchangeNameBytes {
			*p, cut = CutRunes(*p, MaxExchangeNameBytes), true
		}
	}
	for i := range ex.ToolResults {
		if c := ex.ToolResults[i].Content; len(c) > MaxToolResultBytes {
			ex.ToolResults = slices.Clone(ex.ToolResults) // never the caller's backing array
			for j := i; j < len(ex.ToolResults); j++ {
				ex.ToolResults[j].Content = CutMiddle(ex.ToolResults[j].Content, MaxToolResultBytes)
			}
			cut = true
			break
		}
	}
	for _, p := range []*string{&ex.User, &ex.Assistant, &ex.Summary} {
		if len(*p) > MaxExchangeTextBytes {
			*p, cut = CutMiddle(*p, MaxExchangeTextBytes), true
		}
	}
	total := ToolBytes(ex)
	if total <= MaxExchangeToolBytes {
		return cut
	}
	ex.ToolCalls = slices.Clone(ex.ToolCalls)
	order := make([]int, len(ex.ToolCalls))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(ex.ToolCalls[b].Input) - len(ex.ToolCalls[a].Input) })
	for _, i := range order {
		if total <= MaxExchangeToolBytes || len(ex.ToolCalls[i].Input) <= MaxToolResultBytes {
			break
		}
		was := len(ex.ToolCalls[i].Input)
		ex.ToolCalls[i].Input = shrinkInput(ex.ToolCalls[i].Input, MaxToolResultBytes)
		total -= was - len(ex.ToolCalls[i].Input)
	}
	if total > MaxExchangeToolBytes {
		share := MaxExchangeToolBytes / (2 * max(1, len(ex.ToolCalls)+len(ex.ToolResults)))
		ex.ToolResults = slices.Clone(ex.ToolResults)
		for i := range ex.ToolResults {
			ex.ToolResults[i].Content = CutMiddle(ex.ToolResults[i].Content, share)
		}
		for i := range ex.ToolCalls {
			ex.ToolCalls[i].Input = shrinkInput(ex.ToolCalls[i].Input, share/2)
		}
	}
	return true
}

// ToolBytes is the size of ex's tool calls and results that
// MaxExchangeToolBytes bounds (ingest.Validate).
func ToolBytes(ex *Exchange) int {
	n := 0
	for _, c := range ex.ToolCalls {
		n += len(c.Name) + len(c.Input) + len(c.ID)
	}
	for _, t := range ex.ToolResults {
		n += len(t.Content) + len(t.Name) + len(t.ToolUseID)
	}
	return n
}

// shrinkInput cuts each string of a tool call's JSON input longer than
// max (CutMiddle), keeping it JSON; an input that is not JSON, or still
// over 4*max, is cut whole to max.
func shrinkInput(in string, max int) string {
	if len(in) <= max {
		return in
	}
	dec := json.NewDecoder(strings.NewReader(in))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) == nil && !dec.More() {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(shrinkJSON(v, max)) == nil {
			if out := strings.TrimSuffix(b.String(), "\n"); len(out) <= 4*max {
				return out
			}
		}
	}
	return CutMiddle(in, max)
}

func shrinkJSON(v any, max int) any {
	switch t := v.(type) {
	case string:
		return CutMiddle(t, max)
	case []any:
		for i := range t {
			t[i] = shrinkJSON(t[i], max)
		}
	case map[string]any:
		for k := range t {
			t[k] = shrinkJSON(t[k], max)
		}
	}
	return v
}
