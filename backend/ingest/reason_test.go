package ingest

import (
	"testing"

	"github.com/memtray/memtray/backend/memory"
)

// TestScoreUnder: a score under its threshold never reads as equal to it
// (issue 21 bug 9: "content score 0.35 under 0.35").
func TestScoreUnder(t *testing.T) {
	cases := []struct {
		v, thr float64
		want   string
	}{
		{0.2, 0.35, "0.20 under 0.35"},
		{0.3493, 0.35, "0.349 under 0.35"},
		{0.34999, 0.35, "0.34999 under 0.35"},
		{0.3512, 0.3538, "0.351 under 0.354"},
		{0.349, 0.3512, "0.349 under 0.351"},
		{0.1, 0.35, "0.10 under 0.35"},
		{0.3499999999, 0.35, "0.35 under 0.35"}, // beyond six decimals: the same
	}
	for _, c := range cases {
		if got := scoreUnder(c.v, c.thr); got != c.want {
			t.Errorf("scoreUnder(%v, %v) = %q, want %q", c.v, c.thr, got, c.want)
		}
	}
}

// TestReplyClassPhrase: the article agrees with the class (issue 21 bug 9:
// "answered with a ack reply").
func TestReplyClassPhrase(t *testing.T) {
	cases := map[string]string{
		classAck:        "an acknowledgement",
		classProcedural: "a procedural reply",
		classStatus:     "a status reply",
		"":              "a reply",
		"other":         "an other reply",
	}
	for class, want := range cases {
		if got := replyClassPhrase(class); got != want {
			t.Errorf("replyClassPhrase(%q) = %q, want %q", class, got, want)
		}
	}
}

// TestPrefilterReason: the pre-filter's reason reads as a sentence.
func TestPrefilterReason(t *testing.T) {
	f := newFixture(t, nil)
	d := f.process(t, memory.Exchange{User: "thanks", Assistant: "You're welcome, happy to help!", UserTurns: 5})
	if d.Stage != StagePrefilter || d.Reason != "acknowledgement answered with an acknowledgement" {
		t.Errorf("decided at %s: %q", d.Stage, d.Reason)
	}
}
