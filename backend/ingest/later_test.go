package ingest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// laterTextsEach is what LaterTexts gave before each turn's texts were
// read once (Later): every turn after the first, read again, of the
// session, within maxLaterBytes.
func laterTextsEach(turns []Turn, sessionID string) []LaterText {
	var out []LaterText
	n := 0
	for _, t := range turns {
		if t.SessionID != sessionID {
			continue
		}
		for _, s := range laterOf(t) {
			if n+len(s.Text) > maxLaterBytes {
				return out
			}
			n += len(s.Text)
			out = append(out, s)
		}
	}
	return out
}

// modelSaid returns texts as the model's words said after a turn
// (LaterModel), as a test's later texts.
func modelSaid(texts ...string) []LaterText {
	out := make([]LaterText, len(texts))
	for i, s := range texts {
		out[i] = LaterText{Text: s}
	}
	return out
}

// hasLater reports whether later holds a text from from.
func hasLater(later []LaterText, from LaterFrom) bool {
	return slices.ContainsFunc(later, func(l LaterText) bool { return l.From == from })
}

// laterFixture returns the turns of two sessions interleaved, with
// patches (patchSession), a move and turns whose text takes most of
// maxLaterBytes (two), so that what follows an early turn passes the bound.
func laterFixture() []Turn {
	a, b := patchSession("a", 6), patchSession("b", 4)
	big := strings.Repeat("The worker pool is capped at eight goroutines because the driver opens one connection each. ", maxLaterBytes/90*3/5)
	a[2].Steps = append(a[2].Steps, Step{Text: big})
	a[4].Steps = append([]Step{{Text: big}}, a[4].Steps...) // with a[2]'s, past the bound: a[4]'s texts after it are not read either
	a[3].Steps[0].Calls = append(a[3].Steps[0].Calls, bashCall("m1", "git mv scripts/run.sh priv/run.sh"))
	var out []Turn
	for i := range a {
		out = append(out, a[i])
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

// TestLaterAfter: Later gives each turn what LaterTexts gave it, every
// turn read again: the texts of its session's later turns, in order,
// within maxLaterBytes, whatever the order turns are asked in.
func TestLaterAfter(t *testing.T) {
	turns := laterFixture()
	l := NewLater(turns)
	for _, i := range []int{len(turns) - 1, 3, -1, 0, 7, 1, 4} {
		for _, s := range []string{"a", "b", "c"} {
			want := laterTextsEach(turns[i+1:], s)
			if got := l.After(i, s); !slices.Equal(got, want) {
				t.Errorf("after turn %d of session %s: %d texts (%d bytes), want %d (%d bytes)", i, s, len(got), textsSize(got), len(want), textsSize(want))
			}
		}
	}
	if got, want := LaterTexts(turns, "a"), laterTextsEach(turns, "a"); !slices.Equal(got, want) || textsSize(want) > maxLaterBytes || textsSize(laterOf(turns[4])) == 0 {
		t.Errorf("LaterTexts: %d bytes, want %d", textsSize(got), textsSize(want))
	}
}

// TestRedistillLaterTexts: live capture distils an earlier turn again
// with what LaterTexts read of the turns after it, remembered slimmed,
// and of the new turn (laterAfter): the later texts each turn keeps,
// read once of the whole turn when it is remembered, are those of its
// slimmed form, patches, moves and removed settings included.
func TestRedistillLaterTexts(t *testing.T) {
	turns := laterFixture()
	var a []Turn
	for _, tn := range turns {
		if tn.SessionID == "a" {
			a = append(a, tn)
		}
	}
	recent := make([]recentTurn, len(a))
	slimmed := make([]Turn, len(a))
	for i, tn := range a {
		recent[i].setTurn(tn)
		slimmed[i] = recent[i].turn
		if !slices.Equal(recent[i].later, laterOf(slimmed[i])) || recent[i].size != textsSize(laterOf(tn)) {
			t.Fatalf("turn %d keeps %q, its slimmed form reads %q", i, recent[i].later, laterOf(slimmed[i]))
		}
	}
	last := a[len(a)-1]
	for i := range len(a) - 1 {
		between := recent[i+1 : len(a)-1]
		want := laterTextsEach(append(slices.Clone(slimmed[i+1:len(a)-1]), last), "a")
		if got := laterAfter(between, last, laterOf(last)); !slices.Equal(got, want) {
			t.Errorf("turn %d distilled again with %d later texts, want %d", i, len(got), len(want))
		}
	}
	if !hasLater(recent[3].later, LaterMoved) || !hasLater(recent[1].later, LaterSettingsRemoved) {
		t.Errorf("the later texts kept miss the move or the removed setting: %q", fmt.Sprint(recent[3].later))
	}
	var r recentTurn
	r.setTurn(Turn{Turn: 1, User: []string{"x"}, Steps: []Step{{Text: "y", Calls: []memory.ToolCall{bashCall("c", "make")}}}})
	if r.textBytes() != 2+2*laterTextBytes { // the texts, no mark: who said each is beside it
		t.Errorf("a turn of two one-byte texts counted for %d bytes, want them and their headers", r.textBytes())
	}
}
