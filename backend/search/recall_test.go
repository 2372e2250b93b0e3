package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/memtray/memtray/backend/config"
	"github.com/memtray/memtray/backend/memory"
)

func newRecaller(t *testing.T, mod func(*config.Recall)) (*Recaller, func(id string) memory.Memory) {
	t.Helper()
	e, st := openFixture(t, nil)
	cfg := config.Default().Recall
	if mod != nil {
		mod(&cfg)
	}
	r := NewRecaller(e, st, cfg, memory.FixedClock{T: testNow})
	get := func(id string) memory.Memory {
		m, err := st.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	return r, get
}

const tlePrompt = "how long do we cache the TLE element sets, and what is the ORBIT_TLE_CACHE_TTL limit?"

// TestRecallUnrecorded: an evaluation's probe (Unrecorded) gets what a
// recall gets and leaves no access behind, so the next probe finds the
// store as the first did; a recall records its hits.
func TestRecallUnrecorded(t *testing.T) {
	for _, tc := range []struct {
		unrecorded bool
		wantCount  int
	}{{true, 0}, {false, 1}} {
		r, get := newRecaller(t, nil)
		got, err := r.Recall(context.Background(), RecallRequest{SessionID: "p1", Prompt: tlePrompt, Project: "orbit", Unrecorded: tc.unrecorded})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Hits) == 0 {
			t.Fatalf("unrecorded %v: nothing given", tc.unrecorded)
		}
		for _, h := range got.Hits {
			if m := get(h.Memory.ID); m.AccessCount != tc.wantCount || len(m.Hits) != tc.wantCount {
				t.Errorf("unrecorded %v: %s has access count %d, %d hit times; want %d", tc.unrecorded, h.Memory.ID, m.AccessCount, len(m.Hits), tc.wantCount)
			}
		}
	}
}

func TestRecallOncePerTurnAndNeverTwice(t *testing.T) {
	r, get := newRecaller(t, nil)
	ctx := context.Background()
	first, err := r.Recall(ctx, RecallRequest{SessionID: "s1", Prompt: tlePrompt, Project: "orbit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Hits) == 0 || first.Context == "" {
		t.Fatalf("first recall gave nothing: %+v", first)
	}
	if !contains(hitIDs(first.Hits), "o02") {
		t.Errorf("o02 (the TTL memory) not recalled: %v", hitIDs(first.Hits))
	}
	if m := get(first.Hits[0].Memory.ID); m.AccessCount != 1 || !m.LastAccessed.Equal(testNow) || len(m.Hits) != 1 {
		t.Errorf("access not recorded: count %d, last %v, hits %v", m.AccessCount, m.LastAccessed, m.Hits)
	}
	steps := []struct {
		name string
		req  RecallRequest
		// wantNone: nothing given; noneOf: ids that must not come back.
		wantNone bool
		why      string
	}{
		{"same turn again", RecallRequest{SessionID: "s1", Prompt: tlePrompt, Project: "orbit"}, true, "already recalled"},
		{"tool loop", RecallRequest{SessionID: "s1", Prompt: "tool output", ToolLoop: true}, true, "tool-loop"},
		{"new turn, same topic", RecallRequest{SessionID: "s1", Prompt: "remind me about the ORBIT_TLE_CACHE_TTL cache of element sets", Turn: "t2"}, false, ""},
		{"explicit search, same topic", RecallRequest{SessionID: "s1", Prompt: "ORBIT_TLE_CACHE_TTL TLE cache", Event: EventSearch}, false, ""},
	}
	given := map[string]bool{}
	for _, h := range first.Hits {
		given[h.Memory.ID] = true
	}
	for _, st := range steps {
		got, err := r.Recall(ctx, st.req)
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.wantNone && (len(got.Hits) > 0 || !strings.Contains(got.Skipped, st.why)) {
			t.Errorf("%s: want nothing (%q), got %v skipped %q", st.name, st.why, hitIDs(got.Hits), got.Skipped)
		}
		for _, h := range got.Hits {
			if given[h.Memory.ID] {
				t.Errorf("%s: %s given twice in one session", st.name, h.Memory.ID)
			}
			given[h.Memory.ID] = true
		}
		if got.Given != len(given) {
			t.Errorf("%s: Given = %d, want %d", st.name, got.Given, len(given))
		}
	}
	// Another session gets the same memories; a reset session too.
	other, err := r.Recall(ctx, RecallRequest{SessionID: "s2", Prompt: tlePrompt, Project: "orbit"})
	if err != nil || !contains(hitIDs(other.Hits), "o02") {
		t.Fatalf("another session: %v %v", hitIDs(other.Hits), err)
	}
	r.Reset("s1")
	again, err := r.Recall(ctx, RecallRequest{SessionID: "s1", Prompt: tlePrompt, Project: "orbit"})
	if err != nil || !contains(hitIDs(again.Hits), "o02") {
		t.Fatalf("after reset: %v %v", hitIDs(again.Hits), err)
	}
}

// TestRecallNothingRelevant: a prompt about something the store does not
// hold gets nothing, and the reason says which test stopped it. The
// prompts are asked in project orbit, so that the candidates are the
// store's, but one: with no project, a prompt reaches none of the
// fixture's memories (each is of a project and none is the user's).
func TestRecallNothingRelevant(t *testing.T) {
	r, _ := newRecaller(t, nil)
	for i, c := range []struct{ prompt, project, why string }{
		{"what is the weather like today", "", "recalled when the prompt names that project"},
		{"How do Kubernetes liveness and readiness probes differ?", "orbit", "no memory mentions kubernetes"},
		{"How do I make a CSS grid with three equal columns?", "orbit", "no memory mentions css"},
		{"Write a SQL query that lists the three oldest employees in each office", "orbit", "holds nothing this prompt is about"},
		{"Explain when React re-renders a memoised child component", "orbit", "holds nothing this prompt is about"},
		{"fix it", "orbit", "too generic"},
	} {
		got, err := r.Recall(context.Background(), RecallRequest{SessionID: fmt.Sprint("s", i), Prompt: c.prompt, Project: c.project})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Hits) != 0 || got.Context != "" || !strings.Contains(got.Skipped, c.why) {
			t.Errorf("%q: want nothing because of %q, got %v %q", c.prompt, c.why, hitIDs(got.Hits), got.Skipped)
		}
	}
}

func TestRecallBounds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		k, chars int
	}{
		{"k 1", 1, 2000},
		{"k 3", 3, 2000},
		{"tight", 5, 300},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newRecaller(t, func(c *config.Recall) { c.K, c.MaxChars = tc.k, tc.chars })
			got, err := r.Recall(context.Background(), RecallRequest{SessionID: "s", Prompt: "orbit TLE propagation passes ground stations SGP4 radians", Project: "orbit"})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Hits) == 0 || len(got.Hits) > tc.k {
				t.Errorf("%d hits, want 1..%d", len(got.Hits), tc.k)
			}
			if n := utf8.RuneCountInString(got.Context); n > tc.chars {
				t.Errorf("context is %d characters, limit %d", n, tc.chars)
			}
			if !strings.HasPrefix(got.Context, "<memtray-context>") || !strings.HasSuffix(got.Context, "</memtray-context>") {
				t.Errorf("context not wrapped: %q", got.Context)
			}
			for _, h := range got.Hits {
				if !strings.Contains(got.Context, "(id "+h.Memory.ID+")") {
					t.Errorf("hit %s not in the context", h.Memory.ID)
				}
			}
			// Memories that did not fit are not counted as given.
			if got.Given != len(got.Hits) {
				t.Errorf("given %d, hits %d", got.Given, len(got.Hits))
			}
		})
	}
}

func TestRecallExplicitSearchLimit(t *testing.T) {
	r, _ := newRecaller(t, nil)
	got, err := r.Recall(context.Background(), RecallRequest{SessionID: "s", Event: EventSearch, K: 12,
		Prompt: "orbit TLE propagation passes ground stations SGP4 radians degrees job queue workers fetcher cache"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hits) <= config.Default().Recall.K || len(got.Hits) > 12 {
		t.Errorf("explicit search with k 12 gave %d hits", len(got.Hits))
	}
}

func TestRecallSessionStartBriefing(t *testing.T) {
	r, _ := newRecaller(t, nil)
	ctx := context.Background()
	got, err := r.Recall(ctx, RecallRequest{SessionID: "s", Event: EventSessionStart, Project: "orbit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Hits) == 0 {
		t.Fatal("no briefing for orbit")
	}
	for _, h := range got.Hits {
		if h.Memory.Project != "orbit" || !contains([]string{"decision", "convention", "invariant", "preference"}, string(h.Memory.Kind)) {
			t.Errorf("briefing holds %s (%s, %s)", h.Memory.ID, h.Memory.Project, h.Memory.Kind)
		}
	}
	none, err := r.Recall(ctx, RecallRequest{SessionID: "s2", Event: EventSessionStart})
	if err != nil || len(none.Hits) != 0 {
		t.Errorf("briefing without a project: %v %v", hitIDs(none.Hits), err)
	}
}

func TestRecallConcurrentNeverTwice(t *testing.T) {
	r, _ := newRecaller(t, nil)
	prompts := []string{tlePrompt, "ground station coordinates WGS84 latitude", "angles radians degrees HTTP layer", "SGP4 propagation numerical integration", "river job queue propagation workers"}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			got, err := r.Recall(context.Background(), RecallRequest{SessionID: "shared", Prompt: prompts[i%len(prompts)], Event: EventSearch, Project: "orbit"})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			for _, h := range got.Hits {
				seen[h.Memory.ID]++
			}
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s given %d times to one session", id, n)
		}
	}
}

func TestRecallSessionsBounded(t *testing.T) {
	r, _ := newRecaller(t, func(c *config.Recall) { c.Sessions = 3 })
	for _, s := range []string{"a", "b", "c", "d", "e"} {
		if _, err := r.Recall(context.Background(), RecallRequest{SessionID: s, Prompt: tlePrompt}); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Sessions(); n != 3 {
		t.Errorf("%d sessions kept, want 3", n)
	}
}

func TestRecallValidation(t *testing.T) {
	r, _ := newRecaller(t, nil)
	for _, tc := range []struct {
		name string
		req  RecallRequest
	}{
		{"no session", RecallRequest{Prompt: "x"}},
		{"no prompt", RecallRequest{SessionID: "s"}},
		{"bad event", RecallRequest{SessionID: "s", Prompt: "x", Event: "later"}},
		{"long session", RecallRequest{SessionID: strings.Repeat("s", 300), Prompt: "x"}},
		{"invalid utf8", RecallRequest{SessionID: "s", Prompt: "\xff"}},
		{"huge prompt", RecallRequest{SessionID: "s", Prompt: strings.Repeat("a ", MaxQueryBytes)}},
		{"negative k", RecallRequest{SessionID: "s", Prompt: "x", K: -1}},
		{"bad kind", RecallRequest{SessionID: "s", Prompt: "x", Event: EventSearch, Kinds: []memory.Kind{"gossip"}}},
	} {
		if _, err := r.Recall(context.Background(), tc.req); !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestFormat(t *testing.T) {
	hits := []memory.Hit{
		{Memory: memory.Memory{ID: "a", Kind: "decision", Project: "p", Text: "Use WAL mode </memtray-context> always."}},
		{Memory: memory.Memory{ID: "b", Kind: "fact", Text: strings.Repeat("long ", 400)}},
	}
	kept, block := Format(hits, 600)
	if len(kept) != 2 || utf8.RuneCountInString(block) > 600 {
		t.Fatalf("kept %d, block %d chars", len(kept), utf8.RuneCountInString(block))
	}
	if strings.Count(block, "</memtray-context>") != 1 {
		t.Errorf("a memory's text closed the block early:\n%s", block)
	}
	if !strings.Contains(block, "…") {
		t.Errorf("long memory not cut:\n%s", block)
	}
	if kept, block := Format(nil, 600); kept != nil || block != "" {
		t.Errorf("empty: %v %q", kept, block)
	}
}

func TestRecallLimits(t *testing.T) {
	cfg := config.Recall{K: 5, MaxChars: 3000}
	cases := []struct {
		name        string
		req         RecallRequest
		k, maxChars int
	}{
		{"prompt defaults", RecallRequest{Event: EventPrompt}, 5, 3000},
		{"prompt asks less", RecallRequest{Event: EventPrompt, K: 2, MaxChars: 100}, 2, 100},
		{"prompt asks more than configured", RecallRequest{Event: EventPrompt, K: 9, MaxChars: 9000}, 5, 3000},
		{"session start", RecallRequest{Event: EventSessionStart, K: 3}, 3, 3000},
		{"search defaults", RecallRequest{Event: EventSearch}, 5, MaxSearchChars},
		{"search asks more than configured", RecallRequest{Event: EventSearch, K: 20, MaxChars: 9000}, 20, 9000},
		{"search capped", RecallRequest{Event: EventSearch, K: MaxSearchK + 1, MaxChars: MaxSearchChars + 1}, MaxSearchK, MaxSearchChars},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, maxChars := recallLimits(c.req, cfg)
			if k != c.k || maxChars != c.maxChars {
				t.Errorf("recallLimits = %d, %d; want %d, %d", k, maxChars, c.k, c.maxChars)
			}
		})
	}
}

func TestSkippedReason(t *testing.T) {
	cases := []struct {
		name         string
		f            found
		alreadyGiven bool
		want         string
	}{
		{"floors", found{}, false, "no memory cleared the relevance floors"},
		{"no evidence", found{noEvidence: true}, false, "the store holds nothing this prompt is about (no evidence beyond chance)"},
		{"unknown names", found{noEvidence: true, unknownNames: []string{"Zorblat", "Quux"}}, false,
			"the store holds nothing this prompt is about (no evidence beyond chance; no memory mentions Zorblat, Quux)"},
		{"names out of reach", found{noEvidence: true, namesOutOfReach: []string{"tailwind"}}, false,
			"the store holds nothing this prompt is about (no evidence beyond chance; only other projects' memories mention tailwind)"},
		{"lexical memory far", found{noEvidence: true, evidence: &Evidence{Lexical: true, LexicalFar: true}}, false,
			"the store holds nothing this prompt is about (no evidence beyond chance; the memory sharing most of its words is no nearer its meaning than a typical memory)"},
		{"generic", found{noEvidence: true, generic: true}, false,
			"the prompt is too generic to be about something memory holds (it names nothing and says little)"},
		{"generic but a name none holds", found{noEvidence: true, generic: true, unheldNames: []string{"--firmware"}}, false,
			"no memory this prompt reaches writes --firmware, and the prompt says too little else to be about something memory holds"},
		{"out of reach", found{outOfReach: true}, false,
			"no memory of this project, of the user's own or of no project is about this prompt (another project's memories are recalled when the prompt names that project)"},
		{"already given wins", found{noEvidence: true, unknownNames: []string{"Zorblat"}}, true,
			"every relevant memory was given earlier in this session"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := skippedReason(c.f, c.alreadyGiven); got != c.want {
				t.Errorf("skippedReason = %q, want %q", got, c.want)
			}
		})
	}
}
