package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/memtray/memtray/backend/config"
)

// TestRecallWithheld: a recall lists the candidates it did not give and
// why, with every factor of the score, never one it gave, and giving is
// unchanged by the listing.
func TestRecallWithheld(t *testing.T) {
	const orbit = "orbit TLE propagation passes ground stations SGP4 radians"
	tests := []struct {
		name     string
		k, chars int
		prompts  []string // recalled in order in one session; the last is checked
		want     string   // a reason the last recall's Withheld must include
		noHits   bool
	}{
		{"over k", 1, 2000, []string{orbit}, WithheldOverK, false},
		{"max chars", 5, 300, []string{orbit}, WithheldMaxChars, false},
		{"given earlier", 5, 2000, []string{orbit, orbit + " again"}, WithheldAlreadyGiven, false},
		{"no evidence", 5, 2000, []string{"Write a SQL query that lists the three oldest employees in each office"}, WithheldNoEvidence, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRecaller(t, func(c *config.Recall) { c.K, c.MaxChars = tt.k, tt.chars })
			var got Recalled
			for i, p := range tt.prompts {
				var err error
				if got, err = r.Recall(context.Background(), RecallRequest{SessionID: "s", Prompt: p, Project: "orbit", Turn: fmt.Sprint(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if tt.noHits != (len(got.Hits) == 0) {
				t.Fatalf("hits %v, want none: %v", hitIDs(got.Hits), tt.noHits)
			}
			if len(got.Withheld) == 0 || len(got.Withheld) > MaxWithheld {
				t.Fatalf("%d withheld, want 1..%d", len(got.Withheld), MaxWithheld)
			}
			given := map[string]bool{}
			for _, h := range got.Hits {
				given[h.Memory.ID] = true
			}
			found, seen := false, map[string]bool{}
			for _, w := range got.Withheld {
				if given[w.ID] || seen[w.ID] {
					t.Errorf("%s withheld (%s) but given or listed twice", w.ID, w.Reason)
				}
				seen[w.ID] = true
				// The eval's dump shows each one's factors.
				if b := w.Breakdown; b.Composite != w.Score || b.Importance <= 0 || b.Recency <= 0 {
					t.Errorf("%s withheld (%s) at %.3f with breakdown %+v", w.ID, w.Reason, w.Score, b)
				}
				found = found || w.Reason == tt.want
				if tt.noHits && w.Reason != WithheldNoEvidence {
					t.Errorf("%s withheld for %s, want %s", w.ID, w.Reason, WithheldNoEvidence)
				}
			}
			if !found {
				t.Errorf("no candidate withheld for %s: %+v", tt.want, got.Withheld)
			}
		})
	}
}

// TestFloorReasons: the floors' tests as Run's stages apply them.
func TestFloorReasons(t *testing.T) {
	e, _ := openFixture(t, nil)
	abs, rel := e.cfg.AbsoluteFloor, e.cfg.RelativeFloor
	low := e.vectorFloor() / 2
	scored := []CandidateEvidence{
		{ID: "top", Coverage: abs + 0.1, Cosine: low, Composite: 1},
		{ID: "weak", Coverage: abs, Cosine: low, Composite: rel/2 + 0.01},
		{ID: "none", Coverage: abs / 2, Cosine: low, Composite: 2}, // no evidence of its own: not the top either
		{ID: "zero", Coverage: abs + 0.1, Cosine: low, Composite: 0},
		{ID: "ok", Coverage: abs + 0.1, Cosine: low, Composite: rel + 0.01},
	}
	tests := []struct {
		name       string
		noEvidence bool
		want       map[string]string
	}{
		{"floors", false, map[string]string{"weak": WithheldRelativeFloor, "none": WithheldAbsoluteFloor, "zero": WithheldRelativeFloor}},
		{"no evidence", true, map[string]string{"top": WithheldNoEvidence, "weak": WithheldNoEvidence, "none": WithheldNoEvidence,
			"zero": WithheldNoEvidence, "ok": WithheldNoEvidence}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.floorReasons(scored, tt.noEvidence)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRecallSkippedGivenEarlier: a prompt asked again in a later turn,
// whose memories the session has, says they were given earlier; it said
// "no memory cleared the relevance floors" (the search left them out as
// given, which the reason did not see).
func TestRecallSkippedGivenEarlier(t *testing.T) {
	// Every memory that clears the floors fits in the first turn.
	r, _ := newRecaller(t, func(c *config.Recall) { c.K, c.MaxChars = 40, 40000 })
	ctx := context.Background()
	var got Recalled
	for _, turn := range []string{"1", "2"} {
		var err error
		if got, err = r.Recall(ctx, RecallRequest{SessionID: "s", Prompt: tlePrompt, Project: "orbit", Turn: turn}); err != nil {
			t.Fatal(err)
		}
		if turn == "1" && len(got.Hits) == 0 {
			t.Fatalf("the first turn recalled nothing: %s", got.Skipped)
		}
	}
	if len(got.Hits) != 0 || got.Skipped != "every relevant memory was given earlier in this session" {
		t.Errorf("asked again: hits %v, skipped %q", hitIDs(got.Hits), got.Skipped)
	}
}

// TestRecallEvidence: a recall that searched reports the evidence test it
// ran, whether it held (hits) or failed (nothing); a session-start briefing
// and a search with the gate off ran none.
func TestRecallEvidence(t *testing.T) {
	const orbit = "orbit TLE propagation passes ground stations SGP4 radians"
	tests := []struct {
		name  string
		gate  bool
		req   RecallRequest
		want  bool // Evidence set
		holds bool
	}{
		{"held", true, RecallRequest{Prompt: orbit}, true, true},
		{"failed", true, RecallRequest{Prompt: "How do I write a Terraform module for an S3 bucket?"}, true, false},
		{"session start", true, RecallRequest{Event: EventSessionStart}, false, false},
		{"gate off", false, RecallRequest{Prompt: orbit}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newRecaller(t, nil)
			r.engine.cfg.EvidenceGate = tt.gate
			tt.req.SessionID, tt.req.Project = "s", "orbit"
			got, err := r.Recall(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if (got.Evidence != nil) != tt.want {
				t.Fatalf("evidence %+v, want set: %v", got.Evidence, tt.want)
			}
			if got.Evidence == nil {
				return
			}
			if got.Evidence.Holds() != tt.holds || (len(got.Hits) > 0) != tt.holds {
				t.Errorf("evidence holds %v with %d hits, want %v: %+v", got.Evidence.Holds(), len(got.Hits), tt.holds, got.Evidence)
			}
		})
	}
}

// TestRecallAllWithheld: a request with AllWithheld lists every candidate
// withheld, not only the best MaxWithheld, the capped list being its start;
// what is given does not change. eval sessions --dump relies on it to say
// where a memory went (it said "not a candidate" of one ranked past the
// first MaxWithheld).
func TestRecallAllWithheld(t *testing.T) {
	ctx := context.Background()
	for _, prompt := range []string{
		"Write a SQL query that lists the three oldest employees in each office", // no evidence: every candidate withheld
		"orbit TLE propagation passes ground stations SGP4 radians",
	} {
		r, _ := newRecaller(t, func(c *config.Recall) { c.K = 1 })
		capped, err := r.Recall(ctx, RecallRequest{SessionID: "capped", Prompt: prompt, Project: "orbit"})
		if err != nil {
			t.Fatal(err)
		}
		all, err := r.Recall(ctx, RecallRequest{SessionID: "all", Prompt: prompt, Project: "orbit", AllWithheld: true})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(hitIDs(capped.Hits)) != fmt.Sprint(hitIDs(all.Hits)) {
			t.Errorf("%q: hits %v with the cap, %v without", prompt, hitIDs(capped.Hits), hitIDs(all.Hits))
		}
		if len(capped.Withheld) != MaxWithheld || len(all.Withheld) <= MaxWithheld {
			t.Fatalf("%q: %d withheld with the cap, %d without; want %d and more", prompt, len(capped.Withheld), len(all.Withheld), MaxWithheld)
		}
		for i, w := range capped.Withheld {
			// The breakdown's diversity penalty depends on what the first
			// recall gave (its access count): compare what is listed.
			if a := all.Withheld[i]; a.ID != w.ID || a.Reason != w.Reason || a.Score != w.Score {
				t.Errorf("%q: withheld %d is %+v with the cap, %+v without", prompt, i, w, all.Withheld[i])
			}
		}
	}
}
